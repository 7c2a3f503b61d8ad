--- octonav's command line (bin/octonav is a launcher for M.run):
--   bake CONFIG.lua [--tile I,J,K | --hole NAME | --job N/M | --link]
--                                             bake a pack (all of it; one tile; one hole; job N of M:
--                                             the tiles t % M == N; or the link step only)
--   info PACK                                 what a pack holds
--   path PACK x y z x y z [--obj FILE]        plan a route and search each of its steps
--   validate PACK                             check the holes' doors; exit code 1 when not ok
--   view PACK_OR_TREE_OR_3DMAP [...]          a page or a PNG of the nav data (octonav.cli_view)
--   bench MAP.3dmap [SCEN] [flags]            query benchmark on one Moving AI map
--   bench-tree [DATA_DIR], bench-all [DATA_DIR]   the benchmark tables (bench-all writes docs/benchmarks.md)
--   bench-world [flags]                       the world benchmark (octonav.bench_world)
--   --help, CMD --help, --version (-V, version)   to stdout, exit code 0
-- M.run(argv) and M.main(cmd, args) return the exit code: 0 done, 1 failed (or not ok), 2 bad usage.
-- Errors are one line on stderr ("octonav: ..."); bad usage adds the usage.
--
-- A config file is the user's own Lua code: it is run (loadfile) and must return the config table.
-- Relative paths in it (geometry `obj` entries and `output`) are taken relative to the config file's
-- directory. Pack files are never run: they are parsed (octonav.pack).
local compat = require "octonav.compat"
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
-- the project root (bin/octonav sets it): bench-all writes ROOT/docs/benchmarks.md; data defaults under it
M.root = "."

M.VERSION = "octonav " .. core.version

local function out(...)
  M.stdout:write(...)
  M.stdout:write("\n")
end

local function err(...)
  M.stderr:write("octonav: ", ...)
  M.stderr:write("\n")
end

-- A library error as the CLI prints it after "octonav: CMD: ": without the library function's own
-- name ("octonav.bake.tile: ", "world:plan: "), which would be a second prefix, and without a position.
local function lib_msg(e)
  local m = tostring(e):gsub("\n.*", "")
  m = m:gsub("^[^\n:]+%.lua:%d+: ", "", 1)
  m = m:gsub("^octonav%.[%w_.]+: ", "", 1):gsub("^[%a_]+:[%a_]+: ", "", 1)
  return m
end
M.lib_msg = lib_msg

