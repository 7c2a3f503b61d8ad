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

describe("issue 30 item 10: the navigator's own heuristic calls back into it", function()
  local navigator = require "octonav.navigator"
  local hw = dofile("spec/support/handworld.lua")
  local A, B, C = { 2.5, 8.5, 8.5 }, { 56.5, 8.5, 8.5 }, { 40.5, 8.5, 8.5 }

  local function walk(nav, pos, frames)
    local st, wp
    for _ = 1, frames or 800 do
      st, wp = nav:update(pos)
      if st == "arrived" or st == "failed" then break end
      if st == "moving" then pos = step_toward(pos, wp, 0.5) end
    end
    return st, wp
  end

  -- A navigator whose heuristic calls `inner(nav)` once, on its `when`-th call (then plain Euclid).
  local function nav_calling(w, when, inner)
    local nav
    local calls = 0
    local function h(x, y, z, gx, gy, gz)
      calls = calls + 1
      if calls == when then inner(nav) end
      return math.sqrt((x - gx) ^ 2 + (y - gy) ^ 2 + (z - gz) ^ 2)
    end
    nav = navigator.new(w, { query_budget = 5, search = { heuristic = h } })
    return nav, function() return calls end
  end

  for _, when in ipairs { 1, 7 } do -- (1: inside q:start; 7: inside a q:step)
    local where = when == 1 and "q:start" or "q:step"
    it("nav:cancel() from it (in " .. where .. "): that update answers idle, the query goes back", function()
      local w = hw.make_world { tiles = 4 }
      local nav, calls = nav_calling(w, when, function(n) n:cancel() end)
      nav:go(B)
      local st, wp
      for _ = 1, 20 do
        st, wp = nav:update(A)
        if calls() >= when then break end
      end
      assert.equal("idle", st)
      assert.is_nil(wp)
      assert.equal("idle", (nav:status()))
      assert.is_nil(next(nav.queries))
      assert.is_nil(nav.search)
      local idle = w.idle_queries[w.tree][65536]
      assert.equal(1, #idle) -- the query the cancelled search held, given back once it returned
      assert.equal("idle", (nav:update(A)))
      -- and it goes on: a new goal is reached (taking that idle query)
      nav:go(B)
      assert.equal("arrived", (walk(nav, { A[1], A[2], A[3] })))
      assert.equal(1, #idle)
    end)
  end

  it("nav:go(other) from it: that update answers planning, and the agent reaches the new goal", function()
    local w = hw.make_world { tiles = 4 }
    local nav = nav_calling(w, 7, function(n) n:go(C) end)
    nav:go(B)
    local st
    for _ = 1, 20 do
      st = nav:update(A)
      if nav.goal[1] == C[1] then break end
    end
    assert.equal("planning", st)
    assert.same(C, nav.goal)
    local st2, wp = walk(nav, { A[1], A[2], A[3] })
    assert.equal("arrived", st2)
    assert.same(C, wp)
  end)

  it("nav:close() from it: that update answers idle; the navigator can be used again", function()
    local w = hw.make_world { tiles = 4 }
    local nav, calls = nav_calling(w, 7, function(n) n:close() end)
    nav:go(B)
    local st
    for _ = 1, 20 do
      st = nav:update(A)
      if calls() >= 7 then break end
    end
    assert.equal("idle", st)
    assert.is_nil(next(nav.queries))
    nav:go(B)
    assert.equal("arrived", (walk(nav, { A[1], A[2], A[3] })))
  end)
end)

-- The doors of spec/support/bakedworld.lua's cave (a shell from 4 to 12, doorways x in [4, 5] and
-- [11, 12], y in [5, 7], z in [7, 9]; the config gives its doors no box). Loaded with block_holes =
-- false, as spec/28: the world tree's cave is open inside, its doorways the only ways in.
describe("issue 30 items 5 and 12: doors", function()
  local baked = dofile("spec/support/bakedworld.lua")
  local files = dofile("spec/support/files.lua")
  local dir, w
  local MID1, MID2 = { 4.5, 6, 8 }, { 11.5, 6, 8 }
  local IN, OUT = { 8, 6, 8 }, { 2, 6, 8 }
  local BOX2 = { min = { 11, 5, 7 }, max = { 12, 7, 9 } }

  setup(function()
    if not (baked.has_bake and baked.has_world) then return end
    dir = files.tmpname()
    baked.bake_and_load(dir):close()
    w = assert(baked.world_mod.load(dir, { block_holes = false }))
  end)
  teardown(function()
    if w then w:close() end
    if dir then files.rm_rf(dir) end
  end)
  before_each(function()
    if not w then pending("octonav.bake or octonav.world is absent") end
  end)

  -- a search on the world tree from inside the cave to outside it: its answer
  local function way_out()
    local q = octonav.query.new(w.tree)
    local path, info = q:find(IN, OUT)
    q:close()
    return path ~= nil, info.reason
  end

  it("a boxless door closed blocks its doorway (the seal's cut through the bounds' face) in both trees", function()
    local cave = w.holes[1]
    assert.is_nil(cave.doors[1].box)
    assert.is_true((way_out()))
    w:set_door("cave", 1, false)
    -- the free leaves of the face layer x in [4, 4.5] around where the way out crosses it
    assert.same({ min = { 4, 5, 7 }, max = { 4.5, 7, 9 } }, cave.doors[1].doorway)
    assert.equal("blocked", (w.tree:locate(MID1)))
    assert.equal("blocked", (cave.tree:locate { 4.25, 6, 8 }))
    assert.equal("free", (cave.tree:locate { 4.75, 6, 8 })) -- (the doorway's inner part: the hole's)
    assert.equal(1, #w.tree:obstacles())
    assert.equal(1, #cave.tree:obstacles())
    assert.is_true((way_out())) -- door 2 is open still
    w:set_door("cave", 2, false)
    assert.equal("blocked", (w.tree:locate(MID2)))
    local found, reason = way_out()
    assert.is_false(found)
    assert.equal("unreachable", reason)
    -- opened: the trees as they were
    w:set_door("cave", 1, true)
    w:set_door("cave", 2, true)
    assert.same({}, w.tree:obstacles())
    assert.same({}, cave.tree:obstacles())
    assert.equal("free", (w.tree:locate(MID1)))
    assert.equal("free", (cave.tree:locate { 4.25, 6, 8 }))
    assert.is_true((way_out()))
    -- a door record without its doorway (world:rebake's fresh records keep the obstacle ids only):
    -- opening still removes what closing blocked, and a hole tree installed again blocks it anew
    w:set_door("cave", 1, false)
    cave.doors[1].doorway = nil
    w:set_door("cave", 1, true)
    assert.same({}, w.tree:obstacles())
    assert.same({}, cave.tree:obstacles())
    w:set_door("cave", 1, false)
    cave.doors[1].doorway = nil
    cave.doors[1].hole_obstacle, cave.doors[1].hole_tree = nil, nil
    cave.tree:remove_obstacle(cave.tree:obstacles()[1].id)
    w:reapply_hole_doors("cave")
    assert.equal("blocked", (cave.tree:locate { 4.25, 6, 8 }))
    assert.same({ min = { 4, 5, 7 }, max = { 4.5, 7, 9 } }, cave.doors[1].doorway)
    w:set_door("cave", 1, true)
    assert.same({}, w.tree:obstacles())
    assert.same({}, cave.tree:obstacles())
  end)

  it("an edit refused part way (a path server has requests out) changes nothing; retried, it applies", function()
    local cave = w.holes[1]
    w:door_box("cave", 2, BOX2)
    local d = cave.doors[2]
    local rev = w.door_revision or 0
    for _, busy in ipairs { "world", "hole" } do
      -- the world tree's server: the first step is refused; the hole tree's: the second, the first undone
      local ps = octonav.pathserver.new(busy == "world" and w.tree or cave.tree, { workers = 1 })
      ps:submit(busy == "world" and OUT or { 6, 6, 6 }, busy == "world" and { 2, 6, 2 } or { 10, 6, 10 })
      assert.has_error(function() w:set_door("cave", 2, false) end,
        "world:set_door: tree is in use by a running search")
      assert.is_true(d.open ~= false)
      assert.equal(rev, w.door_revision or 0)
      assert.same({}, w.tree:obstacles())
      assert.same({}, cave.tree:obstacles())
      assert.equal("free", (w.tree:locate(MID2)))
      assert.is_nil(d.world_obstacle)
      assert.is_nil(d.hole_obstacle)
      while ps:pending() > 0 do ps:update(true) end
      ps:close()
    end
    -- the server drained: the same call closes the door
    w:set_door("cave", 2, false)
    assert.is_false(d.open)
    assert.equal(rev + 1, w.door_revision)
    assert.equal("blocked", (w.tree:locate(MID2)))
    assert.equal("blocked", (cave.tree:locate(MID2)))
    -- opening refused half way (the hole tree's remove): the world tree's obstacle is put back
    local ps = octonav.pathserver.new(cave.tree, { workers = 1 })
    ps:submit({ 6, 6, 6 }, { 10, 6, 10 })
    assert.has_error(function() w:set_door("cave", 2, true) end,
      "world:set_door: tree is in use by a running search")
    assert.is_false(d.open)
    assert.equal(rev + 1, w.door_revision)
    assert.equal("blocked", (w.tree:locate(MID2)))
    assert.equal(1, #w.tree:obstacles())
    assert.equal(1, #cave.tree:obstacles())
    while ps:pending() > 0 do ps:update(true) end
    ps:close()
    w:set_door("cave", 2, true)
    assert.equal(rev + 2, w.door_revision)
    assert.same({}, w.tree:obstacles())
    assert.same({}, cave.tree:obstacles())
    assert.equal("free", (w.tree:locate(MID2)))
  end)
end)
