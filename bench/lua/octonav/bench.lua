--- Benchmarks over the Moving AI voxel maps (../shared/data/voxel), run by `make bench` and
-- `lua5.4 bin/octonav bench-tree`. Every ratio is measured side by side in one run on the same
-- inputs, since absolute times drift on a shared machine. Maps that are absent are skipped.
local compat = require "octonav.compat"
local core = require "octonav.core"
local movingai = require "octonav.movingai"

local M = {}

local clock = core.clock

--- A small seeded PRNG (xorshift64*), so samples are the same on every run and machine.
-- (core.xorshift: 64-bit unsigned arithmetic in C, the same sequence on every Lua version)
function M.rng(seed) return core.xorshift(seed) end

local function median(xs)
  table.sort(xs)
  return xs[math.floor((#xs + 1) / 2)]
end
M.median = median

function M.percentile(xs, p)
  table.sort(xs)
  local i = math.max(1, math.min(#xs, math.ceil(#xs * p)))
  return xs[i]
end

local file_size = require("octonav.util").file_size

-- a file the benchmark cannot read raises its "PATH: reason" as it is (no position: the command
-- line prints it as one line)
local function must(v, e)
  if not v then error(e, 0) end
  return v
end

M.MAPS = { "Simple", "Complex", "A1", "A2", "A3", "A4", "BC1", "DA1", "DB1", "DB2", "DC1", "EB1", "EC1" }

--- Tree benchmark of one map: load, memory, file size, locate and visible throughput, and the
-- visible speed against the dense voxel walk of the grid over the same segments.
function M.tree_map(dir, name, opts)
  opts = opts or {}
  local path = dir .. "/" .. name .. ".3dmap"
  if not file_size(path) then return nil, "absent" end
  local t0 = clock()
  local tree, info = movingai.load_map(path)
  if not tree then return nil, info end
  local load_s = clock() - t0
  local st = tree:stats()
  local tmp = os.tmpname()
  assert(tree:save(tmp))
  local fbytes = file_size(tmp)
  os.remove(tmp)
  local grid = must(movingai.load_grid(path))
  local scen = must(movingai.load_scen(path .. ".3dscen"))
  local rnd = M.rng(opts.seed or 1)
  local W, H, D = info.dims[1], info.dims[2], info.dims[3]

  -- locate: random points in the map box
  local npts = opts.points or 100000
  local pts = {}
  for i = 1, npts do pts[i] = { rnd() * W, rnd() * H, rnd() * D } end
  t0 = clock()
  local nfree = 0
  for i = 1, npts do
    if tree:locate(pts[i]) == "free" then nfree = nfree + 1 end
  end
  local locate_s = clock() - t0

  -- visible: segments between random free points (uniform over the map) and scenario start -> goal
  -- segments; both walks get the same flat array in one call each, so the ratio compares the walks
  local nseg = opts.segments or 4000
  local function free_point()
    while true do
      local p = { rnd() * W, rnd() * H, rnd() * D }
      if tree:locate(p) == "free" then return p end
    end
  end
  local flat, segs = {}, {}
  for i = 1, nseg do
    local a, b
    if i % 2 == 0 then
      local s = scen[rnd(#scen)]
      a, b = s.start, s.goal
    else
      a, b = free_point(), free_point()
    end
    segs[i] = { a, b }
    for k = 1, 3 do flat[#flat + 1] = a[k] end
    for k = 1, 3 do flat[#flat + 1] = b[k] end
  end
  local tres, gres = {}, {}
  local tv, gv, clear = 0, 0, 0
  for _ = 1, 3 do -- alternate the two walks so drift hits both alike
    local c0 = clock()
    clear = tree:visible_many(flat, tres)
    tv = tv + (clock() - c0)
    c0 = clock()
    grid:visible_many(flat, gres)
    gv = gv + (clock() - c0)
  end
  local disagree = 0
  for i = 1, nseg do
    if tres[i] ~= gres[i] then disagree = disagree + 1 end
  end
  -- the same segments one Lua call each: what a script pays per query
  local c0 = clock()
  for i = 1, nseg do tree:visible(segs[i][1], segs[i][2]) end
  local per_call_s = clock() - c0
  local r = {
    map = name, dims = ("%dx%dx%d"):format(W, H, D), voxels = info.voxels,
    load_ms = load_s * 1000, nodes = st.nodes, bytes = st.bytes, bytes_per_node = st.bytes_per_node,
    file_bytes = fbytes, file_bytes_per_node = fbytes / math.max(1, st.nodes),
    locate_per_s = npts / locate_s, visible_per_s = nseg / per_call_s, visible_us = tv / (3 * nseg) * 1e6,
    dense_us = gv / (3 * nseg) * 1e6, visible_speedup = gv / tv, visible_disagree = disagree, segments = nseg,
    clear = clear,
  }
  tree:close()
  grid:close()
  return r
end

local TREE_HEAD = "| map | size | voxels | load ms | nodes | bytes/node (RAM) | file bytes/node | locate/s (Lua) "
  .. "| visible/s (Lua) | visible us (octree / dense walk) | speedup | clear | disagree |"
local TREE_SEP = "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"

function M.tree_row(r)
  return ("| %s | %s | %d | %.0f | %d | %.2f | %.2f | %.0f | %.0f | %.2f / %.2f | %.1fx | %d/%d | %d |"):format(r.map,
    r.dims, r.voxels, r.load_ms, r.nodes, r.bytes_per_node, r.file_bytes_per_node, r.locate_per_s, r.visible_per_s,
    r.visible_us, r.dense_us, r.visible_speedup, r.clear, r.segments, r.visible_disagree)
end

function M.tree_all(dir, opts)
  local rows = { TREE_HEAD, TREE_SEP }
  local results = {}
  for _, name in ipairs(M.MAPS) do
    local r, err = M.tree_map(dir, name, opts)
    if r then
      results[#results + 1] = r
      rows[#rows + 1] = M.tree_row(r)
      io.stderr:write(rows[#rows], "\n")
    else
      io.stderr:write(("%s: skipped (%s)\n"):format(name, err))
    end
  end
  return results, table.concat(rows, "\n")
end

--- The query benchmark on one map, for one or more option presets on the same scenarios: the octree
-- search on a seeded sample of scenarios (all when opts.limit is nil), the grid A* baseline once, on
-- the first opts.grid_limit scenarios of that sample (stopping early after opts.grid_seconds), and
-- every path validated against the map's voxel list by octonav.checker.
-- opts: limit, seed, presets ({ {name, find}, ... }, default one preset "default" = {}), grid_limit,
-- grid_seconds, paths (a file handle for --paths, written for the first preset), max_nodes, repeat
-- (default 1: the octree and the grid alike make that many passes over their scenarios and keep
-- each scenario's fastest run, which filters out what other processes on a shared machine cost it;
-- whole passes, so no run follows the identical search with its caches warm).
-- Returns one result table per preset, in order.
function M.query_map(map_path, scen_path, opts)
  opts = opts or {}
  local octonav = require "octonav"
  local checker = require "octonav.checker"
  local tree = must(movingai.load_map(map_path))
  local st = tree:stats()
  local scen = must(movingai.load_scen(scen_path))
  local vmap = must(checker.voxel_map(map_path))
  local order = {}
  for i = 1, #scen do order[i] = i end
  if opts.limit and opts.limit < #scen then
    local rnd = M.rng(opts.seed or 1)
    for i = #order, 2, -1 do -- seeded Fisher-Yates, then the first `limit`
      local j = rnd(i)
      order[i], order[j] = order[j], order[i]
    end
    for i = #order, opts.limit + 1, -1 do order[i] = nil end
  end
  local rep = opts["repeat"] or 1
  assert(compat.isinteger(rep) and rep >= 1, "repeat must be an integer >= 1")
  -- the grid baseline: `rep` passes over its scenarios (not back-to-back repeats, which would find
  -- the caches warm from the identical search), each scenario's fastest run kept
  local gtimes = {}
  local glimit = math.min(opts.grid_limit or #order, #order)
  if glimit > 0 then
    local grid = must(movingai.load_grid(map_path))
    local spent, n = 0, glimit
    for r = 1, rep do
      for k = 1, n do
        local s = scen[order[k]]
        local c0 = clock()
        local gp, ginfo = grid:find(s.start_cell, s.goal_cell, false)
        local dt = clock() - c0
        spent = spent + dt
        if r == 1 or dt < gtimes[k] then gtimes[k] = dt end
        if r == 1 then
          assert(gp and math.abs(ginfo.length - s.optimal) < 1e-6, "grid baseline disagrees with the scenario file")
          -- the time budget counts the first pass (later passes cost about as much again each)
          if opts.grid_seconds and spent > opts.grid_seconds / rep then
            n = k
            break
          end
        end
      end
    end
    grid:close()
    collectgarbage()
  end
  local q = octonav.query.new(tree, { max_nodes = opts.max_nodes or 1048576 })
  local results = {}
  local prepared -- { ms, boxes, box_bytes } once the tree is prepared
  for pi, preset in ipairs(opts.presets or { { "default", {} } }) do
    local find = preset[2]
    -- a preset with `prepare = true` runs on the prepared tree (tree:prepare, timed once); every
    -- later preset would search the boxes too, so those come last
    assert(preset.prepare or not prepared, "presets without prepare must come before those with it")
    if preset.prepare and not prepared then
      local c0 = clock()
      local n = tree:prepare()
      local pst = tree:stats()
      prepared = { ms = (clock() - c0) * 1e3, boxes = n, box_bytes = pst.box_bytes }
    end
    local times, ratios, solved, valid, exp_ratio = {}, {}, 0, 0, {}
    local out = pi == 1 and opts.paths or nil
    -- as for the grid, `rep` passes over the whole sample, each scenario's fastest run kept; the
    -- last pass also checks and records the paths
    local function timed_find(k, s)
      local c0 = clock()
      local path, info = q:find(s.start, s.goal, find)
      local dt = clock() - c0
      if not times[k] or dt < times[k] then times[k] = dt end
      return path, info
    end
    for _ = 2, rep do
      for k, si in ipairs(order) do timed_find(k, scen[si]) end
    end
    for k, si in ipairs(order) do
      local s = scen[si]
      local path, info = timed_find(k, s)
      if path then
        solved = solved + 1
        if checker.path(vmap, path) then valid = valid + 1 end
        ratios[#ratios + 1] = info.length / s.optimal
        exp_ratio[#exp_ratio + 1] = info.expansions / math.max(1, info.cells)
      end
      if out then
        local line = { si - 1, path and "found" or info.reason, path and ("%.6f"):format(info.length) or "-" }
        for _, p in ipairs(path or {}) do
          line[#line + 1] = ("%.6f %.6f %.6f"):format(p[1], p[2], p[3])
        end
        out:write(table.concat(line, " "), "\n")
      end
    end
    local otimes = {}
    for k = 1, #gtimes do otimes[k] = times[k] end
    local sum = 0
    for _, r in ipairs(ratios) do sum = sum + r end
    local us = {}
    for i, t in ipairs(times) do us[i] = t * 1e6 end
    results[pi] = {
      preset = preset[1], scenarios = #order, solved = solved, valid = valid,
      mean_ratio = #ratios > 0 and sum / #ratios or 0,
      p99_ratio = #ratios > 0 and M.percentile(ratios, 0.99) or 0,
      max_ratio = #ratios > 0 and M.percentile(ratios, 1.0) or 0,
      median_us = median(us), p99_us = M.percentile(us, 0.99),
      grid_median_us = #gtimes > 0 and median({ compat.unpack(gtimes) }) * 1e6 or 0,
      speedup = #gtimes > 0 and median({ compat.unpack(gtimes) }) / median(otimes) or 0,
      expansions_per_path_cell = #exp_ratio > 0 and median(exp_ratio) or 0,
      nodes = st.nodes, bytes_per_node = st.bytes_per_node, grid_scenarios = #gtimes,
      prepare_ms = prepared and prepared.ms, boxes = prepared and prepared.boxes,
      box_bytes = prepared and prepared.box_bytes,
    }
  end
  q:close()
  tree:close()
  return results
end

M.QUERY_KEYS = { "scenarios", "solved", "valid", "mean_ratio", "p99_ratio", "max_ratio", "median_us", "p99_us",
  "grid_median_us", "speedup", "expansions_per_path_cell", "nodes", "bytes_per_node" }

function M.query_kv(r)
  local out = {}
  local keys = { compat.unpack(M.QUERY_KEYS) }
  if r.boxes then -- on a prepared tree
    for _, k in ipairs { "boxes", "box_bytes", "prepare_ms" } do keys[#keys + 1] = k end
  end
  for _, k in ipairs(keys) do
    local v = r[k]
    out[#out + 1] = k .. "=" .. (compat.isinteger(v) and tostring(v) or ("%.4f"):format(v))
  end
  return table.concat(out, " ")
end

M.QUERY_HEAD = "| map | preset | scenarios | solved | valid | mean ratio | p99 ratio | max ratio | median us | p99 us "
  .. "| grid median us (n) | speedup | expansions / path cell |"
M.QUERY_SEP = "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"

function M.query_row(name, r)
  local preset = r.preset
  return ("| %s | %s | %d | %d | %d | %.4f | %.4f | %.4f | %.0f | %.0f | %.0f (%d) | %.0fx | %.2f |"):format(name, preset,
    r.scenarios, r.solved, r.valid, r.mean_ratio, r.p99_ratio, r.max_ratio, r.median_us, r.p99_us, r.grid_median_us,
    r.grid_scenarios, r.speedup, r.expansions_per_path_cell)
end

--- Streaming: a world of 16 x 1 x 16 tiles (depth 6) written to a temp pack, 100 agents random-walking
-- for `frames` frames, one update() a frame (workers threads, no waiting). Reports tiles decoded per
-- second of worker time and the caller's time per update() (median, p99). opts.prepare: the workers
-- also build each tile's box graph (streamer option prepare); boxes per tile are then reported.
function M.streamer(opts)
  opts = opts or {}
  local octonav = require "octonav"
  local frames, workers, prepare = opts.frames or 2000, opts.workers or 1, opts.prepare or false
  local T, D = 16, 6
  local size = compat.pow2(D)
  local rnd = M.rng(3)
  local src = octonav.tree.new { tiles = { T, 1, T }, depth = D }
  for _ = 1, 3000 do
    local x, y, z = rnd() * T * size, rnd() * size, rnd() * T * size
    src:add_box({ x, y, z }, { x + 1 + rnd() * 8, y + 1 + rnd() * 8, z + 1 + rnd() * 8 })
  end
  local dir = os.tmpname()
  os.remove(dir)
  assert(require("octonav.core").mkdir(dir .. "/tiles"))
  for k = 0, T - 1 do
    for i = 0, T - 1 do
      local f = assert(io.open(("%s/tiles/%d_0_%d.tile"):format(dir, i, k), "wb"))
      f:write(require("octonav.pack").tile_file(i, 0, k, src:encode_tile(i, 0, k)))
      f:close()
    end
  end
  local tree = octonav.tree.new { tiles = { T, 1, T }, depth = D }
  local s = core.streamer.new(tree, dir, { load_padding = size * 0.5, unload_padding = size, workers = workers,
    prepare = prepare })
  local pos, ids = {}, {}
  for a = 1, 100 do
    pos[a] = { rnd() * T * size, rnd() * size, rnd() * T * size }
    ids[a] = s:add_agent(pos[a])
  end
  local times = {}
  for f = 1, frames do
    for a = 1, 100 do
      local p = pos[a]
      p[1] = math.max(0, math.min(T * size, p[1] + (rnd() - 0.5) * 8))
      p[3] = math.max(0, math.min(T * size, p[3] + (rnd() - 0.5) * 8))
      s:move_agent(ids[a], p)
    end
    local c0 = clock()
    s:update()
    times[f] = (clock() - c0) * 1e6
  end
  local st, tst = s:stats(), tree:stats()
  s:close()
  os.execute("rm -rf '" .. dir .. "'")
  return {
    frames = frames, workers = workers, decoded = st.decoded, prepare = prepare,
    boxes_per_tile = tst.tiles_prepared > 0 and tst.boxes / tst.tiles_prepared or 0,
    decoded_per_s = st.decode_seconds > 0 and st.decoded / st.decode_seconds or 0,
    tile_nodes = src:stats().nodes / (T * T),
    update_median_us = median(times), update_p99_us = M.percentile(times, 0.99),
  }
end

--- The world layer: bake throughput over the meshes in mesh_dir (triangles per second, skipped when
-- absent), and an 8 x 2 x 8 world of 32^3-leaf tiles (terrain, walls, pillars) where long paths are
-- found hierarchically (world:plan, then one query per route step) and by one seamless query over
-- the whole tree: lengths and times side by side, plus the Cell planning time alone.
function M.world(opts)
  opts = opts or {}
  local octonav = require "octonav"
  local out = { meshes = {} }
  local function tmpdir()
    local d = os.tmpname()
    os.remove(d)
    assert(require("octonav.core").mkdir(d))
    return d
  end
  -- 1. bake throughput on the real meshes
  for _, m in ipairs { { "dungeon", 0.5 }, { "nav_test", 0.5 }, { "house", 0.125 }, { "undulating", 0.5 } } do
    local path = (opts.mesh_dir or "../shared/data/meshes") .. "/" .. m[1] .. ".obj"
    local f = io.open(path, "rb")
    if f then
      local lo, hi = { math.huge, math.huge, math.huge }, { -math.huge, -math.huge, -math.huge }
      for line in f:lines() do
        local x, y, z = line:match("^v%s+(%S+)%s+(%S+)%s+(%S+)")
        if x then
          local v = { tonumber(x), tonumber(y), tonumber(z) }
          for k = 1, 3 do lo[k], hi[k] = math.min(lo[k], v[k]), math.max(hi[k], v[k]) end
        end
      end
      f:close()
      local dir = tmpdir()
      local c0 = clock()
      local summary = assert(octonav.bake {
        range = { min = { lo[1] - 1, lo[2] - 1, lo[3] - 1 }, max = { hi[1] + 1, hi[2] + 4, hi[3] + 1 } },
        scale = m[2], depth = 6, geometry = { { obj = path } }, output = dir, progress = function() end,
      })
      local dt = clock() - c0
      local world = assert(octonav.world.load(dir))
      local st = world.tree:stats()
      local tris = 0
      local tf = io.open(path, "rb")
      for line in tf:lines() do
        local fv = line:match("^f%s+(.*)")
        if fv then
          local n = 0
          for _ in fv:gmatch("%S+") do n = n + 1 end
          tris = tris + math.max(0, n - 2)
        end
      end
      tf:close()
      out.meshes[#out.meshes + 1] = { name = m[1], scale = m[2], tiles = world.tiles[1] * world.tiles[2] * world.tiles[3],
        triangles = tris, seconds = dt, tris_per_s = tris / dt, nodes = st.nodes, bytes = st.bytes }
      world:close()
      os.execute("rm -rf '" .. dir .. "'")
      _ = summary
    end
  end
  -- 2. an 8 x 2 x 8 world: long paths, hierarchical vs seamless
  local rnd = M.rng(opts.seed or 5)
  local heights, nx = {}, 257
  for k = 0, nx - 1 do
    for i = 0, nx - 1 do heights[#heights + 1] = 3 + 2 * math.sin(i / 13) * math.cos(k / 11) end
  end
  local geometry = { { heightfield = { origin = { 0, 0, 0 }, cell = 1, nx = nx, nz = nx, heights = heights } } }
  for w = 1, 6 do -- walls with gaps
    local x = w * 36 + rnd() * 4
    local gap = rnd() * 200 + 20
    geometry[#geometry + 1] = { box = { min = { x, 0, 0 }, max = { x + 2, 40, gap } } }
    geometry[#geometry + 1] = { box = { min = { x, 0, gap + 14 }, max = { x + 2, 40, 256 } } }
  end
  for _ = 1, 120 do -- pillars
    local x, z = rnd() * 250, rnd() * 250
    geometry[#geometry + 1] = { box = { min = { x, 0, z }, max = { x + 1 + rnd() * 5, 10 + rnd() * 40, z + 1 + rnd() * 5 } } }
  end
  local dir = tmpdir()
  local c0 = clock()
  assert(octonav.bake {
    range = { min = { 0, 0, 0 }, max = { 256, 64, 256 } }, scale = 1, depth = 5, geometry = geometry,
    connect = { weights = opts.weights or "path" }, output = dir, progress = function() end,
  })
  out.world_bake_s = clock() - c0
  local world = assert(octonav.world.load(dir))
  out.world_nodes = world.tree:stats().nodes
  local q = octonav.query.new(world.tree, { max_nodes = 1048576 })
  local function free_point(xlo, xhi)
    while true do
      local p = { xlo + rnd() * (xhi - xlo), 8 + rnd() * 40, 4 + rnd() * 248 }
      if world.tree:locate(p) == "free" then return p end
    end
  end
  local plan_t, hier_t, seam_t, hier_len, seam_len, ratios = {}, {}, {}, 0, 0, {}
  local n = opts.paths or 40
  for _ = 1, n do
    local a, b = free_point(2, 30), free_point(226, 254) -- across the whole world
    local t0 = clock()
    local route = world:plan(a, b)
    local t1 = clock()
    local seam_p, seam_info = q:find(a, b)
    local t2 = clock()
    if route and seam_p then
      -- one query per route step, each from where the last one ended to the step's exit
      local len, from, ok = 0, a, true
      for _, step in ipairs(route) do -- this world has no holes: every step is on world.tree
        local to = step.exit
        local p, info = q:find(from, to)
        if not p and info.nearest then -- a crossing on the edge of a wall: the free point beside it
          to = info.nearest
          p, info = q:find(from, to)
        end
        if not p then ok = false break end
        len = len + info.length
        from = to
      end
      local t3 = clock()
      if ok then
        plan_t[#plan_t + 1] = (t1 - t0) * 1e6
        hier_t[#hier_t + 1] = ((t1 - t0) + (t3 - t2)) * 1e6
        seam_t[#seam_t + 1] = (t2 - t1) * 1e6
        hier_len, seam_len = hier_len + len, seam_len + seam_info.length
        ratios[#ratios + 1] = len / seam_info.length
      end
    end
  end
  q:close()
  world:close()
  os.execute("rm -rf '" .. dir .. "'")
  out.paths = #ratios
  out.plan_median_us = #plan_t > 0 and median(plan_t) or 0
  out.hier_median_us = #hier_t > 0 and median(hier_t) or 0
  out.seam_median_us = #seam_t > 0 and median(seam_t) or 0
  out.length_ratio_mean = #ratios > 0 and hier_len / seam_len or 0
  out.length_ratio_max = #ratios > 0 and M.percentile(ratios, 1.0) or 0
  return out
end

--- Replace the text between <!-- bench:NAME --> and <!-- /bench:NAME --> in a file (the tables of
-- docs/benchmarks.md): the new text is written beside it and renamed over it, so a failed write leaves
-- the file as it was. -> true | nil, reason.
function M.write_section(path, name, text)
  local f = io.open(path, "rb")
  if not f then return nil, "cannot read " .. path end
  local doc = f:read("*a")
  f:close()
  local open, close = "<!-- bench:" .. name .. " -->", "<!-- /bench:" .. name .. " -->"
  local a = doc:find(open, 1, true)
  local b = doc:find(close, 1, true)
  if not a or not b then return nil, "markers for " .. name .. " not found in " .. path end
  doc = doc:sub(1, a + #open - 1) .. "\n" .. text .. "\n" .. doc:sub(b)
  local tmp = path .. ".tmp"
  local w, werr = io.open(tmp, "wb")
  if not w then return nil, werr end
  local ok, e1 = w:write(doc)
  local cok, e2 = w:close()
  if not ok or not cok then
    os.remove(tmp)
    return nil, tmp .. ": " .. tostring(e1 or e2)
  end
  local rok, rerr = os.rename(tmp, path)
  if not rok then
    os.remove(tmp)
    return nil, rerr
  end
  return true
end

return M
