-- spec/support/bakedworld.lua: the end-to-end world of spec/10 (planner) and spec/11 (navigator),
-- baked with octonav.bake and loaded with octonav.world (both optional: has_bake / has_world say
-- whether they are there). Loaded with dofile("spec/support/bakedworld.lua"); returns
-- { has_bake, has_world, world_mod, call_bake, config, bake_and_load }.
local has_bake, bake_mod = pcall(require, "octonav.bake")
local has_world, world_mod = pcall(require, "octonav.world")

-- octonav.bake as a function, a callable table or a table with .bake
local function call_bake(config)
  if type(bake_mod) == "function" then return bake_mod(config) end
  local mt = getmetatable(bake_mod)
  if mt and mt.__call then return bake_mod(config) end
  return bake_mod.bake(config)
end

-- The bake config writing the world into `dir`: two tiles of 16 along x, a wall with a window
-- between them, a hollow box with two doors (hole "cave", scale 0.5).
local function config(dir)
  return {
    range = { min = { 0, 0, 0 }, max = { 32, 16, 16 } },
    depth = 4,
    geometry = {
      { box = { min = { 15, 0, 0 }, max = { 17, 6, 16 } } },
      { box = { min = { 15, 10, 0 }, max = { 17, 16, 16 } } },
      { box = { min = { 15, 6, 0 }, max = { 17, 10, 6 } } },
      { box = { min = { 15, 6, 10 }, max = { 17, 10, 16 } } },
      -- the cave's shell (walls one unit thick, a door gap on -x and +x)
      { box = { min = { 4, 2, 4 }, max = { 12, 3, 12 } } },
      { box = { min = { 4, 9, 4 }, max = { 12, 10, 12 } } },
      { box = { min = { 4, 2, 4 }, max = { 12, 10, 5 } } },
      { box = { min = { 4, 2, 11 }, max = { 12, 10, 12 } } },
      { box = { min = { 4, 2, 4 }, max = { 5, 10, 7 } } },
      { box = { min = { 4, 2, 9 }, max = { 5, 10, 12 } } },
      { box = { min = { 4, 2, 7 }, max = { 5, 5, 9 } } },
      { box = { min = { 4, 7, 7 }, max = { 5, 10, 9 } } },
      { box = { min = { 11, 2, 4 }, max = { 12, 10, 7 } } },
      { box = { min = { 11, 2, 9 }, max = { 12, 10, 12 } } },
      { box = { min = { 11, 2, 7 }, max = { 12, 5, 9 } } },
      { box = { min = { 11, 7, 7 }, max = { 12, 10, 9 } } },
    },
    holes = {
      { name = "cave", min = { 4, 2, 4 }, max = { 12, 10, 12 }, scale = 0.5, kind = "under_terrain",
        doors = { { inside = { 5.5, 6, 8 }, outside = { 3.5, 6, 8 } },
                  { inside = { 10.5, 6, 8 }, outside = { 12.5, 6, 8 } } } },
    },
    output = dir,
    progress = function() end,
  }
end

-- Bakes the world into `dir` (raises on failure) and returns it loaded with octonav.world.
local function bake_and_load(dir)
  local ok, err = call_bake(config(dir))
  assert(ok, tostring(err))
  return assert(world_mod.load(dir))
end

return { has_bake = has_bake, has_world = has_world, world_mod = world_mod, call_bake = call_bake,
  config = config, bake_and_load = bake_and_load }
