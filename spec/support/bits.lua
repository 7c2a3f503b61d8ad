-- spec/support/bits.lua: integer operations for the specs on every Lua version (issue 34). On 5.3+ each
-- is the native operator (compiled from a string, so older parsers never see it); on 5.1, LuaJIT and
-- 5.2 the same answers for non-negative integers below 2^53 (the specs' codes, flags, keys, CRCs), by
-- arithmetic on 32-bit halves. Loaded with dofile("spec/support/bits.lua").
local M = {}
local floor = math.floor
local native = math.type ~= nil -- luacheck: ignore 143

if native then
  local f = assert(load([[
    return function(a, b) return a & b end, function(a, b) return a | b end, function(a, b) return a ~ b end,
      function(a, n) return a << n end, function(a, n) return a >> n end, function(a, b) return a // b end
  ]]))
  M.band, M.bor, M.bxor, M.shl, M.shr, M.idiv = f()
  return M
end

local P32 = 2 ^ 32
-- 32-bit xor / and / or a nibble at a time
local XOR, AND = {}, {}
for a = 0, 15 do
  for b = 0, 15 do
    local x, y, r, s, bit = a, b, 0, 0, 1
    for _ = 1, 4 do
      local p, q = x % 2, y % 2
      if p ~= q then r = r + bit end
      if p == 1 and q == 1 then s = s + bit end
      x, y, bit = (x - p) / 2, (y - q) / 2, bit * 2
    end
    XOR[a * 16 + b], AND[a * 16 + b] = r, s
  end
end
local function op32(t, a, b)
  local r, m = 0, 1
  for _ = 1, 8 do
    local p, q = a % 16, b % 16
    r = r + t[p * 16 + q] * m
    a, b, m = (a - p) / 16, (b - q) / 16, m * 16
  end
  return r
end
local function split(a) local lo = a % P32; return (a - lo) / P32, lo end
function M.bxor(a, b)
  local ah, al = split(a); local bh, bl = split(b)
  return op32(XOR, ah, bh) * P32 + op32(XOR, al, bl)
end
function M.band(a, b)
  local ah, al = split(a); local bh, bl = split(b)
  return op32(AND, ah, bh) * P32 + op32(AND, al, bl)
end
function M.bor(a, b) return a + b - M.band(a, b) end
function M.shl(a, n) return a * 2 ^ n end
function M.shr(a, n) return floor(a / 2 ^ n) end
function M.idiv(a, b) return floor(a / b) end
M.xor32 = function(a, b) return op32(XOR, a, b) end
return M
