-- The bake's insertion at tile scale (issue 31, goal 4): a heightfield over a tree wider than the
-- classifier's cache of small cells (csrc/core/geometry.c keeps the ranges of cells of 1..16 leaves by
-- block of 16 x 16 leaf columns, 16 x 16 blocks at a time), checked column by column against the
-- surface's maximum computed here: every column's lowest free leaf is where the reference says, with
-- and without an agent radius (which asks for two rectangles a cell), on blocks that wrap around the
-- cache and on tiles whose corners are not multiples of a block; and a surface exactly at a whole
-- height over a leaf decided as clipping decides it (the blocks take a small rectangle's range from the
-- plane, not clipped, only where no comparison with a whole number can change).
local octonav = require "octonav"
local Tree = octonav.tree

-- The surface h(x, z) (two triangles a square, split along the (i,k)-(i+1,k+1) diagonal) and its
-- maximum over a rectangle clipped to the domain (nil when no area is left): the maximum is at a
-- vertex of the rectangle cut by the grid lines and the diagonals, so those points are tried.
local function surface(hf)
  local c, ox, oz, nx, nz, H = hf.cell, hf.origin[1], hf.origin[3], hf.nx, hf.nz, hf.heights
  local function h(x, z)
    local u, v = (x - ox) / c, (z - oz) / c
    local i = math.max(0, math.min(nx - 2, math.floor(u)))
    local k = math.max(0, math.min(nz - 2, math.floor(v)))
    local fu, fv = u - i, v - k
    local h00, h10 = H[i + k * nx + 1], H[i + 1 + k * nx + 1]
    local h01, h11 = H[i + (k + 1) * nx + 1], H[i + 1 + (k + 1) * nx + 1]
    local r
    if fu >= fv then r = h00 + fu * (h10 - h00) + fv * (h11 - h10)
    else r = h00 + fv * (h01 - h00) + fu * (h11 - h01) end
    return hf.origin[2] + r
  end
  local dx0, dx1, dz0, dz1 = ox, ox + (nx - 1) * c, oz, oz + (nz - 1) * c
  return function(x0, x1, z0, z1)
    x0, x1, z0, z1 = math.max(x0, dx0), math.min(x1, dx1), math.max(z0, dz0), math.min(z1, dz1)
    if not (x1 > x0 and z1 > z0) then return nil end
    local pts = { { x0, z0 }, { x1, z0 }, { x0, z1 }, { x1, z1 } }
    local ia, ib = math.floor((x0 - ox) / c), math.ceil((x1 - ox) / c)
    local ka, kb = math.floor((z0 - oz) / c), math.ceil((z1 - oz) / c)
    for i = ia, ib do
      local x = ox + i * c
      if x > x0 and x < x1 then
        pts[#pts + 1] = { x, z0 }
        pts[#pts + 1] = { x, z1 }
        for k = ka, kb do
          local z = oz + k * c
          if z > z0 and z < z1 then pts[#pts + 1] = { x, z } end
        end
      end
    end
    for k = ka, kb do
      local z = oz + k * c
      if z > z0 and z < z1 then
        pts[#pts + 1] = { x0, z }
        pts[#pts + 1] = { x1, z }
      end
    end
    for m = ia - kb - 1, ib - ka + 1 do -- diagonals (x - ox) - (z - oz) = m * c
      local d = ox - oz + m * c
      for _, z in ipairs { z0, z1 } do
        local x = z + d
        if x > x0 and x < x1 then pts[#pts + 1] = { x, z } end
      end
      for _, x in ipairs { x0, x1 } do
        local z = x - d
        if z > z0 and z < z1 then pts[#pts + 1] = { x, z } end
      end
    end
    local best = -math.huge
    for _, p in ipairs(pts) do best = math.max(best, h(p[1], p[2])) end
    return best
  end
end

-- A rolling heightfield with flat plateaus at whole heights (ties on the leaf lattice).
local function rolling(nx, nz, cell, origin, top)
  local h = {}
  for k = 0, nz - 1 do
    for i = 0, nx - 1 do
      local v = top * (0.5 + 0.3 * math.sin(i / 3.1) * math.cos(k / 4.3) + 0.15 * math.sin((i + k) / 1.7))
      if (math.floor(i / 6) + math.floor(k / 5)) % 4 == 0 then v = math.floor(v) end -- (no //: every Lua, issue 34)
      h[#h + 1] = v
    end
  end
  return { origin = origin, cell = cell, nx = nx, nz = nz, heights = h }
end

-- Every leaf column of the tree: the leaf just below and the one just above the surface (+ r) are blocked and
-- free as the reference says (a tie within 1e-9 is not judged). Returns the columns checked.
local function check_columns(t, hf)
  local p = t:params()
  local s, o, r, N = p.scale, p.origin, p.radius, p.tile_leaves
  local hmax = surface(hf)
  local ny = p.tiles[2] * N
  local cols, bad = 0, {}
  for z = 0, p.tiles[3] * N - 1 do
    for x = 0, p.tiles[1] * N - 1 do
      local wx, wz = o[1] + x * s, o[3] + z * s
      local m = hmax(wx - r, wx + s + r, wz - r, wz + s + r)
      local top = m and (m + r - o[2]) / s or -math.huge -- the blocked part's top in leaves
      local yb = top == -math.huge and 0 or math.max(0, math.min(ny - 1, math.ceil(top) - 1))
      for y = yb, math.min(ny - 1, yb + 1) do
        if math.abs(y - top) > 1e-9 * math.max(1, math.abs(top)) then
          local want = y < top
          local got = t:locate { o[1] + (x + 0.5) * s, o[2] + (y + 0.5) * s, o[3] + (z + 0.5) * s } == "blocked"
          if want ~= got and #bad < 6 then
            bad[#bad + 1] = ("leaf %d,%d,%d: expected %s (top %.6f)"):format(x, y, z, want and "blocked" or "free", top)
          end
        end
      end
      cols = cols + 1
    end
  end
  assert(#bad == 0, table.concat(bad, "\n"))
  return cols
end

describe("a heightfield over many blocks of the classifier's cache", function()
  it("blocks each column up to its surface (5 x 1 x 5 tiles of 64, cell 2.5, no radius)", function()
    local t = Tree.new { tiles = { 5, 1, 5 }, depth = 6, origin = { 0, -3, 0 } }
    local hf = rolling(132, 132, 2.5, { -1.25, 0, 0.5 }, 40)
    t:add_heightfield(hf)
    assert.are.equal(320 * 320, check_columns(t, hf))
  end)

  it("with a radius (two rectangles a cell) in a scaled tree whose corner is off the blocks", function()
    local t = Tree.new { tiles = { 3, 1, 2 }, depth = 6, scale = 0.5, radius = 0.75, origin = { 3.5, -2, -7.25 } }
    local hf = rolling(70, 40, 1.5, { 2, 0, -8 }, 20)
    t:add_heightfield(hf)
    assert.are.equal(192 * 128, check_columns(t, hf))
  end)

  it("decides a surface exactly at a whole height as clipping does (the leaf on it stays free)", function()
    -- grid square (2, 0) of cell 6: clipped, the surface over leaf column (13, 2) peaks at exactly 7
    -- (its parent column's at 9.6, so the leaves are asked); the plane's value there, (x - xa) / cell
    -- taken first, is 7.000000000000001 (found by a search emulating both in doubles), so leaf
    -- (13, 7, 2) is free only where a range this close to a whole number is clipped rather than taken
    -- from the plane
    local h = { 0, 0, 3.6666666666666665, 6.0, 0, 0, 12.5, 6.0 }
    local t = Tree.new { tiles = { 1, 1, 1 }, depth = 5 }
    t:add_heightfield { origin = { 0, 0, 0 }, cell = 6, nx = 4, nz = 2, heights = h }
    assert.are.equal("free", (t:locate { 13.5, 7.5, 2.5 }))
    assert.are.equal("blocked", (t:locate { 13.5, 6.5, 2.5 }))
  end)

  it("gives a tile the same bytes in a tree of its own as in the whole tree (the bake's way)", function()
    local hf = rolling(132, 54, 2.5, { -1.25, 0, 0.5 }, 40)
    local whole = Tree.new { tiles = { 5, 1, 2 }, depth = 6 }
    whole:add_heightfield(hf)
    for _, ijk in ipairs { { 0, 0, 0 }, { 4, 0, 1 }, { 2, 0, 1 } } do
      local one = Tree.new { tiles = { 1, 1, 1 }, depth = 6, origin = { ijk[1] * 64, 0, ijk[3] * 64 } }
      one:add_heightfield(hf)
      assert.are.equal(whole:encode_tile(ijk[1], ijk[2], ijk[3]), one:encode_tile(0, 0, 0))
    end
  end)
end)
