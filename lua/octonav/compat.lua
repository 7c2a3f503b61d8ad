--- octonav.compat: what the Lua layers need from Lua 5.3 / 5.4, on Lua 5.1, LuaJIT 2.1 and 5.2 too
-- (issue 34; docs/lua-versions.md). The layers are written in the syntax every version parses (no `//`,
-- bit operators, `goto`, `<const>` or `<close>`), and call these where a version lacks a library function.
-- On 5.3 and 5.4 each is the standard function itself (no cost); elsewhere a replacement with the same
-- answers for the values octonav uses, or the C helper in octonav.core (string packing: see below).
--
-- Integers: 5.1, LuaJIT and 5.2 have one number type, a double, exact for integers up to 2^53.
-- `isinteger` and `tointeger` answer for integral numbers within +-2^53 there (a larger one may already
-- be rounded: refused, not guessed); on 5.3+ they are math.type(v) == "integer" and math.tointeger.
local core = require "octonav.core"

local M = {}

local floor = math.floor

--- True on Lua 5.3 and 5.4 (integer subtype, 64-bit integers); false on 5.1, LuaJIT and 5.2.
M.int64 = math.type ~= nil
--- The largest integer this version holds exactly and octonav accepts: 2^63 - 1 on 5.3+, 2^53 - 1
-- elsewhere.
M.maxinteger = math.maxinteger or 2 ^ 53 - 1

if M.int64 then
  local mtype = math.type
  M.isinteger = function(v) return mtype(v) == "integer" end
  M.tointeger = math.tointeger
else
  local LIMIT = 2 ^ 53
  M.isinteger = function(v)
    return type(v) == "number" and v == floor(v) and v > -LIMIT and v < LIMIT
  end
  M.tointeger = function(v)
    if type(v) == "number" and v == floor(v) and v > -LIMIT and v < LIMIT then return v end
    return nil
  end
end

--- table.unpack (5.1: unpack) and table.move (written out where absent).
M.unpack = table.unpack or _G.unpack -- (Lua 5.1: a global)
M.move = table.move or function(a1, f, e, t, a2)
  a2 = a2 or a1
  if e >= f then
    if t > e or t <= f or a1 ~= a2 then
      for i = 0, e - f do a2[t + i] = a1[f + i] end
    else
      for i = e - f, 0, -1 do a2[t + i] = a1[f + i] end
    end
  end
  return a2
end

--- package.searchpath (5.2+; written out for 5.1)
M.searchpath = package.searchpath or function(name, path)
  local file = name:gsub("%.", "/")
  for template in path:gmatch("[^;]+") do
    local f = template:gsub("%?", file)
    local h = io.open(f, "r")
    if h then
      h:close()
      return f
    end
  end
  return nil
end

--- string.pack / string.unpack where the version has them (5.3+), else octonav.core's pack / unpack:
-- the same formats for what octonav writes and reads (endianness < > =, B b H h I[n] i[n] with n
-- 1..8, f, d; no alignment or strings). In C rather than in Lua: floats need frexp / ldexp and byte
-- juggling per value, and view / debug pack thousands of them (see docs/lua-versions.md).
M.pack = string.pack or core.pack
M.unpack_bytes = string.unpack or core.unpack

