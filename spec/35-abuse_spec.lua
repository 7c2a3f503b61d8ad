-- spec/35-abuse_spec.lua -- the binding under hostile use (issue 13): thousands of seeded random calls
-- on trees (edits, point queries, area lists), queries, path servers, grids, paths and infos with wrong
-- types, NaN and infinities, huge numbers, closed objects, heuristics that raise, return junk, collect
-- garbage or call back into the library (closing, editing, searching), and random full collections.
-- Every call must either return or raise a Lua error with a string message; the process never crashes
-- (run it under `make check`: ASan + UBSan). At the end the library still answers a known search
-- exactly. Prints the call count and the seed.
-- Run: busted --lua=lua5.4 spec/35-abuse_spec.lua   (OCTONAV_SEED=n for another sequence,
--      OCTONAV_ABUSE_CALLS=n for another length)
local compat = require "octonav.compat" -- Lua 5.1 .. 5.4 (issue 34)
local function pack(...) return { n = select("#", ...), ... } end -- table.pack (5.2+)
local octonav = require "octonav"
local core = require "octonav.core"

local SEED = tonumber(os.getenv("OCTONAV_SEED") or "") or 20261124
local CALLS = tonumber(os.getenv("OCTONAV_ABUSE_CALLS") or "") or 20000

local rng = dofile("spec/support/prng.lua").xorshift

