-- spec/support/prng.lua: the seeded pseudo-random generators of the specs, in pure Lua, so a seed
-- gives the same sequence on every machine (and the same sequence the specs' own copies gave).
-- Loaded with dofile("spec/support/prng.lua"); returns { xorshift, lcg }.

-- xorshift64 (Marsaglia), 64-bit integer arithmetic of Lua 5.4 (>> is a logical shift). Used by
-- spec/02, 06, 07, 12 and 15. Each method call draws exactly one number from the generator.
local function xorshift(seed)
  local s = (seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) ~ 0x5DEECE66D
  if s == 0 then s = 1 end
  local r = {}
  local function nxt()
    s = s ~ (s << 13)
    s = s ~ (s >> 7)
    s = s ~ (s << 17)
    return s
  end
  for _ = 1, 8 do nxt() end
  function r.int(lo, hi) return lo + (nxt() >> 11) % (hi - lo + 1) end      -- lo..hi inclusive
  function r.float() return (nxt() >> 11) * 2.0 ^ -53 end                   -- [0, 1)
  function r.range(lo, hi) return lo + (hi - lo) * r.float() end
  function r.chance(p) return r.float() < p end
  function r.pick(t) return t[r.int(1, #t)] end
  return r
end

-- A 63-bit linear congruential generator (Knuth's MMIX constants): lcg(seed) is a function that
-- returns the next float in [0, 1). Used by spec/13 and spec/14.
local function lcg(seed)
  local s = seed
  return function()
    s = (s * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
    return (s >> 11) / (1 << 52)
  end
end

return { xorshift = xorshift, lcg = lcg }