--- Integer division and bit operations on non-negative integers below 2^53 (octonav's tile indices,
-- sizes, small keys): floor(a / b), a * 2^n, floor(a / 2^n), a % 2^n.
function M.idiv(a, b) return floor(a / b) end
function M.lshift(a, n) return a * floor(2 ^ n) end
function M.rshift(a, n) return floor(a / floor(2 ^ n)) end
--- 2^n as an integer (1 << n on 5.3+: an integer, not the float 2.0^n)
function M.pow2(n) return floor(2 ^ n) end
--- log2(x), exact for powers of two (Lua 5.1's math.log has no base argument)
function M.log2(x)
  local d = math.log(x) / math.log(2)
  local r = floor(d + 0.5)
  if 2 ^ r == x then return r end
  return d
end

--- os.execute as 5.2+ answers (true | nil, "exit" | "signal", code), also on 5.1 and LuaJIT (whose
-- os.execute returns the raw wait status)
if _VERSION == "Lua 5.1" then
  M.execute = function(cmd)
    local st = os.execute(cmd)
    if type(st) ~= "number" then return st end
    if st == 0 then return true, "exit", 0 end
    if st % 256 ~= 0 then return nil, "signal", st % 256 end
    return nil, "exit", floor(st / 256)
  end
else
  M.execute = os.execute
end

--- collectgarbage("isrunning") where the version has it (5.2+, LuaJIT 2.1): true or false; on Lua 5.1,
-- which cannot tell, nil.
if pcall(collectgarbage, "isrunning") then
  M.gc_isrunning = function() return collectgarbage("isrunning") end
else
  M.gc_isrunning = function() return nil end
end

--- LuaJIT: the modules a frame runs (the navigators, their budget and group update, the streamer's Lua,
-- the planner's and the smoother's) call compat.frame_module() from their main chunk, and their functions
-- run in LuaJIT's interpreter (jit.off(chunk, true)): they are glue between C calls, which LuaJIT's
-- compiler cuts into short traces stitched at each call. Compiled, 1,000 navigators on the seed's world
-- (streamed, budget ms 4) recorded ~1,600 traces in 1,000 frames and filled the machine-code area five
-- times in 600 (each a flush of every trace, and the compiling again), all of it inside the frames:
-- 150 arrivals and 186 frames over 4.5 ms in 1,000 frames; interpreted, 692 and 7 (the game's own code
-- still compiled; docs/benchmarks.md, session 32). octonav.library_jit(true) compiles them again.
local jit = rawget(_G, "jit")
if not (type(jit) == "table" and type(jit.off) == "function" and type(jit.on) == "function") then jit = nil end
local frame_chunks, library_jit = {}, false
function M.frame_module()
  local info = jit and debug and debug.getinfo and debug.getinfo(2, "f")
  if not (info and info.func) then return end
  frame_chunks[#frame_chunks + 1] = info.func
  if not library_jit then jit.off(info.func, true) end
end
--- compat.library_jit([on]) -> whether the frame modules were compiled before the call (LuaJIT; false
-- elsewhere and by default); on true or false turns their compiling on or off.
function M.library_jit(on)
  local was = library_jit
  if on ~= nil and jit then
    library_jit = on and true or false
    for _, f in ipairs(frame_chunks) do
      if library_jit then jit.on(f, true) else jit.off(f, true) end
    end
  end
  return was
end

--- The command that runs this Lua version, for the subprocesses a benchmark starts: $OCTONAV_LUA when
-- set (tools/runtests.sh sets it), else luajit, lua5.1 ... lua5.4 after the running one.
M.lua_command = os.getenv("OCTONAV_LUA") or (rawget(_G, "jit") and "luajit") or ("lua" .. _VERSION:match("%d+%.%d+"))

--- loadfile(path, mode, env) as 5.2+ (and LuaJIT) have it; on Lua 5.1 the mode is checked here ("t":
-- a precompiled chunk refused) and the environment set with setfenv.
if _VERSION == "Lua 5.1" and not rawget(_G, "jit") then
  M.loadfile = function(path, mode, env)
    if mode and not mode:find("b", 1, true) then
      local f = io.open(path, "rb")
      local first = f and f:read(1)
      if f then f:close() end
      if first == "\27" then return nil, "attempt to load a binary chunk (mode is '" .. mode .. "')" end
    end
    local chunk, err = loadfile(path)
    if chunk and env then setfenv(chunk, env) end -- luacheck: ignore 113 (setfenv: Lua 5.1's)
    return chunk, err
  end
else
  M.loadfile = loadfile
end

--- load(chunk, name, mode, env) as 5.2+ (and LuaJIT) have it, a string or a function chunk; on Lua 5.1
-- (whose load takes a function only, and no mode or environment) through loadstring and setfenv.
if _VERSION == "Lua 5.1" and not rawget(_G, "jit") then
  M.load = function(chunk, name, mode, env)
    if type(chunk) ~= "string" then
      local parts = {}
      for piece in chunk do
        if piece == "" then break end
        parts[#parts + 1] = piece
      end
      chunk = table.concat(parts)
    end
    if mode and not mode:find("b", 1, true) and chunk:byte(1) == 27 then
      return nil, "attempt to load a binary chunk (mode is '" .. mode .. "')"
    end
    local f, err = loadstring(chunk, name) -- luacheck: ignore 113 (loadstring: Lua 5.1's)
    if f and env then setfenv(f, env) end -- luacheck: ignore 113 (setfenv: Lua 5.1's)
    return f, err
  end
else
  M.load = load
end

return M