describe("abuse: seeded random calls into the binding", function()
  it("every call returns or raises a Lua error; nothing crashes; the library still works", function()
    local r = rng(SEED)
    local calls, raised, depth = 0, 0, 0
    local pool = { trees = {}, queries = {}, grids = {}, paths = {}, infos = {}, servers = {} }

    local act -- forward: one random action (also called from inside heuristics)

    -- Random values: junk of every type, edge numbers, near-valid points, the objects themselves.
    local function number()
      return r.pick { 0, -1, 1, 0.5, 2, 3, 7, 8, 15, 16, 31, 100, 1e9, -1e9, 2 ^ 31, 2 ^ 53, -2 ^ 63,
        compat.maxinteger, math.mininteger or -compat.maxinteger, 1e308, -1e308, 5e-324, math.huge, -math.huge, 0 / 0, r.range(-40, 40) }
    end
    local function point()
      local k = r.int(1, 10)
      if k <= 5 then return { r.range(-2, 34), r.range(-2, 34), r.range(-2, 34) } end
      if k == 6 then return { number(), number(), number() } end
      if k == 7 then return { 1, 2 } end
      if k == 8 then return { "1", "2", "3" } end
      if k == 9 then return setmetatable({}, { __index = function() error("point index boom") end }) end
      return { r.int(0, 15), r.int(0, 15), r.int(0, 15) }
    end
    local function object()
      local kind = r.pick { "trees", "queries", "grids", "paths", "infos", "servers" }
      local list = pool[kind]
      return #list > 0 and r.pick(list) or nil
    end
    local heuristic, areas -- forward
    local function value()
      local k = r.int(1, 16)
      if k == 1 then return nil end
      if k == 2 then return r.chance(0.5) end
      if k <= 5 then return number() end
      if k == 6 then return r.pick { "", "x", "-x", "+z", "free", "blocked", "/nonexistent/file", ("a"):rep(300) } end
      if k <= 9 then return point() end
      if k == 10 then return {} end
      if k == 11 then return heuristic() end
      if k == 12 then return io.stdout end
      if k == 13 then return coroutine.create(function() end) end
      return object()
    end
    -- area lists (tree:set_areas, opts.areas): mostly well formed, some junk
    function areas()
      local k = r.int(1, 6)
      if k == 1 then return {} end
      if k == 2 then return value() end
      local list = {}
      for i = 1, r.int(1, 3) do
        local a = { min = point(), max = point() }
        if r.chance(0.2) then a.exclude = true else a.cost = r.pick { 1, 2.5, 10, number() } end
        if r.chance(0.05) then a.colour = "red" end
        list[i] = a
      end
      return list
    end
    local function opts()
      if r.chance(0.3) then return value() end
      local o = {}
      local keys = { "weight", "size_bias", "any_angle", "refine", "smooth", "max_expansions", "partial",
        "heuristic", "escalate", "direct", "relax", "points", "graph", "max_nodes", "areas", "bogus" }
      for _ = 1, r.int(0, 3) do
        local key = r.pick(keys)
        local v = r.pick { value(), number(), r.chance(0.5), "none", "greedy", "centre", "cells", "auto", r.int(0, 50) }
        if key == "heuristic" and r.chance(0.7) then v = heuristic() end
        if key == "max_expansions" and r.chance(0.7) then v = r.int(1, 200) end
        if key == "areas" and r.chance(0.7) then v = areas() end
        o[key] = v
      end
      return o
    end

    -- Heuristics that misbehave: raise, return junk, collect, call back into the library.
    local on -- forward: a random method call on an object
    local tree_methods, query_methods -- (defined below)
    function heuristic(q, t)
      local mode = r.int(1, 7)
      return function(x, y, z, gx, gy, gz)
        if mode == 1 then error("heuristic raised") end
        if mode == 2 then return r.pick { -1, 0 / 0, math.huge, "x", nil, {} } end
        if mode == 3 and r.chance(0.05) then collectgarbage() end
        if mode == 4 and depth < 2 and r.chance(0.3) then
          -- call back: mostly into the running query and its tree (the busy guard), else anything
          depth = depth + 1
          if q and r.chance(0.4) then on(q, query_methods)
          elseif t and r.chance(0.6) then on(t, tree_methods)
          else act() end
          depth = depth - 1
        end
        if mode == 5 and r.chance(0.1) then error({ "a table error" }) end
        local dx, dy, dz = x - gx, y - gy, z - gz
        return math.sqrt(dx * dx + dy * dy + dz * dz)
      end
    end

    local function new_tree()
      local t = octonav.tree.new { depth = r.int(1, 3), tiles = { r.int(1, 2), 1, r.int(1, 2) },
        scale = r.pick { 1, 0.5, 2 }, radius = r.pick { 0, 0, 0.3 } }
      for _ = 1, r.int(0, 4) do
        local a = { r.range(0, 16), r.range(0, 16), r.range(0, 16) }
        t:add_box(a, { a[1] + r.range(0, 6), a[2] + r.range(0, 6), a[3] + r.range(0, 6) })
      end
      return t
    end

    local function keep(list, v, max)
      if v == nil then return end
      if #list >= max then list[r.int(1, #list)] = v else list[#list + 1] = v end
    end

    -- method name -> argument makers, per type
    tree_methods = {
      add_box = function() return point(), point() end,
      add_triangles = function() return { number(), 1, 2, 3, 4, 5, 6, 7, 8 }, { 1, 2, 3 } end,
      add_heightfield = function() return { nx = r.int(0, 3), nz = r.int(1, 3), heights = { 1, 2, 3, 4, number(), 6 } } end,
      add_obj = function() return value() end,
      fill = function() return point() end,
      locate = function() return point() end,
      raycast = function() return point(), point() end,
      visible = function() return point(), point() end,
      visible_many = function() return { number(), 1, 1, 2, 2, 2 }, r.chance(0.5) and {} or nil end,
      neighbors = function() return r.chance(0.5) and { tile = { 0, 0, 0 }, code = r.int(-1, 100) } or value() end,
      face_cells = function() return r.int(-1, 2), r.int(-1, 1), r.int(-1, 2), r.pick { "-x", "+y", "up", 3 } end,
      stats = function() end,
      params = function() end,
      encode_tile = function() return r.int(-1, 2), 0, r.int(-1, 2) end,
      decode_tile = function() return r.int(-1, 1), 0, 0, r.pick { "", "junk", ("\0"):rep(40) } end,
      clear_tile = function() return r.int(-1, 2), value(), 0 end,
      tile_salt = function() return 0, 0, value() end,
      compact = function() return r.pick { nil, 0.5, 0.05, 2, 0 / 0, "x" } end,
      prepare = function() if r.chance(0.5) then return 0, 0, 0 end return value() end,
      boxes = function() return r.int(-1, 1), 0, 0 end,
      save = function() return "/nonexistent/dir/tree.bin" end,
      export_obj = function() return "/nonexistent/dir/tree.obj", r.chance(0.5) and { what = value() } or nil end,
      set_areas = function() return areas() end,
      areas = function() end,
      reachable = function() return point(), point() end,
      -- max_distance stays small or invalid: a large one on a tree with no free space near p scans
      -- O(R^4) leaves, grid or not (csrc/core/freespace.c; 1e4 on a 16^3 tree ran past 20 s)
      nearest_free = function() return point(), r.pick { nil, 0, 1, 3, 8, -1, 0 / 0, math.huge, "x" } end,
      random_free = function()
        return r.pick { r.int(0, 1000), 0 / 0, "x", function() return r.int(1, 100) end },
          r.chance(0.5) and { center = point(), radius = number(), count = r.pick { 1, 3, 0, -1, 2.5, "x" } } or nil
      end,
      close = function() end,
    }
    -- a search that runs: two points inside the query's tree, the heuristic often, direct off often
    local qtree = setmetatable({}, { __mode = "k" })
    local function search_args(q)
      local t = qtree[q]
      if not (t and r.chance(0.7) and pcall(t.params, t)) then return point(), point(), opts() end
      local p = t:params()
      local size = { p.tiles[1] * p.tile_leaves * p.scale, p.tile_leaves * p.scale, p.tiles[3] * p.tile_leaves * p.scale }
      local function inside() return { r.range(0, size[1]), r.range(0, size[2]), r.range(0, size[3]) } end
      local o = { heuristic = r.chance(0.7) and heuristic(q, t) or nil, direct = r.chance(0.5),
        any_angle = r.chance(0.3), max_expansions = r.chance(0.3) and r.int(1, 100) or nil,
        areas = r.chance(0.2) and areas() or nil }
      return inside(), inside(), o
    end
    local current_query
    query_methods = {
      find = function() return search_args(current_query) end,
      start = function() return search_args(current_query) end,
      step = function() return r.pick { 1, 5, 50, 0, -1, 0 / 0, "x" } end,
      result = function() end,
      close = function() end,
    }
    local grid_methods = {
      set = function() return r.int(-1, 4), r.int(-1, 4), r.int(-1, 2), r.chance(0.5) end,
      blocked = function() return number(), r.int(-1, 4), value() end,
      dims = function() end,
      find = function() return { r.int(-1, 4), r.int(-1, 4), 0 }, { r.int(-1, 4), r.int(-1, 4), 0 }, value() end,
      visible = function() return point(), point() end,
      visible_many = function() return { 0, 0, 0, 3, 3, number() } end,
      close = function() end,
    }
    -- path servers (worker threads over a tree held busy while requests are out); their results are
    -- not kept, so the seeded sequence of calls does not depend on the threads' timing
    local server_methods = {
      submit = function() return point(), point(), r.chance(0.6) and opts() or nil end,
      update = function() return r.pick { true, false, nil, "x" } end,
      pending = function() end,
      pause = function() end,
      resume = function() end,
      close = function() end,
    }
    local path_methods = {
      length = function() end,
      point_at = function() return number() end,
      points = function() end,
      tiles = function() end,
      is_valid = function() end,
    }

    local function call(fn, ...)
      calls = calls + 1
      local res = pack(pcall(fn, ...))
      if not res[1] then
        raised = raised + 1
        local err = res[2]
        -- our own heuristics may raise a table; everything else must be a message
        assert(type(err) == "string" or (type(err) == "table" and err[1] == "a table error"),
          "a call raised a non-string error: " .. tostring(err))
      end
      return res
    end

    function on(obj, methods)
      current_query = obj
      local names = {}
      for k in pairs(methods) do names[#names + 1] = k end
      table.sort(names)
      local name = r.pick(names)
      if name == "close" and r.chance(0.85) then name = r.pick(names) end -- closed objects, but not all of them
      -- sometimes the wrong object as self, or no self at all
      local self = r.chance(0.9) and obj or value()
      local method = obj[name] or function() error("no method " .. name) end
      local res = call(method, self, methods[name]())
      if name == "points" and res[1] and type(res[2]) == "function" then -- run the iterator
        call(function() for _ in res[2], res[3], res[4] do end end)
      end
      if name == "find" or name == "result" then
        if res[1] and type(res[2]) == "table" then keep(pool.paths, res[2], 8) end
        if res[1] and type(res[3]) == "table" then keep(pool.infos, res[3], 8) end
      end
    end

    function act()
      local k = r.int(1, 100)
      if k <= 3 then
        local res = call(octonav.tree.new, opts())
        if res[1] then keep(pool.trees, res[2], 6) end
      elseif k <= 8 then
        keep(pool.trees, new_tree(), 6)
      elseif k <= 13 then
        local t = (#pool.trees > 0 and r.chance(0.9)) and r.pick(pool.trees) or value()
        local res = call(octonav.query.new, t, r.chance(0.5) and { max_nodes = r.pick { 2, 64, 1000, 0, "x" } } or nil)
        if res[1] then
          keep(pool.queries, res[2], 6)
          qtree[res[2]] = t
        end
      elseif k <= 16 then
        local res = call(octonav.grid.new, r.int(-1, 5), r.int(1, 5), r.pick { nil, 1, 2, 0, 1e10 })
        if res[1] then keep(pool.grids, res[2], 4) end
      elseif k <= 50 then
        if #pool.trees > 0 then on(r.pick(pool.trees), tree_methods) end
      elseif k <= 80 then
        if #pool.queries > 0 then on(r.pick(pool.queries), query_methods) end
      elseif k <= 83 then
        if #pool.grids > 0 then on(r.pick(pool.grids), grid_methods) end
      elseif k <= 84 then
        local t = (#pool.trees > 0 and r.chance(0.9)) and r.pick(pool.trees) or value()
        local res = call(octonav.pathserver.new, t, r.chance(0.8) and { workers = r.pick { 0, 1, 2, -1, "x" },
          max_nodes = r.pick { nil, 64, 4096 }, max_queued = r.pick { nil, 0, 2 } } or value())
        if res[1] then keep(pool.servers, res[2], 3) end
      elseif k <= 86 then
        if #pool.servers > 0 then on(r.pick(pool.servers), server_methods) end
      elseif k <= 92 then
        if #pool.paths > 0 then on(r.pick(pool.paths), path_methods) end
      elseif k <= 95 then
        local info = #pool.infos > 0 and r.pick(pool.infos) or nil
        if info then call(function() return info.valid, tostring(info) end) end
      elseif k <= 97 then
        local o = object()
        call(tostring, o)
      elseif k <= 98 then
        -- drop a random object and collect: finalizers run on closed, open and busy-free objects
        local list = pool[r.pick { "trees", "queries", "grids", "paths", "infos", "servers" }]
        if #list > 0 then table.remove(list, r.int(1, #list)) end
        collectgarbage()
      else
        call(core.crc32, value(), value())
      end
    end

    for _ = 1, 3 do keep(pool.trees, new_tree(), 6) end
    while calls < CALLS do act() end

    -- nothing left busy, nothing corrupted: a known search is still exact
    local t = octonav.tree.new { depth = 4 }
    t:add_box({ 8, 0, 0 }, { 9, 12, 16 })
    local path, info = octonav.query.new(t):find({ 1, 1, 1 }, { 15, 1, 1 })
    assert.is_table(path, tostring(info))
    assert.near(math.sqrt(170) + 1 + math.sqrt(157), info.length, 1e-12)
    for _, ps in ipairs(pool.servers) do pcall(ps.close, ps) end
    for _, tr in ipairs(pool.trees) do pcall(tr.close, tr) end
    collectgarbage()
    print(("\nabuse: %d calls (%d raised a Lua error), seed %d"):format(calls, raised, SEED))
    assert.is_true(calls >= CALLS)
    assert.is_true(raised > 0 and raised < calls)
  end)
end)
