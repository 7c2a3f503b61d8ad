-- spec/support/binding_calls.lua: every function of the C binding (octonav.core) with sample
-- arguments, over a fixture of small objects, for the generated matrices of spec/60 (argument
-- metamethods) and spec/61 (finalizers). Loaded with dofile; returns { fixture, calls, actions,
-- outcome, same }.
--
-- fixture(): a table whose fields are made on first use: t (a 2x1x2 tree, depth 3, a box, prepared),
-- q (a query of t that found a path), qs (a query of t with a finished sliced search), ps (a path
-- server over t, no workers, one request out), st / s (another tree and its streamer over a pack
-- directory made once, no workers, one agent), w (a world graph of t with its tiles), p (a planner of
-- w with a route found), g (a 4x4x1 grid).
-- calls[i] = { name, uses = { fixture fields the call reads }, args = function(o) -> list,
--              run = function(o, ...) the call, out = { [i] = true for a table argument only written } }
local compat = require "octonav.compat" -- Lua 5.1 .. 5.4 (issue 34)
local octonav = require "octonav"
local core = octonav.core
local files = dofile("spec/support/files.lua")

local M = {}
local A, B = { 0.5, 0.5, 0.5 }, { 15.5, 7.5, 15.5 }

local pack_dir
local function pack()
  if pack_dir then return pack_dir end
  pack_dir = files.tmpdir()
  local t = octonav.tree.new { tiles = { 2, 1, 2 }, depth = 3 }
  t:add_box({ 3, 0, 3 }, { 5, 4, 5 })
  assert(core.mkdir(pack_dir .. "/tiles"))
  for k = 0, 1 do
    for i = 0, 1 do
      local blob = require("octonav.pack").tile_file(i, 0, k, t:encode_tile(i, 0, k))
      files.write(("%s/tiles/%d_0_%d.tile"):format(pack_dir, i, k), blob)
    end
  end
  t:close()
  return pack_dir
end

local make = {}
function make.t()
  local t = octonav.tree.new { tiles = { 2, 1, 2 }, depth = 3 }
  t:add_box({ 3, 0, 3 }, { 5, 4, 5 })
  t:add_obstacle { min = { 9, 0, 9 }, max = { 10, 2, 10 } }
  t:set_areas { { min = { 0, 0, 0 }, max = { 2, 2, 2 }, cost = 2 } }
  t:prepare()
  return t
end
function make.q(o)
  local q = core.query.new(o.t)
  assert(q:find(A, B))
  return q
end
function make.qs(o)
  local q = core.query.new(o.t)
  q:start(A, B)
  while q:step(50) == "running" do end
  return q
end
function make.ps(o)
  local ps = core.pathserver.new(o.t, { workers = 0 })
  ps:submit(A, B)
  return ps
end
function make.st() return octonav.tree.new { tiles = { 2, 1, 2 }, depth = 3 } end
function make.s(o)
  local s = core.streamer.new(o.st, pack(), { load_padding = 1, unload_padding = 2, workers = 0 })
  s:add_agent { 1, 1, 1 }
  return s
end
function make.w(o)
  local w = core.route.world(o.t)
  for k = 0, 1 do
    for i = 0, 1 do assert(w:add_tile(i, 0, k, o.t)) end
  end
  return w
end
function make.p(o)
  local p = o.w:planner()
  p:plan(o.t, A, B)
  return p
end
function make.g()
  local g = core.grid.new(4, 4, 1)
  g:set(1, 1, 0, true)
  return g
end
function make.wk(o) -- (a walker holding one navigator stand-in on t: core.walker, lua_walk.c)
  local wk = core.walker()
  wk:attach(1, {}, o.t, { { 0.5, 1, 4 }, { 7.5, 1, 4 }, { 7.5, 6, 4 } }, 1, nil, nil, 0, 8, 0.5, nil, nil, nil, 1e-6)
  return wk
