--- The world commands of bin/octonav (docs/world.md):
--   bake CONFIG.lua [--tile I,J,K | --job N/M | --link]
--                                             bake a pack (all of it; one tile; job N of M: the tiles
--                                             t % M == N; or the link step only)
--   info PACK                                 what a pack holds
--   path PACK x y z x y z [--obj FILE]        plan a route and search each of its steps
--   validate PACK                             check the holes' doors; exit code 1 when not ok
-- M.main(cmd, args) returns the exit code: 0 done, 1 failed (or not ok), 2 bad usage.
--
-- A config file is the user's own Lua code: it is run (loadfile) and must return the config table.
-- Relative paths in it (geometry `obj` entries and `output`) are taken relative to the config file's
-- directory. Pack files are never run: they are parsed (octonav.pack).
local core = require "octonav.core"
local bake = require "octonav.bake"
local world = require "octonav.world"
local pack = require "octonav.pack"
local util = require "octonav.util"
local tilegrid = require "octonav.tilegrid"

local M = {}

-- output streams (specs may replace them)
M.stdout = io.stdout
M.stderr = io.stderr

local function out(...)
  M.stdout:write(...)
  M.stdout:write("\n")
end

local function err(...)
  M.stderr:write("octonav: ", ...)
  M.stderr:write("\n")
end

M.USAGE = [==[
usage: octonav bake CONFIG.lua [--tile I,J,K | --job N/M | --link]
       octonav info PACK
       octonav path PACK x y z x y z [--obj FILE]
       octonav validate PACK
       octonav view PACK_OR_TREE_OR_3DMAP [--path x y z x y z ...] [-o FILE.html]
                    [--png FILE.png] [--slice y=V]]==]

local function usage(msg)
  if msg then err(msg) end
  M.stderr:write(M.USAGE, "\n")
  return 2
end

local function g(v) return ("%.6g"):format(v) end
local function fp(p) return ("(%s, %s, %s)"):format(g(p[1]), g(p[2]), g(p[3])) end

