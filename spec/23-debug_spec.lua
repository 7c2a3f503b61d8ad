-- Seeing the nav data: the blocked surface as merged faces (csrc/core/surface.c), the surface OBJ
-- (csrc/core/export.c), packed cells (csrc/lua/lua_debug.c), octonav.debug.draw and the viewer page
-- (lua/octonav/view.lua). The surface is checked leaf face by leaf face against locate.
local compat = require "octonav.compat" -- Lua 5.1 .. 5.4 (issue 34)
local octonav = require "octonav"
local core = require "octonav.core"
local ddraw = require "octonav.debug"
local view = require "octonav.view"
local Tree = octonav.tree
local files = dofile("spec/support/files.lua")
local prng = dofile("spec/support/prng.lua")


local tmp = files.tracker()
local tmppath, cleanup = tmp.file, tmp.cleanup

-- every leaf of the grid: blocked[x][y][z] as booleans (nav leaf units)
local function leaves(t)
  local p = t:params()
  local N, s, o = p.tile_leaves, p.scale, p.origin
  local dims = { p.tiles[1] * N, p.tiles[2] * N, p.tiles[3] * N }
  local b = {}
  for x = 0, dims[1] - 1 do
    for y = 0, dims[2] - 1 do
      for z = 0, dims[3] - 1 do
        b[(x * dims[2] + y) * dims[3] + z] = t:locate { o[1] + (x + 0.5) * s, o[2] + (y + 0.5) * s, o[3] + (z + 0.5) * s } == "blocked"
      end
    end
  end
  return function(x, y, z) return b[(x * dims[2] + y) * dims[3] + z] end, dims
end

