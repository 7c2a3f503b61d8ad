--- octonav.cli_bench: the command line's benchmark commands (bench, bench-tree, bench-all,
-- bench-world; internal to octonav.cli, which dispatches to them and prints their usage).
--
-- The benchmarks themselves are no part of the library: they live in the source tree's bench/lua/
-- (octonav.bench, octonav.bench_world), found from the CLI's root (bin/octonav sets it to the source
-- tree). An installed octonav (a rock, make install) has no bench/lua/: its bench commands fail
-- saying so, exit code 1.
local compat = require "octonav.compat"
local M = {}

-- h: the CLI's helpers { cli = the cli module (root, stderr), out, err, usage, parse, exists, readable,
-- writable }; returns the commands { bench = fn, ["bench-tree"] = fn, ... }
function M.commands(h)
  local cli, out, err, usage, parse = h.cli, h.out, h.err, h.usage, h.parse
  local exists, readable, writable = h.exists, h.readable, h.writable

  -- The benchmark module `name` from ROOT/bench/lua (its directory joins package.path: a benchmark may
  -- run one in a child process), or nil, what to do.
  local function bench_module(name)
    if package.loaded[name] then return package.loaded[name] end
    local dir = cli.root .. "/bench/lua"
    local file = compat.searchpath(name, dir .. "/?.lua")
    if not file then
      local ok, mod = pcall(require, name) -- (a LUA_PATH that names bench/lua/ itself)
      if ok then return mod end
      local path = dir .. "/" .. name:gsub("%.", "/") .. ".lua"
      return nil, ("%s not found: the benchmarks are in octonav's source tree (bench/lua/), not in an "
        .. "installed octonav; run bin/octonav from a clone of the source tree"):format(path)
    end
    package.path = dir .. "/?.lua;" .. package.path
    return require(name)
  end

  local function presets()
    local o = require "octonav"
    return { default = {}, seed = o.presets.seed, astar = o.presets.astar, theta = o.presets.theta, boxes = o.presets.boxes }
  end

  -- an integer flag: nil when absent, the value, or nil, message
  local function int_flag(flags, name, min)
    local v = flags[name]
    if v == nil then return nil end
    local n = compat.tointeger(tonumber(v))
    if not n or n < min then return nil, ("--%s: an integer >= %d expected, got '%s'"):format(name, min, v) end
    return n
  end

  local function cmd_bench(args)
    local flags, pos = parse(args, { limit = true, seed = true, paths = true, preset = true, ["grid-limit"] = true,
      ["repeat"] = true }, { prepare = true })
    if not flags then return usage("bench: " .. pos, "bench") end
    if #pos < 1 or #pos > 2 then return usage("bench: MAP.3dmap [SCEN] expected", "bench") end
    local map = pos[1]
    local scen = pos[2] or (map .. ".3dscen")
    local n = {}
    for _, f in ipairs { { "limit", 1 }, { "seed", 0 }, { "grid-limit", 0 }, { "repeat", 1 } } do
      local v, e = int_flag(flags, f[1], f[2])
      if e then return usage("bench: " .. e, "bench") end
      n[f[1]] = v
    end
    local preset = flags.preset or "default"
    local all = presets()
    if not all[preset] then
      return usage(("bench: unknown preset '%s' (default, seed, astar, theta, boxes)"):format(preset), "bench")
    end
    local pok, perr0 = true, nil
    if flags.paths then pok, perr0 = writable(flags.paths) end
    if not pok then
      err("bench: ", perr0)
      return 1
    end
    for _, path in ipairs { map, scen } do
      local ok, oerr = readable(path)
      if not ok then
        err("bench: ", tostring(oerr))
        return 1
      end
    end
    local paths
    if flags.paths then
      local perr
      paths, perr = io.open(flags.paths, "w")
      if not paths then
        err("bench: ", tostring(perr))
        return 1
      end
    end
    local bench = require "octonav.bench"
    -- the benchmark asserts on what it cannot read (a corrupt map or scenario file): one line, no traceback
    local ok, res = pcall(bench.query_map, map, scen, {
      limit = n.limit, seed = n.seed or 1, presets = { { preset, all[preset], prepare = flags.prepare == true } },
      paths = paths, grid_limit = n["grid-limit"] or 25, grid_seconds = 60, ["repeat"] = n["repeat"] or 3,
    })
    if paths then paths:close() end
    if not ok then
      err("bench: ", tostring(res))
      return 1
    end
    local r = res[1]
    out(bench.QUERY_HEAD)
    out(bench.QUERY_SEP)
    out(bench.query_row(map:match("([^/]+)%.3dmap$") or map, r))
    out(bench.query_kv(r))
    return 0
  end

  local function write_section(name, text)
    local ok, werr = require("octonav.bench").write_section(cli.root .. "/docs/benchmarks.md", name, text)
    if not ok then err("docs/benchmarks.md not updated: ", tostring(werr)) end
  end

  -- bench-all, no outside data: the streaming table
  local function bench_streamer()
    local bench = require "octonav.bench"
    local lines = { "| frames | agents | worker threads | prepare | tiles decoded | tiles decoded / s (worker) "
      .. "| nodes / tile | boxes / tile | update() median us | update() p99 us |",
      "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|" }
    for _, prep in ipairs { false, true } do
      local r = bench.streamer { frames = 2000, workers = 1, prepare = prep }
      lines[#lines + 1] = ("| %d | 100 | %d | %s | %d | %.0f | %.0f | %.0f | %.1f | %.1f |"):format(r.frames, r.workers,
        prep and "yes" or "no", r.decoded, r.decoded_per_s, r.tile_nodes, r.boxes_per_tile, r.update_median_us,
        r.update_p99_us)
    end
    local text = table.concat(lines, "\n")
    out(text)
    write_section("streamer", ("Measured %s (`make bench`): 16 x 1 x 16 tiles of 64^3 leaves, load padding 32, "
      .. "unload padding 64.\n\n%s"):format(os.date("!%Y-%m-%d"), text))
  end

  -- bench-all, the world layer: needs no outside data except the meshes (skipped when absent)
  local function bench_world()
    local bench = require "octonav.bench"
    local rows = {}
    local meshes
    for _, weights in ipairs { "straight", "path" } do
      local r = bench.world { paths = 40, weights = weights, mesh_dir = meshes and "/nonexistent" or nil }
      if not meshes then
        meshes = r.meshes
      end
      rows[#rows + 1] = ("| %s | %.1f | %d | %d | %.0f | %.0f | %.0f | %.3f | %.3f |"):format(weights, r.world_bake_s,
        r.world_nodes, r.paths, r.plan_median_us, r.hier_median_us, r.seam_median_us, r.length_ratio_mean,
        r.length_ratio_max)
    end
    local mrows = {}
    for _, m in ipairs(meshes) do
      mrows[#mrows + 1] = ("| %s | %.3f | %d | %d | %.2f | %.0f | %d | %.0f |"):format(m.name, m.scale, m.tiles,
        m.triangles, m.seconds, m.tris_per_s, m.nodes, m.bytes / 1024)
    end
    local text = table.concat({
      "Bake throughput (one process; `weights = \"straight\"`, depth 6):",
      "",
      "| mesh | scale | tiles | triangles | bake s | triangles / s | nodes | KB |",
      "|---|---:|---:|---:|---:|---:|---:|---:|",
      table.concat(mrows, "\n"),
      "",
      "Long paths across an 8 x 2 x 8 world of 32^3-leaf tiles (terrain, six walls with gaps, 120 pillars), 40 "
        .. "start/goal pairs from one end to the other: the hierarchical route (`world:plan`, then one query per step) "
        .. "against one seamless query over the fully loaded tree.",
      "",
      "| weights | bake s | nodes | paths | plan median us | hierarchical median us | seamless median us "
        .. "| length hierarchical / seamless (mean) | (max) |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
      table.concat(rows, "\n"),
    }, "\n")
    out(text)
    write_section("world", ("Measured %s (`make bench`).\n\n%s"):format(os.date("!%Y-%m-%d"), text))
  end

  -- bench-tree and the rest of bench-all: the tree table, then (bench-all) the query tables
  local function bench_maps(dir, all)
    local bench = require "octonav.bench"
    if not exists(dir .. "/Simple.3dmap") then
      out("bench: no voxel maps in " .. dir .. ": skipped")
      return 0
    end
    local _, table_text = bench.tree_all(dir, {})
    out(table_text)
    if not all then return 0 end
    local stamp = os.date("!%Y-%m-%d")
    write_section("tree", ("Measured %s on this project's 2-core machine (`make bench`).\n\n%s"):format(stamp, table_text))
    -- queries: a seeded sample per map; the grid baseline on the first scenarios of that sample
    local limit = tonumber(os.getenv("OCTONAV_BENCH_LIMIT") or "300")
    local glimit = tonumber(os.getenv("OCTONAV_BENCH_GRID") or "25")
    local p = presets()
    local rows = { bench.QUERY_HEAD, bench.QUERY_SEP }
    local prows = { "| map | boxes | box KB | prepare ms |", "|---|---:|---:|---:|" }
    for _, name in ipairs(bench.MAPS) do
      local map = dir .. "/" .. name .. ".3dmap"
      if exists(map) then
        local results = bench.query_map(map, map .. ".3dscen", {
          limit = limit, seed = 1, grid_limit = glimit, grid_seconds = 20, ["repeat"] = 3,
          presets = { { "default", p.default }, { "seed", p.seed }, { "boxes (prepared)", p.boxes, prepare = true } },
        })
        for _, r in ipairs(results) do
          rows[#rows + 1] = bench.query_row(name, r)
          cli.stderr:write(rows[#rows], "\n")
          if r.boxes then
            prows[#prows + 1] = ("| %s | %d | %.0f | %.0f |"):format(name, r.boxes, r.box_bytes / 1024, r.prepare_ms)
          end
        end
      end
    end
    local qtext = table.concat(rows, "\n") .. "\n\nThe prepared search graph (`tree:prepare()`, timed once per map):\n\n"
      .. table.concat(prows, "\n")
    out(qtext)
    write_section("query", ("Measured %s (`make bench`): %d scenarios per map (seeded sample), grid A* on the first %d "
      .. "of them (at most 20 s of grid searches per map; n says how many ran).\n\n%s"):format(stamp, limit, glimit, qtext))
    return 0
  end

  local function data_dir(args, cmd)
    local flags, pos = parse(args, {}, {})
    if not flags then return nil, usage(cmd .. ": " .. pos, cmd) end
    if #pos > 1 then return nil, usage(cmd .. ": at most one DATA_DIR expected", cmd) end
    return pos[1] or (cli.root .. "/../shared/data/voxel")
  end

  local function cmd_bench_tree(args)
    local dir, code = data_dir(args, "bench-tree")
    if not dir then return code end
    return bench_maps(dir, false)
  end

  local function cmd_bench_all(args)
    local dir, code = data_dir(args, "bench-all")
    if not dir then return code end
    bench_streamer()
    bench_world()
    return bench_maps(dir, true)
  end

  -- the world benchmark of issue 11 (lua/octonav/bench_world.lua); writes docs/benchmarks.md's world_graph table
  local function cmd_bench_world(args)
    local flags, pos = parse(args, { worlds = true, pairs = true, frames = true, data = true, pack = true }, {})
    if not flags then return usage("bench-world: " .. pos, "bench-world") end
    if #pos > 0 then return usage("bench-world: no positional arguments expected", "bench-world") end
    local n = {}
    for _, f in ipairs { "pairs", "frames" } do
      local v, e = int_flag(flags, f, 1)
      if e then return usage("bench-world: " .. e, "bench-world") end
      n[f] = v
    end
    local bw = require "octonav.bench_world"
    local worlds = {}
    for w in (flags.worlds or "dungeon,house,t16,t32"):gmatch("[^,]+") do worlds[#worlds + 1] = w end
    if flags.pack and #worlds ~= 1 then return usage("bench-world: --pack: one world in --worlds expected", "bench-world") end
    local rows = bw.run { worlds = worlds, pairs = n.pairs or 60, frames = n.frames or 300,
      bin = cli.root .. "/bin/octonav", data = flags.data, pack = flags.pack,
      per = { t16 = { jobs = "job" }, t32 = { rebake = true }, t8x512 = { jobs = "job", pairs = 35, frames = 100 } },
      log = function(m) cli.stderr:write(m, "\n") end }
    local text = bw.table(rows)
    out(text)
    if not flags.worlds then
      write_section("world_graph", ("Measured %s (`make bench`, `bin/octonav bench-world`).\n\n%s")
        :format(os.date("!%Y-%m-%d"), text))
    end
    return 0
  end

  -- each command finds its benchmark module before it works
  local function needs(name, cmd, fn)
    return function(args)
      local ok, why = bench_module(name)
      if not ok then
        err(cmd, ": ", why)
        return 1
      end
      return fn(args)
    end
  end
  return { bench = needs("octonav.bench", "bench", cmd_bench),
    ["bench-tree"] = needs("octonav.bench", "bench-tree", cmd_bench_tree),
    ["bench-all"] = needs("octonav.bench", "bench-all", cmd_bench_all),
    ["bench-world"] = needs("octonav.bench_world", "bench-world", cmd_bench_world) }
end

return M
