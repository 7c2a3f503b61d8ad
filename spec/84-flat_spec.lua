-- spec/84-flat_spec.lua -- the tree's flat point calls (csrc/lua/lua_flat.c, issue 34): visible_xyz,
-- raycast_xyz and locate_status_xyz answer exactly as visible, raycast and locate_status do on the same
-- points (random segments over a scene of boxes, and through a hole's tree with its scale and origin),
-- allocate nothing, and raise naming the function and argument on misuse. Their speed against the
-- table forms is bench/flat.lua's (docs/benchmarks.md, "Flat point calls").
-- Run: busted --lua=lua5.4 spec/84-flat_spec.lua
local octonav = require "octonav"

-- a seeded LCG on doubles (the same numbers on every Lua version)
local function lcg(seed)
  local st = seed
  return function()
    st = (st * 1103515245 + 12345) % 2147483648
    return st / 2147483648
  end
end

local function scene(opts)
  local t = octonav.tree.new(opts)
  local p = t:params()
  local side = p.tile_leaves * p.scale
  local o = p.origin
  local r = lcg(7)
  for _ = 1, 60 do
    local x, y, z = o[1] + r() * side, o[2] + r() * side, o[3] + r() * side
    local s = side / 10
    t:add_box({ x, y, z }, { x + s * (0.2 + r()), y + s * (0.2 + r()), z + s * (0.2 + r()) })
  end
  return t, o, side
end

describe("tree flat point calls", function()
  it("answer as visible, raycast and locate_status do, on 3000 random segments", function()
    for _, opts in ipairs { { depth = 6 }, { depth = 5, scale = 0.5, origin = { -3.25, 10, 7.5 } } } do
      local t, o, side = scene(opts)
      local r = lcg(11)
      local clear, hits, states = 0, 0, {}
      for _ = 1, 3000 do
        -- some ends just outside the tree: outside answers too
        local a = { o[1] + (r() * 1.04 - 0.02) * side, o[2] + (r() * 1.04 - 0.02) * side, o[3] + (r() * 1.04 - 0.02) * side }
        local b = { o[1] + r() * side, o[2] + r() * side, o[3] + r() * side }
        local v = t:visible(a, b)
        assert.are.equal(v, t:visible_xyz(a[1], a[2], a[3], b[1], b[2], b[3]))
        if v then clear = clear + 1 end
        local th, hit = t:raycast(a, b)
        local th2, hx, hy, hz = t:raycast_xyz(a[1], a[2], a[3], b[1], b[2], b[3])
        assert.are.equal(th, th2)
        if th then
          hits = hits + 1
          assert.are.same(hit, { hx, hy, hz })
        else
          assert.is_nil(hx)
        end
        local st = t:locate_status(a)
        assert.are.equal(st, t:locate_status_xyz(a[1], a[2], a[3]))
        states[st] = true
      end
      -- the sample covers every answer
      assert.is_true(clear > 300 and clear < 2700, "clear " .. clear)
      assert.is_true(hits > 300, "hits " .. hits)
      assert.is_true(states.free and states.blocked and states.outside and true or false)
    end
  end)

  it("give exact values on a known scene", function()
    local t = octonav.tree.new { depth = 5 }
    t:add_box({ 10, 0, 0 }, { 12, 28, 32 })
    assert.is_false(t:visible_xyz(2, 2, 16, 20, 2, 16))
    assert.is_true(t:visible_xyz(2, 30, 16, 20, 30, 16))
    assert.are.same({ 0.5, 10, 2, 16 }, { t:raycast_xyz(2, 2, 16, 18, 2, 16) })
    assert.are.same({}, { t:raycast_xyz(2, 30, 16, 20, 30, 16) })
    assert.are.equal("blocked", t:locate_status_xyz(11, 5, 5))
    assert.are.equal("free", t:locate_status_xyz(11, 30, 5))
    assert.are.equal("outside", t:locate_status_xyz(-1, 5, 5))
  end)

  it("allocate nothing", function()
    local t = scene { depth = 6 }
    local function calls()
      for i = 1, 2000 do
        local x = i % 64
        t:visible_xyz(x, 3, 5, 60 - x, 50, 40)
        t:raycast_xyz(x, 3, 5, 60 - x, 50, 40)
        t:locate_status_xyz(x, 30, 20)
      end
    end
    calls() -- the first line of sight builds the tile's masks (C memory)
    collectgarbage()
    collectgarbage("stop")
    local k0 = collectgarbage("count")
    calls()
    local grown = collectgarbage("count") - k0
    collectgarbage("restart")
    assert.are.equal(0, grown)
  end)

  it("raise naming the function and argument on misuse", function()
    local t = octonav.tree.new { depth = 3 }
    local function err(f)
      local ok, e = pcall(f)
      assert.is_false(ok)
      return e
    end
    assert.matches("tree:visible_xyz: argument #4: number expected, got nil",
      err(function() return t:visible_xyz(1, 2, 3, nil, 2, 3) end))
    assert.matches("tree:raycast_xyz: argument #6: number expected, got no value",
      err(function() return t:raycast_xyz(1, 2, 3, 1, 2) end))
    assert.matches("tree:locate_status_xyz: argument #2: coordinates must be finite numbers",
      err(function() return t:locate_status_xyz(1, 0 / 0, 3) end))
    assert.matches("tree:visible_xyz: argument #4: coordinates must be finite numbers",
      err(function() return t:visible_xyz(1, 2, 3, math.huge, 2, 3) end))
    assert.matches("tree:visible_xyz: self: octonav.tree expected, got table",
      err(function() return t.visible_xyz({}, 1, 2, 3, 4, 5, 6) end))
    t:close()
    assert.matches("tree:visible_xyz: attempt to use a closed octonav.tree",
      err(function() return t:visible_xyz(1, 2, 3, 4, 5, 6) end))
  end)
end)
