--- octonav.view: a self-contained HTML page (WebGL2, no network at view time) showing nav data:
-- the blocked surface or the free cells, paths with their search corridor (and the cells the search
-- visited), routes, portals, holes and doors, a crowd's agents (spheres at their radius), and a
-- recorded crowd run (octonav.crowd_record) played over a timeline (play/pause, speed, frame number),
-- with orbit, zoom, pan, layer toggles and a slice plane. It is a drawer for octonav.debug.draw, so
-- it shows exactly what an engine's own drawer would be given.
--
--   local v = view.new()                 -- a page under construction
--   v:add(tree_or_world)                 -- any object debug.draw takes, with its options
--   v:add(path, { corridor = true, query = q })  -- q: the query that found path (or tree = tree)
--   v:add(crowd, { neighbours = true })   -- a crowd as it is now (octonav.crowd)
--   v:add(recording)                     -- a recorded run (octonav.crowd_record): the page plays it
--   v:write("nav.html")                  -- or v:html() for the text
--   view.write("nav.html", { tree, path })  -- the same in one call
--
-- Everything is embedded as base64 float32 arrays; blocked space comes as merged faces (one mesh),
-- boxes as instances of one cube, so dungeon.obj's 47,558 blocked cells draw as 16,682 quads.
local compat = require "octonav.compat"
local ddraw = require "octonav.debug"
local record = require "octonav.crowd_record"
local core = require "octonav.core"

local M = {}