-- flags (--name [value]) and positional arguments
local function parse(args, valued, bare)
  local flags, pos = {}, {}
  local i = 1
  while i <= #args do
    local a = args[i]
    local name = type(a) == "string" and a:match("^%-%-(.+)$")
    if name then
      if valued[name] then
        if args[i + 1] == nil then return nil, "missing value for --" .. name end
        flags[name] = args[i + 1]
        i = i + 2
      elseif bare[name] then
        flags[name] = true
        i = i + 1
      else
        return nil, "unknown flag --" .. name
      end
    else
      pos[#pos + 1] = a
      i = i + 1
    end
  end
  return flags, pos
end

local function dirname(path)
  return path:match("^(.*)/[^/]*$") or "."
end

local function resolve(base, path)
  if type(path) ~= "string" or path:sub(1, 1) == "/" or base == "." then return path end
  return base .. "/" .. path
end

--- Runs a config file and returns its table with relative paths resolved, or nil, err.
function M.load_config(path)
  local chunk, lerr = loadfile(path, "t")
  if not chunk then return nil, lerr end
  local ok, config = pcall(chunk)
  if not ok then return nil, path .. ": " .. tostring(config) end
  if type(config) ~= "table" then return nil, path .. ": the config file must return a table" end
  local base = dirname(path)
  config.output = resolve(base, config.output)
  if type(config.geometry) == "table" then
    for _, e in ipairs(config.geometry) do
      if type(e) == "table" and type(e.obj) == "string" then e.obj = resolve(base, e.obj) end
    end
  end
  return config
end

local function file_size(path) return util.file_size(path) or 0 end

-- ---- bake ------------------------------------------------------------------------------------------

local function cmd_bake(args)
  local flags, pos = parse(args, { tile = true, job = true }, { link = true })
  if not flags then return usage(pos) end
  if #pos ~= 1 then return usage("bake: one CONFIG.lua expected") end
  if (flags.tile and 1 or 0) + (flags.job and 1 or 0) + (flags.link and 1 or 0) > 1 then
    return usage("bake: --tile, --job and --link do not go together")
  end
  local config, cerr = M.load_config(pos[1])
  if not config then
    err(cerr)
    return 1
  end
  local ok, res, rerr = pcall(function()
    if flags.tile then
      local i, j, k = flags.tile:match("^(%d+),(%d+),(%d+)$")
      if not i then error("octonav.bake: --tile: I,J,K expected (tile indices from 0)", 0) end
      return bake.tile(config, math.tointeger(tonumber(i)), math.tointeger(tonumber(j)), math.tointeger(tonumber(k)))
    elseif flags.job then
      local n, m = flags.job:match("^(%d+)/(%d+)$")
      n, m = math.tointeger(tonumber(n)), math.tointeger(tonumber(m))
      if not n or m < 1 or n >= m then error("octonav.bake: --job: N/M expected (job N of M, 0 <= N < M)", 0) end
      return bake.job(config, n, m)
    elseif flags.link then
      return bake.link(config)
    end
    return bake.run(config)
  end)
  if not ok then
    err(tostring(res))
    return 1
  end
  if not res then
    err(tostring(rerr))
    return 1
  end
  if flags.tile then
    out(("tile %s: %d bytes -> %s"):format(flags.tile, rerr, config.output))
    return 0
  end
  if flags.job then
    out(("job %s: %d tiles, %d bytes -> %s"):format(flags.job, res, rerr, config.output))
    return 0
  end
  local s = res
  out(("baked %s: %d tiles, %d nodes, %d bytes, %d connect points in %d blocks, %d links, %d weights, %d holes, %d door links%s")
    :format(config.output, s.tiles, s.nodes, s.bytes, s.points, s.blocks, s.links, s.weights, s.holes, s.door_links,
      s.seconds and (" in %.2f s"):format(s.seconds) or (" (link %.2f s)"):format(s.link_seconds)))
  return 0
end

-- ---- info ------------------------------------------------------------------------------------------

local function load_world(path)
  local w, lerr = world.load(path)
  if not w then err(lerr) end
  return w
end

local function cmd_info(args)
  local flags, pos = parse(args, {}, {})
  if not flags then return usage(pos) end
  if #pos ~= 1 then return usage("info: one PACK expected") end
  local w = load_world(pos[1])
  if not w then return 1 end
  local st = w.tree:stats()
  local files = file_size(pack.manifest_path(w.dir)) + file_size(pack.graph_path(w.dir))
  for t = 0, w.grid.count - 1 do
    files = files + file_size(pack.tile_path(w.dir, tilegrid.coords(w.grid, t)))
  end
  local ndoors, hole_nodes, hole_bytes = 0, 0, 0
  for _, h in ipairs(w.holes) do
    ndoors = ndoors + #h.doors
    local hs = h.tree:stats()
    hole_nodes, hole_bytes = hole_nodes + hs.nodes, hole_bytes + hs.bytes
    files = files + file_size(pack.hole_path(w.dir, h.name))
  end
  local nblocks, npoints, nlinks, nweights, ndl = 0, 0, 0, 0, 0
  for _, b in pairs(w.blocks) do
    nblocks = nblocks + 1
    npoints = npoints + #b.points
  end
  for _, l in pairs(w.links) do nlinks = nlinks + #l end
  for _, wt in pairs(w.weights) do
    for _, row in pairs(wt) do
      for _ in pairs(row) do nweights = nweights + 1 end
    end
  end
  for _, dl in pairs(w.door_links) do
    for _, l in pairs(dl) do ndl = ndl + #l end
  end
  out(("pack      %s"):format(w.dir))
  out(("tiles     %d x %d x %d = %d, depth %d (%d leaves a side), scale %s, tile size %s, radius %s"):format(
    w.tiles[1], w.tiles[2], w.tiles[3], w.grid.count, w.depth, 1 << w.depth, g(w.scale), g(w.tile_size), g(w.radius)))
  out(("world     %s .. %s"):format(fp(w.origin), fp({ w.origin[1] + w.tiles[1] * w.tile_size,
    w.origin[2] + w.tiles[2] * w.tile_size, w.origin[3] + w.tiles[3] * w.tile_size })))
  out(("nodes     %d (%d bytes in memory), holes' trees %d nodes (%d bytes)"):format(st.nodes, st.bytes, hole_nodes,
    hole_bytes))
  out(("files     %d bytes"):format(files))
  out(("holes     %d, doors %d"):format(#w.holes, ndoors))
  for _, h in ipairs(w.holes) do
    out(("  %s (%s) %s .. %s scale %s, %d doors, tiles %s"):format(h.name, h.kind, fp(h.min), fp(h.max), g(h.scale),
      #h.doors, table.concat(h.tiles, ",")))
  end
  out(("connect   %d points in %d blocks, %d links, %d weights (directed), %d door links"):format(npoints, nblocks,
    nlinks, nweights, ndl))
  w:close()
  return 0
end

-- ---- path ------------------------------------------------------------------------------------------

local function cmd_path(args)
  local flags, pos = parse(args, { obj = true }, {})
  if not flags then return usage(pos) end
  if #pos ~= 7 then return usage("path: PACK x y z x y z expected") end
  local c = {}
  for n = 2, 7 do
    c[n - 1] = tonumber(pos[n])
    if not c[n - 1] then return usage(("path: coordinate '%s' is not a number"):format(pos[n])) end
  end
  local a, b = { c[1], c[2], c[3] }, { c[4], c[5], c[6] }
  local w = load_world(pos[1])
  if not w then return 1 end
  local route, reason = w:plan(a, b)
  if not route then
    out(("no route from %s to %s: %s"):format(fp(a), fp(b), tostring(reason)))
    w:close()
    return 1
  end
  out(("route: %d steps"):format(#route))
  local polylines, total = {}, 0
  for n, step in ipairs(route) do
    local tree, where
    if step.kind == "hole" then
      local h = w.holes[step.hole]
      tree, where = h.tree, ("hole %s"):format(h and h.name or tostring(step.hole))
    else
      tree, where = w.tree, ("tile %s"):format(tostring(step.tile))
    end
    out(("  %d. %s: enter %s exit %s%s"):format(n, where, fp(step.enter), fp(step.exit),
      step.via ~= nil and (" via " .. tostring(step.via)) or ""))
    if not tree then
      out("     no tree for this step")
      w:close()
      return 1
    end
    local q = core.query.new(tree)
    local path, info = q:find(step.enter, step.exit)
    if not path then
      out(("     search failed: %s"):format(tostring(info.reason)))
      w:close()
      return 1
    end
    out(("     %d points, length %s, %d expansions"):format(#path, g(info.length), info.expansions))
    total = total + info.length
    polylines[#polylines + 1] = path
  end
  -- the whole path: the steps' paths joined (the crossings between steps are the joining segments)
  local pts = {}
  for _, path in ipairs(polylines) do
    for _, p in ipairs(path) do
      local q = pts[#pts]
      if not (q and q[1] == p[1] and q[2] == p[2] and q[3] == p[3]) then pts[#pts + 1] = p end
    end
  end
  local length = 0
  for n = 2, #pts do
    local p, q = pts[n - 1], pts[n]
    length = length + math.sqrt((p[1] - q[1]) ^ 2 + (p[2] - q[2]) ^ 2 + (p[3] - q[3]) ^ 2)
  end
  out(("path: %d points, length %s (%s inside the steps, the rest crossing tile faces and doors)"):format(#pts,
    g(length), g(total)))
  for _, p in ipairs(pts) do out("  " .. fp(p)) end
  w:close()
  if flags.obj then
    local f, oerr = io.open(flags.obj, "wb")
    if not f then
      err(tostring(oerr))
      return 1
    end
    f:write(("# octonav path %s -> %s: %d route steps, %d points, length %.17g\n"):format(fp(a), fp(b), #route, #pts,
      length))
    for _, p in ipairs(pts) do f:write(("v %.17g %.17g %.17g\n"):format(p[1], p[2], p[3])) end
    if #pts >= 2 then
      local idx = {}
      for n = 1, #pts do idx[n] = n end
      f:write("l ", table.concat(idx, " "), "\n")
    end
    local okw, werr = f:close()
    if not okw then
      err(tostring(werr))
      return 1
    end
    out("wrote " .. flags.obj)
  end
  return 0
end

-- ---- validate --------------------------------------------------------------------------------------

local function yn(b) return b and "yes" or "NO" end

local function cmd_validate(args)
  local flags, pos = parse(args, {}, {})
  if not flags then return usage(pos) end
  if #pos ~= 1 then return usage("validate: one PACK expected") end
  local w = load_world(pos[1])
  if not w then return 1 end
  local r = w:validate()
  for _, d in ipairs(r.doors) do
    out(("hole %s door %d: outside blocked in hole %s, inside free %s, connected %s, outside free in world %s -> %s")
      :format(d.name, d.door, yn(d.outside_blocked), yn(d.inside_free), yn(d.connected), yn(d.outside_free),
        d.ok and "ok" or "NOT OK"))
  end
  out(("%d holes, %d doors: %s"):format(#w.holes, #r.doors, r.ok and "ok" or "NOT OK"))
  w:close()
  return r.ok and 0 or 1
end

-- view: lua/octonav/cli_view.lua (loaded when used: the viewer's page is a large string)
local function cmd_view(args)
  return require("octonav.cli_view").run(args, { out = out, err = function(s) err(s) end })
end

local COMMANDS = { bake = cmd_bake, info = cmd_info, path = cmd_path, validate = cmd_validate, view = cmd_view }

--- Runs one command; returns the exit code.
function M.main(cmd, args)
  args = args or {}
  local fn = COMMANDS[cmd]
  if not fn then return usage(cmd and ("unknown command '" .. tostring(cmd) .. "'") or nil) end
  return fn(args)
end

return M
