-- spec/11-navigator_spec.lua -- octonav.navigator: an agent simulated frame by frame over hand-built
-- worlds (docs/world.md) with real octonav trees, and end to end on a baked world when octonav.bake
-- and octonav.world exist.
-- Run: busted --lua=lua5.4 spec/11-navigator_spec.lua
--
-- The agent moves `speed` toward the waypoint each frame (onto it when closer). Every segment it
-- walks must pass tree:visible on the tree the navigator says it is on (nav:tree()), or lie on a door's
-- inside-outside segment when it is on a door leg; no frame may pass q:step more expansions than the
-- frame's budget (q:step is wrapped for the whole file) nor spend more checks than checks_per_frame.
-- On baked meshes (opt-in) the walk is checked by the segments from where the agent got each waypoint
-- to that waypoint (see expect_valid_walk). A streaming case makes a search wait for an unloaded tile.
--
-- The hand world is the one of spec/10 (see there), plus, with obstacles = true: a fin and a floor in
-- tile 0, a post and a shelf in tile 1, and a sealed pocket (a hollow box) in tile 1.
local octonav = require "octonav"
local navigator = require "octonav.navigator"

local hw = dofile("spec/support/handworld.lua")
local dist, make_world = hw.dist, hw.make_world

-- fmt(p) = "(x, y, z)" with %.6g; step_toward(pos, wp, speed): one frame's move
-- (spec/support/geometry.lua)
local geometry = dofile("spec/support/geometry.lua")
local fmt, step_toward = geometry.formatter(6), geometry.step_toward
---------------------------------------------------------------------------------------------------
-- Counting q:step (for the whole file) and the simulated agent.

-- step_calls.frame: the expansions q:step really did this frame, over all queries: a running step(n)
-- did exactly n; a step that finished did info.expansions minus what the search had done before.
-- step_calls.asked: the largest n any single call got this frame.
local step_calls = { frame = 0, total = 0, asked = 0 }
local qmethods, real_step, real_start
do
  local probe = octonav.query.new(octonav.tree.new { depth = 1 }, { max_nodes = 16 })
  qmethods = getmetatable(probe).__index
  real_step, real_start = qmethods.step, qmethods.start
  probe:close()
end
local done_by = setmetatable({}, { __mode = "k" }) -- query -> expansions of its running search
local unsure = setmetatable({}, { __mode = "k" }) -- queries whose search waited for a tile

local function counting_start(q, ...)
  done_by[q] = 0
  unsure[q] = nil
  return real_start(q, ...)
end

local function counting_step(q, n)
  step_calls.asked = math.max(step_calls.asked, n)
  local st, extra = real_step(q, n)
  local did
  if st == "running" then
    did = n
  elseif st == "loading" or unsure[q] then
    -- streaming: what a call that waited expanded is unknown; count it all, as the navigator does
    unsure[q] = st == "loading" or nil
    did = n
  else
    local _, info = q:result()
    did = (info.expansions or done_by[q]) - done_by[q]
  end
  assert(did >= 0 and did <= n)
  done_by[q] = done_by[q] + did
  step_calls.frame = step_calls.frame + did
  step_calls.total = step_calls.total + did
  return st, extra
end

local function on_door(w, a, b)
  for _, h in ipairs(w.holes) do
    for _, d in ipairs(h.doors) do
      local len = dist(d.inside, d.outside)
      if math.abs(dist(d.inside, a) + dist(a, d.outside) - len) < 1e-9
        and math.abs(dist(d.inside, b) + dist(b, d.outside) - len) < 1e-9 then
        return true
      end
    end
  end
  return false
end

