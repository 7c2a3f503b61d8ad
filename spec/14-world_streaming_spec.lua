-- spec/14-world_streaming_spec.lua -- octonav.streamer over a baked world (lua/octonav/streamer.lua)
-- and the navigator bound to it (lua/octonav/navigator.lua, option `streamer`).
-- Run: busted --lua=lua5.4 spec/14-world_streaming_spec.lua
--
-- The world: 8 x 1 x 8 tiles of 16 units (depth 4, scale 1) over a ground slab, a wall along z at
-- x = 40..42 with a gap, a few pillars, and a cave (a hole, scale 0.5) in tile (5, 0, 5) with a door
-- in its -x wall and one in its +x wall. It is baked once into a pack; a copy of the pack has a
-- corrupt and a missing tile file.
--   * 20 agents random-walk for 2,000 frames (4 of them start in the cave, so they wander in and out
--     of its bounds); after every frame the loaded tiles equal a reference computed here from the
--     padding rules and the locks (the bad tiles never load), the tiles listed by update() agree, and
--     the cave is loaded exactly while an agent is inside its bounds (or it is locked);
--   * a navigator with the streamer walks an agent from tile (0,0,0) into the cave and out again
--     frame by frame, starting with nothing loaded: tiles appear as it goes, its registered path stays
--     valid, every walked segment is free on the fully loaded world, locks are held while it has a
--     route and are all released at arrival, after nav:cancel() and by a new nav:go();
--   * a navigator given the caller's agent (option agent) registers its path under it and leaves
--     moving and removing the agent to the caller;
--   * a path registered for an agent is listed once in update().stale when a tile it crosses is
--     force-unloaded;
--   * a missing hole file is a holes_failed entry, not retried by itself, and fails a navigator
--     heading into that hole with "load_failed".
local octonav = require "octonav"
local streamer = require "octonav.streamer"
local world_mod = require "octonav.world"

local sqrt = math.sqrt

-- rng(seed): a function giving the next float in [0, 1) of a 63-bit LCG (spec/support/prng.lua)
local rng = dofile("spec/support/prng.lua").lcg

-- dist(a, b); fmt(p) = "(x, y, z)" with %.4g (spec/support/geometry.lua)
local geometry = dofile("spec/support/geometry.lua")
local dist, fmt = geometry.dist, geometry.formatter(4)

-- whole-file read and write (spec/support/files.lua)
local files = dofile("spec/support/files.lua")
local read, write = files.read, files.write

---------------------------------------------------------------------------------------------------
-- The world.

local NX, NZ, T = 8, 8, 16
local CAVE_MIN, CAVE_MAX = { 84, 2, 84 }, { 92, 10, 92 }
local IN_CAVE = { 88, 6, 88 }

local function box(a, b) return { box = { min = a, max = b } } end

local function config(dir)
  local C = { 80, 0, 80 }
  local function cb(a, b) return box({ a[1] + C[1], a[2] + C[2], a[3] + C[3] }, { b[1] + C[1], b[2] + C[2], b[3] + C[3] }) end
  return {
    range = { min = { 0, 0, 0 }, max = { NX * T, T, NZ * T } }, depth = 4, scale = 1,
    geometry = {
      box({ 0, 0, 0 }, { 128, 1, 128 }),                                        -- ground
      box({ 40, 0, 0 }, { 42, 16, 56 }), box({ 40, 0, 72 }, { 42, 16, 128 }),     -- a wall with a gap
      box({ 20, 0, 20 }, { 24, 12, 24 }), box({ 60, 0, 30 }, { 66, 14, 36 }),     -- pillars
      box({ 100, 0, 20 }, { 104, 16, 60 }), box({ 24, 0, 96 }, { 30, 10, 110 }),
      -- the cave's shell: walls one unit thick, a doorway in the -x and in the +x wall
      cb({ 4, 2, 4 }, { 12, 3, 12 }), cb({ 4, 9, 4 }, { 12, 10, 12 }), cb({ 4, 2, 4 }, { 12, 10, 5 }),
      cb({ 4, 2, 11 }, { 12, 10, 12 }), cb({ 4, 2, 4 }, { 5, 10, 7 }), cb({ 4, 2, 9 }, { 5, 10, 12 }),
      cb({ 4, 2, 7 }, { 5, 5, 9 }), cb({ 4, 7, 7 }, { 5, 10, 9 }), cb({ 11, 2, 4 }, { 12, 10, 7 }),
      cb({ 11, 2, 9 }, { 12, 10, 12 }), cb({ 11, 2, 7 }, { 12, 5, 9 }), cb({ 11, 7, 7 }, { 12, 10, 9 }),
    },
    holes = { { name = "cave", min = CAVE_MIN, max = CAVE_MAX, scale = 0.5, kind = "under_terrain",
      doors = { { inside = { 85.5, 6, 88 }, outside = { 83.5, 6, 88 } },
                { inside = { 90.5, 6, 88 }, outside = { 92.5, 6, 88 } } } } },
    output = dir,
    progress = function() end,
  }
end

-- bad tiles of the damaged copy: i,k -> "corrupt" | "missing"
local BAD = { ["2,6"] = "corrupt", ["6,1"] = "missing" }

local pack, damaged, full -- the pack, its damaged copy, the pack loaded whole (the reference)