end
M.objects = { "t", "q", "qs", "ps", "st", "s", "w", "p", "g", "wk" }

function M.fixture()
  return setmetatable({}, {
    __index = function(o, k)
      local f = make[k]
      if not f then return nil end
      local v = f(o)
      rawset(o, k, v)
      return v
    end,
  })
end

-- What changes each object (the "edit" action): a call that is allowed on an idle object.
M.edits = {
  t = function(o) o.t:add_box({ 12, 0, 12 }, { 13, 1, 13 }) end,
  q = function(o) o.q:find(A, B) end,
  qs = function(o) o.qs:start(B, A) end,
  ps = function(o) o.ps:submit(B, A) end,
  st = function(o) o.st:add_box({ 12, 0, 12 }, { 13, 1, 13 }) end,
  s = function(o) o.s:move_agent(1, { 14, 1, 14 }) end,
  w = function(o) o.w:remove_tile(1, 0, 1) end,
  p = function(o) o.p:start(o.t, B, A) end,
  g = function(o) o.g:set(2, 2, 0, true) end,
  wk = function(o) o.wk:take(1) end,
}

local tmp = files.tmpname()
local blob = nil
local function tile_blob()
  blob = blob or core.route.build(make.t(), 0, 0, 0)
  return blob
end

local C = {}
local function add(name, uses, args, run, out)
  C[#C + 1] = { name = name, uses = uses, args = args, run = run, out = out }
end
local function none() return {} end

-- tree
add("t:stats", { "t" }, none, function(o) return o.t:stats() end)
add("t:revision", { "t" }, none, function(o) return o.t:revision() end)
add("t:params", { "t" }, none, function(o) return o.t:params() end)
add("t:save", { "t" }, function() return { tmp } end, function(o, p) return o.t:save(p) end)
add("t:encode_tile", { "t" }, function() return { 0, 0, 0 } end, function(o, i, j, k) return o.t:encode_tile(i, j, k) end)
add("t:decode_tile", { "t" }, function(o) return { 1, 0, 1, o.t:encode_tile(0, 0, 0) } end,
  function(o, i, j, k, s) return o.t:decode_tile(i, j, k, s) end)
add("t:clear_tile", { "t" }, function() return { 1, 0, 0 } end, function(o, i, j, k) return o.t:clear_tile(i, j, k) end)
add("t:tile_salt", { "t" }, function() return { 1, 0, 0 } end, function(o, i, j, k) return o.t:tile_salt(i, j, k) end)
add("t:compact", { "t" }, none, function(o) return o.t:compact() end)
add("t:los_masks", { "t" }, function() return { false } end, function(o, b) return o.t:los_masks(b) end)
add("t:los_prepare", { "t" }, none, function(o) return o.t:los_prepare() end)
add("t:los_defer", { "t" }, function() return { true } end, function(o, b) return o.t:los_defer(b) end)
add("t:border_free", { "t" }, function() return { true } end, function(o, b) return o.t:border_free(b) end)
add("t:los_step", { "t" }, function() return { { work = 100, all = true } } end, function(o, opts) return o.t:los_step(opts) end)
add("t:los_budget", { "t" }, function() return { 4096 } end, function(o, b) return o.t:los_budget(b) end)
add("t:adjacency", { "t" }, function() return { true } end, function(o, b) return o.t:adjacency(b) end)
add("t:adjacency_prepare", { "t" }, none, function(o) return o.t:adjacency_prepare() end)
add("t:landmarks_prepare", { "t" }, function() return { 2 } end, function(o, n) return o.t:landmarks_prepare(n) end)
add("t:export_obj", { "t" }, function() return { tmp, { what = "free", form = "boxes" } } end,
  function(o, p, opts) return o.t:export_obj(p, opts) end)
add("t:add_box", { "t" }, function() return { { 1, 1, 1 }, { 2, 2, 2 } } end, function(o, a, b) return o.t:add_box(a, b) end)
add("t:add_triangles", { "t" }, function() return { { 1, 1, 1, 3, 1, 1, 1, 1, 3 }, { 1, 2, 3 } } end,
  function(o, v, i) return o.t:add_triangles(v, i) end)
local objfile
add("t:add_obj", { "t" }, function()
  if not objfile then
    objfile = files.tmpname(".obj")
    files.write(objfile, "v 1 1 1\nv 3 1 1\nv 1 1 3\nf 1 2 3\n")
  end
  return { objfile }
end, function(o, p) return o.t:add_obj(p) end)
add("t:add_heightfield", { "t" }, function()
  return { { origin = { 0, 0, 0 }, cell = 4, nx = 2, nz = 2, heights = { 1, 1, 1, 1 } } }
end, function(o, hf) return o.t:add_heightfield(hf) end)
add("t:fill", { "t" }, function() return { { 1.5, 6.5, 1.5 } } end, function(o, p) return o.t:fill(p) end)
add("t:locate", { "t" }, function() return { { 1.5, 1.5, 1.5 } } end, function(o, p) return o.t:locate(p) end)
add("t:locate_status", { "t" }, function() return { { 1.5, 1.5, 1.5 } } end, function(o, p) return o.t:locate_status(p) end)
add("t:raycast", { "t" }, function() return { { 0.5, 1, 4 }, { 7.5, 1, 4 } } end, function(o, a, b) return o.t:raycast(a, b) end)
add("t:visible", { "t" }, function() return { { 0.5, 1, 4 }, { 7.5, 1, 4 } } end, function(o, a, b) return o.t:visible(a, b) end)
add("t:visible_xyz", { "t" }, function() return { 0.5, 1, 4, 7.5, 1, 4 } end,
  function(o, ax, ay, az, bx, by, bz) return o.t:visible_xyz(ax, ay, az, bx, by, bz) end)
add("t:visible_radius", { "t" }, function() return { { 0.5, 1, 4 }, { 7.5, 1, 4 }, 0.5 } end,
  function(o, a, b, r) return o.t:visible_radius(a, b, r) end)
add("t:raycast_xyz", { "t" }, function() return { 0.5, 1, 4, 7.5, 1, 4 } end,
  function(o, ax, ay, az, bx, by, bz) return o.t:raycast_xyz(ax, ay, az, bx, by, bz) end)
add("t:locate_status_xyz", { "t" }, function() return { 1.5, 1.5, 1.5 } end,
  function(o, x, y, z) return o.t:locate_status_xyz(x, y, z) end)
add("t:visible_many", { "t" }, function() return { { 0.5, 1, 4, 7.5, 1, 4, 0.5, 6, 0.5, 6, 6, 6 }, {} } end,
  function(o, s, r) return o.t:visible_many(s, r) end, { [2] = true })
add("t:neighbors", { "t" }, function(o) return { select(2, o.t:locate { 1.5, 1.5, 1.5 }) } end,
  function(o, c) return o.t:neighbors(c) end)
add("t:face_cells", { "t" }, function() return { 0, 0, 0, "+x" } end,
  function(o, i, j, k, f) return o.t:face_cells(i, j, k, f) end)
add("t:prepare", { "t" }, function() return { 0, 0, 0 } end, function(o, i, j, k) return o.t:prepare(i, j, k) end)
add("t:boxes", { "t" }, function() return { 0, 0, 0 } end, function(o, i, j, k) return o.t:boxes(i, j, k) end)
add("t:reachable", { "t" }, function() return { A, B } end, function(o, a, b) return o.t:reachable(a, b) end)
add("t:random_free", { "t" }, function() return { function() return 0.25 end, { center = { 8, 4, 8 }, radius = 6, count = 3 } } end,
  function(o, r, opts) return o.t:random_free(r, opts) end)
add("t:nearest_free", { "t" }, function() return { { 4, 1, 4 }, 8 } end, function(o, p, d) return o.t:nearest_free(p, d) end)
add("t:set_areas", { "t" }, function() return { { { min = { 0, 0, 0 }, max = { 4, 4, 4 }, cost = 3 } } } end,
  function(o, l) return o.t:set_areas(l) end)
add("t:areas", { "t" }, none, function(o) return o.t:areas() end)
add("t:add_obstacle", { "t" }, function() return { { min = { 12, 0, 1 }, max = { 13, 2, 2 } } } end,
  function(o, b) return o.t:add_obstacle(b) end)
add("t:remove_obstacle", { "t" }, function() return { 1 } end, function(o, id) return o.t:remove_obstacle(id) end)
add("t:obstacles", { "t" }, none, function(o) return o.t:obstacles() end)
add("debug.surface", { "t" }, function() return { "free" } end, function(o, w) return core.debug.surface(o.t, w) end)
add("debug.cells", { "t" }, function() return { "blocked" } end, function(o, w) return core.debug.cells(o.t, w) end)
-- query
add("query.new", { "t" }, function() return { { max_nodes = 1000 } } end, function(o, opts) return core.query.new(o.t, opts) end)
local find_opts = function() return { A, B, { weight = 1, smooth = "greedy", areas = { { min = { 0, 0, 0 }, max = { 2, 2, 2 }, cost = 2 } } } } end
add("q:find", { "q", "t" }, find_opts, function(o, a, b, opts) return o.q:find(a, b, opts) end)
add("q:start", { "q", "t" }, find_opts, function(o, a, b, opts) return o.q:start(a, b, opts) end)
add("q:step", { "qs", "t" }, function() return { 10 } end, function(o, n) return o.qs:step(n) end)
add("q:step_until", { "qs", "t" }, function() return { 10, 1e300 } end, function(o, n, d) return o.qs:step_until(n, d) end)
add("q:result", { "qs", "t" }, none, function(o) return o.qs:result() end)
add("q:result_step", { "qs", "t" }, function() return { 0, 1e300 } end, function(o, n, d) return o.qs:result_step(n, d) end)
add("q:bytes", { "q" }, none, function(o) return o.q:bytes() end)
add("q:trim", { "qs" }, none, function(o) return o.qs:trim() end)
add("q:corridor", { "q", "t" }, none, function(o) return o.q:corridor() end)
add("q:visited", { "q", "t" }, function() return { 5 } end, function(o, n) return o.q:visited(n) end)
-- path server
add("pathserver.new", { "t" }, function() return { { workers = 0, max_nodes = 1000 } } end,
  function(o, opts) return core.pathserver.new(o.t, opts) end)
add("ps:submit", { "ps", "t" }, function() return { A, B, { weight = 1.5 } } end, function(o, a, b, opts) return o.ps:submit(a, b, opts) end)
add("ps:update", { "ps", "t" }, function() return { true } end, function(o, w) return o.ps:update(w) end)
add("ps:pending", { "ps" }, none, function(o) return o.ps:pending() end)
add("ps:pause", { "ps" }, none, function(o) return o.ps:pause() end)
add("ps:resume", { "ps" }, none, function(o) return o.ps:resume() end)
-- streamer
add("streamer.new", { "st" }, function() return { pack(), { load_padding = 1, unload_padding = 2, workers = 0 } } end,
  function(o, d, opts) return core.streamer.new(o.st, d, opts) end)
add("s:add_agent", { "s", "st" }, function() return { { 12, 1, 12 } } end, function(o, p) return o.s:add_agent(p) end)
add("s:move_agent", { "s", "st" }, function() return { 1, { 12, 1, 12 } } end, function(o, id, p) return o.s:move_agent(id, p) end)
add("s:remove_agent", { "s", "st" }, function() return { 1 } end, function(o, id) return o.s:remove_agent(id) end)
add("s:agents_in", { "s", "st" }, function() return { { 0, 0, 0 }, { 16, 16, 16 } } end,
  function(o, a, b) return o.s:agents_in(a, b) end)
add("s:agent_position", { "s", "st" }, function() return { 1 } end, function(o, id) return o.s:agent_position(id) end)
add("s:lock", { "s", "st" }, function() return { { 1, 0, 1 } } end, function(o, t) return o.s:lock(t) end)
add("s:unlock", { "s", "st" }, function() return { { 1, 0, 1 } } end, function(o, t) return o.s:unlock(t) end)
add("s:force_load", { "s", "st" }, function() return { { 1, 0, 1 } } end, function(o, t) return o.s:force_load(t) end)
add("s:force_unload", { "s", "st" }, function() return { { 0, 0, 0 } } end, function(o, t) return o.s:force_unload(t) end)
add("s:retry", { "s", "st" }, function() return { { 1, 0, 1 } } end, function(o, t) return o.s:retry(t) end)
add("s:is_loaded", { "s", "st" }, function() return { { 0, 0, 0 } } end, function(o, t) return o.s:is_loaded(t) end)
add("s:state", { "s", "st" }, function() return { { 1, 0, 1 } } end, function(o, t) return o.s:state(t) end)
add("s:update", { "s", "st" }, function() return { true } end, function(o, w) return o.s:update(w) end)
add("s:stats", { "s", "st" }, none, function(o) return o.s:stats() end)
add("s:waiting", { "s", "st" }, none, function(o) return o.s:waiting() end)
add("s:load_tree", { "s", "st" }, function() return { 7, tmp } end, function(o, id, p) return o.s:load_tree(id, p) end)
add("s:set_graph", { "s", "st", "w" }, function() return { 0 } end, function(o, m) return o.s:set_graph(o.w, m) end)
-- route
add("route.build", { "t" }, function() return { 0, 0, 0, { stretch = 1.5, tag = 3 } } end,
  function(o, i, j, k, opts) return core.route.build(o.t, i, j, k, opts) end)
add("route.info", {}, function() return { tile_blob() } end, function(_, b) return core.route.info(b) end)
add("route.portals", {}, function() return { tile_blob() } end, function(_, b) return core.route.portals(b) end)
add("route.world", { "t" }, none, function(o) return core.route.world(o.t) end)
add("w:add_tile", { "w", "t" }, function() return { 1, 0, 1 } end, function(o, i, j, k) return o.w:add_tile(i, j, k, o.t) end)
add("w:remove_tile", { "w" }, function() return { 1, 0, 1 } end, function(o, i, j, k) return o.w:remove_tile(i, j, k) end)
add("w:has_tile", { "w" }, function() return { 1, 0, 1 } end, function(o, i, j, k) return o.w:has_tile(i, j, k) end)
add("w:tile_id", { "w" }, function() return { 1, 0, 1 } end, function(o, i, j, k) return o.w:tile_id(i, j, k) end)
add("w:stats", { "w" }, none, function(o) return o.w:stats() end)
add("w:planner", { "w" }, function() return { 1000 } end, function(o, n) return o.w:planner(n) end)
add("w:joins_bytes", { "w" }, none, function(o) return o.w:joins_bytes() end)
add("p:start", { "p", "w", "t" }, function() return { A, B } end, function(o, a, b) return o.p:start(o.t, a, b) end)
add("p:start_multi", { "p", "w", "t" }, function() return { { A, { 1.5, 0.5, 0.5 } }, { B }, { start_costs = { 0, 1 } } } end,
  function(o, s, g, opts) return o.p:start_multi(o.t, s, g, opts) end)
add("p:step", { "p", "w" }, function() return { 100 } end, function(o, n) return o.p:step(n) end)
add("p:result", { "p", "w" }, none, function(o) return o.p:result() end)
add("p:flat", { "p", "w" }, function() return { { n = 0 } } end, function(o, into) return o.p:flat(into) end)
add("p:plan", { "p", "w", "t" }, function() return { A, B } end, function(o, a, b) return o.p:plan(o.t, a, b) end)
add("p:bytes", { "p", "w" }, none, function(o) return o.p:bytes() end)
add("p:join_limit", { "p", "w" }, function() return { 4, 0.5 } end, function(o, n, ms) return o.p:join_limit(n, ms) end)
add("p:joining", { "p", "w" }, none, function(o) return o.p:joining() end)
add("p:last_call", { "p", "w" }, none, function(o) return o.p:last_call() end)
-- grid
add("g:set", { "g" }, function() return { 3, 3, 0, true } end, function(o, x, y, z, b) return o.g:set(x, y, z, b) end)
add("g:blocked", { "g" }, function() return { 1, 1, 0 } end, function(o, x, y, z) return o.g:blocked(x, y, z) end)
add("g:dims", { "g" }, none, function(o) return o.g:dims() end)
add("g:find", { "g" }, function() return { { 0, 0, 0 }, { 3, 3, 0 } } end, function(o, a, b) return o.g:find(a, b) end)
add("g:visible", { "g" }, function() return { { 0.5, 0.5, 0.5 }, { 3.5, 3.5, 0.5 } } end, function(o, a, b) return o.g:visible(a, b) end)
add("g:visible_many", { "g" }, function() return { { 0.5, 0.5, 0.5, 3.5, 3.5, 0.5 }, {} } end,
  function(o, s, r) return o.g:visible_many(s, r) end, { [2] = true })
-- walker (its attach and walk read their tables raw, rawlen / rawgeti: no metamethod runs in them,
-- so the argument proxies of spec/60 do not apply; spec/117 covers them)
add("walker.new", {}, none, function() return core.walker() end)
add("wk:size", { "wk" }, none, function(o) return o.wk:size() end)
add("wk:take", { "wk" }, function() return { 1 } end, function(o, k) return o.wk:take(k) end)
add("wk:park", { "wk" }, function() return { 2, "nav", "planning", "wp", 1, 1 } end, -- (nav, answer: held, not read)
  function(o, k, nav, st, ans, since, wid) return o.wk:park(k, nav, st, ans, since, wid) end)
M.calls = C

-- A call's outcome as a comparable string: "err: MESSAGE" or "ok: " and its results, tables written
-- out (keys sorted), userdata by type and open/closed state, numbers as %.17g.
local function dump(v, out, depth)
  local tv = type(v)
  if tv == "table" then
    if depth > 6 then out[#out + 1] = "{...}" return end
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    out[#out + 1] = "{"
    for _, k in ipairs(keys) do
      out[#out + 1] = tostring(k) .. "="
      dump(v[k], out, depth + 1)
      out[#out + 1] = ","
    end
    out[#out + 1] = "}"
  elseif tv == "number" then
    out[#out + 1] = compat.isinteger(v) and tostring(v) or ("%.17g"):format(v)
  elseif tv == "userdata" then
    out[#out + 1] = tostring(v):match("^[%w%.]+") .. (tostring(v):find("(closed)", 1, true) and "(closed)" or "")
  elseif tv == "string" then
    out[#out + 1] = #v > 64 and ("string#%d"):format(#v) or ("%q"):format(v)
  else
    out[#out + 1] = tostring(v)
  end
end

function M.outcome(ok, ...)
  if not ok then return "err: " .. tostring((...)) end
  local out = { "ok:" }
  for i = 1, select("#", ...) do
    dump((select(i, ...)), out, 0)
    out[#out + 1] = ";"
  end
  return table.concat(out)
end

function M.close_all(o)
  for i = #M.objects, 1, -1 do
    local v = rawget(o, M.objects[i])
    if v then pcall(v.close, v) end
  end
end

return M
