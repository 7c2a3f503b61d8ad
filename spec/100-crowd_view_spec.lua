-- spec/100-crowd_view_spec.lua -- the crowd seen (issue 33): what the crowd exposes for drawing
-- (crowd:path), octonav.debug.draw of a crowd (agents as spheres at their radius, velocities,
-- neighbours, goals, paths), the recorder (octonav.crowd_record) and the viewer's playback.
local octonav = require "octonav"

-- f raises an error whose message holds msg
local function raises(f, msg)
  local ok, err = pcall(f)
  assert.is_false(ok, "no error, expected: " .. msg)
  assert.truthy(tostring(err):find(msg, 1, true), ("expected %q in %q"):format(msg, tostring(err)))
end

describe("crowd:path (what debug draw reads)", function()
  it("gives the path an agent follows and the leg it is on", function()
    local tree = octonav.tree.new { depth = 5 }
    local crowd = octonav.crowd.new(tree, { max_agents = 8 })
    local a = assert(crowd:add { pos = { 4, 4, 4 }, radius = 1 })
    local t, n, seg = crowd:path(a)
    assert.are.same({ {}, 0, 1 }, { t, n, seg })
    crowd:set_path(a, { { 4, 4, 4 }, { 12, 4, 4 }, { 12, 12, 4 } })
    t, n, seg = crowd:path(a)
    assert.are.same({ { { 4, 4, 4 }, { 12, 4, 4 }, { 12, 12, 4 } }, 3, 1 }, { t, n, seg })
    -- a table given is filled again
    local mine = { "old" }
    local t2 = crowd:path(a, mine)
    assert.are.equal(mine, t2)
    assert.are.same({ 12, 12, 4 }, t2[3])
    -- the leg advances past the corner
    for _ = 1, 120 do crowd:update(1 / 30) end
    assert.are.same({ 3, 2 }, { select(2, crowd:path(a)) })
    -- a searched path ends at the goal
    crowd:set_goal(a, 28, 28, 28)
    for _ = 1, 3 do crowd:update(1 / 30) end
    t, n = crowd:path(a)
    assert.is_true(n >= 2)
    assert.are.same({ 28, 28, 28 }, t[n])
    raises(function() crowd:path(99) end, "path: no agent 99")
    raises(function() crowd:path(a, 3) end, "path: argument #2: table expected, got number")
    crowd:close()
  end)
end)
