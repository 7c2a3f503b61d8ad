-- spec/108-navigator_tree_spec.lua -- navigators and the crowd on a plain tree (issue 33): a level
-- without tiles. octonav.navigator.new refused anything but a world, so a game with one level had only
-- the smoother, which never reports arrival; and the crowd took navigators on a world only.
local octonav = require "octonav"

local function dist(p, q) return math.sqrt((p[1] - q[1]) ^ 2 + (p[2] - q[2]) ^ 2 + (p[3] - q[3]) ^ 2) end

-- walks a navigator: each update the agent steps up to `step` toward the waypoint; returns the status,
-- the frame it ended, the distinct waypoints in order and the length of the polyline start -> waypoints
local function walk(nav, start, step, frames)
  local pos = { start[1], start[2], start[3] }
  local wps, len, last = {}, 0, start
  for f = 1, frames do
    local st, wp = nav:update(pos)
    if st == "arrived" or st == "failed" then return st, f, wps, len, wp end
    if st == "moving" then
      local w = wps[#wps]
      if not w or w[1] ~= wp[1] or w[2] ~= wp[2] or w[3] ~= wp[3] then
        wps[#wps + 1] = { wp[1], wp[2], wp[3] }
        len = len + dist(last, wp)
        last = wps[#wps]
      end
      local d = dist(pos, wp)
      local s = math.min(d, step)
      if d > 0 then for k = 1, 3 do pos[k] = pos[k] + (wp[k] - pos[k]) * s / d end end
    end
  end
  return "timeout", frames, wps, len
end

-- one tile of 32^3 leaves, a wall at x in [10, 12] open above y = 28 (README's scene)
local function scene()
  local tree = octonav.tree.new { depth = 5 }
  tree:add_box({ 10, 0, 0 }, { 12, 28, 32 })
  return tree
end

describe("octonav.navigator on a plain tree", function()
  it("goes straight where the way is clear: one waypoint, the goal, 28 units", function()
    local tree = scene()
    local nav = octonav.navigator.new(tree)
    nav:go { 30, 30, 2 }
    local st, f, wps, len, wp = walk(nav, { 2, 30, 2 }, 0.5, 200)
    assert.are.equal("arrived", st)
    assert.are.same({ { 30, 30, 2 } }, wps)
    assert.are.equal(28, len)
    assert.are.same({ 30, 30, 2 }, wp)
    assert.are.equal(56, f) -- 0.5 an update: 0.5 from the goal (its arrive_distance) after 55
    nav:close()
    tree:close()
  end)

  it("over the wall: its route is the search's path on the tree, arrival reported", function()
    local tree = scene()
    local q = octonav.query.new(tree)
    local path, info = q:find({ 2, 2, 16 }, { 20, 2, 16 })
    assert.are.equal(4, #path)
    local nav = octonav.navigator.new(tree, { query_budget = 50 })
    nav:go { 20, 2, 16 }
    local st, _, wps, len = walk(nav, { 2, 2, 16 }, 0.5, 2000)
    assert.are.equal("arrived", st)
    -- the same corners as the search's (the smoother finds none to cut), the same length
    assert.are.equal(#path - 1, #wps)
    for i = 1, #wps do
      for k = 1, 3 do assert.is_true(math.abs(wps[i][k] - path[i + 1][k]) < 1e-9, ("wp %d axis %d"):format(i, k)) end
    end
    assert.is_true(math.abs(len - info.length) < 1e-9, ("%.12f vs %.12f"):format(len, info.length))
    -- over the top: never below the wall's top between its faces
    assert.is_true(math.abs(wps[1][2] - 28) < 1e-9 and math.abs(wps[2][2] - 28) < 1e-9)
    local s = nav:stats()
    assert.are.equal(1, s.searches)
    assert.is_true(s.expansions > 50, tostring(s.expansions)) -- sliced over several updates
    assert.is_nil(nav:route())
    q:close()
    nav:close()
    tree:close()
  end)

  it("fails with the search's reason, and checks what it is given", function()
    local tree = scene()
    local nav = octonav.navigator.new(tree)
    nav:go { 11, 5, 16 } -- inside the wall
    local st, _, _, _, reason = walk(nav, { 2, 2, 16 }, 0.5, 100)
    assert.are.equal("failed", st)
    assert.are.equal("goal_blocked", reason)
    local ok, err = pcall(octonav.navigator.new, {})
    assert.is_false(ok)
    assert.truthy(tostring(err):find(
      "octonav.navigator.new: world must be a world table (octonav.world.load) or an octonav.tree", 1, true))
    tree:close()
  end)
end)

describe("octonav.crowd with navigators on a plain tree", function()
  it("moves agents along their navigators' routes to arrival", function()
    local tree = scene()
    local crowd = octonav.crowd.new(tree, { max_agents = 4, navigator = { query_budget = 100 } })
    local a = crowd:add { pos = { 2, 2, 12 }, radius = 0.5 }
    local b = crowd:add { pos = { 20, 2, 20 }, radius = 0.5 }
    crowd:set_goal(a, 20, 2, 12)
    crowd:set_goal(b, 2, 2, 20)
    local arrived = {}
    for f = 1, 1200 do
      crowd:update(1 / 30)
      for _, id in ipairs { a, b } do
        if not arrived[id] and crowd:agent(id).nav_status == "arrived" then arrived[id] = f end
      end
    end
    for _, id in ipairs { a, b } do
      local t = crowd:agent(id)
      assert.are.equal("arrived", t.nav_status)
      assert.are.equal("arrived", t.state)
      assert.is_true(t.pos[2] < 3, tostring(t.pos[2])) -- back down on the far side of the wall
      assert.is_true(arrived[id] < 1200)
    end
    assert.is_true(dist(crowd:agent(a).pos, { 20, 2, 12 }) <= 0.5)
    assert.is_true(dist(crowd:agent(b).pos, { 2, 2, 20 }) <= 0.5)
    crowd:close()
    tree:close()
  end)
end)