-- Copy a pack file by file (no shell: the spec also runs with a sanitizer runtime preloaded, under
-- which child processes do not start).
local function copy_pack(src, dst)
  local core = require "octonav.core"
  assert(core.mkdir(dst .. "/tiles"))
  assert(core.mkdir(dst .. "/holes"))
  local w = assert(world_mod.load(src, { tiles = false }))
  local names = { "manifest.txt" }
  for k = 0, w.tiles[3] - 1 do
    for j = 0, w.tiles[2] - 1 do
      for i = 0, w.tiles[1] - 1 do
        names[#names + 1] = ("tiles/%d_%d_%d.tile"):format(i, j, k)
        names[#names + 1] = ("tiles/%d_%d_%d.graph"):format(i, j, k)
      end
    end
  end
  for _, h in ipairs(w.holes) do names[#names + 1] = "holes/" .. h.name .. ".tree" end
  w:close()
  for _, name in ipairs(names) do write(dst .. "/" .. name, read(src .. "/" .. name)) end
end

-- Remove a pack directory without a shell: its known files, then its folders.
local function remove_pack(dir)
  local names = { "manifest.txt" }
  for k = 0, 15 do
    for j = 0, 3 do
      for i = 0, 15 do
        names[#names + 1] = ("tiles/%d_%d_%d.tile"):format(i, j, k)
        names[#names + 1] = ("tiles/%d_%d_%d.graph"):format(i, j, k)
      end
    end
  end
  names[#names + 1] = "holes/cave.tree"
  for _, name in ipairs(names) do os.remove(dir .. "/" .. name) end
  os.remove(dir .. "/tiles")
  os.remove(dir .. "/holes")
  os.remove(dir)
end

-- tmpdir(): a fresh empty directory; the teardown removes them all with remove_pack
-- (spec/support/files.lua)
local tmp = files.tracker(remove_pack)
local function tmpdir() return tmp.dir(true) end

setup(function()
  pack = tmpdir()
  local ok, err = octonav.bake(config(pack))
  assert(ok, tostring(err))
  damaged = tmpdir()
  copy_pack(pack, damaged)
  for ik, what in pairs(BAD) do
    local i, k = ik:match("(%d+),(%d+)")
    local path = ("%s/tiles/%s_0_%s.tile"):format(damaged, i, k)
    if what == "missing" then
      assert(os.remove(path))
    else
      local blob = read(path)
      write(path, blob:sub(1, math.floor(#blob / 2)))
    end
  end
  full = assert(world_mod.load(pack))
end)

teardown(function()
  if full then full:close() end
  tmp.cleanup()
end)

---------------------------------------------------------------------------------------------------
-- The reference of the padding rules (tiles i, k; one layer j = 0).

local function tile_dist(i, k, p)
  local function axis(v, lo)
    local hi = lo + T
    if v < lo then return lo - v elseif v > hi then return v - hi end
    return 0
  end
  local dx, dy, dz = axis(p[1], i * T), axis(p[2], 0), axis(p[3], k * T)
  return sqrt(dx * dx + dy * dy + dz * dz)
end

local function near(p, pad, into)
  local i0, i1 = math.max(0, math.floor((p[1] - pad) / T)), math.min(NX - 1, math.floor((p[1] + pad) / T))
  local k0, k1 = math.max(0, math.floor((p[3] - pad) / T)), math.min(NZ - 1, math.floor((p[3] + pad) / T))
  for k = k0, k1 do
    for i = i0, i1 do
      if tile_dist(i, k, p) <= pad then into[i + NX * k] = true end
    end
  end
end

local function inside(p, mn, mx)
  return p[1] >= mn[1] and p[1] <= mx[1] and p[2] >= mn[2] and p[2] <= mx[2] and p[3] >= mn[3] and p[3] <= mx[3]
end

local function key(t) return t[1] + NX * t[3] end

---------------------------------------------------------------------------------------------------

describe("octonav.streamer over a world", function()
  it("world.load(dir, { tiles = false }): manifest and holes, no tile data, no tile graph", function()
    local w = assert(world_mod.load(pack, { tiles = false }))
    assert.are.equal(0, w.tree:stats().tiles_loaded)
    assert.are.same({ "unloaded", { 0, 0, 0 } }, { w.tree:locate { 8, 8, 8 } }) -- unloaded: never free, never blocked
    assert.are.equal("free", (full.tree:locate { 8, 8, 8 }))
    assert.is_nil(w.holes[1].tree)
    assert.are.same(full.holes[1].min, w.holes[1].min)
    assert.are.equal(0, w.graph:stats().tiles)
    assert.is_true(w.graphs_stream)
    -- graphs = true: every tile's graph at once (a skeleton), the same world graph as the full load's
    local sk = assert(world_mod.load(pack, { tiles = false, graphs = true }))
    assert.are.same(full.graph:stats(), sk.graph:stats())
    assert.is_false(sk.graphs_stream)
    sk:close()
    assert.has_error(function() w:in_hole(IN_CAVE) end,
      "world:in_hole: hole 'cave' is not loaded (streaming: load it first)")
    assert.is_nil(w:in_hole { 8, 8, 8 }) -- outside every hole's bounds: no tree needed
    local ht = assert(w:load_hole("cave"))
    assert.are.equal(full.holes[1].tree:encode_tile(0, 0, 0), ht:encode_tile(0, 0, 0))
    ht:close()
    -- validate reads the unloaded hole for the check (the hole's own door checks agree with the full
    -- world's) and leaves it unloaded
    local rep, rep_full = w:validate(), full:validate()
    for j, d in ipairs(rep.doors) do
      assert.are.equal(rep_full.doors[j].outside_blocked, d.outside_blocked)
      assert.are.equal(rep_full.doors[j].inside_free, d.inside_free)
      assert.are.equal(rep_full.doors[j].connected, d.connected)
    end
    assert.is_nil(w.holes[1].tree)
    assert.has_error(function() world_mod.load(pack, { tile = false }) end, "octonav.world.load: unknown option 'tile'")
    w:close()
  end)

  it("tile graphs come and go with their tiles; a plan through tiles not loaded answers loading, then succeeds",
    function()
    local s = assert(streamer.new(pack, { load_padding = 1, unload_padding = 2, workers = 0 }))
    local w = s.world
    local a, b = { 8, 8, 8 }, { 120, 8, 120 } -- opposite corners: the route crosses the wall's gap
    local ta, tb = w:tile_of(a), w:tile_of(b)
    s:force_load(ta)
    s:force_load(tb)
    s:update(true)
    assert.are.equal(2, w.graph:stats().tiles)
    local needed, route, why, last = 0, nil, nil, nil
    for _ = 1, NX * NZ do
      local tile
      route, why, tile = w:plan(a, b)
      if route then break end
      assert.are.equal("loading", why)
      assert.is_false(s:is_loaded(tile))
      needed, last = needed + 1, tile
      s:force_load(tile)
      s:update(true)
      assert.is_true(s:is_loaded(tile))
      assert.is_not_nil(w.graph_ids[tile])
    end
    assert.is_table(route, tostring(why))
    assert.is_true(needed >= 3, "tiles asked for: " .. needed)
    assert.is_true(w.graph:stats().tiles < NX * NZ) -- not every tile was needed
    -- the route found while streaming costs what the route on the whole world costs (a tile that is
    -- not loaded is asked for whenever a route through it could be shorter)
    local _, cost = w:plan(a, b)
    local _, full_cost = full:plan(a, b)
    assert.is_true(math.abs(cost - full_cost) < 1e-9, ("%.9g vs %.9g"):format(cost, full_cost))
    -- an unloaded tile's graph leaves the world graph
    local n = w.graph:stats().tiles
    s:force_unload(last)
    s:update(true)
    assert.is_nil(w.graph_ids[last])
    assert.are.equal(n - 1, w.graph:stats().tiles)
    s:close()
  end)

  it("rejects misuse with clear errors", function()
    assert.has_error(function() streamer.new(pack, { load_padding = 4, unload_padding = 4 }) end,
      "octonav.streamer.new: unload_padding must be greater than load_padding")
    assert.has_error(function() streamer.new(pack, { load_padding = 4 }) end,
      "octonav.streamer.new: option 'unload_padding' is required")
    assert.has_error(function() streamer.new(42, { load_padding = 1, unload_padding = 2 }) end)
    local s0, err = streamer.new(pack .. "/nowhere", { load_padding = 1, unload_padding = 2 })
    assert.is_nil(s0)
    assert.matches("manifest", err)
    local s = assert(streamer.new(pack, { load_padding = 1, unload_padding = 2, workers = 0 }))
    assert.has_error(function() s:lock { 8, 0, 0 } end)
    assert.has_error(function() s:lock(64) end, "streamer:lock: tile index 64 out of range (0..63)")
    assert.has_error(function() s:unlock_hole "cave" end, "streamer:unlock_hole: the hole is not locked")
    assert.has_error(function() s:lock_hole "den" end, "streamer:lock_hole: unknown hole den")
    assert.has_error(function() s:set_path(1, {}) end, "streamer:set_path: no such agent 1")
    local id = s:add_agent { 1, 1, 1 }
    assert.has_error(function() s:set_path(id, { { 1, 2, 3 } }) end,
      "streamer:set_path: path must have an is_valid method (a query path) or be nil")
    -- tiles as {i,j,k} or linear indices
    s:force_load(9)
    s:update()
    assert.is_true(s:is_loaded { 1, 0, 1 })
    assert.are.equal("loaded", s:state(9))
    local w = s.world
    assert.has_error(function() octonav.navigator.new(full, { streamer = s }) end,
      "octonav.navigator.new: option 'streamer' streams another world")
    assert.has_error(function() octonav.navigator.new(w, { agent = 1 }) end,
      "octonav.navigator.new: option 'agent' needs option 'streamer'")
    s:close()
    assert.has_error(function() s:update() end, "streamer:update: the streamer is closed")
    s:close() -- twice is fine
  end)

  it("keeps the required tiles and the cave loaded over 2,000 frames of 20 random-walking agents", function()
    local LOAD, UNLOAD, N = 4, 12, 20
    local s = assert(streamer.new(damaged, { load_padding = LOAD, unload_padding = UNLOAD, workers = 2 }))
    local w = s.world
    local base = s:stats().tree_bytes
    local r = rng(2024)
    local pos, ids = {}, {}
    for a = 1, N do
      if a <= 4 then
        pos[a] = { IN_CAVE[1] + (r() - 0.5) * 4, IN_CAVE[2] + (r() - 0.5) * 4, IN_CAVE[3] + (r() - 0.5) * 4 }
      else
        pos[a] = { r() * NX * T, r() * T, r() * NZ * T }
      end
      ids[a] = s:add_agent(pos[a])
    end
    local LOCKED = 3 + NX * 3 -- tile (3, 0, 3), locked for frames 300..900
    local ref, from_events, mismatches, first_bad = {}, {}, 0, nil
    local failures, hole_changes, cave_frames, hole_locked_frames = {}, 0, 0, 0
    local cave_state = false
    local function bad(msg)
      mismatches = mismatches + 1
      first_bad = first_bad or msg
    end
    for frame = 1, 2000 do
      for a = 1, N do
        local p, step = pos[a], a <= 4 and 0.8 or 2.5
        p[1] = math.max(-5, math.min(NX * T + 5, p[1] + (r() - 0.5) * step))
        p[2] = math.max(0, math.min(T, p[2] + (r() - 0.5) * step))
        p[3] = math.max(-5, math.min(NZ * T + 5, p[3] + (r() - 0.5) * step))
        s:move_agent(ids[a], p)
      end
      if frame == 300 then s:lock { 3, 0, 3 } end
      if frame == 900 then s:unlock(LOCKED) end
      if frame == 1000 then s:lock_hole "cave" end
      if frame == 1100 then s:unlock_hole(1) end
      local ch = s:update(true)
      for _, f in ipairs(ch.failed) do
        failures[f.tile[1] .. "," .. f.tile[3]] = f.reason
        assert.are.same(f.tile, f[1])
        assert.are.equal(f.reason, f[2])
      end
      for _, t in ipairs(ch.loaded) do
        if from_events[key(t)] then bad(("frame %d: tile %d,%d loaded twice"):format(frame, t[1], t[3])) end
        from_events[key(t)] = true
      end
      for _, t in ipairs(ch.unloaded) do
        if not from_events[key(t)] then bad(("frame %d: tile %d,%d unloaded, not loaded"):format(frame, t[1], t[3])) end
        from_events[key(t)] = nil
      end
      -- the reference
      local load, keep = {}, {}
      for a = 1, N do
        near(pos[a], LOAD, load)
        near(pos[a], UNLOAD, keep)
      end
      if frame >= 300 and frame < 900 then load[LOCKED] = true end
      local want = {}
      for t in pairs(load) do want[t] = true end
      for t in pairs(ref) do
        if keep[t] then want[t] = true end
      end
      want[2 + NX * 6], want[6 + NX * 1] = nil, nil -- bad files never load
      ref = want
      for k = 0, NZ - 1 do
        for i = 0, NX - 1 do
          local got = s:is_loaded { i, 0, k }
          if got ~= (want[i + NX * k] == true) then
            bad(("frame %d tile %d,%d: got %s"):format(frame, i, k, tostring(got)))
          end
          if got ~= (from_events[i + NX * k] == true) then
            bad(("frame %d tile %d,%d: the events say %s"):format(frame, i, k, tostring(not got)))
          end
        end
      end
      -- the cave: loaded exactly while an agent is inside its bounds (or it is locked)
      local in_cave = false
      for a = 1, N do in_cave = in_cave or inside(pos[a], CAVE_MIN, CAVE_MAX) end
      local locked = frame >= 1000 and frame < 1100
      if in_cave then cave_frames = cave_frames + 1 end
      if locked and not in_cave then hole_locked_frames = hole_locked_frames + 1 end
      local want_cave = in_cave or locked
      if s:hole_loaded "cave" ~= want_cave or (w.holes[1].tree ~= nil) ~= want_cave then
        bad(("frame %d: cave loaded %s, want %s"):format(frame, tostring(s:hole_loaded "cave"), tostring(want_cave)))
      end
      if #ch.holes_loaded + #ch.holes_unloaded > 0 then
        hole_changes = hole_changes + 1
        local now = #ch.holes_loaded > 0
        if now == cave_state or (#ch.holes_loaded > 0 and #ch.holes_unloaded > 0) then
          bad(("frame %d: hole events %d loaded, %d unloaded"):format(frame, #ch.holes_loaded, #ch.holes_unloaded))
        end
        cave_state = now
      end
      if cave_state ~= want_cave then bad(("frame %d: the hole events disagree"):format(frame)) end
      assert.are.same({}, ch.holes_failed)
    end
    assert.are.equal(0, mismatches, first_bad)
    assert.are.equal("corrupt tile file", failures["2,6"])
    assert.are.equal("missing or unreadable tile file", failures["6,1"])
    -- the walk went in and out of the cave, and the lock kept it while nobody was inside
    assert.is_true(cave_frames > 50 and cave_frames < 2000, "frames with an agent in the cave: " .. cave_frames)
    assert.is_true(hole_changes >= 2, "cave loads and unloads: " .. hole_changes)
    assert.is_true(hole_locked_frames > 0, "frames the lock alone kept the cave: " .. hole_locked_frames)
    -- loaded tiles and the cave hold what was baked
    local nloaded = 0
    for k = 0, NZ - 1 do
      for i = 0, NX - 1 do
        if s:is_loaded { i, 0, k } then
          nloaded = nloaded + 1
          assert.are.equal(full.tree:encode_tile(i, 0, k), w.tree:encode_tile(i, 0, k))
        end
      end
    end
    assert.is_true(nloaded > 0)
    -- everyone leaves: back to the baseline, the cave closed
    for a = 1, N do s:remove_agent(ids[a]) end
    local ch = s:update(true)
    local st = s:stats()
    assert.are.equal(0, st.loaded)
    assert.are.equal(0, st.agents)
    assert.are.equal(0, st.holes_loaded)
    assert.are.equal(base, st.tree_bytes)
    assert.is_nil(w.holes[1].tree)
    assert.are.equal(nloaded, #ch.unloaded)
    s:close()
  end)

  it("lists a registered path once in stale when a tile it crosses is force-unloaded", function()
    local s = assert(streamer.new(pack, { load_padding = 1, unload_padding = 2, workers = 1 }))
    local w = s.world
    local a, b = { 8, 8, 8 }, { 8, 8, 56 } -- tile (0,0,0) to tile (0,0,3), straight along z
    local far = s:add_agent { 120, 8, 120 }
    local id = s:add_agent(a)
    -- a sliced search that loads what it waits for
    local q = octonav.query.new(w.tree)
    s:update(true)
    s:force_load { 0, 0, 3 }
    s:update(true)
    local st = q:start(a, b)
    local tile
    while st == "running" or st == "loading" do
      st, tile = q:step(200)
      if st == "loading" then
        s:force_load(tile)
        s:update(true)
      end
    end
    assert.are.equal("found", st)
    local path, info = q:result()
    assert.is_true(path:is_valid())
    s:set_path(id, path)
    s:set_path(far, path)
    assert.are.equal(path, s:path(id))
    assert.are.same({}, s:update(true).stale)
    -- which tiles does it cross? (linear indices, from path:tiles())
    local crossed = {}
    for _, ti in ipairs(path:tiles()) do crossed[ti] = true end
    assert.is_true(crossed[8] and crossed[16], "the path crosses tiles (0,0,1) and (0,0,2)")
    s:remove_agent(far) -- its registration goes with it
    assert.are.same({}, s:update(true).stale)
    s:force_unload { 0, 0, 2 }
    assert.is_false(s:is_loaded { 0, 0, 2 })
    local ch = s:update(true)
    assert.are.same({ id }, ch.stale)
    assert.are.same({ { 0, 0, 2 } }, ch.unloaded) -- the force_unload, listed
    assert.is_false(path:is_valid())
    assert.is_false(info.valid)
    assert.are.same({}, s:update(true).stale) -- once
    s:set_path(id, path)                       -- a new registration of a stale path: once more
    assert.are.same({ id }, s:update(true).stale)
    assert.are.same({}, s:update(true).stale)
    s:set_path(id, nil)
    assert.is_nil(s:path(id))
    s:close()
  end)

  it("a navigator bound to the streamer walks into the cave and out, locking what it needs", function()
    local s = assert(streamer.new(pack, { load_padding = 4, unload_padding = 12, workers = 2 }))
    local w = s.world
    -- direct = false: every leg searches (a leg in sight of its goal would not wait for tiles)
    local nav = octonav.navigator.new(w, { streamer = s, query_budget = 150, search = { direct = false } })
    local speed = 0.5
    local pos = { 8, 8, 8 }
    local seen = {}   -- tiles ever loaded
    local hole_trees = {}
    local waits = 0   -- frames it held ("planning") waiting for a tile or the cave
    local cave_events = {} -- { frame, "loaded" | "unloaded", agent inside the cave's bounds? }

    -- one journey frame by frame; returns the number of frames
    local function walk(goal, max_frames, on_frame)
      nav:go(goal)
      assert.are.equal(0, s:stats().locked) -- go released what the last goal held
      local status
      for frame = 1, max_frames do
        local ch = s:update(true)
        for _, t in ipairs(ch.loaded) do seen[key(t)] = true end
        for _ in ipairs(ch.holes_loaded) do cave_events[#cave_events + 1] = { frame, "loaded", inside(pos, CAVE_MIN, CAVE_MAX) } end
        for _ in ipairs(ch.holes_unloaded) do cave_events[#cave_events + 1] = { frame, "unloaded", inside(pos, CAVE_MIN, CAVE_MAX) } end
        for _, a in ipairs(ch.stale) do assert.are_not.equal(nav.agent, a, "the navigator's path went stale") end
        assert.are.same({}, ch.failed)
        local wp
        status, wp = nav:update(pos)
        assert.are_not.equal("failed", status, tostring(wp))
        local ns = nav:stats()
        if status == "planning" and (ns.loading or ns.loading_hole) then waits = waits + 1 end
        -- the tile under the agent is loaded, the cave while it is inside
        local t = w:tile_of(pos)
        if t and frame > 1 then assert.is_true(s:is_loaded(t), "frame " .. frame .. ": agent's tile " .. t) end
        if inside(pos, CAVE_MIN, CAVE_MAX) and frame > 1 then assert.is_not_nil(w.holes[1].tree) end
        -- its registered path stays valid; locks are held while it has a route
        local reg = s:path(nav.agent)
        if status == "moving" then
          assert.is_not_nil(reg)
          assert.is_true(reg:is_valid(), "frame " .. frame .. ": the registered path is not valid")
          local st = s:stats()
          assert.is_true(st.locked > 0 or st.holes_locked > 0, "frame " .. frame .. ": moving without locks")
        end
        if on_frame then on_frame(frame, status) end
        if status == "arrived" then return frame end
        if status == "moving" then
          -- the segment walked is free on the fully loaded world (or the cave, or a door's segment)
          local tree = nav:tree()
          local to = dist(pos, wp) <= speed and { wp[1], wp[2], wp[3] }
            or { pos[1] + (wp[1] - pos[1]) / dist(pos, wp) * speed, pos[2] + (wp[2] - pos[2]) / dist(pos, wp) * speed,
              pos[3] + (wp[3] - pos[3]) / dist(pos, wp) * speed }
          if tree == w.tree then
            assert.is_true(full.tree:visible(pos, to), "frame " .. frame .. ": blocked " .. fmt(pos) .. " -> " .. fmt(to))
          elseif tree ~= nil then
            hole_trees[tree] = true
            assert.is_true(full.holes[1].tree:visible(pos, to), "frame " .. frame .. ": blocked in the cave")
          end
          pos = to
        end
      end
      error("no arrival after " .. max_frames .. " frames: " .. tostring(status) .. " at " .. fmt(pos))
    end

    -- into the cave: nothing is loaded at first; the cave is loaded to plan (the goal is in it)
    local max_locked = 0
    local frames = walk(IN_CAVE, 3000, function(_, status)
      if status ~= "arrived" then max_locked = math.max(max_locked, s:stats().locked) end
    end)
    assert.is_true(frames > 100)
    assert.is_true(max_locked >= 2)
    assert.is_true(waits >= 2, "frames waiting for data: " .. waits)
    -- the cave was loaded to plan (the goal is in it) while the agent was far, released after, and
    -- loaded again for the last step before the agent got there
    assert.is_true(#cave_events >= 3)
    assert.are.same({ "loaded", false }, { cave_events[1][2], cave_events[1][3] })
    assert.is_true(cave_events[1][1] <= 3)
    assert.are.same({ "unloaded", false }, { cave_events[2][2], cave_events[2][3] })
    assert.are.same({ "loaded", false }, { cave_events[3][2], cave_events[3][3] })
    assert.is_true(dist(pos, IN_CAVE) <= 0.5 + 1e-9)
    assert.are.equal("cave", (w:in_hole(pos)))
    assert.is_true(next(hole_trees) ~= nil, "it walked on the cave's tree")
    local nseen = 0
    for _ in pairs(seen) do nseen = nseen + 1 end
    assert.is_true(nseen >= 8, "tiles loaded on the way: " .. nseen)
    assert.is_true(s:stats().loaded < nseen) -- tiles behind it went
    -- arrival: every lock released, the path unregistered
    assert.are.equal(0, s:stats().locked)
    assert.are.equal(0, s:hole_locks "cave")
    assert.is_nil(s:path(nav.agent))

    -- out of the cave (the start is in the hole) to the far corner
    walk({ 120, 8, 120 }, 3000)
    assert.are.equal(0, s:stats().locked)
    assert.are.equal(0, s:hole_locks "cave")
    s:update(true)
    assert.is_nil(w.holes[1].tree) -- nobody in the cave: unloaded

    -- cancel in the middle of a journey
    nav:go { 8, 8, 8 }
    local locked_seen = false
    for _ = 1, 60 do
      s:update(true)
      local status, wp = nav:update(pos)
      if s:stats().locked > 0 then locked_seen = true end
      if status == "moving" then
        local d = dist(pos, wp)
        local f = math.min(1, speed / d)
        pos = { pos[1] + (wp[1] - pos[1]) * f, pos[2] + (wp[2] - pos[2]) * f, pos[3] + (wp[3] - pos[3]) * f }
      end
    end
    assert.is_true(locked_seen)
    assert.is_true(s:stats().locked > 0)
    nav:cancel()
    assert.are.equal(0, s:stats().locked)
    assert.are.equal(0, s:hole_locks "cave")
    assert.is_nil(s:path(nav.agent))
    -- a new go replaces a running one and releases its locks
    nav:go { 8, 8, 8 }
    for _ = 1, 30 do
      s:update(true)
      nav:update(pos)
    end
    assert.is_true(s:stats().locked > 0)
    nav:go(IN_CAVE)
    assert.are.equal(0, s:stats().locked)
    nav:close() -- releases everything and removes the navigator's agent
    assert.are.equal(0, s:stats().agents)
    assert.are.equal(0, s:stats().locked)
    s:update(true)
    assert.are.equal(0, s:stats().loaded)
    s:close()
  end)

  it("a navigator given the caller's agent registers its path there and leaves the agent to it", function()
    local s = assert(streamer.new(pack, { load_padding = 2, unload_padding = 6, workers = 1 }))
    local pos = { 8, 8, 8 }
    local id = s:add_agent(pos)
    local nav = octonav.navigator.new(s.world, { streamer = s, agent = id })
    nav:go { 8, 8, 40 } -- two tiles along z
    local moving, status = 0, nil
    for _ = 1, 400 do
      s:update(true)
      local wp
      status, wp = nav:update(pos)
      if status == "arrived" then break end
      if status == "moving" then
        moving = moving + 1
        assert.is_true(s:path(id):is_valid())
        local d = dist(pos, wp)
        local f = math.min(1, 0.5 / d)
        pos = { pos[1] + (wp[1] - pos[1]) * f, pos[2] + (wp[2] - pos[2]) * f, pos[3] + (wp[3] - pos[3]) * f }
        s:move_agent(id, pos) -- the caller moves its agent
      end
    end
    assert.are.equal("arrived", status)
    assert.is_true(moving > 50)
    assert.is_nil(s:path(id))
    assert.are.equal(0, s:stats().locked)
    nav:close()
    assert.are.equal(1, s:stats().agents) -- not the navigator's to remove
    s:close()
  end)

  it("a missing hole file is reported and fails a navigator heading into the hole", function()
    local d = tmpdir()
    copy_pack(pack, d)
    assert(os.remove(d .. "/holes/cave.tree"))
    local s = assert(streamer.new(d, { load_padding = 4, unload_padding = 12, workers = 0 }))
    s:force_load_hole "cave"
    local ch = s:update()
    assert.are.equal(1, #ch.holes_failed)
    assert.are.equal("cave", ch.holes_failed[1].hole)
    assert.matches("cave.tree", ch.holes_failed[1].reason)
    assert.are.equal("failed", s:hole_state "cave")
    assert.are.same({}, s:update().holes_failed) -- not retried by itself
    s:retry_hole "cave"
    assert.are.equal(1, #s:update().holes_failed)
    s:force_unload_hole "cave"
    s:retry_hole "cave"
    local nav = octonav.navigator.new(s.world, { streamer = s })
    nav:go(IN_CAVE)
    local status, reason
    for _ = 1, 10 do
      s:update()
      status, reason = nav:update { 8, 8, 8 }
      if status == "failed" then break end
    end
    assert.are.equal("failed", status)
    assert.are.equal("load_failed", reason)
    assert.are.equal(0, s:stats().locked)
    assert.are.equal(0, s:hole_locks "cave")
    nav:close()
    s:close()
  end)

  it("a navigator waiting on data reports what it waits for and fails after wait_timeout", function()
    -- workers 0 and no s:update(): the start's tile stays queued
    local s = assert(streamer.new(pack, { load_padding = 4, unload_padding = 12, workers = 0 }))
    assert.has_error(function() octonav.navigator.new(s.world, { streamer = s, wait_timeout = 0 }) end,
      "octonav.navigator.new: option 'wait_timeout' must be an integer >= 1")
    local nav = octonav.navigator.new(s.world, { streamer = s, wait_timeout = 5 })
    nav:go { 8, 8, 40 }
    local status, reason
    for f = 1, 5 do
      status = nav:update { 8, 8, 8 }
      assert.are.equal("planning", status)
      local w = nav:stats().waiting
      assert.are.same({ 0, 0, 0 }, w.tile)
      assert.are.equal("tile 0,0,0", w.what)
      assert.are.equal(f, w.frames)
      assert.are.equal(1, w.since)
      assert.are.equal("unloaded", w.state)
    end
    status, reason = nav:update { 8, 8, 8 }
    assert.are.equal("failed", status)
    assert.are.equal("wait_timeout", reason)
    assert.are.same({ 0, 0, 0 }, nav:stats().waiting.tile)
    assert.are.equal(6, nav:stats().waiting.frames)
    assert.matches("failed: wait_timeout, waiting 6 updates for tile 0,0,0", tostring(nav), 1, true)
    assert.are.equal(0, s:stats().locked) -- its locks are released
    nav:close()
    s:close()
  end)

  it("max_loaded below what one navigator needs: it arrives (its locks win), never waits silently", function()
    for _, max in ipairs { 1, 2 } do
      local s = assert(streamer.new(pack, { load_padding = 4, unload_padding = 12, workers = 0, max_loaded = max }))
      local nav = octonav.navigator.new(s.world, { streamer = s, wait_timeout = 50 })
      local pos, goal = { 8, 8, 8 }, { 60, 8, 8 }
      nav:go(goal)
      local status, second
      local silent = 0
      for _ = 1, 3000 do
        s:update(true)
        status, second = nav:update(pos)
        if status == "arrived" or status == "failed" then break end
        if status == "moving" then
          local d = dist(pos, second)
          local f = d <= 0.5 and 1 or 0.5 / d
          pos = { pos[1] + (second[1] - pos[1]) * f, pos[2] + (second[2] - pos[2]) * f, pos[3] + (second[3] - pos[3]) * f }
        elseif status == "planning" and not nav:stats().waiting and not nav.job and nav.cells == nil then
          silent = silent + 1
        end
      end
      -- locked tiles load whatever max_loaded says, so it gets there
      assert.are.equal("arrived", status, "max_loaded " .. max .. ": " .. tostring(second))
      assert.are.equal(0, silent)
      nav:close()
      s:close()
    end
  end)

  it("unloaded is not blocked: world:plan and a navigator without a streamer name the tile", function()
    for _, graphs in ipairs { false, true } do
      local w = assert(world_mod.load(pack, { tiles = false, graphs = graphs }))
      -- start in tile (0,0,0) = index 0, goal in tile (3,0,0) = index 3: neither loaded
      local r, reason, tile = w:plan({ 8, 8, 8 }, { 56, 8, 8 })
      assert.is_nil(r)
      assert.are.equal("unloaded", reason)
      assert.are.equal(0, tile)
      local nav = octonav.navigator.new(w)
      nav:go { 56, 8, 8 }
      local status, why = nav:update { 8, 8, 8 }
      assert.are.equal("failed", status)
      assert.are.equal("unloaded", why)
      assert.are.same({ 0, 0, 0 }, nav:stats().failed_tile)
      assert.matches("failed: unloaded (tile 0,0,0)", tostring(nav), 1, true)
      nav:close()
      -- with a streamer, the same point is coming: "loading"
      local s = assert(streamer.new(w, { load_padding = 1, unload_padding = 2, workers = 0 }))
      r, reason, tile = w:plan({ 8, 8, 8 }, { 56, 8, 8 })
      assert.is_nil(r)
      assert.are.equal("loading", reason)
      assert.are.equal(0, tile)
      s:close()
      w:close()
    end
    -- a search reaching a tile not loaded (start and goal tiles loaded by hand, the middle not)
    local w = assert(world_mod.load(pack, { tiles = false, graphs = true }))
    local pk = require "octonav.pack"
    for _, i in ipairs { 0, 3 } do
      assert(w.tree:decode_tile(i, 0, 0, assert(pk.read_tile(pack, i, 0, 0))))
    end
    w.with_tiles = nil -- the planner takes the tree as whole (a caller loading tiles by hand)
    local nav = octonav.navigator.new(w)
    nav:go { 56, 8, 8 }
    local status, why
    for _ = 1, 100 do
      status, why = nav:update { 8, 8, 8 }
      if status ~= "planning" then break end
    end
    assert.are.equal("failed", status)
    assert.are.equal("unloaded", why)
    assert.are.equal(0, nav:stats().failed_tile[2])
    assert.is_true(nav:stats().failed_tile[1] == 1 or nav:stats().failed_tile[1] == 2)
    nav:close()
    w:close()
  end)

  it("a rebake while streaming keeps the loaded set the streamer's; a tile loading meanwhile gets the new file", function()
    local d = tmpdir()
    copy_pack(pack, d)
    local pk = require "octonav.pack"
    local s = assert(streamer.new(d, { load_padding = 4, unload_padding = 12, workers = 1 }))
    local w = s.world
    s:add_agent { 8, 8, 8 }
    s:update(true)
    local loaded = s:stats().loaded
    assert.is_true(s:is_loaded(0) and not s:is_loaded(3))
    s:lock(3)
    s:update() -- tile 3 queued: its worker may read the file before or after the rebake
    local cfg = config(d)
    cfg.geometry[#cfg.geometry + 1] = box({ 2, 1, 2 }, { 6, 6, 6 })     -- in tile 0 (loaded)
    cfg.geometry[#cfg.geometry + 1] = box({ 50, 1, 2 }, { 54, 6, 6 })   -- in tile 3 (queued or loaded)
    cfg.geometry[#cfg.geometry + 1] = box({ 98, 1, 98 }, { 102, 6, 102 }) -- in tile 54 (not loaded)
    local sum = assert(w:rebake({ min = { 2, 1, 2 }, max = { 102, 6, 102 } }, cfg))
    assert.is_true(#sum.rebaked > 3)
    s:update(true)
    -- the loaded set is the streamer's: tile 3 (locked) besides what was loaded; the graph follows it
    assert.are.equal(loaded + 1, s:stats().loaded)
    assert.are.equal(s:stats().loaded, w.graph:stats().tiles)
    assert.is_false(s:is_loaded(54))
    for t = 0, w.grid.count - 1 do
      assert.are.equal(s:is_loaded(t), w.graph:has_tile(require("octonav.tilegrid").coords(w.grid, t)))
    end
    -- the loaded tiles hold the new files
    assert.are.equal("blocked", (w.tree:locate { 4, 3, 4 }))
    assert.are.equal("blocked", (w.tree:locate { 52, 3, 4 }))
    for _, ijk in ipairs { { 0, 0, 0 }, { 3, 0, 0 } } do
      assert.are.equal(pk.blob_id(assert(pk.read_tile(d, ijk[1], ijk[2], ijk[3]))),
        pk.blob_id(w.tree:encode_tile(ijk[1], ijk[2], ijk[3])))
    end
    assert.is_nil(w.reread)
    s:close()
    remove_pack(d)
  end)

  it("a search answering 'unloaded' (an end in a tile not loaded): fails without a streamer, waits with one", function()
    -- the binding's answer for the core's ON_UNLOADED, simulated on the query's methods: the first
    -- search of each navigator answers it for tile (7, 0, 7), a corner no route needs
    local probe = octonav.core.query.new(full.tree)
    local qm = getmetatable(probe).__index
    probe:close()
    local real_start, real_result = qm.start, qm.result
    local fake = setmetatable({}, { __mode = "k" })
    local armed = true
    qm.start = function(q, ...)
      if armed then
        armed = false
        fake[q] = true
        return "failed"
      end
      fake[q] = nil
      return real_start(q, ...)
    end
    qm.result = function(q, ...)
      if fake[q] then return nil, { status = "failed", reason = "unloaded", tile = { 7, 0, 7 } } end
      return real_result(q, ...)
    end
    local ok, err = pcall(function()
      local nav = octonav.navigator.new(full)
      nav:go { 56, 8, 8 }
      local status, why
      for _ = 1, 50 do
        status, why = nav:update { 8, 8, 8 }
        if status ~= "planning" then break end
      end
      assert.are.equal("failed", status)
      assert.are.equal("unloaded", why)
      assert.are.same({ 7, 0, 7 }, nav:stats().failed_tile)
      nav:close()
      -- with a streamer: it locks the tile, waits for it (stats().waiting names it), then goes on
      -- (the tile is loaded only by that lock: far from the agent)
      armed = true
      local s = assert(streamer.new(pack, { load_padding = 4, unload_padding = 12, workers = 0 }))
      nav = octonav.navigator.new(s.world, { streamer = s })
      nav:go { 56, 8, 8 }
      local pos, waited = { 8, 8, 8 }, false
      for _ = 1, 3000 do
        status, why = nav:update(pos)
        local w = nav:stats().waiting
        if w and w.tile and w.tile[1] == 7 and w.tile[2] == 0 and w.tile[3] == 7 then waited = true end
        s:update(true)
        if status == "arrived" or status == "failed" then break end
        if status == "moving" then
          local d = dist(pos, why)
          local f = d <= 0.5 and 1 or 0.5 / d
          pos = { pos[1] + (why[1] - pos[1]) * f, pos[2] + (why[2] - pos[2]) * f, pos[3] + (why[3] - pos[3]) * f }
        end
      end
      assert.is_true(waited)
      assert.are.equal("arrived", status)
      nav:close()
      s:close()
    end)
    qm.start, qm.result = real_start, real_result
    assert(ok, err)
  end)
end)
