--- The bake: a config (docs/world.md, "Bake config") -> a nav pack directory.
--
--   local bake = require "octonav.bake"
--   bake(config)               -- or bake.run(config): every tile, every hole, then the link step -> summary
--   bake.tile(config, i, j, k) -- one tile -> OUTPUT/tiles/I_J_K.tile and .graph (parallel processes)
--   bake.hole(config, name)    -- one hole -> OUTPUT/holes/NAME.tree
--   bake.job(config, n, m)     -- the tiles t with t % m == n and the holes h with (h - 1) % m == n
--                              -- (job n of m of a batch array)
--   bake.link(config)          -- the manifest, once every tile and hole file is written
--   bake.grid(config)          -- the tile grid the config gives (origin, tiles, tile_size)
--   bake.rebake(dir, region, config) -- re-bake the tiles overlapping a box (world:rebake calls it)
-- bake.run and bake.rebake publish whole or not at all (octonav.bake.publish): they write into a
-- copy of the pack directory beside it (hard links) and put it in the pack's place last, so a pack
-- holds one bake or the other, never a mix (a failure leaves the pack as it was). bake.tile,
-- bake.hole and bake.job write into the pack's files in place (the parallel jobs of one bake), having
-- removed its manifest first: the pack does not load until bake.link writes it, last.
--
-- The pipeline (the seed's "大世界地图的烘焙过程" and "洞的定义及其烘焙过程"), one module per stage:
--   octonav.bake.config    the config checked and normalised, the tile grid computed
--   octonav.bake.geometry  the geometry gathered once; the part one tile or hole overlaps
--   octonav.bake.tiles     each tile baked on its own into a tile file and its portal graph file
--   octonav.bake.holes     each hole's own tree, sealed outside its doors
--   octonav.bake.link      reads the graph files only (checks them) and writes the manifest last
-- Agents (config.agents, docs/world.md "Agents"): every step bakes its tiles and holes once per agent
-- (its radius), into pack.agent_dir (the first agent's files where a one-agent pack has them); the
-- link step checks every agent's files and writes one manifest listing them.
-- The grid arithmetic is octonav.tilegrid's (bake.tile_of and the other grid functions below are it).
--
-- Misuse (a bad config) raises an error naming the field; runtime failures (files) return nil, err.
local compat = require "octonav.compat"
local core = require "octonav.core"
local pack = require "octonav.pack"
local progress = require "octonav.progress"
local util = require "octonav.util"
local tilegrid = require "octonav.tilegrid"
local config_mod = require "octonav.bake.config"
local geometry = require "octonav.bake.geometry"
local tiles = require "octonav.bake.tiles"
local holes = require "octonav.bake.holes"
local link = require "octonav.bake.link"
local publish = require "octonav.bake.publish"
local onetree = require "octonav.onetree"

local clock = core.clock

local M = {}

--- Validates a config and returns a normalised copy (defaults filled in, grid computed).
-- Raises "octonav.bake: FIELD: reason" on misuse.
M.check = config_mod.check

--- The grid of a config table (checked): { origin, tiles = {nx,ny,nz}, tile_size, count, ... }.
function M.grid(config)
  return M.check(config).grid
end

-- Grid arithmetic (octonav.tilegrid), kept under the bake's names, its arguments checked (the
-- library's own callers use tilegrid directly).
local raise = util.raise
local function grid_arg(fname, g)
  if type(g) ~= "table" or type(g.tiles) ~= "table" or type(g.origin) ~= "table" or type(g.tile_size) ~= "number" then
    raise(("octonav.bake.%s: g: a tile grid (octonav.bake.grid) expected, got %s"):format(fname, type(g)))
  end
end
local function ints_arg(fname, ...)
  for n = 1, select("#", ...) do
    if not compat.isinteger((select(n, ...))) then
      raise(("octonav.bake.%s: argument #%d: integer expected, got %s"):format(fname, n + 1, type((select(n, ...)))))
    end
  end
end
local function point_arg(fname, what, p)
  if not util.is_point(p) then raise(("octonav.bake.%s: %s: point {x, y, z} of finite numbers expected"):format(fname, what)) end
end
local function hole_arg(fname, h, doors)
  if type(h) ~= "table" or not util.is_point(h.min) or not util.is_point(h.max) or (doors and type(h.doors) ~= "table") then
    raise(("octonav.bake.%s: hole: a hole table { min, max%s } expected"):format(fname, doors and ", doors" or ", scale"))
  end
end
function M.tile_index(g, i, j, k) grid_arg("tile_index", g) ints_arg("tile_index", i, j, k) return tilegrid.index(g, i, j, k) end
function M.tile_coords(g, t) grid_arg("tile_coords", g) ints_arg("tile_coords", t) return tilegrid.coords(g, t) end
function M.tile_min(g, i, j, k) grid_arg("tile_min", g) ints_arg("tile_min", i, j, k) return tilegrid.min(g, i, j, k) end
function M.tile_bounds(g, t) grid_arg("tile_bounds", g) ints_arg("tile_bounds", t) return tilegrid.bounds(g, t) end
function M.tile_of(g, p) grid_arg("tile_of", g) point_arg("tile_of", "p", p) return tilegrid.tile_of(g, p) end
function M.tiles_in_box(g, lo, hi, strict)
  grid_arg("tiles_in_box", g)
  point_arg("tiles_in_box", "lo", lo)
  point_arg("tiles_in_box", "hi", hi)
  return tilegrid.in_box(g, lo, hi, strict)
end
function M.hole_tiles(g, hole)
  grid_arg("hole_tiles", g)
  hole_arg("hole_tiles", hole, true)
  return tilegrid.hole_tiles(g, hole)
end
function M.hole_params(hole)
  hole_arg("hole_params", hole, false)
  if not (type(hole.scale) == "number" and hole.scale > 0) then
    raise("octonav.bake.hole_params: hole.scale: a number > 0 expected")
  end
  return holes.params(hole)
end
function M.read_obj(path, V, I)
  if type(path) ~= "string" then raise("octonav.bake.read_obj: path: string expected, got " .. type(path)) end
  if type(V) ~= "table" or type(I) ~= "table" then raise("octonav.bake.read_obj: V, I: tables expected") end
  return geometry.read_obj(path, V, I)
end
function M.collect(cfg)
  if type(cfg) ~= "table" or type(cfg.geometry) ~= "table" or type(cfg.grid) ~= "table" then
    raise("octonav.bake.collect: cfg: a checked config (octonav.bake.check) expected")
  end
  return geometry.collect(cfg)
end

-- The bake's progress: `ntiles` tile steps ("tile I,J,K"), `nholes` hole steps ("hole NAME"), then the
-- link step's graph tiles ("graph tile T"), each for every agent (" (NAME)" after each step's name
-- when there are several); each kind is a phase of its own for the time left.
local function reporter(cfg, ntiles, nholes, linked)
  local na = #cfg.agents
  local ngraph = linked and cfg.grid.count * na or 0
  local nh = cfg.one_tree and nholes or nholes * na -- (a one-tree pack's holes are baked once)
  return progress.new { callback = cfg.progress, total = ntiles * na + nh + ngraph, label = "steps",
    phases = { tile = ntiles * na, hole = nh, graph = ngraph } }
end

local function suffix(cfg, ac) return #cfg.agents > 1 and (" (%s)"):format(ac.agent.name) or "" end

-- Bakes the holes of cfg whose names `want` holds (all when nil) for agent config ac into its dir.
-- Returns their bytes or nil, err.
local function bake_holes(ac, geo, dir, want, report)
  local bytes = 0
  for _, h in ipairs(ac.holes) do
    if want == nil or want[h.name] then
      local ht, err = holes.bake(ac, geo, h, dir)
      if not ht then return nil, err end
      ht:close()
      bytes = bytes + (util.file_size(pack.hole_path(dir, h.name)) or 0)
      if report then report("hole " .. h.name) end
    end
  end
  return bytes
end

-- The geometry of cfg gathered once and the output's directories made (every agent's): geo or nil, err.
local function gather(cfg, dir)
  local geo, err = geometry.collect(cfg)
  if not geo then return nil, err end
  if cfg.one_tree then
    local ok, derr = onetree.dirs(cfg, dir or cfg.output)
    if not ok then return nil, derr end
    return geo
  end
  for n, a in ipairs(cfg.agents) do
    local ok, derr = tiles.ensure_dirs(pack.agent_dir(dir or cfg.output, n, a.name))
    if not ok then return nil, derr end
  end
  return geo
end

-- Bakes the tiles in `list` and the holes `want` holds (all when nil, none when false) for every
-- agent of cfg into the pack at dir, the geometry gathered once (geo). report(what) after each step.
-- Returns { bytes (blobs, graphs and hole files), agents = { { name, radius, tile_bytes, graph_bytes,
-- hole_bytes, seconds }, ... } } or nil, err.
local function bake_agents(cfg, geo, dir, list, want, report)
  if cfg.one_tree then return onetree.bake(cfg, geo, dir, list, want, report, bake_holes) end
  local out = { bytes = 0, agents = {} }
  for n in ipairs(cfg.agents) do
    local t0 = clock()
    local ac = config_mod.agent_cfg(cfg, n)
    local adir = pack.agent_dir(dir, n, ac.agent.name)
    local sfx = suffix(cfg, ac)
    local bytes, sizes = 0, { tile_bytes = 0, graph_bytes = 0 }
    if #list > 0 then
      bytes, sizes = tiles.bake(ac, geo, adir, list, report and function(_, what) report(what .. sfx) end)
      if not bytes then return nil, sizes end
    end
    local hb = 0
    if want ~= false then
      local herr
      hb, herr = bake_holes(ac, geo, adir, want, report and function(what) report(what .. sfx) end)
      if not hb then return nil, herr end
    end
    out.bytes = out.bytes + bytes + hb
    out.agents[n] = { name = ac.agent.name, radius = ac.radius, tile_bytes = sizes.tile_bytes,
      graph_bytes = sizes.graph_bytes, hole_bytes = hb, seconds = clock() - t0 }
  end
  return out
end

-- A job (bake.tile, bake.hole, bake.job) writes into the pack in place: it first removes the pack's
-- manifest, so that from its first file to the link step the pack does not load (a job failing half
-- way over an old pack, or a batch not all run, never loads as a mix of two bakes). Returns true or
-- nil, err.
local function unpublish(dir)
  local ok, err, code = os.remove(pack.manifest_path(dir))
  if ok or code == 2 then return true end -- ENOENT: a new pack, or another job removed it
  return nil, err
end

--- Bakes one tile of the config, for every agent: OUTPUT/tiles/I_J_K.tile and its graph
-- OUTPUT/tiles/I_J_K.graph (and the same under OUTPUT/agents/NAME for the agents after the first).
-- Only the geometry overlapping the tile is gathered into it. Returns true, bytes or nil, err.
function M.tile(config, i, j, k)
  local cfg = M.check(config)
  tiles.check_args(cfg.grid, i, j, k)
  local geo, err = gather(cfg)
  if not geo then return nil, err end
  local uok, uerr = unpublish(cfg.output)
  if not uok then return nil, uerr end
  local r, terr = bake_agents(cfg, geo, cfg.output, { tilegrid.index(cfg.grid, i, j, k) }, false)
  if not r then return nil, terr end
  return true, r.bytes
end

--- Bakes one hole of the config (by name), for every agent, into OUTPUT/holes/NAME.tree (and under
-- OUTPUT/agents/AGENT). Returns true, bytes or nil, err.
function M.hole(config, name)
  local cfg = M.check(config)
  local found = false
  for _, h in ipairs(cfg.holes) do found = found or h.name == name end
  if not found then error("octonav.bake.hole: no hole named " .. tostring(name), 2) end
  local geo, err = gather(cfg)
  if not geo then return nil, err end
  local uok, uerr = unpublish(cfg.output)
  if not uok then return nil, uerr end
  local r, herr = bake_agents(cfg, geo, cfg.output, {}, { [name] = true })
  if not r then return nil, herr end
  return true, r.bytes
end

--- Job n of m (0 <= n < m): bakes the tiles whose linear index t has t % m == n and the holes number h
-- with (h - 1) % m == n, for every agent, in one process with the geometry gathered once (what
-- `bin/octonav bake CONFIG --job N/M` runs: a batch array's job index -> tiles). The files are those
-- bake.run writes. Returns the number of tiles and the bytes written, or nil, err.
function M.job(config, n, m)
  local cfg = M.check(config)
  if not compat.isinteger(n) or not compat.isinteger(m) or m < 1 or n < 0 or n >= m then
    error("octonav.bake.job: n, m: integers with 0 <= n < m expected", 2)
  end
  local geo, err = gather(cfg)
  if not geo then return nil, err end
  local list = {}
  for t = n, cfg.grid.count - 1, m do list[#list + 1] = t end
  local want = {}
  for h = n + 1, #cfg.holes, m do want[cfg.holes[h].name] = true end
  local uok, uerr = unpublish(cfg.output)
  if not uok then return nil, uerr end
  local r, terr = bake_agents(cfg, geo, cfg.output, list, want)
  if not r then return nil, terr end
  return #list, r.bytes
end

--- The link step alone: checks OUTPUT/tiles/*.graph and the hole files (every agent's), writes the
-- manifest. Returns a summary or nil, err.
function M.link(config)
  local cfg = M.check(config)
  local p = reporter(cfg, 0, 0, true)
  local done = 0
  local s, lerr = link.run(cfg, { dir = cfg.output, report = function(what) done = done + 1; p:update(done, what) end })
  p:finish()
  return s, lerr
end

--- The whole bake: every tile and every hole for every agent, then the link step. Returns a summary
-- { tiles, bytes, tile_bytes, graph_bytes, portals, edges, holes, hole_bytes, seconds, link_seconds,
-- agents = { { name, radius, bytes, tile_bytes, graph_bytes, hole_bytes, portals, edges, seconds,
-- link_seconds }, ... } } (the totals over the agents; an agent's seconds: its tiles, holes and
-- link checks) or nil, err.
-- Runs fn(stage) with a new stage of the pack at dir (octonav.bake.publish), then publishes it; a
-- failure (nil, err or an error raised) removes the stage. Returns fn's results or nil, err.
local function staged(dir, fn)
  local stage, serr = publish.stage(dir)
  if not stage then return nil, serr end
  local ok, a, b = pcall(fn, stage)
  if not ok then
    publish.discard(stage)
    error(a, 0)
  end
  if not a then
    publish.discard(stage)
    return nil, b
  end
  local pok, perr = publish.commit(dir, stage)
  if not pok then return nil, perr end
  return a, b
end

function M.run(config)
  local t0 = clock()
  local cfg = M.check(config)
  local r, terr
  local s, serr = staged(cfg.output, function(stage)
    local geo, err = gather(cfg, stage)
    if not geo then return nil, err end
    local n = cfg.grid.count
    local p = reporter(cfg, n, #cfg.holes, true)
    local list = {}
    for t = 0, n - 1 do list[#list + 1] = t end
    local done = 0
    local function step(what) done = done + 1; p:update(done, what) end
    r, terr = bake_agents(cfg, geo, stage, list, nil, step)
    geo = nil -- luacheck: ignore 311 (the geometry may be large: let it go before the link step)
    local sum
    if r then sum, terr = link.run(cfg, { dir = stage, report = step }) end
    p:finish()
    return sum, terr
  end)
  if not s then return nil, serr end
  s.bytes, s.tile_bytes = 0, 0
  for a, e in ipairs(s.agents) do
    local b = r.agents[a]
    e.tile_bytes, e.seconds = b.tile_bytes, b.seconds + e.link_seconds
    e.bytes = e.tile_bytes + e.graph_bytes + e.hole_bytes
    s.bytes, s.tile_bytes = s.bytes + e.bytes, s.tile_bytes + e.tile_bytes
  end
  s.seconds = clock() - t0
  return s
end

-- Do a manifest's agents and a config's agents agree (names and radii, in order)?
local function same_agents(m, cfg)
  if #m.agents ~= #cfg.agents then return false end
  for n, a in ipairs(cfg.agents) do
    if m.agents[n].name ~= a.name or m.agents[n].radius ~= a.radius then return false end
  end
  return true
end

--- Re-bakes the tiles overlapping `region` ({ min = {..}, max = {..} }, grown by the largest agent's
-- radius and half a leaf) from `config` into the pack at `dir` (config.output is not used), for
-- every agent, into a copy of the pack published whole (octonav.bake.publish: the pack's other
-- files are hard-linked into it, not copied): rewrites those tiles' tile and graph files only, re-bakes the holes whose bounds
-- overlap the region, whose manifest lines changed or whose file is missing, and rewrites the
-- manifest when a hole changed. Nothing else of the pack is read or written: links are made when the
-- world adds the new graphs. The config must give the pack's grid and agents. Returns a summary {
-- rebaked = { tile indices }, holes = { names }, bytes, seconds } or nil, err.
function M.rebake(dir, region, config)
  if type(dir) ~= "string" then error("octonav.bake.rebake: dir must be a string", 2) end
  local cfg = M.check(config)
  local rmin, rmax = config_mod.check_bounds(region, "region", false)
  local grid = cfg.grid
  local manifest, merr = pack.read_manifest(dir)
  if not manifest then return nil, merr end
  if manifest.scale ~= cfg.scale or manifest.depth ~= cfg.depth or not same_agents(manifest, cfg)
    or manifest.one_tree ~= cfg.one_tree
    or not util.same3(manifest.origin, grid.origin) or not util.same3(manifest.tiles, grid.tiles) then
    error("octonav.bake.rebake: the config's grid (scale, depth, radius, range, one_tree) differs from the pack's", 2)
  end
  local t0 = clock()
  local widest = cfg -- the margins of the agent of the largest radius cover every agent's
  for n, a in ipairs(cfg.agents) do
    if a.radius > widest.radius then widest = config_mod.agent_cfg(cfg, n) end
  end
  local lo, hi = geometry.grow(rmin, rmax, geometry.margin(widest))
  local list = tilegrid.in_box(grid, lo, hi, false)
  -- holes: re-bake those overlapping the region, new or changed ones, and those whose file is missing
  -- (for any agent)
  local function hole_text(h)
    return pack.manifest_text { scale = 1, depth = 1, origin = { 0, 0, 0 }, tiles = { 1, 1, 1 }, radius = 0, holes = { h } }
  end
  local old_holes = {}
  for _, h in ipairs(manifest.holes) do old_holes[h.name] = hole_text(h) end
  local new_holes = holes.manifest_lines(cfg)
  local want, names, lines_changed = {}, {}, #manifest.holes ~= #cfg.holes
  for n, h in ipairs(cfg.holes) do
    local hl, hh = geometry.grow(h.min, h.max, geometry.margin(widest, h.scale))
    local changed = old_holes[h.name] ~= hole_text(new_holes[n])
    lines_changed = lines_changed or changed
    local missing = false
    for a, ag in ipairs(cfg.agents) do
      local hdir = cfg.one_tree and dir or pack.agent_dir(dir, a, ag.name) -- (one tree: its holes only)
      missing = missing or (util.file_size(pack.hole_path(hdir, h.name)) or 0) == 0
    end
    if geometry.overlaps(hl, hh, rmin, rmax) or changed or missing then
      want[h.name] = true
      names[#names + 1] = h.name
    end
  end
  -- into a stage holding links to the pack's files: the rebaked files replace their links there, the
  -- stage is published whole once done
  local r, rerr = staged(dir, function(stage)
    local geo, err = gather(cfg, stage)
    if not geo then return nil, err end
    local p = reporter(cfg, #list, #names, false)
    local done = 0
    local res, terr = bake_agents(cfg, geo, stage, list, want, function(what)
      done = done + 1
      p:update(done, what)
    end)
    p:finish()
    if not res then return nil, terr end
    if lines_changed then
      local ok, werr = pack.write_manifest(stage, link.manifest(cfg))
      if not ok then return nil, werr end
    end
    return res
  end)
  if not r then return nil, rerr end
  return { rebaked = list, holes = names, tiles = #list, bytes = r.bytes, seconds = clock() - t0 }
end

setmetatable(M, { __call = function(_, config) return M.run(config) end })

return M
