--- Benchmarks over the Moving AI voxel maps (../shared/data/voxel), run by `make bench` and
-- `lua5.4 bin/octonav bench-tree`. Every ratio is measured side by side in one run on the same
-- inputs, since absolute times drift on a shared machine. Maps that are absent are skipped.
local core = require "octonav.core"
local movingai = require "octonav.movingai"

local M = {}

local clock = core.clock

--- A small seeded PRNG (xorshift64*), so samples are the same on every run and machine.
function M.rng(seed)
  local s = (seed or 1) * 0x9E3779B97F4A7C15 | 1
  return function(n)
    s = s ~ (s >> 12); s = s ~ (s << 25); s = s ~ (s >> 27)
    local r = ((s * 0x2545F4914F6CDD1D) >> 11) / 9007199254740992.0
    if n then return math.floor(r * n) + 1 end
    return r
  end
end

local function median(xs)
  table.sort(xs)
  return xs[(#xs + 1) // 2]
end
M.median = median

function M.percentile(xs, p)
  table.sort(xs)
  local i = math.max(1, math.min(#xs, math.ceil(#xs * p)))
  return xs[i]
end

local function file_size(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local n = f:seek("end")
  f:close()
  return n
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
  local grid = assert(movingai.load_grid(path))
  local scen = assert(movingai.load_scen(path .. ".3dscen"))
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

local TREE_HEAD = "| map | size | voxels | load ms | nodes | bytes/node (RAM) | file bytes/node | locate/s (Lua) | visible/s (Lua) | visible us (octree / dense walk) | speedup | clear | disagree |"
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

--- Replace the text between <!-- bench:NAME --> and <!-- /bench:NAME --> in a file.
function M.write_section(path, name, text)
  local f = io.open(path, "rb")
  if not f then return nil, "cannot read " .. path end
  local doc = f:read("a")
  f:close()
  local open, close = "<!-- bench:" .. name .. " -->", "<!-- /bench:" .. name .. " -->"
  local a = doc:find(open, 1, true)
  local b = doc:find(close, 1, true)
  if not a or not b then return nil, "markers for " .. name .. " not found in " .. path end
  doc = doc:sub(1, a + #open - 1) .. "\n" .. text .. "\n" .. doc:sub(b)
  f = assert(io.open(path, "wb"))
  f:write(doc)
  f:close()
  return true
end

return M
