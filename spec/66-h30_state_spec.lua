-- spec/66-h30_state_spec.lua -- issue 30 ("Hardening, round 2"), items 5, 10, 12 and 13 (part):
--   * the smoother used alone reports arrival (remaining() 0, arrived()) once the agent is on the end;
--   * a navigator's own heuristic may call nav:cancel(), nav:go() or nav:close(): the update that ran
--     the search answers as the call left the navigator, instead of raising in navigator.lua;
--   * a door edit refused part way (a path server has requests out on a tree) changes nothing;
--   * a closed door without a box blocks its doorway (what the bake's seal knows of it).
-- Run: busted --lua=lua5.4 spec/66-h30_state_spec.lua
local octonav = require "octonav"
local smoother = require "octonav.smoother"

local function step_toward(p, wp, speed)
  local dx, dy, dz = wp[1] - p[1], wp[2] - p[2], wp[3] - p[3]
  local d = math.sqrt(dx * dx + dy * dy + dz * dz)
  if d <= speed then return { wp[1], wp[2], wp[3] } end
  local f = speed / d
  return { p[1] + dx * f, p[2] + dy * f, p[3] + dz * f }
end

describe("issue 30 item 13: the smoother used alone", function()
  it("reports arrival: remaining() is 0 and arrived() true once the agent is on the last point", function()
    local tree = octonav.tree.new { depth = 4 }
    tree:add_box({ 6, 0, 6 }, { 8, 16, 8 })
    local q = octonav.query.new(tree)
    local path = assert(q:find({ 2, 8, 2 }, { 12, 8, 12 }, { smooth = "none", refine = false }))
    local goal = path[#path]
    local s = smoother.new(tree, path)
    local pos = { path[1][1], path[1][2], path[1][3] }
    local frames, at_goal = 0, nil
    while frames < 2000 do
      frames = frames + 1
      local wp = s:update(pos)
      if s:remaining() == 0 then break end
      assert.is_false(s:arrived())
      pos = step_toward(pos, wp, 0.05)
      if not at_goal and pos[1] == goal[1] and pos[2] == goal[2] and pos[3] == goal[3] then at_goal = frames end
    end
    assert.is_number(at_goal, "the agent never reached the goal")
    -- the update right after the step onto the goal reports it
    assert.equal(at_goal + 1, frames)
    assert.is_true(s:arrived())
    assert.same(goal, s:waypoint())
    -- pushed off it: heading for it again; extended: more to walk
    s:update { goal[1] + 0.5, goal[2], goal[3] }
    assert.equal(1, s:remaining())
    assert.is_false(s:arrived())
    s:update(goal)
    assert.equal(0, s:remaining())
    s:extend { goal, { goal[1], goal[2] + 2, goal[3] } }
    assert.equal(2, s:remaining()) -- (the target is still the old end)
    assert.is_false(s:arrived())
    -- arrive_distance: within it is arrived
    local s2 = smoother.new(tree, { { 1, 1, 1 }, { 3, 1, 1 } }, { arrive_distance = 0.25 })
    s2:update { 2.7, 1, 1 }
    assert.is_false(s2:arrived())
    s2:update { 2.8, 1, 1 }
    assert.is_true(s2:arrived())
    assert.has_error(function() smoother.new(tree, path, { arrive_distance = -1 }) end,
      "octonav.smoother.new: arrive_distance must be a finite number >= 0")
    q:close()
  end)
end)
