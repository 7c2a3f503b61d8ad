-- spec/63-numeric_sweep_spec.lua -- every numeric argument and option of the binding and of the Lua API
-- (tree, query, route, streamer, grid, world, bake, navigator) called with the red team's numbers (issue
-- 30, items 3 and 4): NaN, +-inf, +-1e308, +-denormal, +-2^63, the integer extremes. The calls are
-- generated from the signatures below: each numeric slot (an argument, a point's coordinate, an
-- option) takes each value in turn, the others a valid one. Every call must return, or raise a string
-- naming its function or the argument at fault; nothing crashes or hangs. `make check` runs it under
-- ASan + UBSan with -fsanitize=float-cast-overflow, where a cast of such a number aborts.
-- Run: busted --lua=lua5.4 spec/63-numeric_sweep_spec.lua
local compat = require "octonav.compat" -- Lua 5.1 .. 5.4 (issue 34)
local octonav = require "octonav"
local core = require "octonav.core"

local VALUES = { 0 / 0, math.huge, -math.huge, 1e308, -1e308, 5e-324, -5e-324, 2.0 ^ 63, -2.0 ^ 63,
  compat.maxinteger, math.mininteger or -compat.maxinteger } -- (+-2^53 before 5.3)

local function fmt(v) return compat.isinteger(v) and ("%d"):format(v) or ("%.17g"):format(v) end

