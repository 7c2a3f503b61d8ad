-- spec/38-graph_streaming_spec.lua -- tile graphs stream with their tiles on the streamer's workers
-- (csrc/stream/streamer_worker.c reads and decodes DIR/tiles/I_J_K.graph beside the tile, update() links it
-- into the world graph, an unload drops it; lua/octonav/streamer.lua).
-- Run: busted --lua=lua5.4 spec/38-graph_streaming_spec.lua
--
--   * a generated world (seeded terrain columns, pillars and walls with a gap over 6 x 2 x 6 tiles,
--     two seeds; and ../shared/data/worlds/terrain.lua at 5 x 2 x 5 tiles when it is there): the
--     streaming centre random-walks for 160 frames with 0 and with 2 workers; after every update the
--     world graph holds exactly the loaded tiles, each with the graph id (its file's identity) the
--     fully loaded world holds for it, and its portals, edges, links and unresolved pairs are those
--     of a world graph made here from the loaded tiles' graph files alone; routes planned on it
--     between loaded tiles cost what they cost on that graph;
--   * a missing, corrupt, FIFO, /dev/zero and oversized graph file: the tile loads, the update lists
--     a `failed` entry "PATH: reason" for it (the reason the core's reader or decoder gives), no
--     graph is linked for it, and nothing hangs; the tile's graph comes once the file is good and
--     the tile loads again;
--   * a graph file of another bake of its tile (copied from a world baked with another seed): its tag
--     is not the tile's, so with 0 and 2 workers the tile loads without a graph, the update lists
--     "PATH: built from another version of its tile (bake the tile again)" (what the full load,
--     world.load, refuses it with), and its loaded neighbours have their graphs.
local octonav = require "octonav"
local core = require "octonav.core"
local compat = require "octonav.compat" -- (loading the shared terrain.lua before 5.3: issue 34)
local streamer = require "octonav.streamer"
local world_mod = require "octonav.world"
local pack = require "octonav.pack"
local tilegrid = require "octonav.tilegrid"

local files = dofile("spec/support/files.lua")
local rng = dofile("spec/support/prng.lua").xorshift

local tmp = files.tracker(files.rm_rf)

local NX, NY, NZ, T = 6, 2, 6, 16

-- A generated world of NX x NY x NZ tiles of T units (depth 4, scale 1), from `seed`.
local function config(dir, seed)
  local r = rng(seed)
  local geometry = {}
  local function box(a, b) geometry[#geometry + 1] = { box = { min = a, max = b } } end
  local SX, SZ = NX * T, NZ * T
  for x = 0, SX - 8, 8 do -- terrain: columns of 8 x 8 of random height
    for z = 0, SZ - 8, 8 do box({ x, 0, z }, { x + 8, r.int(1, 6), z + 8 }) end
  end
  for _ = 1, 14 do -- pillars
    local x, z, w = r.range(0, SX - 6), r.range(0, SZ - 6), r.range(2, 5)
    box({ x, 0, z }, { x + w, r.range(8, NY * T), z + w })
  end
  for _ = 1, 4 do -- walls with a gap
    local x, z, len = r.range(0, SX - 40), r.range(0, SZ - 40), r.range(30, 60)
    local gap = r.range(0.3, 0.7) * len
    if r.chance(0.5) then
      box({ x, 0, z }, { x + gap - 3, 20, z + 2 })
      box({ x + gap + 3, 0, z }, { x + len, 20, z + 2 })
    else
      box({ x, 0, z }, { x + 2, 20, z + gap - 3 })
      box({ x, 0, z + gap + 3 }, { x + 2, 20, z + len })
    end
  end
  return {
    range = { min = { 0, 0, 0 }, max = { SX, NY * T, SZ } }, depth = 4, scale = 1,
    geometry = geometry, output = dir, progress = function() end,
  }
end

local function bake(cfg)
  local ok, err = octonav.bake(cfg)
  assert(ok, tostring(err))
  return cfg.output
end

-- ../shared/data/worlds/terrain.lua at 5 x 2 x 5 tiles (its environment given here), or nil.
local function terrain_config(dir, seed)
  local path = "../shared/data/worlds/terrain.lua"
  if not files.exists(path) then return nil end
  local env = { NX = "5", NZ = "5", NY = "2", DEPTH = "4", SCALE = "2", SEED = tostring(seed), HOLES = "0", OUT = dir }
  local sandbox = setmetatable({ os = { getenv = function(k) return env[k] end } }, { __index = _G })
  -- the shared file is written for 5.3+ (`1 << DEPTH`); before 5.3 (no bit operators: issue 34) it is
  -- loaded with each `A << B` rewritten as `A * 2 ^ B` (the same numbers: DEPTH is small)
  local src = files.read(path)
  if not compat.int64 then src = src:gsub("(%w+) << (%w+)", "%1 * 2 ^ %2") end
  local cfg = assert(compat.load(src, "@" .. path, "t", sandbox))()
  cfg.output, cfg.progress = dir, function() end
  return cfg
end

-- The world graph's figures a fresh graph made from the same tiles' files must have too (a streamed
-- graph also keeps dormant links and their bytes for tiles that left: not compared).
local FIGURES = { "tiles", "portals", "edges", "links", "unresolved" }

-- A world graph over w's grid holding the graph files of the tiles in `loaded` (tile -> true).
local function reference(w, loaded)
  local g = core.route.world(w.tree)
  for t = 0, w.grid.count - 1 do
    if loaded[t] then
      local i, j, k = tilegrid.coords(w.grid, t)
      assert(g:add_tile(i, j, k, assert(pack.read_graph(w.dir, i, j, k))))
    end
  end
  return g
end

-- After an update: the streamed world graph is the full world's restricted to the loaded tiles.
local function check_graph(s, w, full, frame)
  local loaded, list = {}, {}
  for t = 0, w.grid.count - 1 do
    if s:is_loaded(t) then
      loaded[t] = true
      list[#list + 1] = t
    end
    local want = loaded[t] and full.graph_ids[t] or nil
    assert(want == w.graph_ids[t], ("frame %d, tile %d: graph id %s, expected %s (loaded: %s)"):format(frame,
      t, tostring(w.graph_ids[t]), tostring(want), tostring(loaded[t])))
  end
  local ref = reference(w, loaded)
  local got, exp = w.graph:stats(), ref:stats()
  for _, key in ipairs(FIGURES) do
    assert(got[key] == exp[key], ("frame %d: %s %d, from the files %d"):format(frame, key, got[key], exp[key]))
  end
  ref:close()
  return list
end

-- Plan between the centres of two loaded tiles on the streamed graph and on a fresh one from the
-- same files: the same outcome and cost. Returns whether a route was found.
local function same_route(w, list, r)
  if #list < 2 then return false end
  -- a free point on the vertical line through a tile's centre (nil when there is none)
  local function pick(t)
    local mn, mx = w:tile_bounds(t)
    for y = mn[2] + 0.5, mx[2] - 0.5 do
      local q = { (mn[1] + mx[1]) / 2 + 0.5, y, (mn[3] + mx[3]) / 2 + 0.5 }
      if w.tree:locate(q) == "free" then return q end
    end
  end
  local pa, pb = pick(list[r.int(1, #list)]), pick(list[r.int(1, #list)])
  if not (pa and pb) then return false end
  local loaded = {}
  for _, t in ipairs(list) do loaded[t] = true end
  local ref = reference(w, loaded)
  local p1, p2 = w.graph:planner(), ref:planner()
  local r1, e1 = p1:plan(w.tree, pa, pb)
  local r2, e2 = p2:plan(w.tree, pa, pb)
  ref:close()
  assert.are.equal(e2, e1)
  if not r1 then return false end
  assert.is_true(math.abs(r1.cost - r2.cost) < 1e-9, ("%.9g vs %.9g"):format(r1.cost, r2.cost))
  assert.are.equal(#r2.steps, #r1.steps)
  return true
end

-- The random walk of the streaming centre over pack `dir` with `workers`; every third update waits.
local function walk(dir, full, workers, seed)
  local ts = full.grid.tile_size
  local s = assert(streamer.new(dir, { load_padding = 0.6 * ts, unload_padding = 1.5 * ts, workers = workers }))
  local w = s.world
  local g = w.grid
  local r = rng(seed + 17)
  local lo, hi = {}, {}
  for k = 1, 3 do
    lo[k], hi[k] = g.origin[k] + 1, g.origin[k] + g.tiles[k] * g.tile_size - 1
  end
  local p = { r.range(lo[1], hi[1]), g.origin[2] + 6, r.range(lo[3], hi[3]) }
  local id = s:add_agent(p)
  local seen, unloads, routes, most = {}, 0, 0, 0
  for frame = 1, 160 do
    for _, k in ipairs { 1, 3 } do
      p[k] = math.max(lo[k], math.min(hi[k], p[k] + r.range(-0.4, 0.4) * ts))
    end
    s:move_agent(id, p)
    local ch = s:update(frame % 3 == 0)
    assert.are.same({}, ch.failed)
    unloads = unloads + #ch.unloaded
    local list = check_graph(s, w, full, frame)
    most = math.max(most, #list)
    for _, t in ipairs(list) do seen[t] = true end
    if frame % 20 == 0 and same_route(w, list, r) then routes = routes + 1 end
  end
  local n = 0
  for _ in pairs(seen) do n = n + 1 end
  s:close()
  return n, unloads, routes, most
end

describe("tile graphs stream with their tiles", function()
  teardown(function() tmp.cleanup() end)

  local worlds = {}
  for _, seed in ipairs { 3, 11 } do
    worlds[#worlds + 1] = { name = "generated, seed " .. seed, seed = seed, make = function(dir) return config(dir, seed) end }
  end
  worlds[#worlds + 1] = { name = "terrain.lua, seed 5", seed = 5, make = function(dir) return terrain_config(dir, 5) end }

  for _, wd in ipairs(worlds) do
    for _, workers in ipairs { 0, 2 } do
      it(("%s, %d workers: after every update the world graph is the full world's over the loaded tiles"):format(
        wd.name, workers), function()
        local cfg = wd.make(tmp.dir(true))
        if not cfg then pending("../shared/data/worlds/terrain.lua is absent") return end
        local dir = bake(cfg)
        local full = assert(world_mod.load(dir))
        local n, unloads, routes, most = walk(dir, full, workers, wd.seed)
        full:close()
        -- the walk did stream: many tiles came and went, and routes were compared
        assert.is_true(n >= 12, "tiles ever loaded: " .. n)
        assert.is_true(most < full.grid.count, "never every tile at once: " .. most)
        assert.is_true(unloads >= 6, "unloads: " .. unloads)
        assert.is_true(routes >= 2, "routes compared: " .. routes)
      end)
    end
  end
end)

-- mkfifo / ln -s through the shell; false where no child process can start (a sanitizer runtime).
local function shell(cmd) return os.execute(cmd .. " 2>/dev/null") == true end

describe("a tile's bad graph file", function()
  teardown(function() tmp.cleanup() end)

  local dir, full
  setup(function()
    dir = bake(config(tmp.dir(true), 7))
    full = assert(world_mod.load(dir))
  end)
  teardown(function() if full then full:close() end end)

  -- Spoil tile (1, 0, 1)'s graph file with `how`; false when the shell is missing.
  local BAD = { 1, 0, 1 }
  local function spoil(how)
    local path = pack.graph_path(dir, BAD[1], BAD[2], BAD[3])
    local good = files.read(path)
    os.remove(path)
    if how == "corrupt" then
      files.write(path, good:sub(1, 20) .. string.char((good:byte(21) + 1) % 256) .. good:sub(22))
    elseif how == "fifo" then
      if not shell("mkfifo '" .. path .. "'") then return false, good end
    elseif how == "zero" then
      if not shell("ln -s /dev/zero '" .. path .. "'") then return false, good end
    elseif how == "oversized" then -- sparse: one byte past the limit
      local f = assert(io.open(path, "wb"))
      f:seek("set", pack.MAX_GRAPH_FILE)
      f:write("x")
      f:close()
    end
    return true, good
  end

  local REASONS = {
    missing = "No such file or directory",
    corrupt = "corrupt",
    fifo = "not a regular file (a FIFO)",
    zero = "not a regular file (a character device)",
    oversized = ("%d bytes, more than a well-formed file can hold (%d)"):format(pack.MAX_GRAPH_FILE + 1,
      pack.MAX_GRAPH_FILE),
  }

  for _, how in ipairs { "missing", "corrupt", "fifo", "zero", "oversized" } do
    for _, workers in ipairs { 0, 2 } do
      it(("%s, %d workers: the tile loads without a graph, a failed entry names it"):format(how, workers), function()
        local ok, good = spoil(how)
        local path = pack.graph_path(dir, BAD[1], BAD[2], BAD[3])
        if not ok then
          os.remove(path)
          files.write(path, good)
          pending("no shell")
          return
        end
        local s = assert(streamer.new(dir, { load_padding = 1, unload_padding = 2, workers = workers }))
        local w = s.world
        local bad = tilegrid.index(w.grid, BAD[1], BAD[2], BAD[3])
        local other = tilegrid.index(w.grid, 2, 0, 1)
        s:force_load(bad)
        s:force_load(other)
        local ch = s:update(true)
        assert.are.equal(2, #ch.loaded)
        assert.are.same({ { BAD, path .. ": " .. REASONS[how], tile = BAD, reason = path .. ": " .. REASONS[how] } },
          ch.failed)
        assert.is_true(s:is_loaded(bad))
        assert.is_nil(w.graph_ids[bad])
        assert.are.equal(full.graph_ids[other], w.graph_ids[other])
        assert.are.equal(1, w.graph:stats().tiles)
        -- the file made good again: the tile's graph comes with its next load
        os.remove(path)
        files.write(path, good)
        s:force_unload(bad)
        assert.are.same({}, s:update(true).failed)
        s:force_load(bad)
        ch = s:update(true)
        assert.are.same({}, ch.failed)
        assert.are.equal(full.graph_ids[bad], w.graph_ids[bad])
        assert.are.equal(2, w.graph:stats().tiles)
        -- an unload drops it at once (force_unload), and the next update lists the tile
        s:force_unload(bad)
        assert.is_nil(w.graph_ids[bad])
        assert.are.same({ BAD }, s:update(true).unloaded)
        s:close()
      end)
    end
  end
end)

describe("a tile's graph file of another bake", function()
  teardown(function() tmp.cleanup() end)

  local BAD = { 2, 0, 2 }
  local NEIGHBOURS = { { 1, 0, 2 }, { 3, 0, 2 }, { 2, 0, 1 }, { 2, 0, 3 }, { 2, 1, 2 } }
  local REASON = "built from another version of its tile (bake the tile again)"

  local dir, full, path
  setup(function()
    dir = bake(config(tmp.dir(true), 7))
    full = assert(world_mod.load(dir))
    local other = bake(config(tmp.dir(true), 8))
    path = pack.graph_path(dir, BAD[1], BAD[2], BAD[3])
    local foreign = files.read(pack.graph_path(other, BAD[1], BAD[2], BAD[3]))
    -- the other bake's graph is a good graph of another version of the tile: its tag differs
    local tag = assert(core.route.info(foreign)).tag
    assert.are_not.equal(pack.graph_tag(assert(pack.read_tile(dir, BAD[1], BAD[2], BAD[3]))), tag)
    assert.are.equal(pack.graph_tag(assert(pack.read_tile(other, BAD[1], BAD[2], BAD[3]))), tag)
    os.remove(path)
    files.write(path, foreign)
  end)
  teardown(function() if full then full:close() end end)

  it("the full load refuses it with that reason", function()
    local w, err = world_mod.load(dir)
    assert.is_nil(w)
    assert.are.equal(path .. ": " .. REASON, err)
  end)

  it("world:add_graph(t, blob) refuses it, as the streamer's re-read after a rebake does", function()
    local bad = tilegrid.index(full.grid, BAD[1], BAD[2], BAD[3])
    local blob = assert(pack.read_tile(dir, BAD[1], BAD[2], BAD[3]))
    local id = full.graph_ids[bad]
    assert.is_not_nil(id)
    full:remove_graph(bad)
    assert.is_nil(full.graph_ids[bad])
    local ok, err = full:add_graph(bad, blob)
    assert.is_nil(ok)
    assert.are.equal(path .. ": " .. REASON, err)
    assert.is_nil(full.graph_ids[bad])
    assert.has_error(function() full:add_graph(bad, 7) end,
      "world:add_graph: blob must be a string or nil (got number)")
    -- without the blob there is nothing to check it against: the file's graph is taken
    assert.is_true(full:add_graph(bad))
    assert.are_not.equal(id, full.graph_ids[bad])
  end)

  for _, workers in ipairs { 0, 2 } do
    it(("%d workers: the tile loads without a graph, a failed entry names the file, its neighbours have theirs"):format(
      workers), function()
      local s = assert(streamer.new(dir, { load_padding = 1, unload_padding = 2, workers = workers }))
      local w = s.world
      local bad = tilegrid.index(w.grid, BAD[1], BAD[2], BAD[3])
      s:force_load(bad)
      for _, n in ipairs(NEIGHBOURS) do s:force_load(tilegrid.index(w.grid, n[1], n[2], n[3])) end
      local ch = s:update(true)
      assert.are.equal(1 + #NEIGHBOURS, #ch.loaded)
      assert.are.same({ { BAD, path .. ": " .. REASON, tile = BAD, reason = path .. ": " .. REASON } }, ch.failed)
      assert.is_true(s:is_loaded(bad))
      assert.is_nil(w.graph_ids[bad])
      for _, n in ipairs(NEIGHBOURS) do
        local t = tilegrid.index(w.grid, n[1], n[2], n[3])
        assert.is_true(s:is_loaded(t))
        assert.is_not_nil(w.graph_ids[t])
        assert.are.equal(full.graph_ids[t], w.graph_ids[t])
      end
      assert.are.equal(#NEIGHBOURS, w.graph:stats().tiles)
      -- loaded again, it is refused again (nothing of it kept)
      s:force_unload(bad)
      assert.are.same({}, s:update(true).failed)
      s:force_load(bad)
      assert.are.same({ { BAD, path .. ": " .. REASON, tile = BAD, reason = path .. ": " .. REASON } },
        s:update(true).failed)
      assert.is_nil(w.graph_ids[bad])
      s:close()
    end)
  end
end)
