-- spec/67-obstacle_removal_spec.lua -- issue 30 item 11: removing a temporary obstacle costs what
-- its box touches, not every obstacle on its tile (csrc/core/obstacles.c). Before, each removal rebuilt
-- the tile from its snapshot and blocked every obstacle left again: 2,000 on one tile took 3.2 s to
-- remove (1.6 ms each), quadratic in their number. The cost is checked by a count, not a clock
-- (tests/core/test_obstacles.c, removal_work: the work a removal does among 3,000 obstacles against among
-- 30); the time is make bench-obstacles' (its -many table). Here: 3,000 removed leave the tile as
-- before any. The contents check: with half of them removed in random order, the tile reads (its encoded bytes)
-- as a tree that was only given the other half; with all removed, as the tree before any.
-- Run: busted --lua=lua5.4 spec/67-obstacle_removal_spec.lua
local octonav = require "octonav"

local function lcg(seed)
  return function()
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed / 2147483648
  end
end

-- a 64^3-leaf tile with some walls
local function tile()
  local t = octonav.tree.new { depth = 6 }
  t:add_box({ 10, 0, 10 }, { 12, 64, 50 })
  t:add_box({ 30, 20, 0 }, { 31, 22, 64 })
  return t
end

-- N boxes of 4^3 leaves at random places
local function boxes(n, seed)
  local rnd, out = lcg(seed), {}
  for i = 1, n do
    local x, y, z = rnd() * 60, rnd() * 60, rnd() * 60
    out[i] = { min = { x, y, z }, max = { x + 4, y + 4, z + 4 } }
  end
  return out
end

describe("issue 30 item 11: removing obstacles", function()
  it("3,000 on one tile, removed in the order added: the tile as before any", function()
    local t = tile()
    local list = boxes(3000, 7)
    local ids = {}
    for i, b in ipairs(list) do ids[i] = assert(t:add_obstacle(b)) end
    for i = 1, #ids do assert(t:remove_obstacle(ids[i])) end -- (in the order added: the worst order before)
    assert.same({}, t:obstacles())
    assert.equal(tile():encode_tile(0, 0, 0), t:encode_tile(0, 0, 0))
  end)

  it("half removed in random order: the tile reads as if only the others were added", function()
    local t = tile()
    local list = boxes(600, 11)
    local ids = {}
    for i, b in ipairs(list) do ids[i] = assert(t:add_obstacle(b)) end
    local rnd = lcg(3)
    local order = {}
    for i = 1, #ids do order[i] = i end
    for i = #order, 2, -1 do
      local j = math.floor(rnd() * i) + 1
      order[i], order[j] = order[j], order[i]
    end
    local gone = {}
    for k = 1, 300 do
      assert.is_true(t:remove_obstacle(ids[order[k]]))
      gone[order[k]] = true
    end
    local want = tile()
    for i, b in ipairs(list) do
      if not gone[i] then want:add_obstacle(b) end
    end
    assert.equal(want:encode_tile(0, 0, 0), t:encode_tile(0, 0, 0))
    assert.equal(300, #t:obstacles())
    local ok, err = t:remove_obstacle(ids[order[1]])
    assert.is_nil(ok)
    assert.equal("no obstacle " .. ids[order[1]] .. " in place", err)
    for k = 301, 600 do assert.is_true(t:remove_obstacle(ids[order[k]])) end
    assert.equal(tile():encode_tile(0, 0, 0), t:encode_tile(0, 0, 0))
  end)
end)