-- Colours per kind (linear 0..1), the same in the page and in the spec that reads its pixels.
M.colors = {
  background = { 0.08, 0.09, 0.11 },
  surface = { 0.72, 0.74, 0.78 },
  blocked = { 0.62, 0.64, 0.70 },
  free = { 0.20, 0.55, 0.95 },
  corridor = { 0.30, 0.85, 0.55 },
  visited = { 0.55, 0.35, 0.20 },
  frontier = { 0.35, 0.30, 0.50 },
  path = { 1.00, 0.30, 0.10 },
  waypoint = { 1.00, 0.85, 0.20 },
  start = { 0.20, 1.00, 0.30 },
  goal = { 1.00, 0.20, 0.80 },
  route = { 0.95, 0.95, 0.20 },
  portal = { 0.30, 0.95, 0.95 },
  hole = { 0.75, 0.45, 1.00 },
  door = { 0.40, 1.00, 0.40 },
  door_closed = { 1.00, 0.15, 0.15 },
  agent = { 1.00, 0.62, 0.20 },
  velocity = { 0.95, 0.95, 0.95 },
  neighbour = { 0.55, 0.55, 1.00 },
  agent_path = { 0.60, 0.90, 0.30 },
}
local KINDS = {}
for k in pairs(M.colors) do if k ~= "background" then KINDS[#KINDS + 1] = k end end
table.sort(KINDS)
local KIND_INDEX = {}
for i, k in ipairs(KINDS) do KIND_INDEX[k] = i - 1 end

local Page = {}
Page.__index = Page
Page.__name = "octonav.view"

--- A new, empty page. opts: { title = "octonav" }.
function M.new(opts)
  if opts ~= nil and type(opts) ~= "table" then
    error("bad argument #1 to 'new' (table expected, got " .. type(opts) .. ")", 2)
  end
  opts = opts or {}
  for k in pairs(opts) do
    if k ~= "title" then error("view.new: unknown option '" .. tostring(k) .. "'", 2) end
  end
  if opts.title ~= nil and type(opts.title) ~= "string" then error("view.new: option 'title' must be a string", 2) end
  return setmetatable({
    title = opts.title or "octonav",
    quads = {}, nquads = 0,   -- 12 corner floats + normal index
    boxes = {}, nboxes = 0,   -- min xyz, max xyz, kind
    lines = {}, nlines = 0,   -- a xyz, b xyz, kind
    points = {}, npoints = 0, -- xyz, kind
    spheres = {}, nspheres = 0, -- centre xyz, radius, kind
    rec = nil,                -- a recording to play (octonav.crowd_record)
    counts = {},
    lo = { math.huge, math.huge, math.huge }, hi = { -math.huge, -math.huge, -math.huge },
  }, Page)
end

function Page:__tostring()
  local s = ("octonav.view: %d quads, %d boxes, %d lines, %d points"):format(self.nquads, self.nboxes, self.nlines,
    self.npoints)
  if self.nspheres > 0 then s = s .. (", %d spheres"):format(self.nspheres) end
  if self.rec then s = s .. (", a crowd recording of %d frames"):format(self.rec:frames()) end
  return s
end

local function grow(self, p)
  local lo, hi = self.lo, self.hi
  for a = 1, 3 do
    if p[a] < lo[a] then lo[a] = p[a] end
    if p[a] > hi[a] then hi[a] = p[a] end
  end
end

local function kind_of(self, kind)
  local k = KIND_INDEX[kind]
  if not k then error("view: unknown kind '" .. tostring(kind) .. "'", 3) end
  self.counts[kind] = (self.counts[kind] or 0) + 1
  return k
end

-- the drawer methods (octonav.debug calls these)
-- a record of two points and a kind index (a box's corners, a line's ends) appended to self[list],
-- counted in self[count]
local function add_pair(self, list, count, a, b, k)
  local t, n = self[list], self[count] * 7
  t[n + 1], t[n + 2], t[n + 3], t[n + 4], t[n + 5], t[n + 6], t[n + 7] = a[1], a[2], a[3], b[1], b[2], b[3], k
  self[count] = self[count] + 1
  grow(self, a)
  grow(self, b)
end

function Page:box(mn, mx, kind)
  add_pair(self, "boxes", "nboxes", mn, mx, kind_of(self, kind))
end

function Page:line(a, b, kind)
  add_pair(self, "lines", "nlines", a, b, kind_of(self, kind))
end

function Page:point(p, kind)
  local k, t, n = kind_of(self, kind), self.points, self.npoints * 4
  t[n + 1], t[n + 2], t[n + 3], t[n + 4] = p[1], p[2], p[3], k
  self.npoints = self.npoints + 1
  grow(self, p)
end

function Page:sphere(c, r, kind)
  local k, t, n = kind_of(self, kind), self.spheres, self.nspheres * 5
  t[n + 1], t[n + 2], t[n + 3], t[n + 4], t[n + 5] = c[1], c[2], c[3], r, k
  self.nspheres = self.nspheres + 1
  grow(self, { c[1] - r, c[2] - r, c[3] - r })
  grow(self, { c[1] + r, c[2] + r, c[3] + r })
end

-- A recording to play: its frames' agents grow the bounds (each sphere whole).
local function add_recording(self, rec, opts)
  if self.rec then error("view:add: a page plays one crowd recording", 3) end
  opts = opts or {}
  for k in pairs(opts) do
    if k ~= "velocity_scale" then error("view:add: unknown option '" .. tostring(k) .. "' for a crowd recording", 3) end
  end
  local vs = opts.velocity_scale or 1
  if type(vs) ~= "number" or not (vs > 0 and vs < math.huge) then
    error("view:add: option 'velocity_scale' must be a finite number > 0", 3)
  end
  local unpack_b = compat.unpack_bytes
  for i = 1, rec:frames() do
    local blob, n = rec:frame_bytes(i)
    for a = 0, n - 1 do
      local x, y, z, _, _, _, r = unpack_b("<fffffff", blob, 32 * a + 5)
      grow(self, { x - r, y - r, z - r })
      grow(self, { x + r, y + r, z + r })
    end
  end
  self.rec, self.rec_vscale = rec, vs
  self.counts.agent = (self.counts.agent or 0) + 1
end

local NORMAL_INDEX = { [-1] = { 0, 2, 4 }, [1] = { 1, 3, 5 } }
function Page:quad(a, b, c, d, normal, kind)
  kind_of(self, kind)
  local t, n = self.quads, self.nquads * 13
  local ni
  for axis = 1, 3 do
    if normal[axis] ~= 0 then ni = NORMAL_INDEX[normal[axis] > 0 and 1 or -1][axis] end
  end
  for i, p in ipairs { a, b, c, d } do
    t[n + 3 * i - 2], t[n + 3 * i - 1], t[n + 3 * i] = p[1], p[2], p[3]
    grow(self, p)
  end
  t[n + 13] = ni or 0
  self.nquads = self.nquads + 1
end

--- Add anything octonav.debug.draw takes (tree, path, route, world, crowd) with its options, or a
-- crowd recording (octonav.crowd_record; opts: { velocity_scale = 1 }, seconds of velocity a line shows).
function Page:add(obj, opts)
  if record.is(obj) then add_recording(self, obj, opts)
  else ddraw.draw(obj, self, opts) end
  return self
end

-- (in C: a page of a 1,000-agent, 100-frame recording, 4.3 MB, took 1.48 s with it in Lua, 0.094 s)
local base64 = core.debug.base64
M._base64 = base64

local function f32(t, n)
  local parts, chunk = {}, {}
  for i = 1, n do
    chunk[#chunk + 1] = t[i]
    if #chunk == 200 then
      parts[#parts + 1] = compat.pack(("<" .. ("f"):rep(200)), compat.unpack(chunk))
      chunk = {}
    end
  end
  if #chunk > 0 then parts[#parts + 1] = compat.pack("<" .. ("f"):rep(#chunk), compat.unpack(chunk)) end
  return base64(table.concat(parts))
end

local function json_num(x)
  if x ~= x or x == math.huge or x == -math.huge then return "0" end
  return ("%.9g"):format(x)
end

local function palette_json()
  local parts = {}
  for i, k in ipairs(KINDS) do
    local c = M.colors[k]
    parts[i] = ("[%s,%s,%s]"):format(json_num(c[1]), json_num(c[2]), json_num(c[3]))
  end
  return "[" .. table.concat(parts, ",") .. "]"
end

local function names_json()
  local parts = {}
  for i, k in ipairs(KINDS) do parts[i] = '"' .. k .. '"' end
  return "[" .. table.concat(parts, ",") .. "]"
end

local function html_escape(s)
  return (s:gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }))
end

-- The recording as page data: its records as they are (32 bytes an agent: the id, then x y z vx vy vz
-- r as float32) and per frame [its crowd frame number, its first record, its count].
local function rec_json(rec, vscale)
  if not rec then return "null" end
  local blobs, index, first = {}, {}, 0
  for i = 1, rec:frames() do
    local blob, n, num = rec:frame_bytes(i)
    blobs[i] = blob
    index[i] = ("[%d,%d,%d]"):format(num, first, n)
    first = first + n
  end
  return ('{"data":"%s","frames":[%s],"dt":%s,"every":%d,"vscale":%s}'):format(base64(table.concat(blobs)),
    table.concat(index, ","), json_num(rec.dt), rec.every, json_num(vscale))
end

--- The page as one HTML string. opts: { probes = { {name, {x,y,z}}, ... }, frame = i } for tests:
-- with "#test" in its URL the page writes each probe's screen pixels (5x5 around it) and the frame
-- time as JSON into <pre id="result">. frame: the recording's frame (1 ..) the page opens at, paused
-- (a URL ending in "#frame=I" does the same; without either the page plays the recording from its start).
function Page:html(opts)
  opts = opts or {}
  for k in pairs(opts) do
    if k ~= "probes" and k ~= "frame" then error("view:html: unknown option '" .. tostring(k) .. "'", 2) end
  end
  if opts.frame ~= nil and (not compat.isinteger(opts.frame) or opts.frame < 1) then
    error("view:html: option 'frame' must be an integer >= 1", 2)
  end
  local probes = {}
  for i, p in ipairs(opts.probes or {}) do
    probes[i] = ('{"name":"%s","p":[%s,%s,%s]}'):format(tostring(p[1]):gsub('[^%w_]', '_'), json_num(p[2][1]),
      json_num(p[2][2]), json_num(p[2][3]))
  end
  local lo, hi = self.lo, self.hi
  if lo[1] > hi[1] then lo, hi = { -1, -1, -1 }, { 1, 1, 1 } end
  local data = ("{\"quads\":\"%s\",\"nquads\":%d,\"boxes\":\"%s\",\"nboxes\":%d,\"lines\":\"%s\",\"nlines\":%d," ..
    "\"points\":\"%s\",\"npoints\":%d,\"lo\":[%s,%s,%s],\"hi\":[%s,%s,%s],\"palette\":%s,\"kinds\":%s," ..
    "\"bg\":[%s,%s,%s],\"probes\":[%s],\"spheres\":\"%s\",\"nspheres\":%d,\"rec\":%s,\"frame\":%d}"):format(
    f32(self.quads, self.nquads * 13), self.nquads, f32(self.boxes, self.nboxes * 7), self.nboxes,
    f32(self.lines, self.nlines * 7), self.nlines, f32(self.points, self.npoints * 4), self.npoints,
    json_num(lo[1]), json_num(lo[2]), json_num(lo[3]), json_num(hi[1]), json_num(hi[2]), json_num(hi[3]),
    palette_json(), names_json(), json_num(M.colors.background[1]), json_num(M.colors.background[2]),
    json_num(M.colors.background[3]), table.concat(probes, ","), f32(self.spheres, self.nspheres * 5), self.nspheres,
    rec_json(self.rec, self.rec_vscale), opts.frame or 0)
  local template = M.template()
  return (template:gsub("@TITLE@", function() return html_escape(self.title) end)
    :gsub("@DATA@", function() return data end))
end

--- Write the page to path: true | nil, err.
function Page:write(path, opts)
  if type(path) ~= "string" then error("bad argument #1 to 'write' (string expected, got " .. type(path) .. ")", 2) end
  -- written beside and renamed over path (core.write_file): a failure leaves the previous page whole
  -- and says why ("PATH: cannot write: No space left on device")
  return core.write_file(path, self:html(opts))
end

--- One call: view.write(path, { obj, obj, ... } [, { draw = opts, title = ... }]).
function M.write(path, objs, opts)
  if type(objs) ~= "table" then error("bad argument #2 to 'write' (table expected, got " .. type(objs) .. ")", 2) end
  opts = opts or {}
  local page = M.new { title = opts.title }
  for _, o in ipairs(objs) do page:add(o, opts.draw) end
  return page:write(path)
end

--- The page's HTML+JS (the module octonav.view_page, a long string).
function M.template()
  return require "octonav.view_page"
end

return M
