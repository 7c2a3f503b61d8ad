-- spec/02-reference_spec.lua -- the octree against a brute-force dense voxel reference written here in
-- Lua (geometry rules, tile blobs, line of sight), on seeded random scenes.
-- Run: busted --lua=lua5.4 spec/02-reference_spec.lua
--
-- Nothing here calls the C code to compute an expected answer. Scenes use scale 1 and origin 0, so
-- world and nav coordinates are the same numbers. A failure names the seed of its scene; set
-- OCTONAV_SEED to run other random scenes (the default seeds are fixed).
local compat = require "octonav.compat" -- Lua 5.1 .. 5.4 (issue 34)
local bits = dofile("spec/support/bits.lua") -- integer operators on every Lua version (issue 34)
local octonav = require "octonav"
local tree = octonav.tree

local BASE_SEED = tonumber(os.getenv("OCTONAV_SEED") or "") or 20240611

-- xorshift64 PRNG: rng(seed) with r.int, r.float, r.range, r.chance, r.pick (spec/support/prng.lua)
local rng = dofile("spec/support/prng.lua").xorshift

---------------------------------------------------------------------------------------------------
-- The dense reference: dims {X, Y, Z} in leaves, one boolean per leaf, outside blocked.

local Dense = {}
Dense.__index = Dense

local function dense_new(X, Y, Z)
  return setmetatable({ X = X, Y = Y, Z = Z, b = {} }, Dense)
end

function Dense:inside(x, y, z)
  return x >= 0 and y >= 0 and z >= 0 and x < self.X and y < self.Y and z < self.Z
end

function Dense:blocked(x, y, z)
  if not self:inside(x, y, z) then return true end
  return self.b[x + self.X * (y + self.Y * z)] == true
end

function Dense:set(x, y, z)
  self.b[x + self.X * (y + self.Y * z)] = true
end

-- Is the aligned cube [x, x+s)^3 wholly free?
function Dense:cube_free(x, y, z, s)
  for k = z, z + s - 1 do
    for j = y, y + s - 1 do
      for i = x, x + s - 1 do
        if self:blocked(i, j, k) then return false end
      end
    end
  end
  return true
end

-- Box rule on one axis: leaf [k, k+1] is hit by [lo, hi] iff they overlap with positive length, or,
-- when lo == hi, iff the closed leaf holds lo.
local function box_axis_hits(lo, hi, k)
  if lo == hi then return lo >= k and lo <= k + 1 end
  return lo < k + 1 and hi > k
end

