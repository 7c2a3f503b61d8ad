-- spec/174-walk_streamed_steps_spec.lua -- the C walk's hand-back of a streamed navigator at a route
-- step's end (session 31, h31hard): core.walker's w:stream(k, streamer, agent, rel) (csrc/lua/lua_walk.c)
-- as lua/octonav/navgroup_walk.lua's attach gives it (rel: the last point of the next step whose locks
-- are held, navlocks.lua's release_passed).
--   Before, no test walked a streamed navigator over a route of more than one step (spec/170's routes
--   on its 3 x 1 x 3 pack are one tile step each: the planner joins consecutive tile steps into one,
--   planner.lua Job:legs, so a route has several steps only through holes: hole -> tiles -> hole).
--   1. Three navigators (replan = false: see run) each from a cave (a hole) at one end of a row of four
--      tiles to a cave at the other: routes of three steps (hole, the four tiles joined, hole). The C walk holds each on its
--      tile step (w:stream with rel, its last point), hands it back there, its hole step's locks
--      released before and the tile step's after, frame for frame as the Lua walk (navgroup_walk.STREAM
--      false) does, its agent where it is every frame; each arrives with the same length walked as
--      the Lua walk's and as an unstreamed world's walk, exactly.
--   2. core.walker directly, rel before the path's end: a slot walks (its agent moved) while its target
--      stays at or before rel, and is listed for Lua, unmoved and its agent not moved, at the update
--      whose target would pass rel; without rel the same update walks on.
--   3. Lifetimes (session 31's audit): a streamer closed while the walker holds its navigators (handed
--      back; the update raises as the Lua walk's does), the walker collected with streamed slots held,
--      and a slot parked after it was streamed (w:park now drops the streamer's reference: before, the
--      walker kept a closed streamer's userdata alive until the slot was attached again; the last test
--      failed on main).
-- Run: busted --lua=lua5.4 spec/174-walk_streamed_steps_spec.lua
--
-- The pack: 4 x 1 x 1 tiles of 32 leaves (depth 5, scale 1), a floor, three pillars in the row, and two
-- caves (holes at scale 0.5: the shells of [8,20] and [108,120] x [4,12] x [12,20], one door each facing
-- the row). Streamed with one worker, every tile and both holes loaded before the first frame (nothing
-- depends on the worker's speed). The budget's clock is the spec's own (it never advances); the agents
-- step SPEED a frame toward their waypoint.
local octonav = require "octonav"
local core = require "octonav.core"
local navigator = require "octonav.navigator"
local world_mod = require "octonav.world"
local gwalk = require "octonav.navgroup_walk"

local files = dofile("spec/support/files.lua")

local tmp = files.tracker(files.rm_rf)
local pack

local function box(a, b) return { box = { min = a, max = b } } end

-- A cave's shell: [x0, x0 + 12] x [4, 12] x [12, 20], walls 1 thick, a door gap y 7..9, z 15..17 in
-- its wall at x = dx (x0 or x0 + 11).
local function cave(g, x0, dx)
  local x1 = x0 + 12
  g[#g + 1] = box({ x0, 4, 12 }, { x1, 5, 20 })
  g[#g + 1] = box({ x0, 11, 12 }, { x1, 12, 20 })
  g[#g + 1] = box({ x0, 4, 12 }, { x1, 12, 13 })
  g[#g + 1] = box({ x0, 4, 19 }, { x1, 12, 20 })
  for _, x in ipairs({ x0, x0 + 11 }) do
    if x ~= dx then
      g[#g + 1] = box({ x, 4, 12 }, { x + 1, 12, 20 })
    else
      g[#g + 1] = box({ x, 4, 12 }, { x + 1, 12, 15 })
      g[#g + 1] = box({ x, 4, 17 }, { x + 1, 12, 20 })
      g[#g + 1] = box({ x, 4, 15 }, { x + 1, 7, 17 })
      g[#g + 1] = box({ x, 9, 15 }, { x + 1, 12, 17 })
    end
  end
end

local function bake_caves()
  local dir = tmp.dir(true)
  local g = { box({ 0, 0, 0 }, { 128, 2, 32 }),
    box({ 40, 0, 6 }, { 44, 32, 26 }), box({ 58, 0, 0 }, { 62, 20, 20 }), box({ 76, 12, 8 }, { 80, 32, 32 }) }
  cave(g, 8, 19)
  cave(g, 108, 108)
  local ok, err = octonav.bake {
    range = { min = { 0, 0, 0 }, max = { 128, 32, 32 } }, depth = 5, scale = 1, geometry = g,
    holes = {
      { name = "west", min = { 8, 4, 12 }, max = { 20, 12, 20 }, scale = 0.5, kind = "under_terrain",
        doors = { { inside = { 18.5, 8, 16 }, outside = { 21.5, 8, 16 } } } },
      { name = "east", min = { 108, 4, 12 }, max = { 120, 12, 20 }, scale = 0.5, kind = "under_terrain",
        doors = { { inside = { 109.5, 8, 16 }, outside = { 106.5, 8, 16 } } } },
    },
    output = dir, progress = function() end,
  }
  assert(ok, tostring(err))
  return dir
end

setup(function() pack = bake_caves() end)
teardown(function()
  gwalk.STREAM = true
  tmp.cleanup()
end)

-- from a cave to the other (each pair: start, goal)
local PAIRS = {
  { { 10, 8, 14 }, { 118, 8, 18 } },
  { { 12, 6, 18 }, { 116, 10, 14 } },
  { { 118, 9, 15 }, { 11, 7, 17 } },
}
local FRAMES, SPEED = 200, 1.5

local function dist(a, b)
  local dx, dy, dz = a[1] - b[1], a[2] - b[2], a[3] - b[3]
  return math.sqrt(dx * dx + dy * dy + dz * dz)
end

-- The streamer of `world` with every tile and hole loaded (10 s at most for the worker).
local function loaded_streamer(world)
  local s = octonav.streamer.new(world, { workers = 1, load_padding = 0, unload_padding = 8 })
  for i = 0, 3 do s:force_load({ i, 0, 0 }) end
  s:force_load_hole(1)
  s:force_load_hole(2)
  local t0 = core.clock()
  local function all()
    for i = 0, 3 do if not s:is_loaded({ i, 0, 0 }) then return false end end
    return s:hole_loaded(1) and s:hole_loaded(2)
  end
  s:update()
  while not all() and core.clock() - t0 < 10 do s:update() end
  assert.is_true(all(), "tiles and holes loaded")
  return s
end

-- One run. mode: "c" (streamed, the C walk holding streamed navigators), "lua" (streamed, visited in
-- Lua: gwalk.STREAM false), "plain" (the pack loaded whole, no streamer). -> the log (a line a frame),
-- the length each agent walked, and for "c" what the walk did: { rels = w:stream's rel values given,
-- handed = hand-backs at a step's end (a navigator held at a frame's end whose locks' released count
-- grew at the next), held = frames a navigator was held walking, at_agent / checked = frames an agent
-- stood where its navigator did / (navigator, frame) pairs with an agent, steps = the routes' step
-- counts }.
local function run(mode)
  gwalk.STREAM = mode ~= "lua"
  local world = assert(world_mod.load(pack))
  local s = mode ~= "plain" and loaded_streamer(world) or nil
  local budget = navigator.budget { ms = 4, clock = function() return 0 end }
  local navs, pos, st, wp, len = {}, {}, {}, {}, {}
  for i, pr in ipairs(PAIRS) do
    -- (replan = false: with replan on, a route whose known steps are on several trees, a hole's and
    -- the world's, is never held: navgroup_walk.attach asks for the stale-path gate, whose gate_tree
    -- is false then, navigator_search.lua append)
    navs[i] = navigator.new(world, { budget = budget, streamer = s, replan = false })
    navs[i]:go(pr[2])
    pos[i], len[i] = { pr[1][1], pr[1][2], pr[1][3] }, 0
  end
  -- (w:stream's rel, seen through the walker's methods: navgroup_walk.attach calls them)
  local wm = getmetatable(core.walker()).__index
  local real_stream = wm.stream
  local out = { rels = {}, handed = {}, held = 0, at_agent = 0, checked = 0, steps = {} }
  wm.stream = function(w, k, strm, agent, rel)
    out.rels[#out.rels + 1] = rel or false
    return real_stream(w, k, strm, agent, rel)
  end
  local log, was_held, rel_before = {}, {}, {}
  local ok, err = pcall(function()
    for f = 1, FRAMES do
      if s then s:update() end
      budget:frame()
      budget:update(navs, pos, st, wp)
      local line = {}
      for i, nav in ipairs(navs) do
        local p, w = pos[i], wp[i]
        local released = s and nav.locks.released or 0
        if was_held[i] and released > rel_before[i] then
          out.handed[#out.handed + 1] = ("nav %d frame %d: step %d released"):format(i, f, released)
        end
        was_held[i] = nav.walker ~= nil and nav.walk_sm and true or false
        if was_held[i] then out.held = out.held + 1 end
        rel_before[i] = released
        if nav.cells then out.steps[i] = #nav.cells end
        if s and nav.agent then
          out.checked = out.checked + 1
          local ap = s:agent_position(nav.agent)
          if ap[1] == p[1] and ap[2] == p[2] and ap[3] == p[3] then out.at_agent = out.at_agent + 1 end
        end
        line[i] = ("%s %.17g,%.17g,%.17g r%d p%d"):format(st[i], p[1], p[2], p[3], released, nav.replans)
        if type(w) == "table" then line[i] = line[i] .. (" w%.17g,%.17g,%.17g"):format(w[1], w[2], w[3]) end
        if st[i] == "moving" and type(w) == "table" then -- (a step of SPEED toward the waypoint)
          local d = dist(p, w)
          local t = d > SPEED and SPEED / d or 1
          local np = { p[1] + (w[1] - p[1]) * t, p[2] + (w[2] - p[2]) * t, p[3] + (w[3] - p[3]) * t }
          len[i] = len[i] + dist(p, np)
          pos[i] = np
        end
      end
      log[f] = table.concat(line, " | ")
    end
  end)
  wm.stream = real_stream
  for _, nav in ipairs(navs) do nav:close() end
  if s then s:close() end
  world:close()
  gwalk.STREAM = true
  assert(ok, err)
  return log, len, out
end

describe("the C walk with a streamed navigator on a route of several steps", function()
  it("hands it back at its tile step's end, its locks released as the Lua walk's, and it arrives with the same length", function()
    local clog, clen, c = run("c")
    local llog, llen, l = run("lua")
    local plog, plen = run("plain")
    -- three steps each: its start's hole, the four tiles joined, its goal's hole
    assert.are.same({ 3, 3, 3 }, c.steps)
    -- held on the tile step (w:stream with rel: the tile step's last point), in Lua with STREAM false
    assert.is_true(c.held > 60, "navigator-frames held: " .. c.held)
    assert.are.equal(0, l.held)
    assert.is_true(#c.rels >= 3, "w:stream calls: " .. #c.rels)
    for _, rel in ipairs(c.rels) do assert.is_true(rel == false or (type(rel) == "number" and rel >= 1 and rel % 1 == 0)) end
    local with_rel = 0
    for _, rel in ipairs(c.rels) do if rel then with_rel = with_rel + 1 end end
    assert.is_true(with_rel >= 3, "w:stream calls with rel: " .. with_rel)
    -- each navigator handed back by the C walk at its tile step's end, and the step's locks released
    -- then (step 2: step 1, the start's hole, was released before the tile step was held)
    assert.are.same({ "nav 1", "nav 2", "nav 3" }, (function()
      local who = {}
      for _, h in ipairs(c.handed) do
        local n, r = h:match("^(nav %d) frame %d+: step (%d+) released$")
        assert.are.equal("2", r, h)
        who[#who + 1] = n
      end
      table.sort(who)
      return who
    end)())
    -- every agent where its navigator is after each frame
    assert.is_true(c.checked > 3 * 60)
    assert.are.equal(c.checked, c.at_agent)
    -- the answers, positions, waypoints, released steps: the Lua walk's, frame for frame
    for f = 1, FRAMES do assert.are.equal(llog[f], clog[f], "frame " .. f) end
    local last = clog[FRAMES]
    assert.are.equal(3, select(2, last:gsub("arrived", "")), last)
    -- the lengths walked: the same, exactly, streamed or not, C walk or Lua's
    for i = 1, #PAIRS do
      assert.are.equal(llen[i], clen[i])
      assert.are.equal(plen[i], clen[i])
      assert.is_true(clen[i] > 100, "length " .. clen[i])
    end
    -- (the unstreamed world's answers are the same too, but for the released steps: no locks there)
    for f = 1, FRAMES do
      assert.are.equal((plog[f]:gsub(" r%d+ ", " ")), (clog[f]:gsub(" r%d+ ", " ")), "frame " .. f)
    end
  end)
end)

describe("core.walker's w:stream rel", function()
  it("walks a slot while its target stays within rel, and lists it for Lua, unmoved, when it would pass rel", function()
    local world = assert(world_mod.load(pack))
    local s = loaded_streamer(world)
    -- a straight path through free space along the row (no line of sight asked: checks 0)
    local path = { { 24, 8, 29 }, { 34, 8, 29 }, { 50, 8, 29 }, { 70, 8, 29 } }
    local results = {}
    for _, rel in ipairs({ 2, false }) do
      local agent = s:add_agent({ 24, 8, 29 })
      local w, nav = core.walker(), {}
      w:attach(1, nav, world.tree, path, 2, nil, nil, 0, 1, 0, nil, nil, nil, 1e-6)
      w:stream(1, s.core, agent, rel or nil)
      local navs, st, wp, ret = { nav }, {}, {}, {}
      -- short of path[2]: walked, the agent moved
      local nret, used, walked = w:walk(navs, { { 30, 8, 29 } }, st, wp, ret, 0)
      assert.are.same({ 0, 0, 1 }, { nret, used, walked })
      assert.are.equal("moving", st[1])
      assert.are.equal(path[2], wp[1])
      assert.are.same({ 30, 8, 29 }, s:agent_position(agent))
      -- on path[2]: its target would be path[3]
      st[1], wp[1] = nil, nil
      nret, used, walked = w:walk(navs, { { 34, 8, 29 } }, st, wp, ret, 0)
      assert.are.equal(0, used)
      results[rel and "rel" or "none"] = { nret, walked, ret[1], st[1], wp[1], s:agent_position(agent) }
      assert.are.equal(nav, (w:take(1)))
      assert.is_nil((w:take(1))) -- (taken: the slot is free)
      s:remove_agent(agent)
    end
    -- with rel 2: listed for Lua (ret {1}), not walked, no answer written, the agent not moved
    local r = results.rel
    assert.are.equal(1, r[1])
    assert.are.equal(0, r[2])
    assert.are.equal(1, r[3])
    assert.is_nil(r[4])
    assert.is_nil(r[5])
    assert.are.same({ 30, 8, 29 }, r[6])
    -- without rel: walked on to path[3], the agent moved
    r = results.none
    assert.are.equal(0, r[1])
    assert.are.equal(1, r[2])
    assert.are.equal("moving", r[4])
    assert.are.equal(path[3], r[5])
    assert.are.same({ 34, 8, 29 }, r[6])
    s:close()
    world:close()
  end)

  it("hands the state back unadvanced at rel: w:take gives the target rel", function()
    local world = assert(world_mod.load(pack))
    local s = loaded_streamer(world)
    local path = { { 24, 8, 29 }, { 34, 8, 29 }, { 50, 8, 29 }, { 70, 8, 29 } }
    local agent = s:add_agent({ 24, 8, 29 })
    local w, nav = core.walker(), {}
    w:attach(1, nav, world.tree, path, 2, nil, nil, 0, 1, 0, nil, nil, nil, 1e-6)
    w:stream(1, s.core, agent, 2)
    local st, wp, ret = {}, {}, {}
    w:walk({ nav }, { { 30, 8, 29 } }, st, wp, ret, 0)
    w:walk({ nav }, { { 34, 8, 29 } }, st, wp, ret, 0)
    local held, i, fj, _, _, _, _, checks, updates = w:take(1)
    assert.are.equal(nav, held)
    assert.are.equal(2, i) -- (the Lua smoother steps it on, then releases the step's locks)
    assert.is_nil(fj)
    assert.are.equal(0, checks)
    assert.are.equal(1, updates) -- (the first walk's only)
    s:close()
    world:close()
  end)
end)

-- ---- the lifetimes around a held streamed navigator (session 31's audit, h31hard) ------------------
-- `frames` frames of the three navigators of PAIRS on the streamed caves pack (the C walk holding them
-- or, stream false, not): -> world, streamer, budget, navs, the frame's tables.
local function walking(stream, frames)
  gwalk.STREAM = stream
  local world = assert(world_mod.load(pack))
  local s = loaded_streamer(world)
  local budget = navigator.budget { ms = 4, clock = function() return 0 end }
  local navs, pos, st, wp = {}, {}, {}, {}
  for i, pr in ipairs(PAIRS) do
    navs[i] = navigator.new(world, { budget = budget, streamer = s, replan = false })
    navs[i]:go(pr[2])
    pos[i] = { pr[1][1], pr[1][2], pr[1][3] }
  end
  for _ = 1, frames do
    s:update()
    budget:frame()
    budget:update(navs, pos, st, wp)
    for i = 1, #navs do
      local p, w = pos[i], wp[i]
      if st[i] == "moving" and type(w) == "table" then
        local d = dist(p, w)
        local t = d > SPEED and SPEED / d or 1
        pos[i] = { p[1] + (w[1] - p[1]) * t, p[2] + (w[2] - p[2]) * t, p[3] + (w[3] - p[3]) * t }
      end
    end
  end
  gwalk.STREAM = true
  return world, s, budget, navs, pos, st, wp
end

describe("a walker holding streamed navigators", function()
  after_each(function() gwalk.STREAM = true end)

  it("hands them back when their streamer is closed: the update raises as the Lua walk's does", function()
    local out = {}
    for _, stream in ipairs({ true, false }) do
      local world, s, budget, navs, pos, st, wp = walking(stream, 30)
      local held = budget:stats().group.held
      s:close()
      local ok, err = pcall(budget.update, budget, navs, pos, st, wp)
      local closes = {}
      for i, nav in ipairs(navs) do
        local cok, cerr = pcall(nav.close, nav)
        closes[i] = cok and "closed" or tostring(cerr)
        assert.is_nil(nav.walker) -- (handed back, or taken by close)
      end
      world:close()
      out[stream] = { held = held, ok = ok, err = tostring(err), closes = table.concat(closes, "; ") }
    end
    assert.are.equal(3, out[true].held)
    assert.are.equal(0, out[false].held)
    assert.is_false(out[true].ok)
    assert.are.equal(out[false].err, out[true].err)
    assert.truthy(out[true].err:find("the streamer is closed", 1, true), out[true].err)
    assert.are.equal(out[false].closes, out[true].closes)
  end)

  it("is collected with its slots held, its navigators never closed; the streamer and world close after", function()
    local world, s
    do
      local budget, navs
      world, s, budget, navs = walking(true, 30)
      assert.are.equal(3, budget:stats().group.held)
      assert.is_not_nil(navs[1].walker)
    end
    collectgarbage()
    collectgarbage()
    s:update()
    s:close()
    world:close()
  end)

  it("drops its reference to a slot's streamer when the slot is parked (the streamer can be collected)", function()
    local world = assert(world_mod.load(pack))
    local s = loaded_streamer(world)
    local weak = setmetatable({}, { __mode = "k" })
    local w, nav = core.walker(), {}
    local path = { { 24, 8, 29 }, { 34, 8, 29 } }
    do
      local world2 = assert(world_mod.load(pack)) -- (a second world's streamer: not the tree's)
      local s2 = octonav.streamer.new(world2, { workers = 0, load_padding = 0, unload_padding = 8 })
      weak[s2.core] = true
      w:attach(1, nav, world.tree, path, 2, nil, nil, 0, 1, 0, nil, nil, nil, 1e-6)
      w:stream(1, s2.core, nil, nil)
      w:park(1, nav, "planning", false, 0, 1)
      s2:close()
      world2:close()
    end
    collectgarbage()
    collectgarbage()
    assert.is_nil(next(weak), "the parked slot kept the streamer it held before alive")
    assert.are.equal(nav, (w:take(1)))
    s:close()
    world:close()
  end)
end)
