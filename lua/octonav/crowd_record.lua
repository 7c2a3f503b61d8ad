--- octonav.crowd_record: a crowd's run recorded frame by frame, for the viewer to play (issue 33).
--
--   local record = require "octonav.crowd_record"
--   local rec = record.new(crowd, { every = 2, dt = 1 / 30 })
--   for _ = 1, 600 do crowd:update(1 / 30); rec:capture() end
--   rec:write("run.ocrowd")                  -- true | nil, reason (written beside and renamed over)
--   local again = record.read("run.ocrowd")  -- the recording | nil, reason
--   view.new():add(tree):add(again):write("run.html")  -- a page with a timeline over its frames
--
-- Each stored frame holds every agent's id, position, velocity and radius as float32 (32 bytes an
-- agent). Options of record.new (unknown names raise): every = 1 (store one frame in every `every`
-- calls to capture, the first included), dt = 1/30 (the seconds between two crowd frames: the
-- player's speed 1 plays the run in its own time).
--
-- The file (version 1, little-endian; docs/crowd.md "Recordings"):
--   "OCTOCRWD"  u32 version (1)  u32 flags (0)  f64 dt  u32 every  u32 frames
--   per frame:  u32 frame (the number of capture calls before it)  u32 n  then n agents of
--               u32 id, f32 x, y, z, vx, vy, vz, radius
--   u32 CRC-32 (zlib's) of every byte before it.
-- A file that is not one, of another version, cut short, with bytes after its end or whose CRC does
-- not match is refused: nil, "PATH: not a crowd recording (...)".
local compat = require "octonav.compat"
local core = require "octonav.core"

local M = {}

M.MAGIC = "OCTOCRWD"
M.VERSION = 1
M.AGENT_BYTES = 32
local HEADER = 8 + 4 + 4 + 8 + 4 + 4
local MAX_AGENTS = 1048575 -- octonav.crowd's max_agents at most

local pack, unpack_b, unpack = compat.pack, compat.unpack_bytes, compat.unpack
local FMT25 = "<" .. ("I4fffffff"):rep(25)

local Rec = {}
Rec.__index = Rec
Rec.__name = "octonav.crowd_record"

local function is_crowd(v)
  if type(v) ~= "table" and type(v) ~= "userdata" then return false end
  local mt = getmetatable(v)
  if type(v) == "userdata" then return type(mt) == "table" and mt.__name == "octonav.crowd" end
  local c = rawget(v, "c")
  local cmt = type(c) == "userdata" and getmetatable(c)
  return type(cmt) == "table" and cmt.__name == "octonav.crowd"
end

local function empty(dt, every)
  return setmetatable({ dt = dt, every = every, calls = 0, nums = {}, counts = {}, blobs = {}, n = 0 }, Rec)
end

--- A recorder of crowd (octonav.crowd). opts: every = 1, dt = 1/30.
function M.new(crowd, opts)
  if not is_crowd(crowd) then error("octonav.crowd_record.new: crowd must be an octonav.crowd", 2) end
  if opts ~= nil and type(opts) ~= "table" then error("octonav.crowd_record.new: opts must be a table", 2) end
  opts = opts or {}
  for k in pairs(opts) do
    if k ~= "every" and k ~= "dt" then
      error("octonav.crowd_record.new: unknown option '" .. tostring(k) .. "'", 2)
    end
  end
  local every, dt = opts.every or 1, opts.dt or 1 / 30
  if not compat.isinteger(every) or every < 1 or every > 0xffffffff then
    error("octonav.crowd_record.new: option 'every' must be an integer in [1, 4294967295]", 2)
  end
  if type(dt) ~= "number" or not (dt > 0 and dt <= 1) then
    error("octonav.crowd_record.new: option 'dt' must be a number in (0, 1]", 2)
  end
  local rec = empty(dt, every)
  rec.crowd, rec.radius, rec.known, rec.ids_t, rec.states_t, rec.info, rec.vals = crowd, {}, 0, {}, {}, {}, {}
  return rec
end

--- Count a frame of the crowd; every `every`-th call (the first included) stores its agents.
-- Returns true when this call stored a frame, false when it skipped it.
function Rec:capture()
  local crowd = self.crowd
  if not crowd then error("capture: this recording was read from a file: it records no crowd", 2) end
  local calls = self.calls
  self.calls = calls + 1
  if calls % self.every ~= 0 then return false end
  local ids, n = crowd:ids(self.ids_t)
  local st = crowd:states(self.states_t)
  local radius, info, parts, vals = self.radius, self.info, {}, self.vals
  local known = self.known
  for i = 1, n do
    local id, b, v = ids[i], 6 * (i - 1), 8 * ((i - 1) % 25)
    local r = radius[id]
    if not r then
      r = crowd:agent(id, info).radius
      radius[id], known = r, known + 1
    end
    vals[v + 1], vals[v + 2], vals[v + 3], vals[v + 4], vals[v + 5], vals[v + 6], vals[v + 7], vals[v + 8] =
      id, st[b + 1], st[b + 2], st[b + 3], st[b + 4], st[b + 5], st[b + 6], r
    if i % 25 == 0 or i == n then -- 25 agents a pack call
      local m = (i - 1) % 25 + 1
      parts[#parts + 1] = pack(m == 25 and FMT25 or ("<" .. ("I4fffffff"):rep(m)), unpack(vals, 1, 8 * m))
    end
  end
  if known > 2 * n + 64 then -- the radii of agents removed are forgotten, now and then
    local keep = {}
    for i = 1, n do keep[ids[i]] = radius[ids[i]] end
    known = n
    self.radius = keep
  end
  self.known = known
  local k = self.n + 1
  self.n, self.nums[k], self.counts[k], self.blobs[k] = k, calls, n, table.concat(parts)
  return true
end

--- The number of frames stored.
function Rec:frames() return self.n end

--- Frame i (1 .. rec:frames()): { frame = the capture call's number (0 first), n = agents,
-- ids = { id, ... }, data = { x, y, z, vx, vy, vz, r, ... } } (the float32 values as numbers).
function Rec:frame(i)
  if not compat.isinteger(i) or i < 1 or i > self.n then
    error(("frame: i must be an integer in [1, %d]"):format(self.n), 2)
  end
  local blob, n, ids, data = self.blobs[i], self.counts[i], {}, {}
  for a = 0, n - 1 do
    local id, x, y, z, vx, vy, vz, r = unpack_b("<I4fffffff", blob, a * 32 + 1)
    ids[a + 1] = id
    local d = 7 * a
    data[d + 1], data[d + 2], data[d + 3], data[d + 4], data[d + 5], data[d + 6], data[d + 7] = x, y, z, vx, vy, vz, r
  end
  return { frame = self.nums[i], n = n, ids = ids, data = data }
end

--- Frame i's records as stored (32 bytes an agent: u32 id, then 7 float32), its count of agents and
-- its crowd frame number.
function Rec:frame_bytes(i) return self.blobs[i], self.counts[i], self.nums[i] end

--- The recording as the bytes of its file.
function Rec:bytes()
  local parts = { M.MAGIC, pack("<I4I4dI4I4", M.VERSION, 0, self.dt, self.every, self.n) }
  for i = 1, self.n do
    parts[#parts + 1] = pack("<I4I4", self.nums[i], self.counts[i])
    parts[#parts + 1] = self.blobs[i]
  end
  local body = table.concat(parts)
  return body .. pack("<I4", core.crc32(body))
end

--- Write the recording to path, beside it and renamed over it: true | nil, reason.
function Rec:write(path)
  if type(path) ~= "string" then error("write: path must be a string", 2) end
  return core.write_file(path, self:bytes())
end

function Rec:__tostring()
  return ("octonav.crowd_record: %d frames, every %d, dt %g"):format(self.n, self.every, self.dt)
end

--- A recording from the bytes of its file: rec | nil, reason ("not a crowd recording (...)").
function M.decode(s)
  if type(s) ~= "string" then error("octonav.crowd_record.decode: bytes must be a string", 2) end
  local function bad(why) return nil, "not a crowd recording (" .. why .. ")" end
  if #s < #M.MAGIC or s:sub(1, #M.MAGIC) ~= M.MAGIC then return bad("no OCTOCRWD header") end
  if #s < HEADER + 4 then return bad("cut short in its header") end
  local version, flags, dt, every, nframes = unpack_b("<I4I4dI4I4", s, 9)
  if version ~= M.VERSION then return bad(("version %d, this reads %d"):format(version, M.VERSION)) end
  local crc = unpack_b("<I4", s, #s - 3)
  if crc ~= core.crc32(s:sub(1, #s - 4)) then return bad("its CRC does not match: the file is damaged") end
  if flags ~= 0 then return bad(("flags %d"):format(flags)) end
  if not (dt > 0 and dt <= 1) or every < 1 then return bad("dt or every out of range") end
  local rec, pos, stop = empty(dt, every), HEADER + 1, #s - 4
  for i = 1, nframes do
    if pos + 8 > stop + 1 then return bad(("cut short at frame %d of %d"):format(i, nframes)) end
    local num, n = unpack_b("<I4I4", s, pos)
    if n > MAX_AGENTS then return bad(("frame %d: %d agents"):format(i, n)) end
    pos = pos + 8
    if pos + n * 32 > stop + 1 then return bad(("cut short at frame %d of %d"):format(i, nframes)) end
    rec.nums[i], rec.counts[i], rec.blobs[i] = num, n, s:sub(pos, pos + n * 32 - 1)
    pos = pos + n * 32
  end
  if pos ~= stop + 1 then return bad(("%d bytes after its last frame"):format(stop + 1 - pos)) end
  rec.n = nframes
  return rec
end

--- A recording from a file: rec | nil, "PATH: reason".
function M.read(path)
  if type(path) ~= "string" then error("octonav.crowd_record.read: path must be a string", 2) end
  local s, err = core.read_file(path)
  if not s then return nil, err end
  local rec, why = M.decode(s)
  if not rec then return nil, path .. ": " .. why end
  return rec
end

--- Is v a recording (of this module)?
function M.is(v) return getmetatable(v) == Rec end

return M
