-- spec/140-crowd_rest_spec.lua -- issue 33's crowd, what session 24 finished (csrc/crowd/rules.c, crowd.c):
-- a new goal clears the rules' state (held, backing off, frames without progress); the tunnel's
-- arrivals at the seeds where agents were late.
local octonav = require "octonav"

-- bench/crowd.lua's tunnel: a wall at x 28..36 of a 64 x 32 x 32 tree, an opening 6 leaves across
-- (y, z in [13, 19)), 3 across in its middle (x 31..33, y, z in [14, 17))
local function tunnel_tree()
  local tree = octonav.tree.new { tiles = { 2, 1, 1 }, depth = 5 }
  local function solid_except(x0, x1, a, b)
    tree:add_box({ x0, 0, 0 }, { x1, a, 32 })
    tree:add_box({ x0, b, 0 }, { x1, 32, 32 })
    tree:add_box({ x0, a, 0 }, { x1, b, a })
    tree:add_box({ x0, a, b }, { x1, b, 32 })
  end
  solid_except(28, 31, 13, 19)
  solid_except(31, 33, 14, 17)
  solid_except(33, 36, 13, 19)
  return tree
end

local function agent(p)
  return { pos = p, radius = 1, max_speed = 4, max_accel = 8, max_turn_rate = math.pi }
end

-- The tunnel with A (heading +x, it has the way) and B (heading -x): B enters the passage, meets A,
-- backs out and holds outside while A is still ahead. With `regoal`, B is given a new goal beyond the
-- tunnel at frame 250. The frames from 253 to 265 where B's speed is 0.
local function held_frames(regoal)
  local tree = tunnel_tree()
  local crowd = octonav.crowd.new(tree, { max_agents = 2, plan_budget = 20000 })
  local a = assert(crowd:add(agent { 6, 15.5, 15.5 }))
  local b = assert(crowd:add(agent { 44, 15.5, 15.5 }))
  crowd:set_goal(a, 58, 15.5, 15.5)
  crowd:set_goal(b, 6, 15.5, 15.5)
  local st, held = {}, 0
  for f = 1, 265 do
    crowd:update(1 / 30)
    if regoal and f == 250 then crowd:set_goal(b, 6, 16, 15.5) end
    crowd:states(st)
    if f >= 253 and st[10] == 0 and st[11] == 0 and st[12] == 0 then held = held + 1 end
  end
  local state = crowd:agent(b).state
  crowd:close()
  return held, state
end

describe("octonav.crowd's set_goal", function()
  -- Given a new goal, B starts afresh: its path followed from the frame it has it, as an agent given
  -- that goal for the first time would (the hold belonged to its old way). Before, set_goal kept the
  -- hold (and the frames without progress, the backing off): B stood still through frames 254-265 as
  -- if it had no new goal (12 frames at speed 0; 11 without a new goal, the path it had).
  it("clears the hold of an agent held outside a passage", function()
    assert.are.same({ 11, "moving" }, { held_frames(false) }) -- the hold, without a new goal
    assert.are.same({ 0, "moving" }, { held_frames(true) })
  end)
end)

describe("octonav.crowd's tunnel", function()
  -- bench/crowd.lua's tunnel at full size (two groups of 4 crossing through a passage one agent wide in
  -- its middle) at the seeds where an agent arrived late before: two agents of one way wedged at the
  -- narrow part's lip, the one behind now steps back after WEDGE_FRAMES frames without progress
  -- (rules.c). Before, at these seeds, 7 of 8 in time each (seed 3 agent 8 at 837 frames of 807, seed 10
  -- agent 6 at 773 of 769, seed 19 agent 4 at 842 of 836). "In time": within twice the frames of an
  -- unobstructed walk.
  local crossed_in_time = dofile("spec/support/tunnel.lua")
  for _, seed in ipairs { 3, 10, 19 } do
    it("crosses both groups in time at seed " .. seed, function()
      crossed_in_time(seed)
    end)
  end
end)
