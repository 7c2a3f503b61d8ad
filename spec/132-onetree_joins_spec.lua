-- spec/132-onetree_joins_spec.lua -- a world plan's joins keep the agent's radius (issue 33, one tree for
-- every agent size). A one-tree pack's agents plan on the tree of the smallest radius (0): before, its
-- C planner joined a start or goal closer than r to a wall as if the agent were a point (world:plan at
-- radius 2 on the slot world gave a route from 1 leaf off the wall, where the pack of a tree per agent
-- said start_blocked; a navigator then failed in its own search at the radius), and joined a start or
-- goal in a hole through a door whose outside point was closer than r to a wall. Now world:plan,
-- planner.start and the navigators' plans refuse such an end as start_blocked / goal_blocked and leave
-- such doors out. The distance to the walls is spec/support/slotworld.lua's (from the boxes, no
-- library code). (The navigator case passed before too: its own search refused the start later.)
-- Run: busted --lua=lua5.4 spec/132-onetree_joins_spec.lua
local octonav = require "octonav"
local files = dofile("spec/support/files.lua")
local bake = require "octonav.bake"
local planner = require "octonav.planner"
local slot = dofile("spec/support/slotworld.lua")

describe("a world plan's joins keep the radius", function()
  local one, per
  local AGENTS = { { name = "small", radius = 0 }, { name = "big", radius = 2 } }
  setup(function()
    one, per = files.tmpdir(), files.tmpdir()
    assert(bake.run(slot.config(one, AGENTS, true)))
    assert(bake.run(slot.config(per, AGENTS, false)))
  end)
  teardown(function()
    files.rm_rf(one)
    files.rm_rf(per)
  end)

  -- starts on a line towards the wall (x 12: the wall's box x 7-20, z 14-18), clearance 4.5 .. 0.5
  local function starts()
    local out = {}
    for z = 9.5, 13.5, 0.5 do out[#out + 1] = { 12, 8, z } end
    return out
  end

  it("refuses a start or goal closer than r to a wall, as the pack of a tree per agent does", function()
    local w1, w2 = assert(octonav.world.load(one)), assert(octonav.world.load(per))
    local refused, planned = 0, 0
    for _, p in ipairs(starts()) do
      local c = slot.clearance(p)
      local r1, why1 = w1:plan(p, slot.G, { radius = 2 })
      local r2, why2 = w2:plan(p, slot.G, { radius = 2 })
      if c < 2 then
        assert.is_nil(r1)
        assert.equal("start_blocked", why1)
        refused = refused + 1
      elseif c >= 3 then -- (a leaf more than r: free on both packs)
        assert.is_table(r1)
        planned = planned + 1
      end
      assert.equal(r2 == nil, r1 == nil) -- the same verdict as the tree baked for r
      assert.equal(why2, why1)
      -- the goal's side: the same point as the goal of a plan from the far side
      local g1, gwhy1 = w1:plan(slot.G, p, { radius = 2 })
      local g2, gwhy2 = w2:plan(slot.G, p, { radius = 2 })
      assert.equal(g2 == nil, g1 == nil)
      assert.equal(gwhy2, gwhy1)
      if c < 2 then assert.equal("goal_blocked", gwhy1) end
    end
    assert.equal(3, refused) -- clearance 0.5, 1, 1.5 (z 12, exactly 2 off, plans on both packs)
    assert.equal(4, planned) -- clearance 3 .. 4.5
    w1:close()
    w2:close()
  end)

  it("keeps the radius each caller asks: world:plan's radius, an agent's own, planner.start's r", function()
    local w = assert(octonav.world.load(one))
    local near = { 12, 8, 13 } -- 1 off the wall
    assert.is_table(w:plan(near, slot.G)) -- (the default agent, small: radius 0)
    assert.is_table(w:plan(near, slot.G, { radius = 0.5 }))
    assert.same({ nil, "start_blocked" }, { w:plan(near, slot.G, { radius = 1.5 }) })
    assert.same({ nil, "start_blocked" }, { w:plan(near, slot.G, { agent = "big" }) }) -- its own radius
    assert.same({ nil, "start_blocked" }, { w:agent("big"):plan(near, slot.G) })
    -- planner.start: r explicit (0: a point, even on big's graph) or big's own by default
    local big = w:agent("big")
    local job = planner.start(big, near, slot.G, nil, 0)
    assert.equal("found", (job:step(1000000)))
    job = planner.start(big, near, slot.G)
    assert.same({ nil, "start_blocked" }, { job:step(1000000) })
    local ok, err = pcall(planner.start, big, near, slot.G, nil, -1)
    assert.is_false(ok)
    assert.matches("octonav.planner.start: radius must be a finite number >= 0, got %-1", tostring(err))
    w:close()
  end)

  it("leaves out a hole's doors whose outside point is closer than r to blocked space", function()
    -- spec/support/handworld.lua's cave: both doors' outside points 0.5 off the cave's box
    local w = dofile("spec/support/handworld.lua").make_world { tiles = 2 }
    local a, b = { 6, 6, 8 }, { 24, 14, 2 }
    assert.equal("cave", w:in_hole(a))
    for _, d in ipairs(w.holes[1].doors) do assert.is_true(w.tree:visible_radius(d.outside, d.outside, 0)) end
    assert.equal("found", (planner.start(w, a, b, nil, 0):step(1000000)))
    assert.same({ nil, "unreachable" }, { planner.start(w, a, b, nil, 1):step(1000000) })
    assert.same({ nil, "unreachable" }, { planner.start(w, b, a, nil, 1):step(1000000) })
  end)

  it("a navigator of radius 2 fails at once from a start too near the wall, and walks from one far enough", function()
    local w = assert(octonav.world.load(one))
    local nav = octonav.navigator.new(w, { radius = 2 })
    nav:go(slot.G)
    local st, why = nav:update({ 12, 8, 13 })
    for _ = 1, 20 do
      if st == "failed" then break end
      st, why = nav:update({ 12, 8, 13 })
    end
    assert.equal("failed", st)
    assert.equal("start_blocked", why)
    nav:close()
    w:close()
  end)
end)