-- A signature: { name, call(args...), slots } where slots lists the argument shapes in order:
--   "n" a number (valid: 1), "p" a point (valid: {1.5, 1.5, 1.5}), { opt = { key = valid, ... } } an
--   options table; `valid` overrides the valid value of that slot. The generator makes, for each slot
--   and value, the call with that slot (one coordinate of a point, one option) set to the value.
local function expand(sig)
  local calls = {}
  local function valid_args()
    local a = {}
    for s, shape in ipairs(sig.slots) do
      if sig.valid and sig.valid[s] ~= nil then a[s] = sig.valid[s]
      elseif shape == "n" then a[s] = 1
      elseif shape == "p" then a[s] = { 1.5, 1.5, 1.5 }
      else a[s] = {} ; for k, v in pairs(shape.opt) do a[s][k] = v end end
    end
    return a
  end
  for s, shape in ipairs(sig.slots) do
    for _, v in ipairs(VALUES) do
      if shape == "n" then
        local a = valid_args()
        a[s] = v
        calls[#calls + 1] = { what = ("%s arg %d = %s"):format(sig.name, s, fmt(v)), args = a, slot = s }
      elseif shape == "p" then
        for c = 1, 3 do
          local a = valid_args()
          a[s] = { a[s][1], a[s][2], a[s][3] }
          a[s][c] = v
          calls[#calls + 1] = { what = ("%s arg %d [%d] = %s"):format(sig.name, s, c, fmt(v)), args = a, slot = s }
        end
      else
        for k in pairs(shape.opt) do
          local a = valid_args()
          a[s][k] = v
          calls[#calls + 1] = { what = ("%s option %s = %s"):format(sig.name, k, fmt(v)), args = a, slot = s, key = k }
        end
      end
    end
  end
  return calls
end

-- the fixtures: a small tree with a wall, its graph, a grid, a baked world
local function fixture()
  local t = octonav.tree.new { tiles = { 2, 1, 2 }, depth = 4 }
  t:add_box({ 7, 0, 2 }, { 9, 10, 14 })
  return t
end


-- What a raised message must name: the option at fault (its key), or the function (FN[signature], by
-- default the signature's first word without its "x." / "x:" prefix).
local FN = {
  ["graph tile"] = "has_tile", ["grid:set/blocked"] = "grid:", ["nav:go/update"] = "navigator:",
  ["neighbors/face_cells"] = "locate", ["ps:submit"] = "start", ["route planner"] = "planner:plan",
  ["route planner budget"] = "graph:planner", ["streamer agents"] = "_agent:", ["query.new"] = "max_nodes",
  ["bake heightfield"] = "heightfield",
  ["q:find areas"] = "'areas'", ["route start_multi costs"] = "start_costs",
  ["world:tile_of/to_nav/in_hole"] = "world:", ["world:door_box"] = "world:door_box",
}
local function names_it(s, c, err)
  local fn = FN[s.name] or s.name:match("^(%S+)"):gsub("^[%w_]+[.:]", "")
  return err:find(fn, 1, true) ~= nil or (c.key ~= nil and err:find("'" .. c.key .. "'", 1, true) ~= nil)
    or (c.key ~= nil and err:find("." .. c.key .. ":", 1, true) ~= nil)
end

local SIGS = {}
local function sig(name, slots, call, valid) SIGS[#SIGS + 1] = { name = name, slots = slots, call = call, valid = valid } end

-- tree construction and edits
sig("tree.new", { { opt = { depth = 4, scale = 1, radius = 0 } } }, function(_, o) return core.tree.new(o) end)
sig("tree.new origin", { "p" }, function(_, p) return core.tree.new { origin = p, depth = 3 } end)
sig("tree.new tiles", { "p" }, function(_, p) return core.tree.new { tiles = p, depth = 3 } end, { { 1, 1, 1 } })
sig("add_box", { "p", "p" }, function(t, a, b) return t:add_box(a, b) end, { nil, { 1, 1, 1 } })
sig("add_heightfield", { { opt = { cell = 1, nx = 2, nz = 2 } } },
  function(t, o) o.heights = { 1, 2, 3, 4 }; return t:add_heightfield(o) end)
sig("add_heightfield origin", { "p" }, function(t, p)
  return t:add_heightfield { origin = p, cell = 1, nx = 2, nz = 2, heights = { 1, 2, 3, 4 } }
end)
sig("add_heightfield heights", { "n" }, function(t, h)
  return t:add_heightfield { cell = 1, nx = 2, nz = 2, heights = { 1, h, 3, 4 } }
end)
sig("add_triangles", { "p" }, function(t, p)
  return t:add_triangles({ p[1], p[2], p[3], 5, 1, 1, 1, 5, 1 }, { 1, 2, 3 })
end)
sig("add_triangles index", { "n" }, function(t, i) return t:add_triangles({ 1, 1, 1, 5, 1, 1, 1, 5, 1 }, { 1, 2, i }) end)
sig("fill", { "p" }, function(t, p) return t:fill(p) end)
sig("compact", { "n" }, function(t, v) return t:compact(v) end, { 0.5 })
sig("add_obstacle", { "p" }, function(t, p) return t:add_obstacle { min = p, max = { 20, 20, 20 } } end)
sig("remove_obstacle", { "n" }, function(t, id) return t:remove_obstacle(id) end)
sig("set_areas", { "n" }, function(t, c) return t:set_areas { { min = { 0, 0, 0 }, max = { 4, 4, 4 }, cost = c } } end)
sig("set_areas min", { "p" }, function(t, p) return t:set_areas { { min = p, max = { 4, 4, 4 }, cost = 2 } } end)
sig("encode_tile", { "n" }, function(t, i) return t:encode_tile(i, 0, 0) end, { 0 })
sig("tile_salt", { "n" }, function(t, i) return t:tile_salt(0, i, 0) end, { 0 })
sig("clear_tile", { "n" }, function(t, i) return t:clear_tile(0, 0, i) end, { 0 })
-- point queries
sig("locate", { "p" }, function(t, p) return t:locate(p) end)
sig("locate_status", { "p" }, function(t, p) return t:locate_status(p) end)
sig("raycast", { "p", "p" }, function(t, a, b) return t:raycast(a, b) end, { nil, { 20, 1.5, 1.5 } })
sig("visible", { "p", "p" }, function(t, a, b) return t:visible(a, b) end, { nil, { 20, 1.5, 1.5 } })
sig("visible_many", { "n" }, function(t, v) return t:visible_many { 1.5, 1.5, 1.5, v, 1.5, 1.5 } end)
sig("reachable", { "p", "p" }, function(t, a, b) return t:reachable(a, b) end, { nil, { 20, 1.5, 1.5 } })
sig("random_free", { "n", { opt = { radius = 4, count = 3 } } }, function(t, seed, o)
  o.center = { 1.5, 1.5, 1.5 }
  return t:random_free(seed, o)
end, { 7 })
sig("random_free center", { "p" }, function(t, p) return t:random_free(7, { center = p, radius = 4 }) end)
sig("random_free rng", { "n" }, function(t, v) return t:random_free(function() return v end) end)
sig("nearest_free", { "p", "n" }, function(t, p, d) return t:nearest_free(p, d) end, { { 8, 1, 8 }, 4 })
sig("neighbors/face_cells", { "p" }, function(t, p)
  local c = t:locate(p)
  return type(c) == "table" and t:neighbors(c)
end)
sig("boxes", { "n" }, function(t, v) return t:boxes(v) end)
-- queries
sig("q:find", { "p", "p" }, function(t, a, b) return core.query.new(t):find(a, b) end, { nil, { 20, 1.5, 1.5 } })
sig("q:find options", { { opt = { weight = 1, size_bias = 0, relax = 0, max_expansions = 100, escalate = 0 } } },
  function(t, o) return core.query.new(t):find({ 1.5, 1.5, 1.5 }, { 20, 1.5, 1.5 }, o) end)
sig("q:find areas", { "n" }, function(t, c)
  return core.query.new(t):find({ 1.5, 1.5, 1.5 }, { 20, 1.5, 1.5 }, { areas = { { min = { 0, 0, 0 }, max = { 4, 4, 4 }, cost = c } } })
end)
sig("q:find heuristic", { "n" }, function(t, h)
  return core.query.new(t):find({ 1.5, 1.5, 1.5 }, { 20, 1.5, 1.5 }, { heuristic = function() return h end })
end)
sig("query.new", { "n" }, function(t, n) return core.query.new(t, { max_nodes = n }) end)
sig("q:step", { "n" }, function(t, n)
  local q = core.query.new(t)
  q:start({ 1.5, 1.5, 1.5 }, { 20, 1.5, 1.5 })
  return q:step(n)
end)
sig("q:step_until", { "n", "n" }, function(t, n, d)
  local q = core.query.new(t)
  q:start({ 1.5, 1.5, 1.5 }, { 20, 1.5, 1.5 })
  return q:step_until(n, d)
end, { 100, 1 })
sig("q:visited", { "n" }, function(t, n)
  local q = core.query.new(t)
  q:find({ 1.5, 1.5, 1.5 }, { 20, 1.5, 1.5 })
  return q:visited(n)
end)
sig("path:point_at", { "n" }, function(t, d)
  local path = core.query.new(t):find({ 1.5, 1.5, 1.5 }, { 20, 1.5, 1.5 })
  return path:point_at(d)
end)
sig("pathserver", { { opt = { workers = 1, max_nodes = 1000, max_queued = 0 } } }, function(t, o)
  local ps = core.pathserver.new(t, o)
  ps:close()
  return true
end)
sig("ps:submit", { "p", { opt = { weight = 1 } } }, function(t, a, o)
  local ps = core.pathserver.new(t, { workers = 1 })
  local ok, err = pcall(ps.submit, ps, a, { 20, 1.5, 1.5 }, o)
  ps:update(true)
  ps:close()
  if not ok then error(err, 0) end
  return true
end)
sig("ps:update", { "n" }, function(t, w)
  local ps = core.pathserver.new(t, { workers = 1 })
  local ok, err = pcall(ps.update, ps, w)
  ps:close()
  if not ok then error(err, 0) end
  return true
end)
-- route
sig("route.build", { "n", { opt = { bound = 4, stretch = 2, tag = 1 } } }, function(t, i, o) return core.route.build(t, i, 0, 0, o) end, { 0 })
sig("route planner", { "p", "p" }, function(t, a, b)
  local g = core.route.world(t)
  for k = 0, 1 do for i = 0, 1 do g:add_tile(i, 0, k, t) end end
  local p = g:planner()
  return p:plan(t, a, b)
end, { nil, { 20, 1.5, 20 } })
sig("route planner budget", { "n" }, function(t, n)
  local g = core.route.world(t)
  for k = 0, 1 do for i = 0, 1 do g:add_tile(i, 0, k, t) end end
  local p = g:planner(n)
  p:start(t, { 1.5, 1.5, 1.5 }, { 20, 1.5, 20 })
  return p:step(n)
end, { 100 })
sig("route start_multi costs", { "n" }, function(t, c)
  local g = core.route.world(t)
  for k = 0, 1 do for i = 0, 1 do g:add_tile(i, 0, k, t) end end
  return g:planner():start_multi(t, { { 1.5, 1.5, 1.5 } }, { { 20, 1.5, 20 } }, { start_costs = { c }, goal_costs = { 0 } })
end)
sig("graph tile", { "n" }, function(t, i) return core.route.world(t):has_tile(i, 0, 0) end, { 0 })
-- streamer (over the tree's own tiles: no directory needed for the calls that check numbers)
sig("streamer.new", { { opt = { load_padding = 1, unload_padding = 2, workers = 0, max_loaded = 0 } } }, function(t, o)
  local s = core.streamer.new(t, os.tmpname(), o)
  s:close()
  return true
end)
sig("streamer agents", { "p", "n" }, function(t, p, id)
  local s = core.streamer.new(t, os.tmpname(), { load_padding = 1, unload_padding = 2, workers = 0 })
  local ok, err = pcall(function()
    local a = s:add_agent(p)
    s:move_agent(a, p)
    s:move_agent(id, p)
  end)
  s:close()
  if not ok then error(err, 0) end
  return true
end, { nil, 1 })
-- grid
sig("grid.new", { "n", "n", "n" }, function(_, w, h, d) return core.grid.new(w, h, d) end, { 4, 4, 4 })
sig("grid:set/blocked", { "n", "n", "n" }, function(_, x, y, z)
  local g = core.grid.new(4, 4, 4)
  g:set(x, y, z, true)
  return g:blocked(x, y, z)
end, { 1, 1, 1 })
sig("grid:find", { "p" }, function(_, p) return core.grid.new(4, 4, 4):find(p, { 3, 3, 3 }) end, { { 0, 0, 0 } })

local function tree_sweep(sigs)
  local n, raised = 0, 0
  for _, s in ipairs(sigs) do
    for _, c in ipairs(expand(s)) do
      local t = fixture()
      local args = c.args
      local ok, err = pcall(s.call, t, compat.unpack(args, 1, #s.slots))
      n = n + 1
      if not ok then
        raised = raised + 1
        assert(type(err) == "string", c.what .. ": error is not a string")
        assert(names_it(s, c, err), c.what .. ": the error names neither the function nor the option: " .. err)
      end
      t:close()
    end
  end
  return n, raised
end

describe("numeric sweep: the binding", function()
  it("every numeric slot with NaN, inf, 1e308, denormals, 2^63: returns or raises a string", function()
    local n, raised = tree_sweep(SIGS)
    print(("numeric sweep, binding: %d calls, %d raised"):format(n, raised))
    assert.is_true(n > 1000)
  end)
end)

-- ---- the Lua API over a baked world ---------------------------------------------------------------
local LSIGS = {}
local function lsig(name, slots, call, valid) LSIGS[#LSIGS + 1] = { name = name, slots = slots, call = call, valid = valid } end
local A, B = { 2.5, 12.5, 2.5 }, { 28.5, 12.5, 13.5 } -- free points of spec/10's world (two tiles along x)

lsig("world:plan", { "p", "p" }, function(w, a, b) return w:plan(a, b) end, { A, B })
lsig("world:plan into the cave", { "p" }, function(w, a) return w:plan(a, { 8, 6, 8 }) end, { A })
lsig("world:tile_of/to_nav/in_hole", { "p" }, function(w, p)
  return w:tile_of(p), w:to_nav(p), w:to_world(p), w:in_hole(p), w:to_nav(p, 1)
end)
lsig("world tiles", { "n" }, function(w, t)
  local ok, err = pcall(w.tile_bounds, w, t)
  local ok2, err2 = pcall(w.add_graph, w, t)
  local ok3, err3 = pcall(w.remove_graph, w, t)
  for _, r in ipairs { { ok, err }, { ok2, err2 }, { ok3, err3 } } do
    if not r[1] then assert(type(r[2]) == "string") end
  end
  if not ok then error(err, 0) end
  return true
end, { 0 })
lsig("world doors", { "n" }, function(w, d)
  local ok, err = pcall(w.set_door, w, 1, d, false)
  if ok then w:set_door(1, d, true) end
  if not ok then error(err, 0) end
  return true
end)
lsig("world:door_box", { "p" }, function(w, p)
  local old = w:door_box(1, 1)
  local ok, err = pcall(w.door_box, w, 1, 1, { min = p, max = { 6, 7, 9 } })
  w:set_door(1, 1, false)
  w:set_door(1, 1, true)
  w:door_box(1, 1, old or { min = { 3, 5, 7 }, max = { 5, 7, 9 } })
  if not ok then error(err, 0) end
  return true
end, { { 3, 5, 7 } })
lsig("navigator.new", { { opt = { checks_per_frame = 8, query_budget = 50, arrive_distance = 0.5, max_nodes = 4096,
  plan_budget = 64, prefetch_distance = 16, wait_timeout = 10, exit_candidates = 3 } } }, function(w, o)
  local nav = octonav.navigator.new(w, o)
  nav:go(B)
  local st, x
  for _ = 1, 5 do st, x = nav:update(A) end
  nav:close()
  return st, x
end)
lsig("nav:go/update", { "p", "p", "n" }, function(w, goal, pos, budget)
  local nav = octonav.navigator.new(w, { plan_budget = 64, query_budget = 50 })
  local ok, err = pcall(function()
    nav:go(goal)
    for _ = 1, 5 do nav:update(pos, budget) end
  end)
  nav:close()
  if not ok then error(err, 0) end
  return true
end, { B, A, 100 })
lsig("streamer", { { opt = { load_padding = 1, unload_padding = 2, workers = 0, max_loaded = 0 } }, "p", "n" },
  function(w, o, p, tile)
    local s = assert(octonav.streamer.new(w.dir, o))
    local ok, err = pcall(function()
      local id = s:add_agent(p)
      s:move_agent(id, p)
      s:update()
      s:lock(tile)
      s:unlock(tile)
      s:update()
    end)
    s:close()
    if not ok then error(err, 0) end
    return true
  end, { nil, A, 0 })

-- the bake: config numbers checked (bake.check), and a small bake for the geometry numbers
local function small_config(dir)
  return { range = { min = { 0, 0, 0 }, max = { 16, 8, 8 } }, depth = 3, output = dir, progress = function() end }
end
local BSIGS = {}
local function bsig(name, slots, call, valid) BSIGS[#BSIGS + 1] = { name = name, slots = slots, call = call, valid = valid } end
bsig("bake config", { { opt = { scale = 1, depth = 3 } }, "p" }, function(dir, o, mx)
  local c = small_config(dir)
  c.scale, c.depth, c.range.max = o.scale, o.depth, mx
  return octonav.bake.check(c)
end, { nil, { 16, 8, 8 } })
bsig("bake agents/connect", { "n", { opt = { bound = 0, stretch = 1, merge_distance = 4 } } }, function(dir, r, o)
  local c = small_config(dir)
  c.agents, c.connect = { { name = "a", radius = r } }, o
  return octonav.bake.check(c)
end, { 0 })
bsig("bake hole", { "p", "n" }, function(dir, p, s)
  local c = small_config(dir)
  c.holes = { { name = "h", min = { 2, 1, 2 }, max = { 6, 5, 6 }, scale = s, doors = { { inside = p, outside = { 7, 2, 4 } } } } }
  return octonav.bake.check(c)
end, { { 4, 2, 4 }, 0.5 })
bsig("bake box", { "p" }, function(dir, p)
  local c = small_config(dir)
  c.geometry = { { box = { min = { 0, 0, 0 }, max = p } } }
  return octonav.bake(c)
end, { { 16, 1, 8 } })
bsig("bake heightfield", { "n", "p" }, function(dir, cell, origin)
  local c = small_config(dir)
  c.geometry = { { heightfield = { origin = origin, cell = cell, nx = 2, nz = 2, heights = { 1, 2, 1, 2 } } } }
  return octonav.bake(c)
end, { 1, { 0, 0, 0 } })
bsig("bake fn", { "n" }, function(dir, cell)
  local c = small_config(dir)
  c.geometry = { { fn = function() return { { heightfield = { cell = cell, nx = 2, nz = 2, heights = { 1, 2, 1, 2 } } } } end } }
  return octonav.bake(c)
end)

describe("numeric sweep: the Lua API", function()
  local files = dofile("spec/support/files.lua")
  local baked = dofile("spec/support/bakedworld.lua")
  local tmp = files.tracker(files.rm_rf)
  local w
  setup(function()
    local dir = tmp.dir()
    assert(baked.call_bake(baked.config(dir)))
    w = assert(octonav.world.load(dir))
  end)
  teardown(function()
    if w then w:close() end
    tmp.cleanup()
  end)

  local function sweep(sigs, arg0)
    local n, raised = 0, 0
    for _, s in ipairs(sigs) do
      for _, c in ipairs(expand(s)) do
        local ok, err = pcall(s.call, arg0(), compat.unpack(c.args, 1, #s.slots))
        n = n + 1
        if not ok then
          raised = raised + 1
          assert(type(err) == "string", c.what .. ": error is not a string")
          assert(names_it(s, c, err), c.what .. ": the error names neither the function nor the option: " .. err)
        end
      end
    end
    return n, raised
  end

  it("world, navigator, streamer: every numeric slot returns or raises a string", function()
    local n, raised = sweep(LSIGS, function() return w end)
    print(("numeric sweep, world/navigator/streamer: %d calls, %d raised"):format(n, raised))
    -- the world still plans after it all
    local route = w:plan(A, B)
    assert.is_table(route)
  end)

  it("bake: every numeric slot of the config returns or raises a string", function()
    local n, raised = sweep(BSIGS, function() return tmp.dir() end)
    print(("numeric sweep, bake: %d calls, %d raised"):format(n, raised))
  end)
end)
