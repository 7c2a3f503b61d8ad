-- Moving AI files (.3dmap, .3dscen, 2D .map) and the dense grid baseline (find, visible).
-- Format: ../shared/data/voxel/SOURCES.md. Movement: 26-connected (8 in 2D), costs 1, sqrt2, sqrt3,
-- no corner cutting (a diagonal move needs every cell of the box it spans free).
local compat = require "octonav.compat" -- Lua 5.1 .. 5.4 (issue 34)
local LUA = os.getenv("OCTONAV_LUA") or "lua5.4" -- the Lua under test (tools/runtests.sh)
local octonav = require "octonav"
local movingai = octonav.movingai
local Grid = octonav.grid

local SQRT2, SQRT3 = math.sqrt(2), math.sqrt(3)

-- ---- helpers ------------------------------------------------------------------------------------

local files = dofile("spec/support/files.lua")
local heap = dofile("spec/support/heap.lua") -- the binary min-heap of the reference Dijkstra

-- tmppath(suffix): os.tmpname() .. suffix; cleanup() removes both (spec/support/files.lua)
local tmp = files.tracker()
local tmppath, cleanup = tmp.file, tmp.cleanup
local writefile = files.write
local function file(suffix, text)
  local p = tmppath(suffix)
  writefile(p, text)
  return p
end