-- each command's usage: its synopsis line(s), then what it does
local HELP = {
  bake = [[
octonav bake CONFIG.lua [--tile I,J,K | --hole NAME | --job N/M | --link]
    bake the pack a config file describes (docs/world.md): every tile, every hole and the link
    step; --tile one tile and its graph only (parallel bakes); --hole one hole's tree; --job N/M
    the tiles t % M == N and the holes h % M == N (job N of M, in one process); --link the
    manifest, once every tile graph and hole is baked (reads the graph files only)]],
  info = [[
octonav info PACK
    what a pack holds: grid, nodes, files, holes, tile graphs (portals, edges, links)]],
  path = [[
octonav path PACK x y z x y z [--obj FILE] [--agent NAME]
    plan a route from the first point to the second and search each of its steps; --obj writes
    the path as an OBJ polyline; --agent plans for that agent of a pack baked for several (the
    first by default). A failure prints its reason (and the nearest free point to a blocked end);
    exit code 1]],
  validate = [[
octonav validate PACK
    check every hole's doors, for every agent of the pack (their lines prefixed "agent NAME: " when
    the pack has several); exit code 1 when one is not ok]],
  view = [==[
octonav view PACK_OR_TREE_OR_3DMAP [--path x y z x y z ...] [-o FILE.html] [--png FILE.png [--slice x|y|z=VALUE]]
             [--free] [--corridor] [--visited] [--crowd RECORDING [--frame N]]
octonav view RECORDING [-o FILE.html] [--frame N]
    a page (WebGL2) or a PNG of the nav data, with paths and their searches' corridors and visited
    cells (README, "Seeing the nav data"); in a pack, --path is routed as `octonav path` routes it
    (into caves). A crowd recording (octonav.crowd_record) is played over a timeline, alone or over
    its tree or world (--crowd); --frame N opens it paused at its N-th frame. Where the page stays
    blank (no GPU, WebGL2 off), it says so; Chromium draws it in software with:
    chromium --use-angle=swiftshader --enable-unsafe-swiftshader FILE.html]==],
  bench = [[
octonav bench MAP.3dmap [SCEN] [--limit N] [--seed K] [--paths FILE] [--preset NAME] [--grid-limit M]
              [--repeat R] [--prepare]
    query benchmark on one map (SCEN defaults to MAP.3dmap.3dscen): N scenarios of a seeded sample
    (all by default), presets default, seed, astar, theta, boxes; grid A* on the first M (25);
    R passes (3), fastest kept; --paths writes every path; --prepare searches the prepared graph
    (tree:prepare). The last line is key=value pairs]],
  ["bench-tree"] = [[
octonav bench-tree [DATA_DIR]
    tree benchmark per map: load, memory, file size, locate and visible speed]],
  ["bench-all"] = [[
octonav bench-all [DATA_DIR]
    every benchmark; writes the tables into docs/benchmarks.md]],
  ["bench-world"] = [[
octonav bench-world [--worlds dungeon,house,t16,t32] [--pairs 60] [--frames 300] [--data DIR] [--pack DIR]
    the world benchmark (issue 11); all worlds: writes its table in docs/benchmarks.md. Opt-in (slow: bakes
    three times): t8x512, the 8x1x8 world of 512^3 tiles at 1 m (tree prepared, 35 pairs, 100 frames).
    --pack DIR: the pack of the (one) world given, baked before with its config: not baked again]],
}
local ORDER = { "bake", "info", "path", "validate", "view", "bench", "bench-tree", "bench-all", "bench-world" }