-- Runs the agent from `start` to `goal`. opts: speed (0.5), budget (per-frame expansions, default
-- the navigator's), frames (max, 5000), nav (an existing navigator), on_frame(frame, status, wp, pos, nav)
-- (return true to stop). Returns a record { status, reason|waypoint, pos, walked = { {from, to,
-- tree} }, frames, length, nav }.
local function run(w, start, goal, opts)
  opts = opts or {}
  local nav = opts.nav or navigator.new(w, opts.nav_opts)
  local budget = opts.budget or nav.cfg.query_budget
  local speed = opts.speed or 0.5
  local pos = { start[1], start[2], start[3] }
  local walked, length = {}, 0
  local legs = {} -- { from, to, tree }: where the agent was when it got a new waypoint, the waypoint
  local awp, atree
  nav:go(goal)
  local status, second
  local frames = 0
  for frame = 1, opts.frames or 5000 do
    frames = frame
    step_calls.frame, step_calls.asked = 0, 0
    local before = nav:stats()
    local checks_before = before.checks
    status, second = nav:update(pos, opts.budget)
    assert.equal(step_calls.frame, nav:stats().expansions - before.expansions)
    assert(step_calls.frame <= budget,
      ("frame %d: q:step did %d expansions, budget %d"):format(frame, step_calls.frame, budget))
    assert(step_calls.asked <= budget)
    assert(nav:stats().checks - checks_before <= nav.cfg.checks_per_frame, "too many checks in one frame")
    if opts.on_frame and opts.on_frame(frame, status, second, pos, nav) then break end
    if status == "arrived" or status == "failed" or status == "idle" then break end
    if status == "moving" then
      local wp = second
      local tree = nav:tree()
      if not awp or awp[1] ~= wp[1] or awp[2] ~= wp[2] or awp[3] ~= wp[3] or atree ~= tree then
        awp, atree = { wp[1], wp[2], wp[3] }, tree
        legs[#legs + 1] = { from = { pos[1], pos[2], pos[3] }, to = awp, tree = tree }
      end
      local to = step_toward(pos, wp, speed)
      walked[#walked + 1] = { from = pos, to = to, tree = tree, leg = #legs }
      length = length + dist(pos, to)
      pos = to
    else
      assert.equal("planning", status)
    end
  end
  if os.getenv("OCTONAV_VERBOSE") then
    io.stderr:write(("run %s -> %s: %s after %d frames, walked %.2f in %d moves, %s\n"):format(fmt(start),
      fmt(goal), tostring(status), frames, length, #walked,
      (function() local t = nav:stats() return ("%d expansions, %d searches, %d checks"):format(t.expansions, t.searches, t.checks) end)()))
  end
  return { status = status, second = second, pos = pos, walked = walked, legs = legs, frames = frames,
    length = length, nav = nav }
end

-- Distance from point p to the segment a-b.
local function seg_dist(p, a, b)
  local d = { b[1] - a[1], b[2] - a[2], b[3] - a[3] }
  local dd = d[1] * d[1] + d[2] * d[2] + d[3] * d[3]
  local t = dd > 0 and ((p[1] - a[1]) * d[1] + (p[2] - a[2]) * d[2] + (p[3] - a[3]) * d[3]) / dd or 0
  t = math.max(0, math.min(1, t))
  return dist(p, { a[1] + t * d[1], a[2] + t * d[2], a[3] + t * d[3] })
end

-- Strict: every step the agent took passes tree:visible (or lies along a door), or lies on the
-- waypoint segment it was walked along (within 1e-9; that segment passes, checked first): a segment
-- through a lattice edge or corner exactly passes the visibility rule by the exact tie there (touching
-- a blocked voxel's edge is allowed), and a step along it whose end points carry floating-point error
-- may miss that tie by an ulp and cut the blocked voxel. Loose (for meshes): the waypoint segments
-- only.
local function expect_valid_walk(w, r, loose)
  for i, seg in ipairs(r.legs) do
    if seg.tree then
      assert(seg.tree:visible(seg.from, seg.to),
        ("waypoint segment %d %s -> %s is not visible"):format(i, fmt(seg.from), fmt(seg.to)))
    else
      assert(on_door(w, seg.from, seg.to),
        ("waypoint segment %d %s -> %s is on no tree and not along a door"):format(i, fmt(seg.from), fmt(seg.to)))
    end
  end
  if loose then return end
  for i, seg in ipairs(r.walked) do
    local leg = r.legs[seg.leg]
    if seg.tree then
      assert(seg.tree:visible(seg.from, seg.to) or (leg and leg.tree == seg.tree and
        seg_dist(seg.from, leg.from, leg.to) <= 1e-9 and seg_dist(seg.to, leg.from, leg.to) <= 1e-9),
        ("walked segment %d %s -> %s is not visible"):format(i, fmt(seg.from), fmt(seg.to)))
    else
      assert(on_door(w, seg.from, seg.to),
        ("walked segment %d %s -> %s is on no tree and not along a door"):format(i, fmt(seg.from), fmt(seg.to)))
    end
  end
end

local function expect_arrival(w, start, goal, opts)
  local r = run(w, start, goal, opts)
  assert.equal("arrived", r.status, "status " .. tostring(r.status) .. " " .. tostring(r.second))
  assert.same(goal, r.second)
  assert.is_true(dist(r.pos, goal) <= r.nav.cfg.arrive_distance + 1e-12)
  expect_valid_walk(w, r, opts and opts.loose)
  assert.is_true(r.length >= dist(start, r.pos) - 1e-9)
  return r
end

---------------------------------------------------------------------------------------------------

describe("octonav.navigator", function()
  setup(function()
    qmethods.step, qmethods.start = counting_step, counting_start
  end)
  teardown(function() qmethods.step, qmethods.start = real_step, real_start end)

  local w2 = make_world { obstacles = true }
  local w3 = make_world { tiles = 3, obstacles = true }
  local t0, t1, t2 = { 2, 8, 2 }, { 30, 6, 2 }, { 46, 8, 8 }
  local cave, den = { 6, 6, 8 }, { 24, 6, 8 }

  it("the obstacles leave the spec's points where the spec thinks", function()
    for _, p in ipairs { t0, t1 } do assert.equal("free", (w2.tree:locate(p))) end
    assert.equal("free", (w3.tree:locate(t2)))
    assert.equal("free", (w2.tree:locate { 28.5, 14, 14 }))
    assert.equal("cave", w2:in_hole(cave))
    assert.equal("den", w2:in_hole(den))
  end)

  it("outside -> outside across a tile face, within every frame's budget", function()
    for _, budget in ipairs { 1, 7, 200 } do
      local r = expect_arrival(w2, t0, t1, { budget = budget })
      assert.equal(2, #r.nav:route())
      assert.is_true(r.nav:stats().expansions > 0)
    end
  end)

  it("outside -> hole, hole -> outside, hole -> outside -> hole over three tiles", function()
    local r = expect_arrival(w3, t2, cave, { budget = 10 })
    assert.equal(4, #r.nav:route())
    r = expect_arrival(w3, cave, t2, { budget = 10 })
    assert.equal(4, #r.nav:route())
    r = expect_arrival(w3, cave, den, { budget = 10, speed = 0.7 })
    assert.equal(4, #r.nav:route())
    r = expect_arrival(w3, den, t0, { budget = 10, speed = 0.3 })
    assert.equal(3, #r.nav:route())
  end)

  it("hole -> hole through one tile", function()
    local wn = make_world { obstacles = true, nook = true }
    local r = expect_arrival(wn, cave, { 3, 13, 14 }, { budget = 20 })
    assert.equal(3, #r.nav:route())
    r = expect_arrival(wn, { 2, 12, 15 }, den, { budget = 20 })
    assert.equal(4, #r.nav:route())
  end)

  it("inside one cell: one search", function()
    local r = expect_arrival(w2, cave, { 10, 7, 6 })
    assert.equal(1, #r.nav:route())
    r = expect_arrival(w2, t0, { 12, 12, 15 }, { budget = 3 })
    assert.equal(1, r.nav:stats().searches)
  end)

  it("a closed door: the agent goes round through the other one", function()
    local w = make_world { obstacles = true }
    w:set_door(1, 2, false)
    local r = expect_arrival(w, t1, cave)
    assert.equal(1, r.nav:route()[2].via)
    for _, seg in ipairs(r.walked) do
      if not seg.tree then
        assert.is_false(on_door({ holes = { { doors = { w.holes[1].doors[2] } } } }, seg.from, seg.to))
      end
    end
  end)

  it("fails with the planner's reason", function()
    local w = make_world { obstacles = true }
    w:set_door(1, 1, false)
    w:set_door(1, 2, false)
    local r = run(w, t1, cave)
    assert.same({ "failed", "door_closed" }, { r.status, r.second })
    assert.same({ "failed", "door_closed" }, { r.nav:update(t1) })
    assert.same({ "failed", "door_closed" }, { r.nav:status() })
    r = run(w2, { -3, 8, 8 }, t1)
    assert.same({ "failed", "start_outside" }, { r.status, r.second })
    r = run(make_world { closed_wall = 1 }, t0, t1)
    assert.same({ "failed", "unreachable" }, { r.status, r.second })
  end)

  it("fails with the query's reason: a sealed pocket inside a tile", function()
    local r = run(w2, t0, { 28.5, 14, 14 }, { budget = 50 })
    assert.same({ "failed", "unreachable" }, { r.status, r.second })
    expect_valid_walk(w2, r)
  end)

  it("searches consecutive tile steps with one query toward the last one's exit", function()
    -- the route has two tile steps (a connect block between them); the walk is one search, whatever
    -- exit_candidates says (it no longer applies: legs end at a door or at the goal)
    for _, n in ipairs { 1, 3 } do
      local r = expect_arrival(w2, t0, t1, { nav_opts = { exit_candidates = n } })
      assert.equal(2, #r.nav:route())
      assert.equal(1, r.nav:stats().searches)
    end
  end)

  it("budget 0 makes no progress; the query work resumes with budget", function()
    local nav = navigator.new(w2)
    nav:go(t1)
    for _ = 1, 5 do
      step_calls.frame = 0
      assert.same({ "planning" }, { nav:update(t0, 0) })
      assert.equal(0, step_calls.frame)
    end
    local st = nav:update(t0, 1000)
    assert.equal("moving", st)
  end)

  it("cancel stops; go starts again", function()
    local nav = navigator.new(w3)
    local r = run(w3, t2, cave, { nav = nav, on_frame = function(frame) return frame == 40 end })
    assert.equal("moving", r.status)
    nav:cancel()
    assert.same({ "idle" }, { nav:status() })
    assert.same({ "idle" }, { nav:update(r.pos) })
    assert.same({ "idle" }, { nav:update(r.pos, 5) })
    assert.is_nil(nav:route())
    assert.is_nil(nav:tree())
    -- from where it stopped, to a new goal
    local r2 = run(w3, r.pos, t0, { nav = nav })
    assert.equal("arrived", r2.status)
    expect_valid_walk(w3, r2)
    -- cancel in the middle of a search
    nav:go(t2)
    assert.equal("planning", (nav:update(t0, 1)))
    nav:cancel()
    assert.equal("idle", (nav:update(t0)))
  end)

  it("a new goal while moving replans from where the agent is", function()
    local nav = navigator.new(w2)
    local r = run(w2, t0, t1, { nav = nav, on_frame = function(frame) return frame == 30 end })
    assert.equal("moving", r.status)
    local r2 = expect_arrival(w2, r.pos, cave, { nav = nav })
    assert.equal("cave", w2:in_hole(r2.pos))
  end)

  it("a tile changed under the path: it plans again from where the agent is (replan = false: it walks on)", function()
    -- a slab dropped across the way in tile 1 while the agent walks in tile 0: the path searched
    -- before runs through it; with replan the navigator sees the path go stale (path:is_valid) and
    -- plans again from the agent's position, so every step walked is clear of the slab
    local SLAB = { { 20, 0, 0 }, { 21, 12, 16 } }
    for _, replan in ipairs { true, false } do
      local w = make_world { obstacles = true }
      local nav = navigator.new(w, { replan = replan })
      local dropped, through = false, false
      local r = run(w, t0, t1, { nav = nav, frames = replan and 5000 or 1500, on_frame = function(_, status, _, pos)
        if not dropped and status == "moving" and pos[1] > 6 then
          assert.is_true(w.tree:visible({ 19, 6, 2 }, { 22, 6, 2 }))
          w.tree:add_box(SLAB[1], SLAB[2])
          dropped = true
        end
        if dropped and pos[1] > 20 and pos[1] < 21 and pos[2] < 12 then through = true end
      end })
      assert.is_true(dropped)
      if replan then
        assert.equal("arrived", r.status)
        assert.equal(1, nav:stats().replans)
        assert.is_false(through)
        expect_valid_walk(w, r) -- on the changed tree: every step clear of the slab
      else
        assert.equal(0, nav:stats().replans)
        -- the stale path runs into the slab: the agent either walks through it or stalls at its face
        -- (measured: it stalls at x = 20 heading for a waypoint beyond, "moving" to the frame limit)
        assert.is_true(through or r.status ~= "arrived", "arrived without replanning")
      end
    end
    assert.error_matches(function() navigator.new(w2, { replan = 1 }) end, "option 'replan' must be a boolean", 1, true)
    assert.is_true(navigator.new(w2).cfg.replan) -- the default
  end)

  it("an agent stopped on the face of a blocked leaf starts from there (nudged off the face)", function()
    -- the post of tile 1 blocks the leaves x in [18, 19), y in [3, 16), z in [0, 5): a point on its -x
    -- face (x = 18) reads blocked (a face belongs to the leaf on its + side), and so the C query says;
    -- the navigator starts the search NUDGE leaves off the face, on the free side, and walks from there
    local q = octonav.query.new(w2.tree)
    local face, within, edge = { 18, 8, 2.5 }, { 18 + 0.5 * navigator.FACE_EPS, 8, 2.5 }, { 18, 3, 2.5 }
    for _, p in ipairs { face, within, edge } do
      assert.equal("blocked", (w2.tree:locate(p)))
      local _, info = q:find(p, t0)
      assert.equal("start_blocked", info.reason)
      local nav = navigator.new(w2)
      local r = run(w2, p, t0, { nav = nav })
      assert.equal("arrived", r.status, tostring(r.second))
      -- the first waypoint is in sight from the nudged start, NUDGE leaves from the face on the -x side
      -- (for the edge too: one axis is enough there), and every later step is in sight on the tree
      local s = { 18 - navigator.NUDGE, p[2], p[3] }
      assert.equal("free", (w2.tree:locate(s)))
      assert.is_true(w2.tree:visible(s, r.legs[1].to))
      for i = 2, #r.walked do
        local seg = r.walked[i]
        assert.is_true(seg.tree:visible(seg.from, seg.to), "walked segment " .. i)
      end
    end
    q:close()
    -- inside the blocked leaf, off its faces: the search still fails start_blocked
    local r = run(w2, { 18.5, 8, 2.5 }, t0)
    assert.same({ "failed", "start_blocked" }, { r.status, r.second })
  end)

  it("a replan due while the agent crosses a door waits until it is through", function()
    -- into the cave through its west door; on the door leg (inside the doorway, where neither tree
    -- holds the agent) a box dropped into the cave makes the hole step's path stale: the navigator
    -- crosses first and plans again from the door's inside point
    local w = make_world { obstacles = true }
    local nav = navigator.new(w)
    local crossing, dropped, replanned_at = false, false, nil
    local r = run(w, t0, cave, { nav = nav, speed = 0.25, on_frame = function(_, _, _, pos, n)
      local leg = n.legs and n.legs[n.leg_i]
      if leg and leg.kind == "door" and not dropped and pos[1] > 4.1 then
        crossing = true
        assert.equal("blocked", (w.tree:locate(pos))) -- in the doorway: the world tree blocks the cave
        w.holes[1].tree:add_box({ 8.5, 3, 5 }, { 9, 9, 7.5 })
        dropped = true
      end
      if dropped and not replanned_at and n:stats().replans == 1 then replanned_at = { pos[1], pos[2], pos[3] } end
    end })
    assert.is_true(crossing)
    assert.equal("arrived", r.status, tostring(r.second))
    assert.equal(1, nav:stats().replans)
    assert.same({ 5.5, 6, 8 }, replanned_at) -- the door's inside point
  end)

  it("arrived stays arrived until the next go", function()
    local r = expect_arrival(w2, t0, { 12, 12, 15 })
    assert.same({ "arrived", { 12, 12, 15 } }, { r.nav:update(r.pos) })
  end)

  it("raises on misuse and rejects unknown options", function()
    assert.has_error(function() navigator.new(nil) end)
    assert.has_error(function() navigator.new(w2, { speed = 3 }) end,
      "octonav.navigator.new: unknown option 'speed'")
    assert.has_error(function() navigator.new(w2, { query_budget = 0 }) end)
    assert.has_error(function() navigator.new(w2, { checks_per_frame = 1.5 }) end)
    assert.has_error(function() navigator.new(w2, { arrive_distance = -1 }) end)
    local nav = navigator.new(w2)
    assert.has_error(function() nav:go { 1, 2 } end)
    nav:go(t1)
    assert.has_error(function() nav:update("here") end)
    assert.has_error(function() nav:update(t0, -1) end)
    assert.has_error(function() nav:update(t0, 2.5) end)
  end)
end)

---------------------------------------------------------------------------------------------------
-- End to end: bake a small world with octonav.bake, load it with octonav.world, walk it (skipped
-- while those modules do not exist). The same scene as spec/10's end-to-end part.

-- The baked world (bake_and_load), octonav.bake as call_bake and octonav.world as world_mod when they
-- are there (spec/support/bakedworld.lua); tmpdir(): a fresh empty directory (spec/support/files.lua)
local bw = dofile("spec/support/bakedworld.lua")
local has_bake, has_world, world_mod, call_bake = bw.has_bake, bw.has_world, bw.world_mod, bw.call_bake
local files = dofile("spec/support/files.lua")
local tmpdir = files.tmpdir

describe("octonav.navigator end to end", function()
  if not (has_bake and has_world) then
    pending("octonav.bake / octonav.world are not there yet")
    return
  end

  local dir, world
  setup(function()
    qmethods.step, qmethods.start = counting_step, counting_start
    dir = tmpdir()
    world = bw.bake_and_load(dir)
  end)

  teardown(function()
    qmethods.step, qmethods.start = real_step, real_start
    if world and world.close then world:close() end
    if dir then files.rm_rf(dir) end
  end)

  it("walks the four kinds of route on a baked world", function()
    local t0, t1, cave = { 2, 8, 2 }, { 30, 12, 14 }, { 7, 6, 8 }
    for _, ab in ipairs { { t0, t1 }, { t1, cave }, { cave, t1 }, { cave, { 8, 5, 6 } } } do
      local r = expect_arrival(world, ab[1], ab[2], { budget = 25 })
      assert.is_true(#r.nav:route() >= 1)
    end
  end)

  it("waits for a streamed tile and resumes", function()
    local streamer = octonav.core.streamer
    if not streamer then
      pending("no octonav.core.streamer")
      return
    end
    -- no agents: the streamer unloads every tile not pinned. Both are pinned while the route is
    -- planned (the planner reads the start's and goal's tiles), then tile 1 goes.
    local s = streamer.new(world.tree, dir, { load_padding = 0.5, unload_padding = 1, workers = 1 })
    s:force_load { 0, 0, 0 }
    s:force_load { 1, 0, 0 }
    s:update(true)
    local waits = 0
    -- budget 1 and a goal out of sight (behind the wall, below the window): the one search over
    -- both tiles is still running when tile 1 goes
    assert.is_false(world.tree:visible({ 2, 3, 2 }, { 30, 3, 2 }))
    expect_arrival(world, { 2, 3, 2 }, { 30, 3, 2 }, {
      budget = 1,
      on_frame = function(frame, status, _, _, nav)
        if frame == 1 then
          s:force_unload { 1, 0, 0 }
          s:update(true)
          assert.is_false(s:is_loaded { 1, 0, 0 })
        end
        local tile = status == "planning" and nav:stats().loading
        if tile then
          waits = waits + 1
          s:force_load(tile)
          s:update(true)
        end
      end,
    })
    assert.is_true(waits >= 1)
    assert.is_true(s:is_loaded { 1, 0, 0 })
    s:close()
    -- both tiles stay loaded for the next test
    assert.equal(2, world.tree:stats().tiles_loaded)
  end)

  it("a closed door on a baked world", function()
    world:set_door(1, 2, false)
    expect_arrival(world, { 30, 12, 14 }, { 7, 6, 8 }, { budget = 25 })
    world:set_door(1, 1, false)
    local r = run(world, { 30, 12, 14 }, { 7, 6, 8 })
    assert.same({ "failed", "door_closed" }, { r.status, r.second })
    world:set_door(1, 1, true)
    world:set_door(1, 2, true)
  end)
end)

---------------------------------------------------------------------------------------------------
-- Opt-in: the meshes of ../shared/data/meshes baked with octonav.bake (straight weights), random
-- pairs of free points (seeded). Skipped when the meshes or the bake are absent.

describe("octonav.navigator on baked meshes (opt-in: ../shared/data/meshes)", function()
  local meshes = "../shared/data/meshes"
  local exists = files.exists
  if not (has_bake and has_world) then
    pending("octonav.bake / octonav.world are not there yet")
    return
  end
  setup(function() qmethods.step, qmethods.start = counting_step, counting_start end)
  teardown(function() qmethods.step, qmethods.start = real_step, real_start end)

  for _, c in ipairs {
    { "house.obj", { min = { -11, -0.1, -9 }, max = { 8.8, 13.9, 8.6 } }, 0.125, 6 },
    { "dungeon.obj", { min = { -25.1, -0.1, -90.1 }, max = { 49.4, 40.2, 9 } }, 0.5, 6 },
  } do
    if not exists(meshes .. "/" .. c[1]) then
      pending(c[1] .. ": ../shared/data/meshes is absent")
    else
      it(c[1] .. ": agents reach their goals along valid segments within their budgets", function()
        local dir = tmpdir()
        local ok, err = call_bake { range = c[2], scale = c[3], depth = c[4],
          geometry = { { obj = meshes .. "/" .. c[1] } }, output = dir, progress = function() end }
        assert(ok, tostring(err))
        local w = assert(world_mod.load(dir))
        local seed = 12345
        local function rnd()
          seed = (seed * 1103515245 + 12345) % 2147483648
          return seed / 2147483648
        end
        local o, n, T = w.origin, w.tiles, w.tile_size
        local function free_point()
          for _ = 1, 10000 do
            local p = { o[1] + rnd() * n[1] * T, o[2] + rnd() * n[2] * T, o[3] + rnd() * n[3] * T }
            if w.tree:locate(p) == "free" then return p end
          end
          error("no free point")
        end
        local q = octonav.query.new(w.tree)
        local solvable, arrived = 0, 0
        for _ = 1, 25 do
          local a, b = free_point(), free_point()
          local direct = q:find(a, b)
          local r = run(w, a, b, { budget = 60, speed = 2 * c[3], frames = 20000 })
          assert(r.status == "arrived" or r.status == "failed", "stuck: " .. tostring(r.status))
          if r.status == "failed" then
            assert.is_string(r.second)
          else
            assert.is_true(dist(r.pos, b) <= r.nav.cfg.arrive_distance + 1e-12)
            arrived = arrived + 1
          end
          expect_valid_walk(w, r, true)
          if direct then solvable = solvable + 1 end
        end
        assert.is_true(arrived >= 0.8 * solvable, ("arrived %d of %d solvable"):format(arrived, solvable))
        w:close()
        files.rm_rf(dir)
      end)
    end
  end
end)
