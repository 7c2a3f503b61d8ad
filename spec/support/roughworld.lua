-- spec/support/roughworld.lua -- the world and pairs of specs 127 and 156: spec/42's walled world (3 x 1
-- x 3 tiles of 128 leaves, depth 7, lazy box sets) with a rough floor of 300 small blocks 1-6 leaves
-- high (seed 5), so that the joins near the ground build blocks of many boxes; and 10 pairs near the
-- ground from the first tile column to the last (seed 9).
local boxpack = dofile("spec/support/boxpack.lua")
local rng = dofile("spec/support/prng.lua").lcg

local M = { T = 128, cleanup = boxpack.cleanup }

--- bake() -> the pack's directory (boxpack.bake_walled's; M.cleanup() removes it).
function M.bake()
  local r, extra = rng(5), {}
  for k = 1, 300 do
    local x, z = math.floor(r() * 370), math.floor(r() * 370)
    extra[k] = { { x, 2, z }, { x + 2 + math.floor(r() * 10), 3 + math.floor(r() * 6), z + 2 + math.floor(r() * 10) } }
  end
  return boxpack.bake_walled(extra)
end

--- pairs_of(tree) -> { { a, b }, ... x 10 }: free points near the ground, a in tile column z 0, b in z 2.
function M.pairs_of(tree)
  local T = M.T
  local r, out = rng(9), {}
  local function free_in(ti, tk)
    for _ = 1, 10000 do
      local p = { ti * T + 1 + r() * (T - 2), 2.5 + r() * 6, tk * T + 1 + r() * (T - 2) }
      if tree:locate(p) == "free" then return p end
    end
    error("no free point")
  end
  for n = 1, 10 do out[n] = { free_in(n % 3, 0), free_in(2 - n % 3, 2) } end
  return out
end

return M