local function map3d(W, H, D, voxels)
  local lines = { ("voxel %d %d %d"):format(W, H, D) }
  for _, v in ipairs(voxels) do lines[#lines + 1] = ("%d %d %d"):format(v[1], v[2], v[3]) end
  return file(".3dmap", table.concat(lines, "\n") .. "\n")
end

local function map2d(rows)
  local text = ("type octile\nheight %d\nwidth %d\nmap\n%s\n"):format(#rows, #rows[1], table.concat(rows, "\n"))
  return file(".map", text)
end

local function near(a, b, eps) return math.abs(a - b) <= (eps or 1e-9) end

-- Reference shortest path (Dijkstra) by the movement rule, over a function blocked(x, y, z).
local function ref_length(W, H, D, blocked, s, g)
  local function free(x, y, z)
    return x >= 0 and y >= 0 and z >= 0 and x < W and y < H and z < D and not blocked(x, y, z)
  end
  if not free(s[1], s[2], s[3]) or not free(g[1], g[2], g[3]) then return nil end
  local function id(x, y, z) return x + W * (y + H * z) end
  local dist, done = { [id(s[1], s[2], s[3])] = 0 }, {}
  local queue = { { 0, s[1], s[2], s[3] } } -- a binary min-heap of { d, x, y, z } (spec/support/heap.lua)
  local dzs = D > 1 and { -1, 0, 1 } or { 0 }
  while #queue > 0 do
    local e = heap.pop(queue)
    local d, x, y, z = e[1], e[2], e[3], e[4]
    local k = id(x, y, z)
    if not done[k] then
      done[k] = true
      if x == g[1] and y == g[2] and z == g[3] then return d end
      for _, dz in ipairs(dzs) do
        for dy = -1, 1 do
          for dx = -1, 1 do
            local n = (dx ~= 0 and 1 or 0) + (dy ~= 0 and 1 or 0) + (dz ~= 0 and 1 or 0)
            if n > 0 then
              local ok = true
              for az = 0, (dz ~= 0) and 1 or 0 do
                for ay = 0, (dy ~= 0) and 1 or 0 do
                  for ax = 0, (dx ~= 0) and 1 or 0 do
                    if not free(x + ax * dx, y + ay * dy, z + az * dz) then ok = false end
                  end
                end
              end
              if ok then
                local nk = id(x + dx, y + dy, z + dz)
                local nd = d + (n == 1 and 1 or n == 2 and SQRT2 or SQRT3)
                if not done[nk] and (dist[nk] == nil or nd < dist[nk]) then
                  dist[nk] = nd
                  heap.push(queue, { nd, x + dx, y + dy, z + dz })
                end
              end
            end
          end
        end
      end
    end
  end
  return nil
end

-- A returned path is a chain of legal moves from start to goal whose costs add up to the length.
local function check_path(grid, path, s, g, length)
  assert.are.same(s, path[1])
  assert.are.same(g, path[#path])
  local sum = 0
  for i = 2, #path do
    local a, b = path[i - 1], path[i]
    local n = 0
    for j = 1, 3 do
      local d = b[j] - a[j]
      assert.is_true(d >= -1 and d <= 1, "step too long")
      if d ~= 0 then n = n + 1 end
    end
    assert.is_true(n > 0, "a step that does not move")
    for az = 0, b[3] ~= a[3] and 1 or 0 do
      for ay = 0, b[2] ~= a[2] and 1 or 0 do
        for ax = 0, b[1] ~= a[1] and 1 or 0 do
          local c = { a[1] + ax * (b[1] - a[1]), a[2] + ay * (b[2] - a[2]), a[3] + az * (b[3] - a[3]) }
          assert.is_false(grid:blocked(c[1], c[2], c[3]), "a move cuts a blocked cell")
        end
      end
    end
    sum = sum + (n == 1 and 1 or n == 2 and SQRT2 or SQRT3)
  end
  assert.is_true(near(sum, length, 1e-9), ("path costs %.12g, length says %.12g"):format(sum, length))
end

-- ---- .3dmap -------------------------------------------------------------------------------------

describe("movingai.load_map", function()
  after_each(cleanup)

  local voxels = { { 0, 0, 0 }, { 4, 3, 2 }, { 2, 1, 1 }, { 2, 2, 1 }, { 3, 1, 1 } }
  local function listed(x, y, z)
    for _, v in ipairs(voxels) do
      if v[1] == x and v[2] == y and v[3] == z then return true end
    end
    return false
  end

  for _, depth in ipairs { 1, 2, 3 } do
    it(("bakes voxels, free space and the margin beyond W x H x D (depth %d)"):format(depth), function()
      local W, H, D = 5, 4, 3
      local t, info = movingai.load_map(map3d(W, H, D, voxels), { depth = depth })
      assert.is_not_nil(t, info)
      assert.are.same({ W, H, D }, info.dims)
      assert.are.equal(#voxels, info.voxels)
      local p = t:params()
      local N = 2 ^ depth
      assert.are.same({ math.ceil(W / N), math.ceil(H / N), math.ceil(D / N) }, p.tiles)
      assert.are.equal(1, p.scale)
      assert.are.same({ 0, 0, 0 }, p.origin)
      assert.are.equal(0, p.radius)
      for z = 0, p.tiles[3] * N - 1 do
        for y = 0, p.tiles[2] * N - 1 do
          for x = 0, p.tiles[1] * N - 1 do
            local want = (x >= W or y >= H or z >= D or listed(x, y, z)) and "blocked" or "free"
            local got = t:locate { x + 0.5, y + 0.5, z + 0.5 }
            assert.are.equal(want, got, ("voxel %d,%d,%d"):format(x, y, z))
            -- the corners of a voxel box belong to the voxel's own leaf when free
            if want == "free" then assert.are.equal("free", (t:locate { x + 0.999, y, z + 0.001 })) end
          end
        end
      end
      -- outside the tile grid
      for _, q in ipairs { { -0.5, 0.5, 0.5 }, { 0.5, -0.01, 0.5 }, { 0.5, 0.5, -3 },
        { p.tiles[1] * N + 0.5, 0.5, 0.5 }, { 0.5, p.tiles[2] * N, 0.5 }, { 0.5, 0.5, p.tiles[3] * N + 100 } } do
        local st, why = t:locate(q)
        assert.is_nil(st)
        assert.are.equal("outside", why)
      end
    end)
  end

  it("uses depth 9 by default", function()
    local t, info = movingai.load_map(map3d(5, 4, 3, voxels))
    assert.is_not_nil(t, info)
    local p = t:params()
    assert.are.equal(9, p.depth)
    assert.are.same({ 1, 1, 1 }, p.tiles)
    assert.are.equal("blocked", (t:locate { 4.5, 3.5, 2.5 }))
    assert.are.equal("free", (t:locate { 1.5, 3.5, 2.5 }))
    assert.are.equal("blocked", (t:locate { 511.5, 0.5, 0.5 }))
    assert.are.equal("outside", select(2, t:locate { 512.5, 0.5, 0.5 }))
  end)

  it("tolerates CRLF, blank lines, tabs and trailing spaces; an empty map is all free", function()
    local path = file(".3dmap", "voxel 4 4 4\r\n\r\n1 2 3\r\n\t0  0 0 \r\n\n3\t3\t3\n")
    local t, info = movingai.load_map(path, { depth = 2 })
    assert.is_not_nil(t, info)
    assert.are.equal(3, info.voxels)
    assert.are.equal("blocked", (t:locate { 1.5, 2.5, 3.5 }))
    assert.are.equal("blocked", (t:locate { 3.5, 3.5, 3.5 }))
    assert.are.equal("free", (t:locate { 1.5, 1.5, 1.5 }))
    local e, einfo = movingai.load_map(file(".3dmap", "voxel 4 4 4\n"), { depth = 2 })
    assert.are.equal(0, einfo.voxels)
    assert.are.equal(0, e:stats().nodes)
  end)

  local malformed = {
    { "", 1, "bad header" },
    { "voxel 5 4\n", 1, "bad header" },
    { "voxels 5 4 3\n", 1, "bad header" },
    { "voxel 5 4 3 2\n", 1, "bad header" },
    { "voxel 0 4 3\n", 1, "width 0 out of range" },
    { "voxel 5 4 70000\n", 1, "depth 70000 out of range" },
    { "voxel 5 4 3\n0 0 0\n5 0 0\n", 3, "x 5 out of range 0..4" },
    { "voxel 5 4 3\n0 0 0\n0 4 0\n", 3, "y 4 out of range 0..3" },
    { "voxel 5 4 3\n0 0 3\n", 2, "z 3 out of range 0..2" },
    { "voxel 5 4 3\n0 -1 0\n", 2, "out of range" },
    { "voxel 5 4 3\n0 0 0\n\n1 2\n", 4, "malformed line" },
    { "voxel 5 4 3\n1 2 1 4\n", 2, "malformed line" },
    { "voxel 5 4 3\n1 x 1\n", 2, "malformed line" },
    { "voxel 5 4 3\n1 1.5 1\n", 2, "malformed line" },
    { "voxel 5 4 3\r\n0 0 0\r\n1 x 1\r\n", 3, "malformed line" },
  }
  for i, case in ipairs(malformed) do
    it(("refuses malformed file %d with its line number (%s)"):format(i, case[3]), function()
      local path = file(".3dmap", case[1])
      local t, err = movingai.load_map(path, { depth = 2 })
      assert.is_nil(t)
      assert.are.equal("string", type(err))
      assert.is_truthy(err:find(path .. ":" .. case[2] .. ": ", 1, true), err)
      assert.is_truthy(err:find(case[3], 1, true), err)
      -- the grid loader reads the same format with the same messages
      local g, gerr = movingai.load_grid(path)
      assert.is_nil(g)
      assert.are.equal(err, gerr)
    end)
  end

  it("reports a missing file with its path", function()
    local path = tmppath("-missing.3dmap")
    local t, err = movingai.load_map(path)
    assert.is_nil(t)
    assert.is_truthy(err:find(path, 1, true), err)
    local g, gerr = movingai.load_grid(path)
    assert.is_nil(g)
    assert.is_truthy(gerr:find(path, 1, true), gerr)
  end)

  it("raises for bad arguments", function()
    local path = map3d(2, 2, 2, {})
    assert.has_error(function() movingai.load_map(42) end)
    assert.has_error(function() movingai.load_map(path, { depth = 0 }) end)
    assert.has_error(function() movingai.load_map(path, { depth = 10 }) end)
    assert.has_error(function() movingai.load_map(path, { depth = 2.5 }) end)
    assert.has_error(function() movingai.load_map(path, { deep = 2 }) end)
    assert.has_error(function() movingai.load_map(path, "depth") end)
  end)
end)

-- ---- .3dscen ------------------------------------------------------------------------------------

describe("movingai.load_scen", function()
  after_each(cleanup)

  it("reads start and goal (voxel centres), their cells, the optimal length and the map name", function()
    local path = file(".3dscen", "version 1\ntiny.3dmap\n0 0 0 2 2 2 3.46410162 1.000\r\n\n 10 20 30 4 5 6 29.5 1.2\n")
    local sc, name = movingai.load_scen(path)
    assert.is_not_nil(sc, name)
    assert.are.equal("tiny.3dmap", name)
    assert.are.equal(2, #sc)
    assert.are.same({ 0.5, 0.5, 0.5 }, sc[1].start)
    assert.are.same({ 2.5, 2.5, 2.5 }, sc[1].goal)
    assert.are.same({ 0, 0, 0 }, sc[1].start_cell)
    assert.are.same({ 2, 2, 2 }, sc[1].goal_cell)
    assert.are.equal(3.46410162, sc[1].optimal)
    assert.are.same({ 10.5, 20.5, 30.5 }, sc[2].start)
    assert.are.same({ 4.5, 5.5, 6.5 }, sc[2].goal)
    assert.are.same({ 10, 20, 30 }, sc[2].start_cell)
    assert.are.same({ 4, 5, 6 }, sc[2].goal_cell)
    assert.are.equal(29.5, sc[2].optimal)
    assert.is_true(compat.isinteger(sc[2].start_cell[1]))
  end)

  it("accepts a file with a header and no problems", function()
    local sc, name = movingai.load_scen(file(".3dscen", "version 1\nx.3dmap\n"))
    assert.are.same({}, sc)
    assert.are.equal("x.3dmap", name)
  end)

  local bad = {
    { "version 2\nx.3dmap\n", 1, "expected 'version 1'" },
    { "\nversion 1\nx.3dmap\n", 1, "expected 'version 1'" },
    { "version 1\nx.3dmap\n1 2 3 4 5 6 7.5 1\n1 2 3 4 5 6\n", 4, "malformed scenario line" },
    { "version 1\nx.3dmap\n1 2 3 4 5 6 abc 1\n", 3, "malformed scenario line" },
    { "version 1\nx.3dmap\n1 2 -3 4 5 6 7 1\n", 3, "malformed scenario line" },
    { "version 1\nx.3dmap\nhello\n", 3, "malformed scenario line" },
  }
  for i, case in ipairs(bad) do
    it(("refuses malformed file %d with its line number"):format(i), function()
      local path = file(".3dscen", case[1])
      local sc, err = movingai.load_scen(path)
      assert.is_nil(sc)
      assert.is_truthy(err:find(path .. ":" .. case[2] .. ": ", 1, true), err)
      assert.is_truthy(err:find(case[3], 1, true), err)
    end)
  end

  it("refuses an empty file and reports a missing one", function()
    local path = file(".3dscen", "")
    local sc, err = movingai.load_scen(path)
    assert.is_nil(sc)
    assert.is_truthy(err:find(path, 1, true), err)
    local missing = tmppath("-missing.3dscen")
    sc, err = movingai.load_scen(missing)
    assert.is_nil(sc)
    assert.is_truthy(err:find(missing, 1, true), err)
  end)
end)

-- ---- 2D maps ------------------------------------------------------------------------------------

describe("movingai.load_grid (2D .map)", function()
  after_each(cleanup)

  it("reads the rows: row r is y = r; '.', 'G', 'S' passable, anything else blocked", function()
    local g = assert(movingai.load_grid(map2d { ".@T", "GSW", "..." }))
    assert.are.same({ 3, 3, 1 }, { g:dims() })
    local want = { { false, true, true }, { false, false, true }, { false, false, false } }
    for y = 0, 2 do
      for x = 0, 2 do assert.are.equal(want[y + 1][x + 1], g:blocked(x, y, 0), ("cell %d,%d"):format(x, y)) end
    end
    assert.is_true(g:blocked(3, 0, 0))
    assert.is_true(g:blocked(0, -1, 0))
    assert.is_true(g:blocked(0, 0, 1))
  end)

  it("accepts the header in any order, CRLF and trailing blank lines", function()
    local g = assert(movingai.load_grid(file(".map", "width 2\r\ntype octile\r\nheight 1\r\nmap\r\n.@\r\n\r\n")))
    assert.are.same({ 2, 1, 1 }, { g:dims() })
    assert.is_true(g:blocked(1, 0))
  end)

  local bad = {
    { "type octile\nheight 2\nwidth 3\nmap\n...\n..\n", 6, "row has 2 characters, expected 3" },
    { "type octile\nheight 2\nwidth 3\nmap\n...\n", 6, "map ends after 1 of 2 rows" },
    { "type octile\nheight 1\nwidth 3\nmap\n...\n...\n", 6, "extra data" },
    { "type hex\nheight 1\nwidth 1\nmap\n.\n", 1, "unsupported map type" },
    { "type octile\nheight x\nwidth 1\nmap\n.\n", 2, "bad height" },
    { "type octile\nheight 1\nwidth 0\nmap\n.\n", 3, "bad width" },
    { "type octile\nheight 1\nmap\n.\n", 3, "header lacks \"width\"" },
    { "type octile\nheight 1\nwidth 1\ncolour blue\nmap\n.\n", 4, "unexpected header line" },
    { "type octile\nheight 1\nwidth 1\n", 4, "unexpected end of file" },
  }
  for i, case in ipairs(bad) do
    it(("refuses malformed file %d with its line number (%s)"):format(i, case[3]), function()
      local path = file(".map", case[1])
      local g, err = movingai.load_grid(path)
      assert.is_nil(g)
      assert.is_truthy(err:find(path .. ":" .. case[2] .. ": ", 1, true), err)
      assert.is_truthy(err:find(case[3], 1, true), err)
    end)
  end
end)

-- ---- grid:find ----------------------------------------------------------------------------------

describe("grid:find", function()
  after_each(cleanup)

  local function find(g, s, goal)
    local path, info = g:find(s, goal)
    assert.is_not_nil(path, info and info.reason)
    check_path(g, path, s, goal, info.length)
    return info.length, path, info
  end

  it("2D: straight, diagonal and mixed moves on an open map", function()
    local g = assert(movingai.load_grid(map2d { ".....", ".....", "....." }))
    assert.is_true(near(4, (find(g, { 0, 0, 0 }, { 4, 0, 0 }))))
    assert.is_true(near(2 * SQRT2, (find(g, { 0, 0, 0 }, { 2, 2, 0 }))))
    assert.is_true(near(3 + SQRT2, (find(g, { 0, 0, 0 }, { 4, 1, 0 }))))
    assert.is_true(near(2 + 2 * SQRT2, (find(g, { 4, 2, 0 }, { 0, 0, 0 }))))
  end)

  it("2D: no corner cutting around a blocked cell", function()
    local g = assert(movingai.load_grid(map2d { "...", ".@.", "..." }))
    -- with corner cutting this would be 2 + sqrt2; without, the way round is 4
    assert.is_true(near(4, (find(g, { 0, 0, 0 }, { 2, 2, 0 }))))
    assert.is_true(near(2, (find(g, { 0, 0, 0 }, { 2, 0, 0 }))))
    -- (0,1) -> (1,0) is a diagonal past the blocked (1,1): (0,0) and (1,1) must both be free
    assert.is_true(near(2, (find(g, { 0, 1, 0 }, { 1, 0, 0 }))))
  end)

  it("2D: a diagonal squeeze between two blocked cells is not a way through", function()
    local g = assert(movingai.load_grid(map2d { ".@", "@." }))
    local path, info = g:find({ 0, 0, 0 }, { 1, 1, 0 })
    assert.is_nil(path)
    assert.are.equal("unreachable", info.reason)
    -- a wall with a diagonal gap
    g = assert(movingai.load_grid(map2d { "..@..", "..@..", ".@...", ".@..." }))
    path, info = g:find({ 0, 0, 0 }, { 4, 0, 0 })
    assert.is_nil(path)
    assert.are.equal("unreachable", info.reason)
    -- open one cell of the wall and it is reachable
    g:set(1, 3, 0, false)
    -- down the left side, through (1,3), then up the right side: 6 straight moves and 2 diagonals
    assert.is_true(near(6 + 2 * SQRT2, (find(g, { 0, 0, 0 }, { 4, 0, 0 }))))
  end)

  it("3D: face, edge and corner moves", function()
    local g = Grid.new(3, 3, 3)
    assert.is_true(near(2 * SQRT3, (find(g, { 0, 0, 0 }, { 2, 2, 2 }))))
    assert.is_true(near(SQRT2 + SQRT3, (find(g, { 0, 0, 0 }, { 2, 2, 1 }))))
    assert.is_true(near(1 + SQRT2, (find(g, { 0, 0, 0 }, { 2, 1, 0 }))))
  end)

  it("3D: a corner move needs the whole 2x2x2 box free", function()
    local g = Grid.new(2, 2, 2)
    g:set(1, 0, 0)
    assert.is_true(near(1 + SQRT2, (find(g, { 0, 0, 0 }, { 1, 1, 1 }))))
    -- centre of a 3x3x3 blocked: every 2x2x2 box holds it, every in-between 2x2 square too
    g = Grid.new(3, 3, 3)
    g:set(1, 1, 1)
    assert.is_true(near(2 + 2 * SQRT2, (find(g, { 0, 0, 0 }, { 2, 2, 2 }))))
    -- two cells meeting only at an edge block the edge move between the other two
    g = Grid.new(2, 2, 1)
    g:set(1, 0, 0)
    g:set(0, 1, 0)
    local path, info = g:find({ 0, 0, 0 }, { 1, 1, 0 })
    assert.is_nil(path)
    assert.are.equal("unreachable", info.reason)
    g = Grid.new(2, 2, 2)
    for _, c in ipairs { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 }, { 1, 1, 0 }, { 0, 1, 1 }, { 1, 0, 1 } } do g:set(c[1], c[2], c[3]) end
    path, info = g:find({ 0, 0, 0 }, { 1, 1, 1 })
    assert.is_nil(path)
    assert.are.equal("unreachable", info.reason)
  end)

  it("start = goal is a path of one cell and length 0", function()
    local g = Grid.new(3, 2, 2)
    local path, info = g:find({ 1, 1, 1 }, { 1, 1, 1 })
    assert.are.same({ { 1, 1, 1 } }, path)
    assert.are.equal(0, info.length)
  end)

  it("reports blocked, outside and unreachable", function()
    local g = Grid.new(4, 4, 4)
    g:set(1, 1, 1)
    for _, case in ipairs {
      { { 1, 1, 1 }, { 0, 0, 0 }, "blocked" },
      { { 0, 0, 0 }, { 1, 1, 1 }, "blocked" },
      { { -1, 0, 0 }, { 0, 0, 0 }, "outside" },
      { { 0, 0, 0 }, { 4, 0, 0 }, "outside" },
      { { 0, 0, 0 }, { 0, 0, 4 }, "outside" },
      { { 0, 0, 0 }, { 0, -7, 0 }, "outside" },
    } do
      local path, info = g:find(case[1], case[2])
      assert.is_nil(path)
      assert.are.equal(case[3], info.reason)
    end
    -- wall off a corner
    for _, c in ipairs { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 }, { 1, 1, 0 }, { 1, 0, 1 }, { 0, 1, 1 } } do g:set(c[1], c[2], c[3]) end
    local path, info = g:find({ 0, 0, 0 }, { 3, 3, 3 })
    assert.is_nil(path)
    assert.are.equal("unreachable", info.reason)
    -- and open it again
    g:set(1, 0, 0, false)
    assert.is_not_nil((g:find({ 0, 0, 0 }, { 3, 3, 3 })))
  end)

  it("find(..., false) gives the length without the path", function()
    local g = Grid.new(5, 5, 1)
    local ok, info = g:find({ 0, 0, 0 }, { 4, 3, 0 }, false)
    assert.is_true(ok)
    assert.is_true(near(1 + 3 * SQRT2, info.length))
  end)

  it("matches a reference Dijkstra on random small maps (2D and 3D)", function()
    math.randomseed(1234)
    local n = 0
    for _, dims in ipairs { { 12, 10, 1 }, { 9, 7, 1 }, { 7, 6, 5 }, { 6, 6, 6 }, { 10, 4, 3 } } do
      for _, density in ipairs { 0.15, 0.3, 0.45 } do
        local W, H, D = dims[1], dims[2], dims[3]
        local g = Grid.new(W, H, D)
        local B = {}
        for z = 0, D - 1 do
          for y = 0, H - 1 do
            for x = 0, W - 1 do
              if math.random() < density then
                B[x .. "," .. y .. "," .. z] = true
                g:set(x, y, z)
              end
            end
          end
        end
        local function blocked(x, y, z) return B[x .. "," .. y .. "," .. z] == true end
        for _ = 1, 12 do
          local s = { math.random(0, W - 1), math.random(0, H - 1), math.random(0, D - 1) }
          local e = { math.random(0, W - 1), math.random(0, H - 1), math.random(0, D - 1) }
          local want = ref_length(W, H, D, blocked, s, e)
          local path, info = g:find(s, e)
          if want then
            assert.is_not_nil(path, info.reason)
            assert.is_true(near(want, info.length), ("%s -> %s: want %.9g got %.9g"):format(
              table.concat(s, ","), table.concat(e, ","), want, info.length))
            check_path(g, path, s, e, info.length)
            n = n + 1
          else
            assert.is_nil(path)
            local sb, eb = blocked(s[1], s[2], s[3]), blocked(e[1], e[2], e[3])
            assert.are.equal((sb or eb) and "blocked" or "unreachable", info.reason)
          end
        end
      end
    end
    assert.is_true(n > 60)
  end)
end)

-- ---- grid:visible vs tree:visible ---------------------------------------------------------------

describe("grid:visible", function()
  after_each(cleanup)

  it("agrees with tree:visible on the same voxel map", function()
    math.randomseed(99)
    local W, H, D = 12, 10, 9
    local vox = {}
    for z = 0, D - 1 do
      for y = 0, H - 1 do
        for x = 0, W - 1 do
          if math.random() < 0.12 then vox[#vox + 1] = { x, y, z } end
        end
      end
    end
    -- a few blocked cells meeting only at edges and corners, and a thin wall with a diagonal gap
    for _, v in ipairs { { 5, 5, 5 }, { 6, 6, 5 }, { 6, 5, 6 }, { 1, 8, 1 }, { 2, 9, 2 } } do vox[#vox + 1] = v end
    local path = map3d(W, H, D, vox)
    local grid = assert(movingai.load_grid(path))
    local trees = {}
    for _, depth in ipairs { 2, 3, 9 } do trees[#trees + 1] = assert(movingai.load_map(path, { depth = depth })) end
    local function coord(lim)
      local r = math.random()
      local v = -1.5 + math.random() * (lim + 3)
      if r < 0.3 then return math.floor(v + 0.5) end            -- on a lattice plane
      if r < 0.45 then return math.floor(v) + 0.5 end           -- a voxel centre
      return v
    end
    local seen = { [true] = 0, [false] = 0 }
    for i = 1, 1500 do
      local a = { coord(W), coord(H), coord(D) }
      local b
      if i % 5 == 0 then                                        -- axis-aligned or diagonal segments
        b = { a[1], a[2], a[3] }
        local ax = math.random(1, 3)
        b[ax] = b[ax] + math.random(-6, 6)
        if i % 10 == 0 then
          local ax2 = ax % 3 + 1
          b[ax2] = b[ax2] + (b[ax] - a[ax])
        end
      elseif i % 2 == 0 then                                    -- short segments
        b = { a[1] + coord(6) - 2.5, a[2] + coord(6) - 2.5, a[3] + coord(6) - 2.5 }
      else
        b = { coord(W), coord(H), coord(D) }
      end
      local want = grid:visible(a, b)
      assert.are.equal(want, grid:visible(b, a), "grid:visible is not symmetric")
      for ti, t in ipairs(trees) do
        local got = t:visible(a, b)
        if got ~= want then
          error(("segment {%.17g,%.17g,%.17g} -> {%.17g,%.17g,%.17g}: grid says %s, tree %d says %s"):format(
            a[1], a[2], a[3], b[1], b[2], b[3], tostring(want), ti, tostring(got)))
        end
      end
      seen[want] = seen[want] + 1
    end
    assert.is_true(seen[true] > 50 and seen[false] > 50, ("visible %d, blocked %d"):format(seen[true], seen[false]))
  end)

  it("follows the rule on hand-made cases", function()
    local g = Grid.new(3, 3, 1)
    g:set(1, 0, 0)
    g:set(0, 1, 0)
    -- z range [0, 1]: keep segments at z = 0.5
    assert.is_true(g:visible({ 0.5, 0.5, 0.5 }, { 0.2, 0.3, 0.5 }))
    assert.is_false(g:visible({ 0.5, 0.5, 0.5 }, { 1.5, 1.5, 0.5 }))      -- through the gap where two blocked cells meet
    assert.is_false(g:visible({ 0.5, 0.5, 0.5 }, { 2.5, 0.5, 0.5 }))      -- through a blocked cell
    assert.is_true(g:visible({ 1.5, 1.5, 0.5 }, { 2.5, 2.5, 0.5 }))
    assert.is_true(g:visible({ 1.5, 1.5, 0.5 }, { 2.5, 1.5, 0.5 }))
    assert.is_true(g:visible({ 1, 1.5, 0.5 }, { 1, 2.5, 0.5 }))           -- sliding along a wall
    assert.is_false(g:visible({ 0.5, 0.5, 0.5 }, { -0.5, 0.5, 0.5 }))     -- outside is blocked
    local t = assert(movingai.load_map(map3d(3, 3, 1, { { 1, 0, 0 }, { 0, 1, 0 } }), { depth = 2 }))
    assert.is_false(t:visible({ 0.5, 0.5, 0.5 }, { 1.5, 1.5, 0.5 }))
    assert.is_true(t:visible({ 1.5, 1.5, 0.5 }, { 2.5, 2.5, 0.5 }))
  end)
end)

-- ---- benchmark data (opt-in) --------------------------------------------------------------------

local voxdir = "../shared/data/voxel/"
local exists = files.exists

describe("Moving AI benchmark data", function()
  if not exists(voxdir .. "Simple.3dmap") then
    pending("../shared/data/voxel is absent")
    return
  end

  it("Simple.3dmap loads with dims 105x132x105 and 512 voxels, each blocked", function()
    local t, info = movingai.load_map(voxdir .. "Simple.3dmap", { depth = 6 })
    assert.is_not_nil(t, info)
    assert.are.same({ 105, 132, 105 }, info.dims)
    assert.are.equal(512, info.voxels)
    local n = 0
    for line in io.lines(voxdir .. "Simple.3dmap") do
      local x, y, z = line:match("^(%d+) (%d+) (%d+)")
      if x then
        n = n + 1
        assert.are.equal("blocked", (t:locate { x + 0.5, y + 0.5, z + 0.5 }))
      end
    end
    assert.are.equal(512, n)
    local g = assert(movingai.load_grid(voxdir .. "Simple.3dmap"))
    assert.are.same({ 105, 132, 105 }, { g:dims() })
  end)

  it("tree:visible and grid:visible agree on Simple.3dmap", function()
    local t = assert(movingai.load_map(voxdir .. "Simple.3dmap", { depth = 6 }))
    local g = assert(movingai.load_grid(voxdir .. "Simple.3dmap"))
    math.randomseed(5)
    local seen = { [true] = 0, [false] = 0 }
    local function c(lo, hi, snap)
      local v = lo + math.random() * (hi - lo)
      if snap then v = math.floor(v + 0.5) end
      return v
    end
    for i = 1, 400 do
      local snap = i % 3 == 0
      local a = { c(45, 60, snap), c(45, 85, snap), c(45, 60, snap) }
      local b = { c(45, 60, snap), c(45, 85, snap), c(45, 60, snap) }
      local want = g:visible(a, b)
      assert.are.equal(want, t:visible(a, b), ("segment {%.17g,%.17g,%.17g} -> {%.17g,%.17g,%.17g}"):format(
        a[1], a[2], a[3], b[1], b[2], b[3]))
      seen[want] = seen[want] + 1
    end
    assert.is_true(seen[true] > 20 and seen[false] > 20, ("visible %d, blocked %d"):format(seen[true], seen[false]))
  end)

  local function reproduce(map, count)
    local g = assert(movingai.load_grid(voxdir .. map))
    local sc, name = movingai.load_scen(voxdir .. map .. ".3dscen")
    assert.is_not_nil(sc, name)
    assert.are.equal(map, name)
    assert.are.equal(10000, #sc)
    local worst = 0
    for i = 1, count do
      local s = sc[i]
      local ok, info = g:find(s.start_cell, s.goal_cell, false)
      assert.is_not_nil(ok, info and info.reason)
      local err = math.abs(info.length - s.optimal)
      worst = math.max(worst, err)
      assert.is_true(err <= 1e-6, ("%s problem %d: optimal %.8f, found %.8f"):format(map, i, s.optimal, info.length))
    end
    return worst
  end

  it("the grid reproduces the optimal length of the first 200 Simple problems", function()
    reproduce("Simple.3dmap", 200)
  end)

  it("the grid reproduces the optimal length of the first 30 Complex problems", function()
    if not exists(voxdir .. "Complex.3dmap") then return pending("Complex.3dmap is absent") end
    reproduce("Complex.3dmap", 30)
  end)

  it("bin/octonav bench: exits 0, ends with the key=value line, every path valid", function()
    -- (found failing: after printing its table the command fell through to the usage text and exit 2)
    local out = os.tmpname()
    local ok, how, code = os.execute((LUA .. " bin/octonav bench %sSimple.3dmap --limit 12 --grid-limit 2 --repeat 2 > %s 2>&1")
      :format(voxdir, out))
    local f = assert(io.open(out))
    local text = f:read("*a")
    f:close()
    os.remove(out)
    assert.is_true(ok == true and how == "exit" and code == 0, text)
    local last = text:match("([^\n]+)\n?$")
    local kv = {}
    for k, v in last:gmatch("(%S+)=(%S+)") do kv[k] = tonumber(v) end
    for _, k in ipairs { "scenarios", "solved", "valid", "mean_ratio", "p99_ratio", "max_ratio", "median_us", "p99_us",
      "grid_median_us", "speedup", "expansions_per_path_cell", "nodes", "bytes_per_node" } do
      assert.is_number(kv[k], k .. " missing in: " .. last)
    end
    assert.are.equal(12, kv.scenarios)
    assert.are.equal(12, kv.solved)
    assert.are.equal(12, kv.valid)
    -- unknown flags are refused
    ok = os.execute((LUA .. " bin/octonav bench %sSimple.3dmap --fast 1 > /dev/null 2>&1"):format(voxdir))
    assert.is_not_true(ok)
  end)

  it("bin/octonav bench --prepare: the preset runs over the prepared boxes, every path valid", function()
    local out = os.tmpname()
    local ok = os.execute((LUA .. " bin/octonav bench %sComplex.3dmap --limit 40 --grid-limit 1 --repeat 1 --preset boxes --prepare > %s 2>&1")
      :format(voxdir, out))
    local f = assert(io.open(out))
    local text = f:read("*a")
    f:close()
    os.remove(out)
    assert.is_true(ok == true, text)
    local kv = {}
    for k, v in text:match("([^\n]+)\n?$"):gmatch("(%S+)=(%S+)") do kv[k] = tonumber(v) end
    assert.are.equal(7660, kv.boxes) -- Complex: 105,777 free cells merged into 7,660 boxes
    assert.is_true(kv.box_bytes > 0 and kv.prepare_ms > 0)
    assert.are.equal(40, kv.solved)
    assert.are.equal(40, kv.valid)
    -- and the same search over the cells, through the query (the tree prepared or not)
    local t = assert(movingai.load_map(voxdir .. "Complex.3dmap"))
    local q = octonav.query.new(t)
    local scen = assert(movingai.load_scen(voxdir .. "Complex.3dmap.3dscen"))
    local _, before = q:find(scen[7].start, scen[7].goal)
    assert.are.equal(7660, t:prepare())
    local _, over = q:find(scen[7].start, scen[7].goal)
    local _, cells = q:find(scen[7].start, scen[7].goal, { graph = "cells" })
    assert.are.equal("cells", before.graph)
    assert.are.equal("boxes", over.graph)
    assert.are.equal(before.length, cells.length)
    assert.are.equal(before.expansions, cells.expansions)
  end)

  it("EC1 problem 5133: smoothing keeps every turn to the rule (it once turned through a gap)", function()
    -- found by the benchmark's checker once it checked turns: greedy smoothing kept a refined waypoint
    -- at (181, 126, 139), where blocked voxels meet along an edge, and came into it from the start
    -- along a direction that slipped through the gap there
    if not exists(voxdir .. "EC1.3dmap") then return pending("EC1.3dmap is absent") end
    local checker = require "octonav.checker"
    local tree = assert(movingai.load_map(voxdir .. "EC1.3dmap"))
    local vmap = assert(checker.voxel_map(voxdir .. "EC1.3dmap"))
    local s = assert(movingai.load_scen(voxdir .. "EC1.3dmap.3dscen"))[5133]
    local q = octonav.query.new(tree, { max_nodes = 1048576 })
    for _, opts in ipairs { {}, { relax = 0 }, { smooth = "binary" }, { relax = 0, smooth = "binary" } } do
      local path = assert(q:find(s.start, s.goal, opts))
      local ok, i, what = checker.path(vmap, path)
      assert.is_true(ok, ("bad %s at %s"):format(tostring(what), tostring(i)))
    end
  end)
end)