-- the surface quads in leaf units: { mn = {..}, mx = {..}, axis, normal index }
local function surface_quads(t, what)
  local p = t:params()
  local bytes, n = core.debug.surface(t, what)
  assert.are.equal(52 * n, #bytes)
  local quads = {}
  for i = 0, n - 1 do
    local v = { compat.unpack_bytes(("<" .. ("f"):rep(13)), bytes, 52 * i + 1) }
    local mn, mx = { math.huge, math.huge, math.huge }, { -math.huge, -math.huge, -math.huge }
    for c = 0, 3 do
      for a = 1, 3 do
        local l = (v[3 * c + a] - p.origin[a]) / p.scale
        assert.is_true(math.abs(l - math.floor(l + 0.5)) < 1e-4, "corner off the leaf lattice")
        l = math.floor(l + 0.5)
        mn[a], mx[a] = math.min(mn[a], l), math.max(mx[a], l)
      end
    end
    local flat
    for a = 1, 3 do if mn[a] == mx[a] then assert.is_nil(flat); flat = a end end
    assert.is_not_nil(flat, "a quad is not axis-aligned")
    local nrm = math.floor(v[13] + 0.5)
    assert.are.equal(flat, math.floor(nrm / 2) + 1, "the normal is not across the quad's plane")
    -- counter-clockwise seen from the normal: (b - a) x (c - a) points along the normal
    local a1 = { v[1], v[2], v[3] }
    local e1 = { v[4] - a1[1], v[5] - a1[2], v[6] - a1[3] }
    local e2 = { v[7] - a1[1], v[8] - a1[2], v[9] - a1[3] }
    local cross = { e1[2] * e2[3] - e1[3] * e2[2], e1[3] * e2[1] - e1[1] * e2[3], e1[1] * e2[2] - e1[2] * e2[1] }
    local sign = (nrm % 2 == 1) and 1 or -1
    assert.is_true(cross[flat] * sign > 0, "a quad is wound clockwise")
    quads[#quads + 1] = { mn = mn, mx = mx, axis = flat, normal = nrm }
  end
  return quads
end

-- Each leaf face between a blocked and a free leaf inside the grid must be covered by exactly one
-- quad, facing out of blocked space; no quad covers anything else.
local function check_surface(t)
  local blocked, dims = leaves(t)
  local quads = surface_quads(t, "blocked")
  local covered, area = {}, 0
  for _, q in ipairs(quads) do
    local a = q.axis
    local u, v = a % 3 + 1, (a + 1) % 3 + 1
    for i = q.mn[u], q.mx[u] - 1 do
      for j = q.mn[v], q.mx[v] - 1 do
        local c = { 0, 0, 0 }
        c[a], c[u], c[v] = q.mn[a], i, j
        local key = a .. ":" .. c[1] .. "," .. c[2] .. "," .. c[3]
        assert.is_nil(covered[key], "two quads cover " .. key)
        covered[key] = q.normal
        area = area + 1
      end
    end
  end
  local faces = 0
  for a = 1, 3 do
    for x = 0, dims[1] - 1 do
      for y = 0, dims[2] - 1 do
        for z = 0, dims[3] - 1 do
          local c = { x, y, z }
          if c[a] > 0 then
            local d = { x, y, z }
            d[a] = d[a] - 1
            local b1, b0 = blocked(x, y, z), blocked(d[1], d[2], d[3])
            local key = a .. ":" .. x .. "," .. y .. "," .. z
            if b1 ~= b0 then
              faces = faces + 1
              -- blocked on the high side: the normal points to -axis (index 2a-2), else +axis
              local want = b1 and (2 * a - 2) or (2 * a - 1)
              assert.are.equal(want, covered[key], "leaf face " .. key)
            else
              assert.is_nil(covered[key], "a quad covers " .. key .. ", which is not on the surface")
            end
          end
        end
      end
    end
  end
  assert.are.equal(faces, area)
  return #quads, faces
end

describe("surface", function()
  after_each(cleanup)

  it("a box in the open is six quads on eight shared vertices", function()
    local t = Tree.new { tiles = { 2, 1, 1 }, depth = 3, scale = 0.5, origin = { -1, 2, 3 } }
    t:add_box({ 0, 3, 4 }, { 1.5, 4.5, 5.5 })
    local n = check_surface(t)
    assert.are.equal(6, n)
    local path = tmppath(".obj")
    local faces, verts = t:export_obj(path)
    assert.are.equal(6, faces)
    assert.are.equal(8, verts)
    local text = files.read(path)
    local vs, seen = 0, {}
    for x, y, z in text:gmatch("\nv (%S+) (%S+) (%S+)") do
      vs = vs + 1
      local k = x .. " " .. y .. " " .. z
      assert.is_nil(seen[k], "vertex written twice")
      seen[k] = true
    end
    assert.are.equal(8, vs)
    assert.are.equal(6, select(2, text:gsub("\nf %d+//%d %d+//%d %d+//%d %d+//%d", "")))
    assert.are.equal(6, select(2, text:gsub("\nvn ", "")))
    assert.are.equal("# octonav blocked surface", text:match("^[^\n]+"))
  end)

  it("covers every blocked/free leaf face once on random scenes, across tiles", function()
    local r = prng.xorshift(19)
    for _ = 1, 6 do
      local t = Tree.new { tiles = { 2, 2, 1 }, depth = 3 }
      for _ = 1, 5 do
        local a = { r.range(0, 14), r.range(0, 14), r.range(0, 6) }
        t:add_box(a, { a[1] + r.range(0.5, 6), a[2] + r.range(0.5, 6), a[3] + r.range(0.5, 4) })
      end
      local n, faces = check_surface(t)
      assert.is_true(n <= faces)
    end
  end)

  it("leaves the grid's outer faces out; free space's surface points the other way", function()
    local t = Tree.new { tiles = { 2, 1, 1 }, depth = 2 }
    assert.are.equal(0, #surface_quads(t, "blocked"))
    -- a tile that is fully blocked on the right: one 4x4 wall at x = 4 facing -x
    t:add_box({ 4, 0, 0 }, { 8, 4, 4 })
    local q = surface_quads(t, "blocked")
    assert.are.equal(1, #q)
    assert.are.same({ 4, 0, 0 }, q[1].mn)
    assert.are.same({ 4, 4, 4 }, q[1].mx)
    assert.are.equal(0, q[1].normal)
    -- free space's surface is the same face, pointing the other way
    local f = surface_quads(t, "free")
    assert.are.equal(1, #f)
    assert.are.equal(1, f[1].normal)
  end)

  it("packs cells covering exactly the blocked and the free leaves", function()
    local t = Tree.new { tiles = { 2, 1, 1 }, depth = 3, scale = 2, origin = { 1, 1, 1 } }
    t:add_box({ 3, 3, 3 }, { 12, 8, 9 })
    local blocked, dims = leaves(t)
    local nb = 0
    for x = 0, dims[1] - 1 do
      for y = 0, dims[2] - 1 do
        for z = 0, dims[3] - 1 do if blocked(x, y, z) then nb = nb + 1 end end
      end
    end
    for _, what in ipairs { "blocked", "free" } do
      local bytes, n = core.debug.cells(t, what)
      assert.are.equal(16 * n, #bytes)
      local vol = 0
      for i = 0, n - 1 do
        local _, _, _, s = compat.unpack_bytes("<ffff", bytes, 16 * i + 1)
        vol = vol + (s / 2) ^ 3
      end
      assert.are.equal(what == "blocked" and nb or dims[1] * dims[2] * dims[3] - nb, vol)
    end
    assert.has_error(function() core.debug.cells(t, "walls") end)
    assert.has_error(function() core.debug.surface({}) end)
  end)

  it("export_obj: the surface by default, boxes on request; errors with the path", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 3 }
    t:add_box({ 2, 2, 2 }, { 4, 4, 4 })
    t:add_box({ 4, 2, 2 }, { 6, 4, 4 }) -- two cells, one 4x2x2 box: six merged faces
    local path = tmppath(".obj")
    assert.are.same({ 6, 8 }, { t:export_obj(path) })
    assert.are.same({ 6, 8 }, { t:export_obj(path, { form = "surface", what = "free" }) })
    assert.is_true(files.read(path):find("# octonav free surface", 1, true) == 1)
    assert.are.equal(2, t:export_obj(path, { form = "boxes" }))
    local n, err = t:export_obj("/nonexistent-dir-octonav/x.obj")
    assert.is_nil(n)
    assert.is_truthy(err:find("/nonexistent-dir-octonav/x.obj", 1, true), err)
    assert.has_error(function() t:export_obj(path, { form = "mesh" }) end, "tree:export_obj: option 'form' must be \"surface\" or \"boxes\"")
  end)
end)

-- a drawer that records every call
local function recorder(with_quad)
  local r = { calls = {} }
  function r.box(self, mn, mx, kind) self.calls[#self.calls + 1] = { "box", mn, mx, kind } end
  function r.line(self, a, b, kind) self.calls[#self.calls + 1] = { "line", a, b, kind } end
  function r.point(self, p, kind) self.calls[#self.calls + 1] = { "point", p, kind } end
  if with_quad then
    function r.quad(self, a, b, c, d, n, kind) self.calls[#self.calls + 1] = { "quad", a, b, c, d, n, kind } end
  end
  return r
end

describe("octonav.debug.draw", function()
  it("draws a path as legs and markers, and its corridor of free cells", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 4 }
    t:add_box({ 6, 0, 0 }, { 10, 16, 10 })
    local q = octonav.query.new(t)
    local path = assert(q:find({ 2, 8, 2 }, { 14, 8, 2 }))
    local pts = {}
    for i = 1, #path do pts[i] = path[i] end
    local r = ddraw.draw(pts, recorder(), { corridor = true, tree = t })
    local lines, points, boxes = 0, {}, 0
    for _, c in ipairs(r.calls) do
      if c[1] == "line" then lines = lines + 1; assert.are.equal("path", c[4]) end
      if c[1] == "point" then points[#points + 1] = c[3] end
      if c[1] == "box" then boxes = boxes + 1; assert.are.equal("corridor", c[4]) end
    end
    assert.are.equal(#pts - 1, lines)
    assert.are.equal("start", points[1])
    assert.are.equal("goal", points[#points])
    assert.are.equal(#pts, #points)
    -- the corridor: free cells, each containing a point of the path, none blocked
    local cells = ddraw.corridor(t, pts)
    assert.are.equal(boxes, #cells)
    assert.is_true(#cells >= 2)
    for _, c in ipairs(cells) do
      local st = t:locate { c.min[1] + c.size / 2, c.min[2] + c.size / 2, c.min[3] + c.size / 2 }
      assert.are.equal("free", st)
    end
  end)

  it("draws a tree as quads when the drawer takes them, as boxes otherwise, and free cells on request", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 3 }
    t:add_box({ 2, 2, 2 }, { 4, 4, 4 }) -- one cell of the octree
    local q = ddraw.draw(t, recorder(true))
    assert.are.equal(6, #q.calls)
    for _, c in ipairs(q.calls) do assert.are.equal("quad", c[1]); assert.are.equal("surface", c[7]) end
    local b = ddraw.draw(t, recorder())
    assert.are.equal(1, #b.calls)
    assert.are.same({ "box", { 2, 2, 2 }, { 4, 4, 4 }, "blocked" }, b.calls[1])
    local f = ddraw.draw(t, recorder(true), { cells = "free" })
    local vol = 0
    for _, c in ipairs(f.calls) do
      assert.are.equal("free", c[4])
      vol = vol + (c[3][1] - c[2][1]) ^ 3
    end
    assert.are.equal(8 ^ 3 - 8, vol)
  end)

  it("draws a route's steps and a world's holes, doors and portals", function()
    local route = { { kind = "tile", tile = 0, enter = { 0, 0, 0 }, exit = { 1, 0, 0 } },
      { kind = "hole", hole = 1, enter = { 1, 0, 0 }, exit = { 2, 0, 0 } } }
    local r = ddraw.draw(route, recorder())
    local kinds = {}
    for _, c in ipairs(r.calls) do kinds[#kinds + 1] = c[1] .. ":" .. (c[4] or c[3]) end
    -- step 2 enters where step 1 left: no second marker there, no zero-length leg
    assert.are.same({ "point:start", "line:route", "point:portal", "line:route", "point:goal" }, kinds)
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 2 }
    local world = { tree = t, holes = { { min = { 0, 0, 0 }, max = { 1, 1, 1 },
      doors = { { inside = { 0.5, 0.5, 0.5 }, outside = { 2, 0.5, 0.5 }, open = false } } } } }
    local w = ddraw.draw(world, recorder(), { portals = "all" })
    local got = {}
    for _, c in ipairs(w.calls) do got[#got + 1] = c[1] .. ":" .. (c[4] or c[3]) end
    table.sort(got)
    assert.are.same({ "box:hole", "line:door_closed" }, got)
  end)

  it("draws a baked world's portals from its tile graphs (the world's border only with 'all')", function()
    local bw = dofile("spec/support/bakedworld.lua")
    if not (bw.has_bake and bw.has_world) then
      pending("octonav.bake / octonav.world are not there")
      return
    end
    local dir = os.tmpname()
    os.remove(dir)
    local world = bw.bake_and_load(dir)
    local function portals(opt)
      local pts = {}
      for _, c in ipairs(ddraw.draw(world, recorder(), { portals = opt, cells = "none", surface = false,
        holes = false }).calls) do
        assert.are.equal("point", c[1])
        assert.are.equal("portal", c[3])
        pts[#pts + 1] = c[2]
      end
      return pts
    end
    -- two tiles of 16 along x joined through the wall's window: each tile's portal on the shared
    -- face x = 16, and nothing else inside the world
    local inner = portals(true)
    assert.is_true(#inner >= 2)
    for _, p in ipairs(inner) do assert.are.equal(16, p[1]) end
    -- with 'all', the portals on the world's border too (the outer faces of the two tiles)
    local every = portals("all")
    assert.is_true(#every > #inner)
    local border = 0
    for _, p in ipairs(every) do
      if p[1] ~= 16 then border = border + 1 end
    end
    assert.are.equal(#every - #inner, border)
    assert.is_true(#portals(false) == 0)
    -- each graph file is read once while the world holds that graph: drawing again reads none
    local pack, tilegrid = require "octonav.pack", require "octonav.tilegrid"
    local moved = {}
    for t in world:graph_tiles() do -- (pairs(world.graph_ids) on 5.2+ only)
      local f = pack.graph_path(world.dir, tilegrid.coords(world.grid, t))
      assert(os.rename(f, f .. ".away"))
      moved[#moved + 1] = f
    end
    assert.is_true(#moved >= 2)
    assert.are.same(inner, portals(true))
    assert.are.same(every, portals("all"))
    for _, f in ipairs(moved) do assert(os.rename(f .. ".away", f)) end
    world:close()
    os.execute("rm -rf '" .. dir .. "'")
  end)

  it("rejects what it cannot draw and unknown options", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 2 }
    assert.has_error(function() ddraw.draw(t, {}) end, "octonav.debug.draw: drawer: has no method 'box'")
    assert.has_error(function() ddraw.draw(42, recorder()) end,
      "octonav.debug.draw: obj: tree, path, route, world, crowd or query expected, got number")
    assert.has_error(function() ddraw.draw(t, recorder(), { colour = 1 }) end, "octonav.debug.draw: unknown option 'colour'")
    assert.has_error(function() ddraw.draw(t, recorder(), { cells = "some" }) end)
    assert.has_error(function() ddraw.draw({ { 0, 0, 0 } }, recorder(), { corridor = true }) end,
      "octonav.debug.draw: option 'query' (the path's query) or 'tree' (an open octonav.tree) is needed for the corridor")
  end)
end)

-- What a search used (csrc/search/search_corridor.c): q:corridor() and q:visited([max]), on a tile of 8^3
-- leaves whose corner column x < 4, z < 4 is blocked: the free space is six cubes of 4 (the tree's
-- cells), or two boxes once prepared. From (1, 1, 6) to (6, 1, 1) the blocked column hides the goal,
-- and the way round goes through the cube at (4, 0, 4).
describe("what a search used: q:corridor(), q:visited()", function()
  local A, B = { 1, 1, 6 }, { 6, 1, 1 }
  local function scene()
    local t = Tree.new { depth = 3, tiles = { 1, 1, 1 }, scale = 1 }
    t:add_box({ 0, 0, 0 }, { 4, 8, 4 })
    return t, octonav.query.new(t)
  end
  local function box(x, y, z, X, Y, Z) return { min = { x, y, z }, max = { X, Y, Z } } end
  local function vbox(e, x, y, z, X, Y, Z) return { min = { x, y, z }, max = { X, Y, Z }, expanded = e } end
  local function expanded(list)
    local n = 0
    for _, c in ipairs(list) do if c.expanded then n = n + 1 end end
    return n
  end

  it("over the cells: the corridor's cubes in order, every node reached in order with the expanded ones", function()
    local t, q = scene()
    local path, info = assert(q:find(A, B, { graph = "cells" }))
    assert.are.equal("cells", info.graph)
    local corr = q:corridor()
    assert.are.same({ box(0, 0, 4, 4, 4, 8), box(4, 0, 4, 8, 4, 8), box(4, 0, 0, 8, 4, 4) }, corr)
    assert.are.equal(info.cells, #corr)
    -- the path runs through its corridor: each point in one of its boxes
    for _, p in ipairs(path) do
      local inside = false
      for _, c in ipairs(corr) do
        inside = inside or (p[1] >= c.min[1] and p[1] <= c.max[1] and p[2] >= c.min[2] and p[2] <= c.max[2]
          and p[3] >= c.min[3] and p[3] <= c.max[3])
      end
      assert.is_true(inside)
    end
    local v, total = q:visited()
    -- the start's cube, its two free neighbours (x+ first), the one above (4, 0, 4), the goal's (reached,
    -- not expanded: a weighted search ends when it first reaches the goal's node)
    assert.are.same({ vbox(true, 0, 0, 4, 4, 4, 8), vbox(true, 4, 0, 4, 8, 4, 8), vbox(false, 0, 4, 4, 4, 8, 8),
      vbox(false, 4, 4, 4, 8, 8, 8), vbox(false, 4, 0, 0, 8, 4, 4) }, v)
    assert.are.equal(info.visited, total)
    assert.are.equal(info.visited, #v)
    assert.are.equal(info.expansions, expanded(v))
    -- at most max, the first reached; the total beside
    local two, all = q:visited(2)
    assert.are.same({ v[1], v[2] }, two)
    assert.are.equal(5, all)
    assert.are.same({}, (q:visited(0)))
    q:close()
    t:close()
  end)

  it("over the prepared boxes, a direct result, a one-box result", function()
    local t, q = scene()
    t:prepare()
    local _, info = assert(q:find(A, B))
    assert.are.equal("boxes", info.graph)
    assert.are.same({ box(0, 0, 4, 4, 8, 8), box(4, 0, 0, 8, 8, 8) }, q:corridor())
    local v, total = q:visited()
    -- (over boxes the goal's box is expanded, not just reached: a box's point depends on the way in)
    assert.are.same({ vbox(true, 0, 0, 4, 4, 8, 8), vbox(true, 4, 0, 0, 8, 8, 8) }, v)
    assert.are.equal(info.expansions, expanded(v))
    assert.are.equal(info.visited, total)
    -- the goal in sight (no search): the start's box, the cells the straight segment crosses, the
    -- goal's box; nothing visited
    _, info = assert(q:find(A, { 6, 1, 5 }))
    assert.are.equal(0, info.expansions)
    assert.are.same({ box(0, 0, 4, 4, 8, 8), box(0, 0, 4, 4, 4, 8), box(4, 0, 4, 8, 4, 8), box(4, 0, 0, 8, 8, 8) },
      q:corridor())
    assert.are.equal(4, info.cells)
    assert.are.same({ {}, 0 }, { q:visited() })
    -- both ends in one box: that box
    _, info = assert(q:find({ 5, 1, 1 }, { 6, 6, 6 }))
    assert.are.same({ box(4, 0, 0, 8, 8, 8) }, q:corridor())
    assert.are.equal(1, info.cells)
    q:close()
    t:close()
  end)

  it("a sliced search's nodes so far; no result, a changed tree and bad arguments", function()
    local t, q = scene()
    assert.are.equal("running", q:start(A, B, { graph = "cells", direct = false }))
    assert.are.same({ nil, "no_result" }, { q:corridor() })
    assert.are.equal("running", q:step(1))
    assert.are.same({ { vbox(true, 0, 0, 4, 4, 4, 8), vbox(false, 4, 0, 4, 8, 4, 8), vbox(false, 0, 4, 4, 4, 8, 8) }, 3 },
      { q:visited() })
    while q:step(10) == "running" do end
    assert(q:result())
    assert.are.equal(3, #q:corridor())
    -- a failed search has no result
    local p, info = q:find({ 1, 1, 1 }, B)
    assert.is_nil(p)
    assert.are.equal("start_blocked", info.reason)
    assert.are.same({ nil, "no_result" }, { q:corridor() })
    assert.are.same({ {}, 0 }, { q:visited() })
    -- over prepared boxes, a tile changed since the search: its boxes are gone
    t:prepare()
    assert(q:find(A, B))
    local id = t:add_obstacle { min = { 6, 6, 6 }, max = { 7, 7, 7 } }
    assert.are.same({ nil, "tree_changed" }, { q:corridor() })
    assert.are.same({ nil, "tree_changed" }, { q:visited() })
    t:remove_obstacle(id)
    -- over the cells the cubes are known whatever changed (a cell is its own box)
    assert(q:find(A, B, { graph = "cells" }))
    assert(t:add_obstacle { min = { 6, 6, 6 }, max = { 7, 7, 7 } })
    assert.are.equal(3, #q:corridor())
    assert.has_error(function() q:visited(-1) end, "query:visited: argument #1: max must be >= 0")
    assert.has_error(function() q:visited("x") end, "query:visited: argument #1: number expected, got string")
    q:close()
    assert.has_error(function() q:corridor() end)
    t:close()
  end)

  it("debug.draw shows them: the path's corridor and visited nodes from its query, or the query alone", function()
    local t, q = scene()
    local path = assert(q:find(A, B, { graph = "cells" }))
    local function kinds(r)
      local n = {}
      for _, c in ipairs(r.calls) do
        local k = c[1] .. ":" .. (c[4] or c[3])
        n[k] = (n[k] or 0) + 1
      end
      return n
    end
    local r = ddraw.draw(path, recorder(), { query = q, corridor = true, visited = "all" })
    assert.are.same({ ["line:path"] = #path - 1, ["point:start"] = 1, ["point:goal"] = 1,
      ["point:waypoint"] = #path - 2, ["box:corridor"] = 3, ["box:visited"] = 2, ["box:frontier"] = 3 }, kinds(r))
    -- the corridor's boxes as q:corridor() gives them, in order
    local corr, k = q:corridor(), 0
    for _, c in ipairs(r.calls) do
      if c[4] == "corridor" then
        k = k + 1
        assert.are.same({ corr[k].min, corr[k].max }, { c[2], c[3] })
      end
    end
    assert.are.same({ ["box:corridor"] = 3 }, kinds(ddraw.draw(q, recorder())))
    assert.are.same({ ["box:visited"] = 2 }, kinds(ddraw.draw(q, recorder(), { corridor = false, visited = true })))
    assert.are.same({ ["box:corridor"] = 3, ["box:visited"] = 2 },
      kinds(ddraw.draw(q, recorder(), { visited = true, max_visited = 2 })))
    assert.has_error(function() ddraw.draw(path, recorder(), { visited = true }) end,
      "octonav.debug.draw: option 'visited' needs option 'query' (the path's query)")
    assert.has_error(function() ddraw.draw(path, recorder(), { query = t }) end,
      "octonav.debug.draw: option 'query' must be an octonav.query")
    assert.has_error(function() ddraw.draw(q, recorder(), { visited = 1 }) end,
      "octonav.debug.draw: option 'visited' must be a boolean or \"all\"")
    assert.has_error(function() ddraw.draw(q, recorder(), { max_visited = -1 }) end,
      "octonav.debug.draw: option 'max_visited' must be an integer >= 0")
    q:find({ 1, 1, 1 }, B) -- no result now
    assert.has_error(function() ddraw.draw(q, recorder()) end, "octonav.debug.draw: the query's corridor: no_result")
    q:close()
    t:close()
  end)
end)

describe("octonav.view", function()
  after_each(cleanup)

  it("base64 matches the standard alphabet and padding", function()
    assert.are.equal("", view._base64(""))
    assert.are.equal("Zg==", view._base64("f"))
    assert.are.equal("Zm8=", view._base64("fo"))
    assert.are.equal("Zm9v", view._base64("foo"))
    assert.are.equal("Zm9vYmFy", view._base64("foobar"))
    assert.are.equal("AP8Q", view._base64("\0\255\16"))
  end)

  it("builds a page with everything drawn, and says what it holds", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 3 }
    t:add_box({ 1, 1, 1 }, { 3, 3, 3 })
    local page = view.new { title = "a <test>" }
    page:add(t)
    page:add({ { 0.5, 0.5, 0.5 }, { 7, 7, 7 } })
    assert.are.equal("octonav.view: 6 quads, 0 boxes, 1 lines, 2 points", tostring(page))
    local html = page:html()
    assert.is_truthy(html:find("<title>a &lt;test&gt;</title>", 1, true))
    assert.is_truthy(html:find('"nquads":6,', 1, true))
    assert.is_nil(html:find("@DATA@", 1, true))
    local path = tmppath(".html")
    assert.is_true(page:write(path))
    assert.are.equal(html, files.read(path))
    local ok, err = page:write("/nonexistent-dir-octonav/v.html")
    assert.is_nil(ok)
    assert.is_string(err)
    assert.has_error(function() view.new { size = 3 } end, "view.new: unknown option 'size'")
    assert.has_error(function() page:box({ 0, 0, 0 }, { 1, 1, 1 }, "lava") end, "view: unknown kind 'lava'")
  end)

  -- Chromium renders the page headless (SwiftShader) and the page reports its own pixels (#test).
  local chromium
  for _, name in ipairs { "chromium", "chromium-browser" } do
    local h = io.popen("command -v " .. name .. " 2>/dev/null")
    local p = h:read("*l")
    h:close()
    if p and p ~= "" then chromium = p; break end
  end

  local function render(html_path, args)
    -- env -u LD_PRELOAD: under `make check` the specs run with the sanitizer runtime preloaded
    local cmd = ("env -u LD_PRELOAD timeout 120 %s --headless --no-sandbox --use-angle=swiftshader --enable-unsafe-swiftshader " ..
      "--window-size=800,600 %s 'file://%s#test' 2>/dev/null"):format(chromium, args, html_path)
    local h = io.popen(cmd)
    local out = h:read("*a")
    h:close()
    return out
  end

  it("shows the geometry, the path and its search corridor in a headless Chromium (pixels where they must be)",
    function()
    if not chromium then
      pending("chromium is not installed (apt-get install chromium): the viewer is not rendered")
      return
    end
    local t = Tree.new { tiles = { 2, 1, 2 }, depth = 4 }
    t:add_box({ 10, 0, 10 }, { 22, 12, 22 })
    t:add_box({ 0, 0, 0 }, { 32, 2, 32 })
    local q = octonav.query.new(t)
    local path = assert(q:find({ 4, 6, 4 }, { 28, 6, 28 }))
    local pts = {}
    for i = 1, #path do pts[i] = path[i] end
    local page = view.new()
    page:add(t)
    page:add(pts, { query = q, corridor = true })
    local a, b = pts[1], pts[2]
    -- the middle of the goal cell's top edge on the side facing the camera (+x, +y, +z)
    local corr = q:corridor()
    local last = corr[#corr]
    local file = tmppath(".html")
    assert(page:write(file, { probes = {
      { "path", { (a[1] + b[1]) / 2, (a[2] + b[2]) / 2, (a[3] + b[3]) / 2 } },
      { "top", { 16, 12, 16 } },       -- the top face of the block, facing the camera
      { "floor", { 30, 2, 2 } },       -- the floor, far from the block
      { "corridor", { (last.min[1] + last.max[1]) / 2, last.max[2], last.max[3] } },
    } }))
    local out = render(file, "--dump-dom")
    local json = out:match('<pre id="result">(.-)</pre>')
    assert.is_string(json, "the page wrote no result")
    assert.is_nil(json:find("error", 1, true), json)
    local function pixels(name)
      local px = json:match('"' .. name .. '":{"x":%-?%d+,"y":%-?%d+,"px":%[([%d,]+)%]')
      assert.is_string(px, "no probe " .. name .. " in " .. json)
      local v = {}
      for n in px:gmatch("%d+") do v[#v + 1] = tonumber(n) end
      assert.are.equal(100, #v)
      return v
    end
    local function count(v, pred)
      local n = 0
      for i = 1, 100, 4 do if pred(v[i], v[i + 1], v[i + 2]) then n = n + 1 end end
      return n
    end
    local function near(c, r, g, bl, tol)
      return math.abs(r - c[1] * 255) <= tol and math.abs(g - c[2] * 255) <= tol and math.abs(bl - c[3] * 255) <= tol
    end
    local bg, pc, sc, cc = view.colors.background, view.colors.path, view.colors.surface, view.colors.corridor
    -- the path's colour at its leg's middle
    assert.is_true(count(pixels("path"), function(r, g, bl) return near(pc, r, g, bl, 3) end) >= 3)
    -- the search corridor's colour on its goal cell's edge (the boxes are outlines: a line of pixels),
    -- nowhere on the block's top or the floor
    assert.is_true(count(pixels("corridor"), function(r, g, bl) return near(cc, r, g, bl, 3) end) >= 3)
    for _, name in ipairs { "top", "floor" } do
      assert.are.equal(0, count(pixels(name), function(r, g, bl) return near(cc, r, g, bl, 40) end), name)
    end
    -- lit grey geometry (not the background, not a path colour) on the block's top and the floor
    for _, name in ipairs { "top", "floor" } do
      assert.are.equal(25, count(pixels(name), function(r, g, bl)
        return not near(bg, r, g, bl, 8) and math.abs(r - g) < 12 and math.abs(g - bl) < 16 and r <= sc[1] * 255 + 2
          and r >= sc[1] * 255 * 0.5
      end), name)
    end
    -- a corner of the canvas is background
    local corner = json:match('"corner":%[(%d+),(%d+),(%d+)')
    assert.is_truthy(corner)
    local cr, cg, cb = json:match('"corner":%[(%d+),(%d+),(%d+)')
    assert.is_true(near(bg, tonumber(cr), tonumber(cg), tonumber(cb), 3))
  end)
end)

describe("octonav.image", function()
  local image = require "octonav.image"
  after_each(cleanup)

  -- read back our own PNG: chunks with their CRCs, stored deflate blocks, Adler-32, RGB rows
  local function decode(png)
    assert.are.equal("\137PNG\r\n\26\n", png:sub(1, 8))
    local pos, idat, w, h = 9, {}, nil, nil
    while pos <= #png do
      local len, kind = compat.unpack_bytes(">I4c4", png, pos)
      local data = png:sub(pos + 8, pos + 7 + len)
      local crc = compat.unpack_bytes(">I4", png, pos + 8 + len)
      assert.are.equal(core.crc32(kind .. data), crc)
      if kind == "IHDR" then
        local bits, ctype
        w, h, bits, ctype = compat.unpack_bytes(">I4I4BB", data)
        assert.are.same({ 8, 2 }, { bits, ctype })
      elseif kind == "IDAT" then idat[#idat + 1] = data end
      pos = pos + 12 + len
    end
    local z = table.concat(idat)
    local raw, p = {}, 3
    repeat
      local final, len, nlen = compat.unpack_bytes("<BI2I2", z, p)
      assert.are.equal(65535 - len, nlen)
      raw[#raw + 1] = z:sub(p + 5, p + 4 + len)
      p = p + 5 + len
    until final == 1
    raw = table.concat(raw)
    assert.are.equal(image._adler32(raw), compat.unpack_bytes(">I4", z, p))
    assert.are.equal(h * (1 + 3 * w), #raw)
    return w, h, function(x, y)
      local o = y * (1 + 3 * w) + 2 + 3 * x
      return { raw:byte(o, o + 2) }
    end
  end

  it("a slice shows blocked and free leaves where locate says, and the path over them", function()
    local t = Tree.new { tiles = { 2, 1, 1 }, depth = 3, scale = 0.5, origin = { 1, 2, 3 } }
    t:add_box({ 3, 2, 3 }, { 5, 6, 4 })   -- leaves x 4..7, z 0..1, all y
    local img = image.slice(t, { axis = "y", at = 3 })
    assert.are.equal("octonav.image: 16x8", tostring(img))
    local path = tmppath(".png")
    assert.is_true(img:write_png(path))
    local w, h, px = decode(files.read(path))
    assert.are.same({ 16, 8 }, { w, h })
    local c = image.colors
    for x = 0, w - 1 do
      for y = 0, h - 1 do   -- the picture's y runs along +z
        local want = t:locate { 1 + (x + 0.5) * 0.5, 3, 3 + (y + 0.5) * 0.5 } == "blocked" and c.blocked or c.free
        assert.are.same(want, px(x, y))
      end
    end
    assert.are.same(c.blocked, px(4, 0))
    assert.are.same(c.free, px(0, 2))
    img:path({ { 1.25, 3, 6.75 }, { 8.75, 3, 6.75 } })   -- along the last row, x from pixel 0 to 15
    assert.is_true(img:write_png(path))
    px = select(3, decode(files.read(path)))
    assert.are.same(c.path, px(8, 7))
    assert.are.same(c.start, px(0, 7))
    assert.are.same(c.goal, px(15, 7))
  end)

  it("a top view shades by the height of the first hit; open columns stay background", function()
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 3 }
    t:add_box({ 0, 0, 0 }, { 4, 2, 8 })
    t:add_box({ 4, 0, 0 }, { 8, 6, 4 })
    local img = image.top(t)
    local low, high, open = img:get(1, 1), img:get(6, 1), img:get(6, 6)
    assert.are.same(image.colors.background, open)
    assert.is_true(high[1] > low[1])
    assert.is_true(img:png():sub(1, 8) == "\137PNG\r\n\26\n")
    assert.has_error(function() image.slice(t, { axis = "w" }) end, "slice: option 'axis' must be \"x\", \"y\" or \"z\"")
    assert.has_error(function() image.top(t, { zoom = 2 }) end, "top: unknown option 'zoom'")
    local ok, err = img:write_png("/nonexistent-dir-octonav/t.png")
    assert.is_nil(ok)
    assert.is_string(err)
  end)

  it("python's zlib (an independent inflater) reads the same pixels, where python3 is installed", function()
    local h = io.popen("command -v python3 2>/dev/null")
    local py = h:read("*l")
    h:close()
    if not py or py == "" then pending("python3 is absent") return end
    local img = image.new(3, 2, { 1, 2, 3 })
    img:set(2, 1, { 250, 128, 7 })
    local path = tmppath(".png")
    assert.is_true(img:write_png(path))
    local p = io.popen("env -u LD_PRELOAD " .. py .. [[ -c "import zlib,sys
d=open(sys.argv[1],'rb').read(); i=8; z=b''
while i < len(d):
  n=int.from_bytes(d[i:i+4],'big'); k=d[i+4:i+8]
  if k==b'IDAT': z+=d[i+8:i+8+n]
  i+=12+n
print(list(zlib.decompress(z)))" ]] .. path)
    local out = p:read("*a")
    p:close()
    assert.are.equal("[0, 1, 2, 3, 1, 2, 3, 1, 2, 3, 0, 1, 2, 3, 1, 2, 3, 250, 128, 7]", out:match("%[.-%]"))
  end)
end)

describe("octonav view (the command)", function()
  local cv = require "octonav.cli_view"
  after_each(cleanup)

  local function run(args)
    local o, e = {}, {}
    local code = cv.run(args, { out = function(s) o[#o + 1] = s end, err = function(s) e[#e + 1] = s end })
    return code, table.concat(o, "\n"), table.concat(e, "\n")
  end

  it("writes a page and a PNG for a tree file with a path over two legs", function()
    local t = Tree.new { tiles = { 2, 1, 1 }, depth = 3 }
    t:add_box({ 6, 0, 0 }, { 10, 6, 8 })
    local tree_file, html, png = tmppath(".octn"), tmppath(".html"), tmppath(".png")
    assert(t:save(tree_file))
    local code, out, err = run { tree_file, "--path", "2", "4", "4", "2", "7", "4", "14", "4", "4", "-o", html,
      "--png", png, "--slice", "y=4" }
    assert.are.equal(0, code, err)
    assert.is_truthy(out:find(png .. ": 16x8", 1, true), out)
    assert.is_truthy(out:find(html .. ": octonav.view: ", 1, true), out)
    assert.is_truthy(files.read(html):find('"nlines":', 1, true))
    assert.are.equal("\137PNG", files.read(png):sub(1, 4))
    assert.is_truthy(files.read(html):find('"nboxes":0,', 1, true))
    -- --corridor and --visited: each leg's corridor and expanded cells, as the legs' queries give them
    local q, want = octonav.query.new(t), 0
    for _, leg in ipairs { { { 2, 4, 4 }, { 2, 7, 4 } }, { { 2, 7, 4 }, { 14, 4, 4 } } } do
      local _, info = assert(q:find(leg[1], leg[2]))
      want = want + #q:corridor() + info.expansions
    end
    q:close()
    code, out, err = run { tree_file, "--path", "2", "4", "4", "2", "7", "4", "14", "4", "4", "-o", html,
      "--corridor", "--visited" }
    assert.are.equal(0, code, err)
    assert.is_true(want > 2)
    assert.is_truthy(files.read(html):find('"nboxes":' .. want .. ',', 1, true), out)
  end)

  it("says what is wrong: usage, a missing file, an unreachable leg", function()
    local code, _, err = run {}
    assert.are.equal(2, code)
    assert.is_truthy(err:find("an input (pack directory, tree file or .3dmap) expected", 1, true), err)
    code, _, err = run { "x.octn", "--path", "1", "2" }
    assert.are.equal(2, code)
    assert.is_truthy(err:find("--path: at least two points of x y z expected", 1, true), err)
    code, _, err = run { "x.octn", "--slice", "y=3" }
    assert.are.equal(2, code)
    assert.is_truthy(err:find("--slice goes with --png", 1, true), err)
    code, _, err = run { "/nonexistent-octonav/x.octn" }
    assert.are.equal(1, code)
    assert.is_truthy(err:find("/nonexistent-octonav/x.octn", 1, true), err)
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 3 }
    t:add_box({ 3, 0, 0 }, { 5, 8, 8 })
    local tree_file = tmppath(".octn")
    assert(t:save(tree_file))
    code, _, err = run { tree_file, "--path", "1", "4", "4", "7", "4", "4", "-o", tmppath(".html") }
    assert.are.equal(1, code)
    assert.is_truthy(err:find("no path from (1, 4, 4) to (7, 4, 4): unreachable", 1, true), err)
  end)
end)
