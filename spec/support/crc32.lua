-- spec/support/crc32.lua: zlib's CRC-32 in Lua, independent of the C code (csrc/core/tilefile.c), for the
-- specs that check or craft tile blobs and tree files (spec/01, 02, 03).
-- Loaded with dofile("spec/support/crc32.lua"); returns the function crc32(s, n): the CRC of the
-- first n bytes of s (all of s when n is nil).
local CRC_TABLE = {}
for i = 0, 255 do
  local c = i
  for _ = 1, 8 do
    if c & 1 ~= 0 then c = 0xEDB88320 ~ (c >> 1) else c = c >> 1 end
  end
  CRC_TABLE[i] = c
end

local function crc32(s, n)
  local c = 0xFFFFFFFF
  for i = 1, n or #s do c = CRC_TABLE[(c ~ s:byte(i)) & 0xFF] ~ (c >> 8) end
  return c ~ 0xFFFFFFFF
end

return crc32
