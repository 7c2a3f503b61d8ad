--- octonav.image: pictures of nav data for terminals and CI artefacts, as PNG files written here
-- (no library: stored deflate blocks, CRC-32 from the core, Adler-32 below; files are larger than a
-- compressor's, which does not matter for a slice of a few hundred pixels a side).
--
--   local img = image.slice(tree, { axis = "y", at = 12 })   -- a cut through the tree
--   local img = image.top(tree)                             -- looking down: height of the first hit
--   img:path(points)                                        -- a path drawn over either
--   assert(img:write_png("slice.png"))
local compat = require "octonav.compat"
local core = require "octonav.core"

local M = {}

M.colors = {
  background = { 21, 23, 28 },
  blocked = { 70, 74, 84 },
  free = { 226, 230, 236 },
  path = { 255, 77, 26 },
  start = { 51, 255, 77 },
  goal = { 255, 51, 204 },
}

local Image = {}
Image.__index = Image
Image.__name = "octonav.image"

--- A w x h image filled with rgb ({r, g, b}, 0..255).
function M.new(w, h, rgb)
  if not compat.isinteger(w) or w < 1 or w > 16384 then error("bad argument #1 to 'new' (width 1..16384 expected)", 2) end
  if not compat.isinteger(h) or h < 1 or h > 16384 then error("bad argument #2 to 'new' (height 1..16384 expected)", 2) end
  rgb = rgb or M.colors.background
  local px = {}
  for i = 1, w * h do px[i] = rgb end
  return setmetatable({ w = w, h = h, px = px }, Image)
end

function Image:__tostring() return ("octonav.image: %dx%d"):format(self.w, self.h) end

--- Pixel (x, y), 0-based, y down; nil outside.
function Image:get(x, y)
  if x < 0 or y < 0 or x >= self.w or y >= self.h then return nil end
  return self.px[y * self.w + x + 1]
end

function Image:set(x, y, rgb)
  if x < 0 or y < 0 or x >= self.w or y >= self.h then return end
  self.px[y * self.w + x + 1] = rgb
end

-- Bresenham between two pixel positions
function Image:line_px(x0, y0, x1, y1, rgb)
  x0, y0, x1, y1 = math.floor(x0 + 0.5), math.floor(y0 + 0.5), math.floor(x1 + 0.5), math.floor(y1 + 0.5)
  local dx, dy = math.abs(x1 - x0), -math.abs(y1 - y0)
  local sx, sy = x0 < x1 and 1 or -1, y0 < y1 and 1 or -1
  local err = dx + dy
  for _ = 0, dx - dy do
    self:set(x0, y0, rgb)
    if x0 == x1 and y0 == y1 then break end
    local e2 = 2 * err
    if e2 >= dy then err = err + dy; x0 = x0 + sx end
    if e2 <= dx then err = err + dx; y0 = y0 + sy end
  end
end

--- Draw a path (array of world points) projected onto the picture's plane, with its ends marked.
function Image:path(points, rgb)
  if type(points) ~= "table" then error("bad argument #1 to 'path' (table expected, got " .. type(points) .. ")", 2) end
  local to = self.project
  local prev
  for i = 1, #points do
    local x, y = to(points[i])
    if prev then self:line_px(prev[1], prev[2], x, y, rgb or M.colors.path) end
    prev = { x, y }
  end
  for i, mark in pairs { [1] = M.colors.start, [#points] = M.colors.goal } do
    if points[i] then
      local x, y = to(points[i])
      for dy = -1, 1 do for dx = -1, 1 do self:set(math.floor(x + 0.5) + dx, math.floor(y + 0.5) + dy, mark) end end
    end
  end
  return self
end

local AXES = { x = 1, y = 2, z = 3 }

local function check_opts(fname, opts, known)
  if opts == nil then return {} end
  if type(opts) ~= "table" then error("bad argument #2 to '" .. fname .. "' (table expected, got " .. type(opts) .. ")", 3) end
  for k in pairs(opts) do
    if not known[k] then error(fname .. ": unknown option '" .. tostring(k) .. "'", 3) end
  end
  return opts
end

-- The picture's frame over the tree: the plane's two axes (u right, v down the picture), the world
-- bounds and the pixel size (default: one leaf, so that at most max_side pixels a side).
local function frame(tree, axis, opts)
  local p = tree:params()
  local n = p.tile_leaves
  local lo = { p.origin[1], p.origin[2], p.origin[3] }
  local hi = { lo[1] + p.tiles[1] * n * p.scale, lo[2] + p.tiles[2] * n * p.scale, lo[3] + p.tiles[3] * n * p.scale }
  -- looking down -y: x right, z down; looking along x or z: the other horizontal right, y up
  local u, v = ({ [1] = 3, [2] = 1, [3] = 1 })[axis], ({ [1] = 2, [2] = 3, [3] = 2 })[axis]
  local flip_v = v == 2
  local max_side = opts.max_side or 1024
  if not compat.isinteger(max_side) or max_side < 1 then error("option 'max_side' must be a positive integer", 3) end
  local pixel = opts.pixel or math.max(p.scale, (hi[u] - lo[u]) / max_side, (hi[v] - lo[v]) / max_side)
  if type(pixel) ~= "number" or not (pixel > 0) or pixel == math.huge then
    error("option 'pixel' must be a positive number", 3)
  end
  local w = math.max(1, math.min(16384, math.ceil((hi[u] - lo[u]) / pixel - 1e-9)))
  local h = math.max(1, math.min(16384, math.ceil((hi[v] - lo[v]) / pixel - 1e-9)))
  local function world(px, py, along)
    local q = {}
    q[axis] = along
    q[u] = lo[u] + (px + 0.5) * pixel
    q[v] = flip_v and hi[v] - (py + 0.5) * pixel or lo[v] + (py + 0.5) * pixel
    return q
  end
  local function project(q)
    local x = (q[u] - lo[u]) / pixel - 0.5
    local y = flip_v and (hi[v] - q[v]) / pixel - 0.5 or (q[v] - lo[v]) / pixel - 0.5
    return x, y
  end
  return { w = w, h = h, lo = lo, hi = hi, world = world, project = project }
end

--- A cut through the tree on the plane axis = at (world units): blocked cells dark, free light.
-- opts: axis ("y"), at (the middle of the grid), pixel (world units a pixel: a leaf, or coarser so
-- that no side passes max_side = 1024).
function M.slice(tree, opts)
  opts = check_opts("slice", opts, { axis = true, at = true, pixel = true, max_side = true })
  local axis = AXES[opts.axis or "y"]
  if not axis then error("slice: option 'axis' must be \"x\", \"y\" or \"z\"", 2) end
  local f = frame(tree, axis, opts)
  local at = opts.at or (f.lo[axis] + f.hi[axis]) / 2
  if type(at) ~= "number" or at ~= at then error("slice: option 'at' must be a number", 2) end
  local img = M.new(f.w, f.h)
  img.project = f.project
  local c = M.colors
  for py = 0, f.h - 1 do
    for px = 0, f.w - 1 do
      local st = tree:locate(f.world(px, py, at))
      img.px[py * f.w + px + 1] = st == "free" and c.free or st == "blocked" and c.blocked or c.background
    end
  end
  return img
end

--- The tree seen from above: each pixel the first blocked point straight down, shaded by height
-- (high bright); open to the bottom: background. opts: pixel, max_side as for slice.
function M.top(tree, opts)
  opts = check_opts("top", opts, { pixel = true, max_side = true })
  local f = frame(tree, 2, opts)
  local img = M.new(f.w, f.h)
  img.project = f.project
  local ylo, yhi = f.lo[2], f.hi[2]
  for py = 0, f.h - 1 do
    for px = 0, f.w - 1 do
      local a, b = f.world(px, py, yhi - 1e-9), f.world(px, py, ylo + 1e-9)
      local t = tree:raycast(a, b) -- nil when clear, else the hit's fraction along a -> b
      if t then
        local y = yhi + (ylo - yhi) * t
        local k = 0.25 + 0.75 * (y - ylo) / (yhi - ylo)
        local g = math.floor(40 + 200 * k)
        img.px[py * f.w + px + 1] = { g, g, math.min(255, g + 12) }
      end
    end
  end
  return img
end

local function adler32(s)
  local a, b = 1, 0
  for i = 1, #s, 4096 do
    local chunk = { s:byte(i, math.min(#s, i + 4095)) }
    for j = 1, #chunk do
      a = a + chunk[j]
      b = b + a
    end
    a, b = a % 65521, b % 65521
  end
  return b * 65536 + a
end

local function chunk(kind, data)
  return compat.pack(">I4", #data) .. kind .. data .. compat.pack(">I4", core.crc32(kind .. data))
end

--- The image as PNG bytes (8-bit RGB, filter 0, deflate stored blocks).
function Image:png()
  local rows = {}
  for y = 0, self.h - 1 do
    local row = { "\0" }
    for x = 1, self.w do
      local c = self.px[y * self.w + x]
      row[#row + 1] = string.char(c[1], c[2], c[3])
    end
    rows[#rows + 1] = table.concat(row)
  end
  local raw = table.concat(rows)
  local blocks = { "\120\1" } -- zlib header: deflate, 32K window, no preset dictionary, check bits
  local n = #raw
  local i = 1
  repeat
    local len = math.min(65535, n - i + 1)
    local final = (i + len > n) and 1 or 0
    blocks[#blocks + 1] = compat.pack("<BI2I2", final, len, 65535 - len) .. raw:sub(i, i + len - 1)
    i = i + len
  until i > n
  blocks[#blocks + 1] = compat.pack(">I4", adler32(raw))
  return "\137PNG\r\n\26\n" .. chunk("IHDR", compat.pack(">I4I4BBBBB", self.w, self.h, 8, 2, 0, 0, 0)) ..
    chunk("IDAT", table.concat(blocks)) .. chunk("IEND", "")
end

--- Write the PNG: true | nil, err.
function Image:write_png(path)
  if type(path) ~= "string" then error("bad argument #1 to 'write_png' (string expected, got " .. type(path) .. ")", 2) end
  local f, err = io.open(path, "wb")
  if not f then return nil, err end
  local ok, werr = f:write(self:png())
  local cok, cerr = f:close()
  if not ok or not cok then return nil, path .. ": " .. tostring(werr or cerr) end
  return true
end

M._adler32 = adler32

return M
