-- spec/support/pillar_pack.lua -- the pack the streamed specs share (spec/105, 143): 8 x 8 tiles of
-- 32^3 leaves (depth 5) over a floor 2 leaves thick, one pillar a tile (its place and height drawn from
-- the tile's indices), baked into a temporary directory. bake() -> the pack's directory (setup);
-- cleanup() removes every pack baked (teardown). NX, NZ, T: the tile grid and a tile's side.
local bw = dofile("spec/support/bakedworld.lua")
local files = dofile("spec/support/files.lua")

local M = { NX = 8, NZ = 8, T = 32 }
local NX, NZ, T = M.NX, M.NZ, M.T

local function remove_pack(dir)
  for k = 0, NZ - 1 do
    for i = 0, NX - 1 do
      os.remove(("%s/tiles/%d_0_%d.tile"):format(dir, i, k))
      os.remove(("%s/tiles/%d_0_%d.graph"):format(dir, i, k))
    end
  end
  os.remove(dir .. "/manifest.txt")
  os.remove(dir .. "/tiles")
  os.remove(dir .. "/holes")
  os.remove(dir)
end

local tmp = files.tracker(remove_pack)

local function config(dir)
  local geometry = { { box = { min = { 0, 0, 0 }, max = { NX * T, 2, NZ * T } } } }
  for i = 0, NX - 1 do
    for k = 0, NZ - 1 do
      local x, z = i * T + 8 + (i * 7 + k * 3) % 12, k * T + 6 + (i * 5 + k * 11) % 14
      geometry[#geometry + 1] = { box = { min = { x, 0, z }, max = { x + 4, 10 + (i + k) % 12, z + 5 } } }
    end
  end
  return { range = { min = { 0, 0, 0 }, max = { NX * T, T, NZ * T } }, depth = 5, scale = 1,
    geometry = geometry, output = dir, progress = function() end }
end

function M.bake()
  local dir = tmp.dir(true)
  assert(bw.call_bake(config(dir)))
  return dir
end

function M.cleanup() tmp.cleanup() end

return M
