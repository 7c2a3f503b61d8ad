-- spec/support/crc32.lua: zlib's CRC-32 in Lua, independent of the C code (csrc/core/tilefile.c), for the
-- specs that check or craft tile blobs and tree files (spec/01, 02, 03).
-- Loaded with dofile("spec/support/crc32.lua"); returns the function crc32(s, n): the CRC of the
-- first n bytes of s (all of s when n is nil). The bit operations are spec/support/bits.lua's (native on
-- Lua 5.3+, arithmetic elsewhere: issue 34).
local bits = dofile("spec/support/bits.lua")
local band, bxor, shr = bits.band, bits.bxor, bits.shr
local CRC_TABLE = {}
for i = 0, 255 do
  local c = i
  for _ = 1, 8 do
    if c % 2 ~= 0 then c = bxor(0xEDB88320, shr(c, 1)) else c = shr(c, 1) end
  end
  CRC_TABLE[i] = c
end

local function crc32(s, n)
  local c = 0xFFFFFFFF
  for i = 1, n or #s do c = bxor(CRC_TABLE[band(bxor(c, s:byte(i)), 0xFF)], shr(c, 8)) end
  return bxor(c, 0xFFFFFFFF)
end

return crc32
