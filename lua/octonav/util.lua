--- octonav.util: the small checks and point maths every Lua layer uses.
--
--   util.finite(v)        a number that is neither NaN nor infinite
--   util.is_point(p)      a table whose p[1], p[2], p[3] are finite numbers
--   util.is_count(v, min) an integer >= min, or a float with an integer value >= min below 2^53
--   util.copy(p)          { p[1], p[2], p[3] }
--   util.same3(a, b)      the first three entries are equal
--   util.dist(a, b)       Euclidean distance of two points
--   util.file_size(path)  bytes of a readable regular file, or nil (core.read_file: a FIFO or a device
--                         is refused at once instead of blocking)
--   util.class()          a method table whose instances look methods up in it (__index = itself)
--   util.subtable(t, k)   t[k], an empty table put there on first use (pools of lists keyed by owner)
--   util.raise(msg)       error(msg) at the user's call: the position of the first caller outside the
--                         library's Lua files (none under pcall), never a line of lua/octonav/
--
-- The predicates return booleans: each layer raises its own message (naming its function and
-- argument) when they fail.
local compat = require "octonav.compat"
compat.frame_module() -- (LuaJIT: run interpreted; compat.lua)
local M = {}

local type, sqrt, floor, huge = type, math.sqrt, math.floor, math.huge

function M.finite(v)
  return type(v) == "number" and v == v and v ~= huge and v ~= -huge
end

function M.is_point(p)
  if type(p) ~= "table" then return false end
  for k = 1, 3 do
    local v = p[k]
    if type(v) ~= "number" or v ~= v or v == huge or v == -huge then return false end
  end
  return true
end

function M.is_count(v, min)
  return compat.isinteger(v) and v >= min
    or (type(v) == "number" and v == floor(v) and v >= min and v < 2 ^ 53)
end

-- Is `source` (debug.getinfo's) one of the library's own Lua files (the source tree's lua/octonav/, an
-- installed share/lua/5.x/octonav/)?
local function library_source(source)
  return source:find("lua/octonav/", 1, true) ~= nil or source:find("/5%.%d/octonav/") ~= nil
end
M.library_source = library_source

function M.raise(msg)
  local level = 2
  while true do
    local info = debug.getinfo(level, "S")
    if not info or not library_source(info.source) then break end
    level = level + 1
  end
  error(msg, level)
end

function M.copy(p) return { p[1], p[2], p[3] } end

function M.same3(a, b) return a[1] == b[1] and a[2] == b[2] and a[3] == b[3] end

function M.dist(a, b)
  local dx, dy, dz = a[1] - b[1], a[2] - b[2], a[3] - b[3]
  return sqrt(dx * dx + dy * dy + dz * dz)
end

-- A regular file's size, or nil (missing, not a regular file: a FIFO never blocks). read_file with a
-- cap of 1 byte refuses a larger file before reading it and names its size: nothing is read.
function M.file_size(path)
  local s, err = require("octonav.core").read_file(path, 1)
  if s then return #s end
  local n = err and err:match(": (%d+) bytes, more than a well%-formed file can hold %(%d+%)$")
  return n and tonumber(n) or nil
end

function M.class()
  local c = {}
  c.__index = c
  return c
end

function M.subtable(t, k)
  local v = t[k]
  if v == nil then
    v = {}
    t[k] = v
  end
  return v
end

return M
