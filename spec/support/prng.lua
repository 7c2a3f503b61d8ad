-- spec/support/prng.lua: the seeded pseudo-random generators of the specs, in pure Lua, so a seed
-- gives the same sequence on every machine (and the same sequence the specs' own copies gave).
-- Loaded with dofile("spec/support/prng.lua"); returns { xorshift, lcg }.
-- The 64-bit arithmetic is native on Lua 5.3+ (compiled from a string: older parsers never see it);
-- on 5.1, LuaJIT and 5.2 it is done on two 32-bit halves (`emulated`, also returned, so that a spec
-- can check both give the same numbers on 5.4: spec/82).
local bits = dofile("spec/support/bits.lua")
local floor = math.floor
local P32 = 2 ^ 32

-- xorshift64 (Marsaglia), 64-bit integer arithmetic of Lua 5.4 (>> is a logical shift). Used by
-- spec/02, 06, 07, 12 and 15. Each method call draws exactly one number from the generator: the top
-- 53 bits of the state (nxt53).
local function methods(r, nxt53)
  function r.int(lo, hi) return lo + nxt53() % (hi - lo + 1) end      -- lo..hi inclusive
  function r.float() return nxt53() * 2.0 ^ -53 end                   -- [0, 1)
  function r.range(lo, hi) return lo + (hi - lo) * r.float() end
  function r.chance(p) return r.float() < p end
  function r.pick(t) return t[r.int(1, #t)] end
  return r
end

local native_xorshift, native_lcg
if math.type then -- luacheck: ignore 143
  native_xorshift, native_lcg = assert(load([[
    local methods = ...
    local function xorshift(seed)
      local s = (seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) ~ 0x5DEECE66D
      if s == 0 then s = 1 end
      local function nxt()
        s = s ~ (s << 13)
        s = s ~ (s >> 7)
        s = s ~ (s << 17)
        return s
      end
      for _ = 1, 8 do nxt() end
      return methods({}, function() return nxt() >> 11 end)
    end
    local function lcg(seed)
      local s = seed
      return function()
        s = (s * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
        return (s >> 11) / (1 << 52)
      end
    end
    return xorshift, lcg
  ]]))(methods)
end

-- ---- the same on 32-bit halves (hi, lo), each 0 .. 2^32 - 1 ------------------------------------
local xor32 = bits.xor32 or bits.bxor
local function limbs(h, l) return l % 65536, floor(l / 65536), h % 65536, floor(h / 65536) end
local function mul64(ah, al, bh, bl) -- (a * b) mod 2^64
  local a0, a1, a2, a3 = limbs(ah, al)
  local b0, b1, b2, b3 = limbs(bh, bl)
  local r0 = a0 * b0
  local r1 = a0 * b1 + a1 * b0 + floor(r0 / 65536)
  local r2 = a0 * b2 + a1 * b1 + a2 * b0 + floor(r1 / 65536)
  local r3 = a0 * b3 + a1 * b2 + a2 * b1 + a3 * b0 + floor(r2 / 65536)
  return (r3 % 65536) * 65536 + r2 % 65536, (r1 % 65536) * 65536 + r0 % 65536
end
local function add64(ah, al, bh, bl)
  local l = al + bl
  local c = l >= P32 and 1 or 0
  return (ah + bh + c) % P32, l % P32
end
local function shl64(h, l, n) -- n < 32
  return (h * 2 ^ n) % P32 + floor(l / 2 ^ (32 - n)), (l * 2 ^ n) % P32
end
local function shr64(h, l, n)
  return floor(h / 2 ^ n), floor(l / 2 ^ n) + (h % 2 ^ n) * 2 ^ (32 - n)
end
local function split(v) local l = v % P32; return (v - l) / P32, l end

local function emulated_xorshift(seed)
  local sh, sl = split(seed % 2 ^ 53) -- the specs' seeds are small non-negative integers
  sh, sl = mul64(sh, sl, 0x9E3779B9, 0x7F4A7C15)
  sh, sl = add64(sh, sl, 0x632BE59B, 0xD9B4E019)
  sh, sl = xor32(sh, 0), xor32(sl, 0xDEECE66D)
  sh = xor32(sh, 0x5)
  if sh == 0 and sl == 0 then sl = 1 end
  local function nxt()
    local th, tl = shl64(sh, sl, 13); sh, sl = xor32(sh, th), xor32(sl, tl)
    th, tl = shr64(sh, sl, 7); sh, sl = xor32(sh, th), xor32(sl, tl)
    th, tl = shl64(sh, sl, 17); sh, sl = xor32(sh, th), xor32(sl, tl)
  end
  for _ = 1, 8 do nxt() end
  return methods({}, function()
    nxt()
    return sh * 2 ^ 21 + floor(sl / 2 ^ 11)
  end)
end

local function emulated_lcg(seed)
  local sh, sl = split(seed)
  return function()
    sh, sl = mul64(sh, sl, 0x5851F42D, 0x4C957F2D)
    sh, sl = add64(sh, sl, 0x14057B7E, 0xF767814F)
    sh = sh % 2 ^ 31
    return (sh * 2 ^ 21 + floor(sl / 2 ^ 11)) / 2 ^ 52
  end
end

return {
  xorshift = native_xorshift or emulated_xorshift,
  lcg = native_lcg or emulated_lcg,
  emulated = { xorshift = emulated_xorshift, lcg = emulated_lcg },
}