function Dense:add_box(lo, hi)
  local dims = { self.X, self.Y, self.Z }
  local hits = {}
  for a = 1, 3 do
    hits[a] = {}
    for k = 0, dims[a] - 1 do
      if box_axis_hits(lo[a], hi[a], k) then hits[a][#hits[a] + 1] = k end
    end
  end
  for _, z in ipairs(hits[3]) do
    for _, y in ipairs(hits[2]) do
      for _, x in ipairs(hits[1]) do self:set(x, y, z) end
    end
  end
end

-- Triangle against the closed cube [lo, lo+1]^3 by the separating axis theorem, written as interval
-- tests on 13 axes: the 3 cube normals, the triangle normal and the 9 cross products of a triangle
-- edge with a cube edge. Projections of all 8 cube corners are taken (no radius formula); touching
-- intervals overlap. With vertices on a 1/4 grid every product below is exact in doubles.
local function cross(u, v)
  return { u[2] * v[3] - u[3] * v[2], u[3] * v[1] - u[1] * v[3], u[1] * v[2] - u[2] * v[1] }
end
local function dot(u, v) return u[1] * v[1] + u[2] * v[2] + u[3] * v[3] end

local function tri_axes(v)
  local e = {
    { v[2][1] - v[1][1], v[2][2] - v[1][2], v[2][3] - v[1][3] },
    { v[3][1] - v[2][1], v[3][2] - v[2][2], v[3][3] - v[2][3] },
    { v[1][1] - v[3][1], v[1][2] - v[3][2], v[1][3] - v[3][3] },
  }
  local units = { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } }
  local axes = { units[1], units[2], units[3], cross(e[1], e[2]) }
  for i = 1, 3 do
    for a = 1, 3 do axes[#axes + 1] = cross(e[i], units[a]) end
  end
  return axes
end

local function tri_touches_cube(v, axes, x, y, z)
  for _, ax in ipairs(axes) do
    local t1, t2, t3 = dot(ax, v[1]), dot(ax, v[2]), dot(ax, v[3])
    local tmin, tmax = math.min(t1, t2, t3), math.max(t1, t2, t3)
    local cmin, cmax = math.huge, -math.huge
    for c = 0, 7 do
      local p = ax[1] * (x + c % 2) + ax[2] * (y + math.floor(c / 2) % 2) + ax[3] * (z + math.floor(c / 4) % 2)
      if p < cmin then cmin = p end
      if p > cmax then cmax = p end
    end
    if tmax < cmin or cmax < tmin then return false end
  end
  return true
end

function Dense:add_triangle(v)
  local axes = tri_axes(v)
  local lo, hi = {}, {}
  for a = 1, 3 do
    lo[a] = math.floor(math.min(v[1][a], v[2][a], v[3][a])) - 1
    hi[a] = math.floor(math.max(v[1][a], v[2][a], v[3][a]))
  end
  for z = math.max(lo[3], 0), math.min(hi[3], self.Z - 1) do
    for y = math.max(lo[2], 0), math.min(hi[2], self.Y - 1) do
      for x = math.max(lo[1], 0), math.min(hi[1], self.X - 1) do
        if tri_touches_cube(v, axes, x, y, z) then self:set(x, y, z) end
      end
    end
  end
end

-- The reference rule lives in octonav.checker (pure Lua, independent of the C core).
local ref_visible = require("octonav.checker").visible

---------------------------------------------------------------------------------------------------
-- Tile blobs: parse, check the structure and invariants, rebuild the blocked leaves.

-- zlib's CRC-32 of the first n bytes, crc32(s, n) (spec/support/crc32.lua)
local crc32 = dofile("spec/support/crc32.lua")

-- Returns a list of problems (empty when fine); calls mark(x, y, z, size) (global leaf coordinates)
-- for every blocked cube.
local function parse_blob(blob, depth, base, mark)
  local problems = {}
  local function bad(msg) problems[#problems + 1] = msg end
  if #blob < 16 or blob:sub(1, 4) ~= "ONTL" then
    bad("bad magic or size")
    return problems
  end
  local version, bdepth, flags, n = compat.unpack_bytes("<I2 I1 I1 I4", blob, 5)
  if version ~= 1 then bad("version " .. version) end
  if bdepth ~= depth then bad("depth " .. bdepth) end
  if flags - flags % 2 ~= 0 then bad("flags " .. flags) end
  if #blob ~= 16 + 2 * n then
    bad(("length %d for %d nodes"):format(#blob, n))
    return problems
  end
  local crc = compat.unpack_bytes("<I4", blob, #blob - 3)
  if crc ~= crc32(blob, #blob - 4) then bad("CRC mismatch") end
  local N = bits.shl(1, depth)
  if flags % 2 == 1 then
    if n ~= 0 then bad("solid tile with nodes") end
    mark(base[1], base[2], base[3], N)
    return problems
  end
  local pos = 0
  local function node(x, y, z, layer)
    pos = pos + 1
    if pos > n then
      bad("structure wants more nodes than stored")
      return
    end
    local bf, cf = blob:byte(11 + 2 * pos), blob:byte(12 + 2 * pos)
    local where = ("node %d (layer %d at %d,%d,%d)"):format(pos, layer, x, y, z)
    if bf == 0xFF then bad(where .. ": fully blocked node stored") end
    if bits.bor(bf, cf) == 0 then bad(where .. ": empty node stored") end
    if bits.band(bf, cf) ~= 0 then bad(where .. ": child both blocked and stored") end
    if layer == 1 and cf ~= 0 then bad(where .. ": leaf children stored") end
    local h = bits.shl(1, layer - 1)
    for i = 0, 7 do
      local cx, cy, cz = x + i % 2 * h, y + math.floor(i / 2) % 2 * h, z + math.floor(i / 4) % 2 * h
      if bits.band(bf, bits.shl(1, i)) ~= 0 then
        mark(cx, cy, cz, h)
      elseif bits.band(cf, bits.shl(1, i)) ~= 0 and layer > 1 then
        node(cx, cy, cz, layer - 1)
      end
    end
  end
  if n > 0 then node(base[1], base[2], base[3], depth) end
  if pos ~= n then bad(("%d nodes stored, %d reached"):format(n, pos)) end
  return problems
end

---------------------------------------------------------------------------------------------------
-- Scenes

local function fmt(x)
  if compat.isinteger(x) then return tostring(x) end
  if x == math.floor(x) and math.abs(x) < 2 ^ 53 then return ("%d"):format(x) end
  return ("%.17g"):format(x)
end
local function fmtp(p) return "{" .. fmt(p[1]) .. ", " .. fmt(p[2]) .. ", " .. fmt(p[3]) .. "}" end

local function describe_scene(sc)
  local lines = {
    ("seed %d: tree.new{ tiles = {%d, %d, %d}, depth = %d }"):format(sc.seed, sc.tiles[1], sc.tiles[2], sc.tiles[3], sc.depth),
  }
  for _, g in ipairs(sc.geometry) do
    if g.kind == "box" then
      lines[#lines + 1] = ("  t:add_box(%s, %s)"):format(fmtp(g.lo), fmtp(g.hi))
    else
      local v = g.v
      lines[#lines + 1] = ("  t:add_triangles({%s, %s, %s, %s, %s, %s, %s, %s, %s}, {1, 2, 3})"):format(
        fmt(v[1][1]), fmt(v[1][2]), fmt(v[1][3]), fmt(v[2][1]), fmt(v[2][2]), fmt(v[2][3]), fmt(v[3][1]), fmt(v[3][2]), fmt(v[3][3]))
    end
  end
  return table.concat(lines, "\n")
end

-- Build both the tree and the reference from a geometry list.
local function build(sc)
  local N = bits.shl(1, sc.depth)
  local map = dense_new(sc.tiles[1] * N, sc.tiles[2] * N, sc.tiles[3] * N)
  local t = tree.new { tiles = sc.tiles, depth = sc.depth }
  for _, g in ipairs(sc.geometry) do
    if g.kind == "box" then
      t:add_box(g.lo, g.hi)
      map:add_box(g.lo, g.hi)
    else
      local v = g.v
      t:add_triangles({ v[1][1], v[1][2], v[1][3], v[2][1], v[2][2], v[2][3], v[3][1], v[3][2], v[3][3] }, { 1, 2, 3 })
      map:add_triangle(v)
    end
  end
  sc.N, sc.map, sc.t = N, map, t
  sc.dims = { map.X, map.Y, map.Z }
  return sc
end

-- A coordinate on axis `a` of a scene: integer, quarter, or arbitrary, sometimes beyond the map.
local function coord(r, D, kind)
  local x = r.range(-2, D + 2)
  if kind == "int" then return math.floor(x) + 0.0 end
  if kind == "quarter" then return math.floor(x * 4) / 4 end
  return x
end

-- Does geometry touch an interior tile border plane from above (its minimum exactly on the plane)?
local function on_border(lo, N, tiles)
  for a = 1, 3 do
    local k = lo[a] / N
    if k == math.floor(k) and k >= 1 and k <= tiles[a] - 1 then return true end
  end
  return false
end

local function random_box(r, sc, border)
  local lo, hi = {}, {}
  local kind = r.pick { "int", "int", "quarter", "float" }
  local span = r.pick { 1, 2, 3, 6, 12 }
  for a = 1, 3 do
    local D = bits.shl(sc.tiles[a], sc.depth)
    local x = coord(r, D, kind)
    local w = r.range(0, span)
    if kind == "int" then w = math.floor(w) + 0.0 elseif kind == "quarter" then w = math.floor(w * 4) / 4 end
    if r.chance(0.1) then w = 0.0 end -- flat on this axis
    lo[a], hi[a] = x, x + w
  end
  if border then -- put the minimum of one axis exactly on an interior tile border
    local axes = {}
    for a = 1, 3 do
      if sc.tiles[a] > 1 then axes[#axes + 1] = a end
    end
    local a = r.pick(axes)
    local w = hi[a] - lo[a]
    lo[a] = r.int(1, sc.tiles[a] - 1) * bits.shl(1, sc.depth) + 0.0
    hi[a] = lo[a] + (r.chance(0.5) and 0.0 or w)
  end
  return { kind = "box", lo = lo, hi = hi }
end

local function random_triangle(r, sc, border)
  local v = { {}, {}, {} }
  local size = r.pick { 0.5, 1, 2, 4, 8 }
  local c = {}
  for a = 1, 3 do c[a] = math.floor(r.range(-1, bits.shl(sc.tiles[a], sc.depth) + 1) * 4) / 4 end
  local flat = r.chance(0.2) and r.int(1, 3) or nil -- lying in a plane of one axis
  local deg = r.chance(0.1)                        -- degenerate: two equal vertices
  for i = 1, 3 do
    for a = 1, 3 do
      if flat == a then
        v[i][a] = math.floor(c[a]) + 0.0
      else
        v[i][a] = c[a] + math.floor(r.range(-size, size) * 4) / 4
      end
    end
  end
  if deg then v[3] = { v[1][1], v[1][2], v[1][3] } end
  if border then
    local axes = {}
    for a = 1, 3 do
      if sc.tiles[a] > 1 then axes[#axes + 1] = a end
    end
    local a = r.pick(axes)
    local B = r.int(1, sc.tiles[a] - 1) * bits.shl(1, sc.depth)
    local m = math.min(v[1][a], v[2][a], v[3][a])
    for i = 1, 3 do v[i][a] = v[i][a] - m + B end
  end
  return { kind = "tri", v = v }
end

local function lows(g)
  if g.kind == "box" then return g.lo end
  local v = g.v
  return { math.min(v[1][1], v[2][1], v[3][1]), math.min(v[1][2], v[2][2], v[3][2]), math.min(v[1][3], v[2][3], v[3][3]) }
end

-- A random scene. border = false: no geometry has its minimum on an interior tile border;
-- border = true: at least one item has.
local function random_scene(seed, border)
  local r = rng(seed)
  local sc = { seed = seed, geometry = {} }
  sc.depth = r.int(2, 4)
  sc.tiles = { r.int(1, 3), r.int(1, 3), r.int(1, 3) }
  if border and sc.tiles[1] == 1 and sc.tiles[2] == 1 and sc.tiles[3] == 1 then sc.tiles[r.int(1, 3)] = 2 end
  -- keep the dense work bounded: at most 48 x 48 x 32 leaves
  while bits.shl(sc.tiles[1] * sc.tiles[2] * sc.tiles[3], 3 * sc.depth) > 48 * 48 * 32 do
    local a = r.int(1, 3)
    if sc.tiles[a] > 1 and not (border and sc.tiles[a] == 2) then sc.tiles[a] = sc.tiles[a] - 1 end
  end
  local N = bits.shl(1, sc.depth)
  local items = r.int(1, 7)
  while #sc.geometry < items do
    local g = r.chance(0.5) and random_box(r, sc, false) or random_triangle(r, sc, false)
    if not on_border(lows(g), N, sc.tiles) then sc.geometry[#sc.geometry + 1] = g end
  end
  if border then
    local g = r.chance(0.5) and random_box(r, sc, true) or random_triangle(r, sc, true)
    table.insert(sc.geometry, r.int(1, #sc.geometry + 1), g)
  end
  return build(sc)
end

---------------------------------------------------------------------------------------------------
-- Checks. Each returns a list of problem lines (empty when the tree agrees).

local MAX_REPORT = 6

local function tile_blobs_check(sc, problems)
  local N, tiles = sc.N, sc.tiles
  local rebuilt = dense_new(sc.map.X, sc.map.Y, sc.map.Z)
  local function mark(x, y, z, s)
    for k = z, z + s - 1 do
      for j = y, y + s - 1 do
        for i = x, x + s - 1 do rebuilt:set(i, j, k) end
      end
    end
  end
  local nodes = 0
  for k = 0, tiles[3] - 1 do
    for j = 0, tiles[2] - 1 do
      for i = 0, tiles[1] - 1 do
        local blob = sc.t:encode_tile(i, j, k)
        nodes = nodes + compat.unpack_bytes("<I4", blob, 9)
        for _, p in ipairs(parse_blob(blob, sc.depth, { i * N, j * N, k * N }, mark)) do
          problems[#problems + 1] = ("tile {%d,%d,%d}: %s"):format(i, j, k, p)
        end
      end
    end
  end
  if nodes ~= sc.t:stats().nodes then
    problems[#problems + 1] = ("stats().nodes = %d, blobs hold %d"):format(sc.t:stats().nodes, nodes)
  end
  local n = 0
  for z = 0, sc.map.Z - 1 do
    for y = 0, sc.map.Y - 1 do
      for x = 0, sc.map.X - 1 do
        if rebuilt:blocked(x, y, z) ~= sc.map:blocked(x, y, z) then
          n = n + 1
          if n <= MAX_REPORT then
            problems[#problems + 1] = ("blob: leaf {%d,%d,%d} is %s, reference says %s"):format(x, y, z,
              rebuilt:blocked(x, y, z) and "blocked" or "free", sc.map:blocked(x, y, z) and "blocked" or "free")
          end
        end
      end
    end
  end
  if n > MAX_REPORT then problems[#problems + 1] = ("blob: ... %d leaves disagree in all"):format(n) end
  return problems
end

-- locate() at every leaf centre; the cells found, keyed "tile:code", and each free leaf's key.
local function locate_check(sc, problems)
  local t, map, N = sc.t, sc.map, sc.N
  local cells, leafcell = {}, {}
  local n = 0
  local function problem(msg)
    n = n + 1
    if n <= MAX_REPORT then problems[#problems + 1] = msg end
  end
  for z = 0, map.Z - 1 do
    for y = 0, map.Y - 1 do
      for x = 0, map.X - 1 do
        local p = { x + 0.5, y + 0.5, z + 0.5 }
        local what, c = t:locate(p)
        local want = map:blocked(x, y, z) and "blocked" or "free"
        if what ~= want then
          problem(("locate(%s) = %s, reference says %s"):format(fmtp(p), tostring(what), want))
        elseif what == "free" then
          local key = (c.tile[1] + sc.tiles[1] * (c.tile[2] + sc.tiles[2] * c.tile[3])) * 2 ^ 32 + c.code
          leafcell[x + map.X * (y + map.Y * z)] = key
          if not cells[key] then
            cells[key] = c
            local s, m = c.size, c.min
            local layer = 0
            while bits.shl(1, layer) < s do layer = layer + 1 end
            local okshape = bits.shl(1, layer) == s and s <= N and m[1] % s == 0 and m[2] % s == 0 and m[3] % s == 0
            local contains = m[1] <= p[1] and p[1] < m[1] + s and m[2] <= p[2] and p[2] < m[2] + s and m[3] <= p[3] and p[3] < m[3] + s
            if not okshape or not contains then
              problem(("locate(%s): cell min %s size %s is misshapen or misses the point"):format(fmtp(p), fmtp(m), fmt(s)))
            else
              local tile = { math.floor(m[1] / N), math.floor(m[2] / N), math.floor(m[3] / N) }
              local code = (m[3] % N) * 2 ^ 22 + (m[2] % N) * 2 ^ 13 + (m[1] % N) * 2 ^ 4 + layer
              if tile[1] ~= c.tile[1] or tile[2] ~= c.tile[2] or tile[3] ~= c.tile[3] or code ~= c.code then
                problem(("locate(%s): cell tile/code do not match its min %s size %s"):format(fmtp(p), fmtp(m), fmt(s)))
              end
              if not map:cube_free(math.floor(m[1]), math.floor(m[2]), math.floor(m[3]), math.floor(s)) then
                problem(("locate(%s): cell min %s size %s holds blocked leaves"):format(fmtp(p), fmtp(m), fmt(s)))
              elseif s < N then
                local ps = 2 * s
                if map:cube_free(math.floor(m[1] / ps) * ps, math.floor(m[2] / ps) * ps, math.floor(m[3] / ps) * ps, ps) then
                  problem(("locate(%s): cell min %s size %s is not maximal (its parent is free)"):format(fmtp(p), fmtp(m), fmt(s)))
                end
              end
            end
          end
        end
      end
    end
  end
  if n > MAX_REPORT then problems[#problems + 1] = ("locate: ... %d problems in all"):format(n) end
  return cells, leafcell
end

-- neighbors() of every free cell against the free leaves just beyond each of its faces.
local FACES = { { 1, -1, "-x" }, { 1, 1, "+x" }, { 2, -1, "-y" }, { 2, 1, "+y" }, { 3, -1, "-z" }, { 3, 1, "+z" } }

local function neighbors_check(sc, cells, leafcell, problems)
  local t, map = sc.t, sc.map
  local n = 0
  for _, c in pairs(cells) do
    local want = {}
    local s, m = math.floor(c.size), { math.floor(c.min[1]), math.floor(c.min[2]), math.floor(c.min[3]) }
    for _, f in ipairs(FACES) do
      local a, dir, name = f[1], f[2], f[3]
      local b1, b2 = a % 3 + 1, (a + 1) % 3 + 1
      for u = 0, s - 1 do
        for w = 0, s - 1 do
          local q = { m[1], m[2], m[3] }
          q[a] = dir < 0 and m[a] - 1 or m[a] + s
          q[b1], q[b2] = m[b1] + u, m[b2] + w
          if map:inside(q[1], q[2], q[3]) and not map:blocked(q[1], q[2], q[3]) then
            want[leafcell[q[1] + map.X * (q[2] + map.Y * q[3])] .. name] = true
          end
        end
      end
    end
    local got = {}
    for _, nb in ipairs(t:neighbors(c)) do
      local k = (nb.tile[1] + sc.tiles[1] * (nb.tile[2] + sc.tiles[2] * nb.tile[3])) * 2 ^ 32 + nb.code
      got[k .. nb.face] = true
    end
    for k in pairs(want) do
      if not got[k] then
        n = n + 1
        if n <= MAX_REPORT then
          problems[#problems + 1] = ("neighbors of cell min %s size %d miss %s"):format(fmtp(c.min), s, k)
        end
      end
    end
    for k in pairs(got) do
      if not want[k] then
        n = n + 1
        if n <= MAX_REPORT then
          problems[#problems + 1] = ("neighbors of cell min %s size %d list an extra %s"):format(fmtp(c.min), s, k)
        end
      end
    end
  end
  if n > MAX_REPORT then problems[#problems + 1] = ("neighbors: ... %d problems in all"):format(n) end
end

-- Each tile's blob decoded into a fresh tree of the same shape encodes to the same bytes.
local function roundtrip_check(sc, problems)
  local u = tree.new { tiles = sc.tiles, depth = sc.depth }
  for k = 0, sc.tiles[3] - 1 do
    for j = 0, sc.tiles[2] - 1 do
      for i = 0, sc.tiles[1] - 1 do
        local blob = sc.t:encode_tile(i, j, k)
        local ok, err = u:decode_tile(i, j, k, blob)
        if not ok then
          problems[#problems + 1] = ("decode_tile(%d, %d, %d) of its own blob: %s"):format(i, j, k, tostring(err))
        elseif u:encode_tile(i, j, k) ~= blob then
          problems[#problems + 1] = ("tile {%d,%d,%d} encodes differently after decode"):format(i, j, k)
        end
      end
    end
  end
  if #problems == 0 and u:stats().nodes ~= sc.t:stats().nodes then
    problems[#problems + 1] = "node count differs after decoding every tile"
  end
  u:close()
end

-- fill() from a random free leaf against a flood fill of the reference: the face-connected free
-- leaves become blocked, nothing else changes, and the count is the number of free cells among them.
-- The reference map is updated in place.
local function fill_check(sc, leafcell, problems)
  local map = sc.map
  local r = rng(sc.seed + 77)
  local start
  for _ = 1, 50 do
    local x, y, z = r.int(0, map.X - 1), r.int(0, map.Y - 1), r.int(0, map.Z - 1)
    if not map:blocked(x, y, z) then
      start = { x, y, z }
      break
    end
  end
  if not start then return end
  -- breadth-first over leaf ids x + X * (y + Y * z)
  local X, Y, Z = map.X, map.Y, map.Z
  local XY = X * Y
  local b = map.b
  local sid = start[1] + X * (start[2] + Y * start[3])
  local queue, seen, cells, ncells = { sid }, { [sid] = true }, {}, 0
  local head = 1
  local function visit(id)
    if not seen[id] and not b[id] then
      seen[id] = true
      queue[#queue + 1] = id
    end
  end
  while head <= #queue do
    local id = queue[head]
    head = head + 1
    local key = leafcell[id]
    if not cells[key] then
      cells[key] = true
      ncells = ncells + 1
    end
    local x, y, z = id % X, math.floor(id / X) % Y, math.floor(id / XY)
    if x > 0 then visit(id - 1) end
    if x < X - 1 then visit(id + 1) end
    if y > 0 then visit(id - X) end
    if y < Y - 1 then visit(id + X) end
    if z > 0 then visit(id - XY) end
    if z < Z - 1 then visit(id + XY) end
  end
  local p = { start[1] + 0.5, start[2] + 0.5, start[3] + 0.5 }
  local got = sc.t:fill(p)
  if got ~= ncells then
    problems[#problems + 1] = ("fill(%s) = %s, the region holds %d free cells"):format(fmtp(p), tostring(got), ncells)
  end
  for _, id in ipairs(queue) do b[id] = true end
  local before = #problems
  tile_blobs_check(sc, problems)
  if #problems > before then
    table.insert(problems, before + 1, ("after fill(%s):"):format(fmtp(p)))
  end
end

local function fail_if(problems, sc)
  if #problems > 0 then
    assert(false, describe_scene(sc) .. "\n" .. table.concat(problems, "\n"))
  end
end

---------------------------------------------------------------------------------------------------

describe("the reference itself", function()
  it("rasterises boxes and triangles by the stated rules", function()
    local m = dense_new(8, 8, 8)
    m:add_box({ 2, 2, 2 }, { 4, 4, 4 })
    assert.is_true(m:blocked(2, 2, 2) and m:blocked(3, 3, 3))
    assert.is_false(m:blocked(1, 2, 2) or m:blocked(4, 3, 3))
    m = dense_new(8, 8, 8)
    m:add_box({ 4, 1, 1 }, { 4, 1.5, 1.5 }) -- flat at x = 4: leaves 3 and 4
    assert.is_true(m:blocked(3, 1, 1) and m:blocked(4, 1, 1))
    assert.is_false(m:blocked(5, 1, 1) or m:blocked(2, 1, 1) or m:blocked(4, 2, 1))
    m = dense_new(16, 16, 16)
    m:add_triangle { { 0, 0, 4 }, { 8, 0, 4 }, { 0, 8, 4 } }
    assert.is_true(m:blocked(1, 1, 3) and m:blocked(1, 1, 4) and m:blocked(7, 1, 4) and m:blocked(6, 2, 3))
    assert.is_true(m:blocked(8, 0, 4))
    assert.is_false(m:blocked(1, 1, 2) or m:blocked(1, 1, 5) or m:blocked(7, 2, 4) or m:blocked(8, 1, 4))
    -- a flat triangle touching a leaf at one corner only
    m = dense_new(8, 8, 8)
    m:add_triangle { { 0, 0, 2 }, { 4, 0, 2 }, { 0, 4, 2 } }
    assert.is_true(m:blocked(2, 2, 2)) -- touches the corner (2, 2, 2)
    assert.is_false(m:blocked(3, 2, 2))
  end)

  it("walks known segments to known answers", function()
    local m = dense_new(8, 8, 8)
    m:add_box({ 4, 0, 0 }, { 5, 8, 8 })
    assert.are.same({ false, 0.4 }, { ref_visible(m, { 0, 4.5, 4.5 }, { 10, 4.5, 4.5 }) })
    assert.are.same({ true }, { ref_visible(m, { 0, 4.5, 4.5 }, { 4, 4.5, 4.5 }) })
    assert.are.same({ true }, { ref_visible(m, { 4, 0.5, 0.5 }, { 4, 7.5, 7.5 }) })
    assert.are.same({ false, 0 }, { ref_visible(m, { -1, 0.5, 0.5 }, { 2, 0.5, 0.5 }) })
  end)
end)

describe("random scenes against the dense reference", function()
  it("agree leaf by leaf, cell by cell (geometry off tile borders)", function()
    for s = 1, 40 do
      local sc = random_scene(BASE_SEED * 1000 + s, false)
      local problems = {}
      tile_blobs_check(sc, problems)
      local cells, leafcell = locate_check(sc, problems)
      if #problems == 0 then neighbors_check(sc, cells, leafcell, problems) end
      if #problems == 0 then roundtrip_check(sc, problems) end
      if #problems == 0 then fill_check(sc, leafcell, problems) end
      fail_if(problems, sc)
      sc.t:close()
    end
  end)

  it("agree when geometry touches a tile border from above", function()
    for s = 1, 12 do
      local sc = random_scene(BASE_SEED * 1000 + 500 + s, true)
      local problems = {}
      tile_blobs_check(sc, problems)
      locate_check(sc, problems)
      fail_if(problems, sc)
      sc.t:close()
    end
  end)
end)

---------------------------------------------------------------------------------------------------
-- Line of sight

-- Compare tree:visible and tree:raycast with the reference on one segment; returns nil or a problem.
local function check_segment(t, map, a, b)
  local want_clear, want_t = ref_visible(map, a, b)
  local vis = t:visible(a, b)
  local th, hit = t:raycast(a, b)
  local what = ("segment %s -> %s: "):format(fmtp(a), fmtp(b))
  if vis ~= want_clear then
    return what .. ("visible = %s, reference %s"):format(tostring(vis), want_clear and "clear" or ("blocked at t = " .. fmt(want_t)))
  end
  if want_clear then
    if th ~= nil then return what .. ("raycast = %s, reference clear"):format(fmt(th)) end
  else
    if th ~= want_t then
      return what .. ("raycast t = %s, reference t = %s"):format(th == nil and "nil (clear)" or fmt(th), fmt(want_t))
    end
    for j = 1, 3 do
      if hit[j] ~= a[j] + th * (b[j] - a[j]) then return what .. "raycast point is not a + t (b - a)" end
    end
  end
  return nil
end

-- A voxel scene for line of sight: random unit voxels and a few boxes (positive volume).
-- sparse = true: deeper tiles (depth 5 or 6) with few voxels, so the octree walk takes long jumps.
local function voxel_scene(seed, sparse)
  local r = rng(seed)
  local sc = { seed = seed, geometry = {} }
  if sparse then
    sc.depth = r.int(5, 6)
    sc.tiles = { r.int(1, 2), r.int(1, 2), 1 }
  else
    sc.depth = r.int(2, 4)
    sc.tiles = { r.int(1, 3), r.int(1, 3), r.int(1, 3) }
  end
  while bits.shl(sc.tiles[1] * sc.tiles[2] * sc.tiles[3], 3 * sc.depth) > 64 * 64 * 64 do
    local a = r.int(1, 3)
    if sc.tiles[a] > 1 then sc.tiles[a] = sc.tiles[a] - 1 end
  end
  local N = bits.shl(1, sc.depth)
  local D = { sc.tiles[1] * N, sc.tiles[2] * N, sc.tiles[3] * N }
  local density = sparse and r.pick { 0.0002, 0.001, 0.004 } or r.pick { 0.02, 0.08, 0.2, 0.35 }
  local nvox = math.floor(D[1] * D[2] * D[3] * density / 4) + 1
  for _ = 1, nvox do
    local x, y, z = r.int(0, D[1] - 1), r.int(0, D[2] - 1), r.int(0, D[3] - 1)
    sc.geometry[#sc.geometry + 1] = { kind = "box", lo = { x + 0.0, y + 0.0, z + 0.0 }, hi = { x + 1.0, y + 1.0, z + 1.0 } }
  end
  if r.chance(0.3) then -- one wholly blocked (solid) tile
    local lo = { r.int(0, sc.tiles[1] - 1) * N + 0.0, r.int(0, sc.tiles[2] - 1) * N + 0.0, r.int(0, sc.tiles[3] - 1) * N + 0.0 }
    sc.geometry[#sc.geometry + 1] = { kind = "box", lo = lo, hi = { lo[1] + N, lo[2] + N, lo[3] + N } }
  end
  for _ = 1, r.int(0, 3) do
    local lo, hi = {}, {}
    for a = 1, 3 do
      lo[a] = r.chance(0.5) and r.int(0, D[a] - 1) + 0.0 or r.range(0, D[a])
      hi[a] = lo[a] + (r.chance(0.5) and r.int(1, 6) + 0.0 or r.range(0.1, 6))
    end
    sc.geometry[#sc.geometry + 1] = { kind = "box", lo = lo, hi = hi }
  end
  build(sc)
  sc.r = r
  return sc
end

-- Segment generators: each returns a, b.
local function seg_generators(sc)
  local r, D, N = sc.r, sc.dims, sc.N
  local function pt(kind, margin)
    margin = margin or 0
    local p = {}
    for a = 1, 3 do
      local x = r.range(-margin, D[a] + margin)
      if kind == "int" then x = math.floor(x + 0.5) + 0.0
      elseif kind == "half" then x = math.floor(x) + 0.5
      elseif kind == "quarter" then x = math.floor(x * 4) / 4 end
      p[a] = x
    end
    return p
  end
  local kinds = { "int", "half", "quarter", "float" }
  return {
    random = function() return pt("float", 1), pt("float", 1) end,
    inside = function() return pt("float"), pt("float") end,
    centres = function()
      local a = pt("half")
      local b = pt("half")
      for j = 1, 3 do
        a[j] = math.min(a[j], D[j] - 0.5)
        b[j] = math.min(b[j], D[j] - 0.5)
      end
      return a, b
    end,
    near_centres = function() -- centre to a nearby centre: short diagonals through edges and corners
      local a = pt("half")
      local b = {}
      for j = 1, 3 do
        a[j] = math.min(a[j], D[j] - 0.5)
        b[j] = a[j] + r.int(-2, 2)
      end
      return a, b
    end,
    lattice = function() return pt("int"), pt("int") end,
    quarters = function() return pt("quarter"), pt("quarter") end,
    axis = function()
      local a = pt(r.pick(kinds))
      local b = { a[1], a[2], a[3] }
      local j = r.int(1, 3)
      b[j] = pt(r.pick(kinds), 1)[j]
      return a, b
    end,
    wall = function() -- on a lattice plane of one axis (often a tile border)
      local a, b = pt(r.pick(kinds)), pt(r.pick(kinds))
      local j = r.int(1, 3)
      local k = r.chance(0.3) and r.int(0, math.floor(D[j] / N)) * N or r.int(0, D[j])
      a[j], b[j] = k + 0.0, k + 0.0
      return a, b
    end,
    edge = function() -- along a lattice edge (two integer coordinates fixed)
      local a, b = pt(r.pick(kinds)), pt(r.pick(kinds))
      local j = r.int(1, 3)
      for i = 1, 3 do
        if i ~= j then
          a[i] = r.int(0, D[i]) + 0.0
          b[i] = a[i]
        end
      end
      return a, b
    end,
    diagonal = function() -- 45 degrees in a plane or in space
      local a = pt(r.pick { "int", "half", "half", "quarter" })
      local dir
      repeat
        dir = { r.int(-1, 1), r.int(-1, 1), r.int(-1, 1) }
      until (dir[1] ~= 0 and 1 or 0) + (dir[2] ~= 0 and 1 or 0) + (dir[3] ~= 0 and 1 or 0) >= 2
      local L = r.int(1, 2 * N) / (r.chance(0.5) and 1 or 2)
      return a, { a[1] + dir[1] * L, a[2] + dir[2] * L, a[3] + dir[3] * L }
    end,
    point = function() -- zero length
      local a = pt(r.pick(kinds))
      return a, { a[1], a[2], a[3] }
    end,
    tiny = function() -- very short, often across a plane
      local a = pt(r.pick(kinds))
      local b = {}
      for j = 1, 3 do b[j] = a[j] + r.range(-1, 1) * r.pick { 1e-12, 1e-6, 1e-3 } end
      return a, b
    end,
    far = function() -- from inside to far outside the map
      return pt("float"), pt(r.pick(kinds), 40)
    end,
    border = function() -- crossing a tile border, near or on it
      local a, b = pt(r.pick(kinds)), pt(r.pick(kinds))
      local j = r.int(1, 3)
      local k = r.int(0, math.floor(D[j] / N)) * N
      a[j] = k - r.pick { 0.5, 1, 0.25, 2.5, r.range(0, 3) }
      b[j] = k + r.pick { 0.5, 1, 0, 1.5, r.range(0, 3) }
      if r.chance(0.5) then a, b = b, a end
      return a, b
    end,
  }
end

local GEN_ORDER = {
  "random", "inside", "centres", "near_centres", "lattice", "quarters", "axis", "wall", "edge", "diagonal",
  "point", "tiny", "far", "border",
}

local function run_segments(sc, rounds, problems)
  local gens, total = seg_generators(sc), 0
  for _ = 1, rounds do
    for _, name in ipairs(GEN_ORDER) do
      local a, b = gens[name]()
      local p = check_segment(sc.t, sc.map, a, b)
      if not p then p = check_segment(sc.t, sc.map, b, a) end
      total = total + 2
      if p and #problems < MAX_REPORT then problems[#problems + 1] = ("[%s] %s"):format(name, p) end
    end
  end
  if #problems > 0 then
    assert(false, ("seed %d: tree.new{ tiles = {%d, %d, %d}, depth = %d } with %d unit voxels and boxes\n"):format(
      sc.seed, sc.tiles[1], sc.tiles[2], sc.tiles[3], sc.depth, #sc.geometry) .. table.concat(problems, "\n"))
  end
  return total
end

describe("line of sight against the dense reference", function()
  it("agrees on thousands of random segments (visible, raycast t)", function()
    local total = 0
    for s = 1, 30 do
      local sc = voxel_scene(BASE_SEED * 1000 + 800 + s)
      local problems = {}
      tile_blobs_check(sc, problems) -- the voxels themselves must agree first
      fail_if(problems, sc)
      total = total + run_segments(sc, 20, problems)
      sc.t:close()
    end
    assert.is_true(total >= 10000)
  end)

  it("agrees in sparse deep scenes, where the octree walk jumps whole cells", function()
    local total = 0
    for s = 1, 8 do
      local sc = voxel_scene(BASE_SEED * 1000 + 850 + s, true)
      local problems = {}
      tile_blobs_check(sc, problems)
      fail_if(problems, sc)
      total = total + run_segments(sc, 20, problems)
      sc.t:close()
    end
    assert.is_true(total >= 4000)
  end)

  it("agrees on every voxel-centre segment of small dense scenes", function()
    -- all pairs of centres of a 4x4x4 map (two tiles of depth 1 per axis), 40% voxels blocked
    for s = 1, 3 do
      local r = rng(BASE_SEED * 1000 + 900 + s)
      local sc = { seed = BASE_SEED * 1000 + 900 + s, geometry = {}, depth = 1, tiles = { 2, 2, 2 } }
      for z = 0, 3 do
        for y = 0, 3 do
          for x = 0, 3 do
            if r.chance(0.4) then
              sc.geometry[#sc.geometry + 1] = { kind = "box", lo = { x, y, z }, hi = { x + 1, y + 1, z + 1 } }
            end
          end
        end
      end
      build(sc)
      local problems = {}
      local pts = {}
      for z = 0, 3 do
        for y = 0, 3 do
          for x = 0, 3 do pts[#pts + 1] = { x + 0.5, y + 0.5, z + 0.5 } end
        end
      end
      for i = 1, #pts do
        for j = 1, #pts do
          if i ~= j and (i + j + s) % 3 == 0 then
            local p = check_segment(sc.t, sc.map, pts[i], pts[j])
            if p and #problems < MAX_REPORT then problems[#problems + 1] = p end
          end
        end
      end
      fail_if(problems, sc)
    end
  end)
end)

describe("line of sight, hand-made cases", function()
  -- one 8^3 tile; the reference and the tree must both give the known answer
  local function scene(voxels)
    local sc = { seed = 0, geometry = {}, depth = 3, tiles = { 1, 1, 1 } }
    for _, v in ipairs(voxels) do
      sc.geometry[#sc.geometry + 1] = { kind = "box", lo = { v[1], v[2], v[3] }, hi = { v[1] + 1, v[2] + 1, v[3] + 1 } }
    end
    return build(sc)
  end
  local function expect(sc, a, b, clear, t)
    local rc, rt = ref_visible(sc.map, a, b)
    assert.are.equal(clear, rc, "reference")
    assert.are.equal(clear, sc.t:visible(a, b), "tree:visible")
    local th, hit = sc.t:raycast(a, b)
    if clear then
      assert.is_nil(th)
    else
      assert.are.equal(t, rt, "reference t")
      assert.are.equal(t, th, "tree:raycast t")
      assert.are.same({ a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2]), a[3] + t * (b[3] - a[3]) }, hit)
    end
  end

  it("blocks the zero-width diagonal gap between voxels meeting at an edge", function()
    local sc = scene { { 2, 3, 0 }, { 3, 2, 0 } }
    expect(sc, { 2.5, 2.5, 0.5 }, { 3.5, 3.5, 0.5 }, false, 0.5)
    expect(sc, { 3.5, 3.5, 0.5 }, { 2.5, 2.5, 0.5 }, false, 0.5)
    expect(sc, { 0.5, 0.5, 0.5 }, { 6.5, 6.5, 0.5 }, false, 2.5 / 6)
    -- the same gap one layer up, where the voxels are free, is clear
    expect(sc, { 2.5, 2.5, 1.5 }, { 3.5, 3.5, 1.5 }, true)
    -- running along the edge itself (x = y = 3) is clear: free voxels lie on both sides
    expect(sc, { 3, 3, 0.25 }, { 3, 3, 7.5 }, true)
  end)

  it("blocks the zero-width gap at a corner where voxels meet only there", function()
    local sc = scene { { 3, 3, 4 }, { 3, 4, 3 }, { 4, 3, 3 }, { 4, 4, 4 } }
    expect(sc, { 3.5, 3.5, 3.5 }, { 4.5, 4.5, 4.5 }, false, 0.5) -- (4,4,4) is blocked anyway
    local u = scene { { 3, 4, 3 }, { 4, 3, 3 }, { 3, 3, 4 }, { 4, 4, 3 }, { 4, 3, 4 }, { 3, 4, 4 } }
    -- from (3,3,3) to (4,4,4) through the corner (4,4,4): all six side voxels blocked
    expect(u, { 3.5, 3.5, 3.5 }, { 4.5, 4.5, 4.5 }, false, 0.5)
    -- with (4,3,3) and (4,4,3) free there is a face path (3,3,3) (4,3,3) (4,4,3) (4,4,4)
    local w = scene { { 3, 4, 3 }, { 3, 3, 4 }, { 4, 3, 4 }, { 3, 4, 4 } }
    expect(w, { 3.5, 3.5, 3.5 }, { 4.5, 4.5, 4.5 }, true)
  end)

  it("lets a segment slide along a wall face", function()
    local voxels = {}
    for x = 0, 7 do
      for z = 0, 7 do voxels[#voxels + 1] = { x, 3, z } end
    end
    local sc = scene(voxels) -- a wall filling y in [3, 4]
    expect(sc, { 0.5, 4, 0.5 }, { 7.5, 4, 7.5 }, true)
    expect(sc, { 0.5, 3, 0.5 }, { 7.5, 3, 6.25 }, true)
    expect(sc, { 0, 3, 0 }, { 8, 3, 8 }, true)
    expect(sc, { 0.5, 3.5, 0.5 }, { 7.5, 3.5, 0.5 }, false, 0)
    expect(sc, { 0.5, 2.5, 0.5 }, { 0.5, 4.5, 0.5 }, false, 0.25)
    expect(sc, { 0.5, 4.5, 0.5 }, { 0.5, 2.5, 0.5 }, false, 0.25)
  end)

  it("lets a segment touch a single blocked corner", function()
    local sc = scene { { 3, 3, 3 } }
    expect(sc, { 2.5, 2.5, 3.5 }, { 3.5, 3.5, 2.5 }, true)        -- through the corner (3,3,3)
    expect(sc, { 0.5, 0.5, 0.5 }, { 3, 3, 3 }, true)              -- ends on the corner
    expect(sc, { 3, 3, 3 }, { 0.5, 0.5, 0.5 }, true)              -- starts on it
    expect(sc, { 5, 5, 5 }, { 4, 4, 4 }, true)                    -- ends on the far corner
    expect(sc, { 0.5, 4, 4 }, { 7.5, 4, 4 }, true)                -- along an edge of the voxel
    expect(sc, { 2.5, 2.5, 2.5 }, { 4.5, 4.5, 4.5 }, false, 0.25) -- straight through it
    expect(sc, { 0.5, 3.5, 3.5 }, { 7.5, 3.5, 3.5 }, false, 2.5 / 7)
  end)

  it("treats outside the map as blocked", function()
    local sc = scene {}
    expect(sc, { 0, 0, 0 }, { 8, 8, 8 }, true)           -- corner to corner, t = 1 ignored
    expect(sc, { 0, 0.5, 0.5 }, { 0, 7.5, 7.5 }, true)   -- along the map's face x = 0
    expect(sc, { 4, 4, 4 }, { 9, 4, 4 }, false, 0.8)
    expect(sc, { -0.5, 4, 4 }, { 4, 4, 4 }, false, 0)
    expect(sc, { 0, 0, 0 }, { -1, 0, 0 }, false, 0)
  end)
end)
