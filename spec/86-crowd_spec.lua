-- spec/86-crowd_spec.lua -- octonav.crowd (issue 33; csrc/crowd/, lua_crowd.c, lua/octonav/crowd.lua).
-- The API's rules (options checked, misuse raising with the function's name, runtime failures as
-- nil, reason, the tree held while a crowd is open, the reused-table reads), then the scenarios of
-- bench/crowd.lua at small counts, checked from outside the crowd's code every frame: no overlap, no
-- entry into blocked space, no acceleration, turn or speed limit exceeded, every agent arrived.
-- (make bench-crowd runs them at full size and 10,000 frames.)
local octonav = require "octonav"

local scen = dofile("bench/crowd.lua")

-- f raises an error whose message holds msg (a prefix such as "crowd:" before the function's name
-- may come with it)
local function raises(f, msg)
  local ok, err = pcall(f)
  assert.is_false(ok, "no error, expected: " .. msg)
  assert.truthy(tostring(err):find(msg, 1, true), ("expected %q in %q"):format(msg, tostring(err)))
end

describe("octonav.crowd", function()
  it("checks its options and arguments", function()
    local tree = octonav.tree.new { depth = 5 }
    raises(function() octonav.crowd.new(tree, { max_agent = 3 }) end,
      "octonav.crowd.new: unknown option 'max_agent'")
    raises(function() octonav.crowd.new(tree, { drift = 2 }) end,
      "octonav.crowd.new: drift must be a finite number in [0, 1]")
    raises(function() octonav.crowd.new(tree, { navigator = 5 }) end,
      "octonav.crowd.new: option 'navigator' must be a table")
    raises(function() octonav.crowd.new({}, {}) end,
      "octonav.crowd.new: tree_or_world must be an octonav.tree or a world (octonav.world.load)")
    local c = octonav.crowd.new(tree, { max_agents = 2 })
    raises(function() c:add { pos = { 4, 4, 4 }, size = 1 } end, "add: unknown option 'size'")
    raises(function() c:add { radius = 1 } end, "add: option 'pos' is required")
    raises(function() c:add { pos = { 4, 4, 4 }, radius = -1 } end,
      "add: radius must be a finite number in [1e-09, 1e+12]")
    raises(function() c:add { pos = { 4, 0 / 0, 4 } } end, "pos")
    local a = assert(c:add { pos = { 4, 4, 4 }, radius = 1 })
    assert.are.same({ nil, "blocked" }, { c:add { pos = { 5, 4, 4 }, radius = 1 } }) -- overlaps a
    assert.are.same({ nil, "outside" }, { c:add { pos = { 40, 4, 4 } } })
    assert.are.same({ nil, "blocked" }, { c:add { pos = { 0.5, 8, 8 }, radius = 1 } }) -- the grid's edge
    local b = assert(c:add { pos = { 20, 20, 20 } })
    assert.are.same({ nil, "full" }, { c:add { pos = { 10, 10, 10 } } })
    raises(function() c:remove(12345) end, "remove: no agent 12345")
    raises(function() c:set_goal(a, 1, 0 / 0, 1) end, "set_goal: y must be a finite number")
    raises(function() c:update(0) end, "update: dt must be a number in (0, 1]")
    raises(function() c:update(2) end, "update: dt must be a number in (0, 1]")
    raises(function() tree:close() end, "close: tree is in use by a crowd")
    assert.are.equal(2, c:count()) -- (every Lua; #c where tables have __len: 5.2+)
    if _VERSION ~= "Lua 5.1" then assert.are.equal(2, #c) end
    -- reads: a fresh table, or the caller's filled again
    local t = c:agent(a)
    assert.are.equal("idle", t.state)
    assert.are.same({ 4, 4, 4 }, t.pos)
    assert.are.equal(1, t.radius)
    assert.are.equal(t, c:agent(b, t))
    assert.are.same({ 20, 20, 20 }, t.pos)
    assert.are.same({ 20, 20, 20 }, { c:position(b) })
    local ids, n = c:ids()
    assert.are.same({ { a, b }, 2 }, { ids, n })
    local st, k = c:states()
    assert.are.equal(2, k)
    assert.are.same({ 4, 4, 4, 0, 0, 0, 20, 20, 20, 0, 0, 0 }, st)
    c:set_goal(a, 28, 4, 4)
    assert.are.equal("planning", c:agent(a).state)
    for _ = 1, 240 do assert.is_true(c:update(1 / 30)) end
    assert.are.equal("arrived", c:agent(a).state)
    local x = c:position(a)
    assert.is_true(math.abs(x - 28) <= 1)
    c:remove(a)
    raises(function() c:agent(a) end, "agent: no agent " .. a)
    assert.are.equal(1, c:count())
    if _VERSION ~= "Lua 5.1" then assert.are.equal(1, #c) end
    c:close()
    tree:close()
  end)

  it("holds while its path is planned, or drifts toward its goal", function()
    local tree = octonav.tree.new { depth = 5 }
    tree:add_box({ 14, 0, 0 }, { 16, 24, 32 })
    for _, drift in ipairs { 0, 0.5 } do
      local c = octonav.crowd.new(tree, { plan_budget = 1, drift = drift })
      local a = c:add { pos = { 4, 4, 16 } }
      c:set_goal(a, 28, 4, 16)
      for _ = 1, 10 do c:update(1 / 30) end
      local s = c:agent(a)
      assert.are.equal("planning", s.state)
      if drift == 0 then assert.are.same({ 4, 4, 16 }, s.pos) else assert.is_true(s.pos[1] > 4.1) end
      c:close()
    end
  end)

  -- the scenarios: rules every frame
  local cases = {
    { "sphere", { n = 16, R = 10, frames = 900 } },
    { "door", { n = 8, frames = 900 } },
    { "mixed", { n = 8, frames = 900 } },
    { "tunnel", { n = 2, frames = 1500 } },
  }
  for _, case in ipairs(cases) do
    it("keeps the rules in the " .. case[1] .. " scenario", function()
      local r = scen.run(case[1], case[2])
      local msg = scen.format(r)
      assert.are.equal(0, r.overlaps, msg)
      assert.are.equal(0, r.walls, msg)
      assert.are.equal(0, r.accel, msg)
      assert.are.equal(0, r.turn, msg)
      assert.are.equal(0, r.speed, msg)
      assert.are.equal(r.agents, r.arrived, msg)
    end)
  end
end)