local function usage_text()
  local t = { "usage: octonav COMMAND [ARGS]   (octonav COMMAND --help: that command's usage)" }
  for _, name in ipairs(ORDER) do t[#t + 1] = "  " .. HELP[name]:gsub("\n", "\n  ") end
  t[#t + 1] = "  octonav --help | --version (-V, version)"
  t[#t + 1] = "DATA_DIR defaults to ../shared/data/voxel beside the project (maps that are absent are skipped)."
  return table.concat(t, "\n")
end
M.USAGE = usage_text()

-- bad usage: the message, then the usage (of the command when known), on stderr; exit code 2
local function usage(msg, cmd)
  if msg then err(msg) end
  M.stderr:write(cmd and HELP[cmd] and ("usage: " .. HELP[cmd]) or M.USAGE, "\n")
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

-- stat-based checks (a FIFO never blocks them): lua/octonav/cli_view.lua
local function exists(path) return require("octonav.cli_view").exists(path) end
local function readable(path) return require("octonav.cli_view").readable(path) end
local function writable(path) return require("octonav.cli_view").writable(path) end

-- The bake's output directory (made with its parents when absent): nil, reason when one of its
-- components exists and is not a directory (checked before baking: the bake would fail at its end).
local function dir_creatable(path)
  if type(path) ~= "string" or path == "" then return true end -- (the bake's own check says what is wrong)
  local prefix = path:sub(1, 1) == "/" and "" or "."
  for part in path:gmatch("[^/]+") do
    prefix = prefix .. "/" .. part
    local _, e = core.read_file(prefix, 1)
    if e and (e:find("No such file or directory", 1, true) or e:find("Not a directory", 1, true)) then
      break -- (absent: made by the bake)
    end
    if not (e and e:find("(a directory)", 1, true)) then
      return nil, ("output %s: %s is not a directory"):format(path, prefix:gsub("^%./", ""))
    end
  end
  return true
end

--- Runs a config file and returns its table with relative paths resolved, or nil, err.
function M.load_config(path)
  -- stat first, as the library's readers do: loadfile on a FIFO would block until a writer comes
  local rok, rerr = readable(path)
  if not rok then return nil, rerr end
  local chunk, lerr = compat.loadfile(path, "t")
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

-- After a bake that wrote the manifest: the pack's holes checked as `octonav validate` checks them;
-- a warning line on stderr per hole that does not validate (a bake whose holes leak at their doors
-- is not silent). The bake still succeeds: the pack is what the config says.
-- The pack is opened for the check with only the world tiles the holes need (those their bounds
-- touch and those holding a door's outside point), each hole's inside blocked in them as a load
-- does: the checks read the world tree there only (outside_free, world), so the report is a full
-- load's (spec/65), and a 64-tile world decodes 1 or 2 tiles instead of 36 MB (the seed's world:
-- 0.8 s of a --link step's 1.9 s). A pack of several agents (a tree each) is loaded whole.
-- cli.hole_world(PACK) -> world | nil: exported for spec/65, which compares its validate() with a full load's.
function M.hole_world(output)
  local w = world.load(output, { tiles = false, adjacency = false })
  if w and (w.agent_worlds or #(w.group or { w }) > 1) then
    w:close()
    w = nil
  end
  if not w then return world.load(output, { adjacency = false }) end
  local need = {}
  for _, h in ipairs(w.holes) do
    for _, t in ipairs(h.tiles) do need[#need + 1] = t end
    for _, d in ipairs(h.doors) do need[#need + 1] = w:tile_of(d.outside) end
  end
  table.sort(need)
  for n, t in ipairs(need) do
    if t ~= need[n - 1] then
      local i, j, k = tilegrid.coords(w.grid, t)
      local blob = pack.read_tile(w.dir, i, j, k)
      if not blob or not w.tree:decode_tile(i, j, k, blob) then
        w:close()
        return nil
      end
    end
  end
  for i in ipairs(w.holes) do w:block_hole_inside(i) end
  return w
end

local function warn_holes(output, config)
  if type(config.holes) ~= "table" or #config.holes == 0 then return end
  local w = M.hole_world(output)
  if not w then return end
  local ok, r = pcall(w.validate, w)
  w:close()
  if not ok or r.ok then return end
  local per, order = {}, {}
  local function of(name)
    if not per[name] then
      per[name] = { doors = 0, bad = 0, leaks = 0, pockets = 0, unclosed = 0 }
      order[#order + 1] = name
    end
    return per[name]
  end
  for _, ar in ipairs(r.agents) do
    for _, d in ipairs(ar.doors) do
      local h = of(d.name)
      h.doors = h.doors + 1
      if not d.ok then h.bad = h.bad + 1 end
    end
    for _, key in ipairs { "leaks", "pockets", "unclosed" } do
      for _, x in ipairs(ar[key]) do
        local h = of(x.name)
        h[key] = h[key] + 1
      end
    end
  end
  for _, name in ipairs(order) do
    local h = per[name]
    if h.bad + h.leaks + h.pockets + h.unclosed > 0 then
      local what = { ("%d of %d doors not ok"):format(h.bad, h.doors) }
      if h.leaks > 0 then what[#what + 1] = ("%d leaking (the sealing reached the inside)"):format(h.leaks) end
      if h.pockets > 0 then what[#what + 1] = ("%d pockets reached from no door"):format(h.pockets) end
      if h.unclosed > 0 then what[#what + 1] = ("%d door boxes not across their opening"):format(h.unclosed) end
      err(("bake: warning: hole %s: %s (octonav validate %s)"):format(name, table.concat(what, ", "), output))
    end
  end
end

local function cmd_bake(args)
  local flags, pos = parse(args, { tile = true, job = true, hole = true }, { link = true })
  if not flags then return usage("bake: " .. pos, "bake") end
  if #pos ~= 1 then return usage("bake: one CONFIG.lua expected", "bake") end
  if pos[1] == "" then return usage("bake: CONFIG.lua: an empty path", "bake") end
  if (flags.tile and 1 or 0) + (flags.job and 1 or 0) + (flags.link and 1 or 0) + (flags.hole and 1 or 0) > 1 then
    return usage("bake: --tile, --hole, --job and --link do not go together", "bake")
  end
  local config, cerr = M.load_config(pos[1])
  if not config then
    err("bake: ", cerr)
    return 1
  end
  local dok, derr = dir_creatable(config.output)
  if not dok then
    err("bake: ", derr)
    return 1
  end
  local what = flags.tile and ("--tile " .. flags.tile .. ": ") or flags.job and ("--job " .. flags.job .. ": ")
    or flags.hole and ("--hole " .. flags.hole .. ": ") or flags.link and "--link: " or ""
  local ok, res, rerr = pcall(function()
    if flags.tile then
      local i, j, k = flags.tile:match("^(%d+),(%d+),(%d+)$")
      if not i then error("I,J,K expected (tile indices from 0)", 0) end
      return bake.tile(config, compat.tointeger(tonumber(i)), compat.tointeger(tonumber(j)), compat.tointeger(tonumber(k)))
    elseif flags.job then
      local n, m = flags.job:match("^(%d+)/(%d+)$")
      n, m = compat.tointeger(tonumber(n)), compat.tointeger(tonumber(m)) -- nil past 2^63 (a float)
      if not n or not m or m < 1 or n >= m then error("N/M expected (job N of M, 0 <= N < M)", 0) end
      return bake.job(config, n, m)
    elseif flags.hole then
      return bake.hole(config, flags.hole)
    elseif flags.link then
      return bake.link(config)
    end
    return bake.run(config)
  end)
  if not ok then
    err("bake: ", what, lib_msg(res))
    return 1
  end
  if not res then
    err("bake: ", what, lib_msg(rerr))
    return 1
  end
  if flags.tile or flags.hole then
    out(("%s %s: %d bytes -> %s"):format(flags.tile and "tile" or "hole", flags.tile or flags.hole, rerr, config.output))
    return 0
  end
  if flags.job then
    out(("job %s: %d tiles, %d bytes -> %s"):format(flags.job, res, rerr, config.output))
    return 0
  end
  local s = res
  warn_holes(config.output, config)
  out(("baked %s: %d tiles, tile graphs %d bytes (%d portals, %d edges), %d holes (%d bytes)%s")
    :format(config.output, s.tiles, s.graph_bytes, s.portals, s.edges, s.holes, s.hole_bytes,
      s.seconds and (" in %.2f s"):format(s.seconds) or (" (link %.2f s)"):format(s.link_seconds)))
  if #s.agents > 1 then -- per agent: its files' bytes and (a whole bake) its seconds
    for _, a in ipairs(s.agents) do
      out(("  agent %s radius %s: tiles %s, tile graphs %d bytes (%d portals), holes %d bytes%s"):format(a.name,
        g(a.radius), a.tile_bytes and ("%d bytes"):format(a.tile_bytes) or "checked", a.graph_bytes, a.portals,
        a.hole_bytes, a.seconds and (" in %.2f s"):format(a.seconds) or ""))
    end
  end
  return 0
end

-- ---- info ------------------------------------------------------------------------------------------

-- The pack at path for command cmd, or nil after an error line saying what is wrong in words (no
-- such directory; a file, such as a bake config, given for a pack; a directory that holds no pack).
local function load_world(path, cmd)
  local is_file = readable(path)
  if is_file then
    err(("%s: %s is a file, not a pack directory%s"):format(cmd, path, path:match("%.lua$")
      and (" (a bake config? `octonav bake %s` writes the pack its `output` names)"):format(path) or ""))
    return nil
  end
  if not exists(path) then
    err(("%s: %s: no such pack directory"):format(cmd, path))
    return nil
  end
  if not exists(path .. "/manifest.txt") then
    err(("%s: %s holds no pack (no manifest.txt: `octonav bake CONFIG.lua` writes one)"):format(cmd, path))
    return nil
  end
  local w, lerr = world.load(path)
  if not w then err(cmd, ": ", lib_msg(lerr)) end
  return w
end

-- `CMD PACK` (info, validate): the pack's world, or nil and the exit code (bad usage: 2, load failed: 1)
local function pack_command(args, cmd)
  local flags, pos = parse(args, {}, {})
  if not flags then return nil, usage(cmd .. ": " .. pos, cmd) end
  if #pos ~= 1 then return nil, usage(cmd .. ": one PACK expected", cmd) end
  if pos[1] == "" then return nil, usage(cmd .. ": PACK: an empty path", cmd) end
  local w = load_world(pos[1], cmd)
  if not w then return nil, 1 end
  return w
end

local function cmd_info(args)
  local w, code = pack_command(args, "info")
  if not w then return code end
  local st = w.tree:stats()
  local files = file_size(pack.manifest_path(w.pack_dir or w.dir))
  -- (a one-tree pack's agents, w.agent_worlds: the tree's tiles and holes once, each agent's graphs)
  for _, aw in ipairs(w.agent_worlds or w.group or { w }) do
    local own = rawget(aw, "tree") ~= nil
    for t = 0, w.grid.count - 1 do
      local i, j, k = tilegrid.coords(w.grid, t)
      if own then files = files + file_size(pack.tile_path(aw.dir, i, j, k)) end
      files = files + file_size(pack.graph_path(aw.graph_dir or aw.dir, i, j, k))
    end
    for _, h in ipairs(own and aw.holes or {}) do files = files + file_size(pack.hole_path(aw.dir, h.name)) end
  end
  local ndoors, hole_nodes, hole_bytes = 0, 0, 0
  for _, h in ipairs(w.holes) do
    ndoors = ndoors + #h.doors
    local hs = h.tree:stats()
    hole_nodes, hole_bytes = hole_nodes + hs.nodes, hole_bytes + hs.bytes
  end
  local gs = w.graph:stats()
  out(("pack      %s"):format(w.pack_dir or w.dir))
  out(("tiles     %d x %d x %d = %d, depth %d (%d leaves a side), scale %s, tile size %s, radius %s"):format(
    w.tiles[1], w.tiles[2], w.tiles[3], w.grid.count, w.depth, compat.pow2(w.depth), g(w.scale), g(w.tile_size), g(w.radius)))
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
  out(("graph     %d tile graphs, %d portals, %d edges, %d links, %d bytes in memory"):format(gs.tiles, gs.portals,
    gs.edges, gs.links, gs.bytes))
  if #w:agents() > 1 then
    -- the first lines are the default agent's; one line per agent (memory in bytes)
    out(("agents    %d%s"):format(#w:agents(), w.agent_worlds and " (one tree, pack version 3)" or ""))
    for _, a in ipairs(w:stats().agents) do
      out(("  %s radius %s: tree %d nodes (%d bytes), graph %d portals (%d bytes), holes' trees %d bytes"):format(
        a.name, g(a.radius), a.nodes, a.tree_bytes, a.portals, a.graph_bytes, a.hole_bytes))
    end
  end
  w:close()
  return 0
end

-- ---- path ------------------------------------------------------------------------------------------

-- "; nearest free point (x, y, z)" for a search that failed at a blocked end (info.nearest), or ""
local function nearest_note(info)
  if info and info.nearest then return "; nearest free point " .. fp(info.nearest) end
  return ""
end

-- The query's answer for a blocked point p of tree (its info carries the nearest free point).
local function probe(tree, p)
  local q = core.query.new(tree)
  local _, info = q:find(p, p)
  q:close()
  return info
end

local function cmd_path(args)
  local flags, pos = parse(args, { obj = true, agent = true }, {})
  if not flags then return usage("path: " .. pos, "path") end
  if #pos ~= 7 then return usage("path: PACK x y z x y z expected", "path") end
  if pos[1] == "" then return usage("path: PACK: an empty path", "path") end
  local ook, oerr0 = true, nil
  if flags.obj then ook, oerr0 = writable(flags.obj) end
  if not ook then
    err("path: ", oerr0)
    return 1
  end
  local c = {}
  for n = 2, 7 do
    c[n - 1] = tonumber(pos[n])
    if not c[n - 1] then return usage(("path: coordinate '%s' is not a number"):format(pos[n]), "path") end
  end
  local a, b = { c[1], c[2], c[3] }, { c[4], c[5], c[6] }
  local group = load_world(pos[1], "path")
  if not group then return 1 end
  local w = group
  if flags.agent then
    local names = {}
    for n, ag in ipairs(group:agents()) do names[n] = ag.name end
    local known = false
    for _, nm in ipairs(names) do known = known or nm == flags.agent end
    if not known then
      err(("path: --agent: no agent '%s' in this pack (it has: %s)"):format(flags.agent, table.concat(names, ", ")))
      group:close()
      return 1
    end
    w = group:agent(flags.agent)
  end
  local route, reason = w:plan(a, b)
  if not route then
    local info
    if reason == "start_blocked" then info = probe(w.tree, a) elseif reason == "goal_blocked" then info = probe(w.tree, b) end
    err(("path: no route from %s to %s: %s%s"):format(fp(a), fp(b), tostring(reason), nearest_note(info)))
    group:close()
    return 1
  end
  out(("route: %d steps"):format(#route))
  for n, step in ipairs(route) do
    local where = step.kind == "hole" and ("hole %s"):format(w.holes[step.hole] and w.holes[step.hole].name
      or tostring(step.hole)) or ("tile %s"):format(tostring(step.tile))
    out(("  %d. %s: enter %s exit %s%s"):format(n, where, fp(step.enter), fp(step.exit),
      step.via ~= nil and (" via %s %s"):format(step.via_kind or "", tostring(step.via)) or ""))
  end
  -- consecutive tile steps are searched as one leg on the world tree (as the navigator does): the
  -- crossings between tiles are where the planner's graph passes, not points the path must touch
  local legs = {}
  for _, step in ipairs(route) do
    local last = legs[#legs]
    if step.kind == "tile" and last and last.kind == "tile" then
      last.exit, last.tiles = step.exit, last.tiles .. "," .. tostring(step.tile)
    else
      legs[#legs + 1] = { kind = step.kind, hole = step.hole, enter = step.enter, exit = step.exit,
        tiles = tostring(step.tile) }
    end
  end
  out(("searched as %d leg%s"):format(#legs, #legs == 1 and "" or "s"))
  local polylines, total = {}, 0
  for n, step in ipairs(legs) do
    local tree, where
    if step.kind == "hole" then
      local h = w.holes[step.hole]
      tree, where = h.tree, ("hole %s"):format(h and h.name or tostring(step.hole))
    else
      tree, where = w.tree, ("tiles %s"):format(step.tiles)
    end
    if not tree then
      err(("path: leg %d: no tree for this leg"):format(n))
      group:close()
      return 1
    end
    local q = core.query.new(tree)
    local path, info = q:find(step.enter, step.exit)
    if not path then
      err(("path: leg %d (%s) from %s to %s: search failed: %s%s"):format(n, where, fp(step.enter), fp(step.exit),
        tostring(info.reason), nearest_note(info)))
      group:close()
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
  group:close()
  if flags.obj then
    -- written beside and renamed over the path (core.write_file): a failure leaves the old file whole
    local t = { ("# octonav path %s -> %s: %d route steps, %d points, length %.17g\n"):format(fp(a), fp(b), #route,
      #pts, length) }
    for _, p in ipairs(pts) do t[#t + 1] = ("v %.17g %.17g %.17g\n"):format(p[1], p[2], p[3]) end
    if #pts >= 2 then
      local idx = {}
      for n = 1, #pts do idx[n] = n end
      t[#t + 1] = "l " .. table.concat(idx, " ") .. "\n"
    end
    local okw, werr = core.write_file(flags.obj, table.concat(t))
    if not okw then
      err("path: ", tostring(werr))
      return 1
    end
    out("wrote " .. flags.obj)
  end
  return 0
end

-- ---- validate --------------------------------------------------------------------------------------

local function yn(b) return b and "yes" or "NO" end

local function cmd_validate(args)
  local w, code = pack_command(args, "validate")
  if not w then return code end
  local r = w:validate()
  -- one block per agent; a pack with several prefixes each agent's lines with its name
  local several = #r.agents > 1
  for _, ar in ipairs(r.agents) do
    local pre = several and ("agent %s: "):format(ar.name) or ""
    for _, d in ipairs(ar.doors) do
      out(("%shole %s door %d: outside blocked in hole %s, inside free %s, connected %s, outside free in world %s -> %s")
        :format(pre, d.name, d.door, yn(d.outside_blocked), yn(d.inside_free), yn(d.connected), yn(d.outside_free),
          d.ok and "ok" or "NOT OK"))
    end
    local function pt(p) return ("(%g, %g, %g)"):format(p[1], p[2], p[3]) end
    for _, x in ipairs(ar.leaks) do
      out(("%shole %s door %d: LEAK: the sealing reached its inside point %s"):format(pre, x.name, x.door,
        pt(x.position)))
    end
    for _, x in ipairs(ar.unclosed) do
      out(("%shole %s door %d: its box %s-%s does not cross its opening"):format(pre, x.name, x.door, pt(x.box.min),
        pt(x.box.max)))
    end
    for _, x in ipairs(ar.pockets) do
      if x.error then
        out(("%shole %s: pockets not checked: %s"):format(pre, x.name, x.error))
      else
        out(("%shole %s: POCKET at %s (reached from no door)"):format(pre, x.name, pt(x.position)))
      end
    end
    if several then out(("%s%s"):format(pre, ar.ok and "ok" or "NOT OK")) end
  end
  out(("%d holes, %d doors: %s"):format(#w.holes, #r.doors, r.ok and "ok" or "NOT OK"))
  w:close()
  return r.ok and 0 or 1
end

-- view: lua/octonav/cli_view.lua (loaded when used: the viewer's page is a large string)
local function cmd_view(args)
  return require("octonav.cli_view").run(args, { out = out, err = function(s) err(s) end,
    usage = function(msg) return usage(msg, "view") end, lib_msg = lib_msg })
end

local COMMANDS = { bake = cmd_bake, info = cmd_info, path = cmd_path, validate = cmd_validate, view = cmd_view }
for name, fn in pairs(require("octonav.cli_bench").commands { cli = M, out = out, err = err, usage = usage,
  parse = parse, exists = exists, readable = readable, writable = writable }) do
  COMMANDS[name] = fn
end

local function wants_help(args)
  for _, a in ipairs(args) do
    if a == "--help" or a == "-h" then return true end
  end
  return false
end

--- Runs one command (cmd: its name, or --help / --version, also -V and version); returns the exit code.
function M.main(cmd, args)
  args = args or {}
  if cmd == "--help" or cmd == "-h" or cmd == "help" then
    out(M.USAGE)
    return 0
  end
  if cmd == "--version" or cmd == "-V" or cmd == "version" then
    out(M.VERSION)
    return 0
  end
  if cmd == nil then return usage("a command expected") end
  local fn = COMMANDS[cmd]
  if not fn then return usage(("unknown command '%s'"):format(tostring(cmd))) end
  if wants_help(args) then
    out("usage: " .. HELP[cmd])
    return 0
  end
  -- every error is one line: an error raised below (a library's misuse check, a bug) is printed as
  -- "octonav: CMD: message", without its traceback or the Lua position it was raised at
  local ok, code = pcall(fn, args)
  if ok then return code end
  err(cmd, ": ", lib_msg(code))
  return 1
end

--- Runs a command line (argv: { cmd, args... }, as `arg`); returns the exit code.
function M.run(argv)
  return M.main(argv[1], { compat.unpack(argv, 2) })
end

return M
