-- spec/39-streamer_los_spec.lua -- the streamer builds a tile's line-of-sight masks (losmap.h) on the
-- thread that decodes it (a worker, or update() without workers), so the first line of sight through a
-- freshly streamed tile does not pay for the build (~20 ms a 512^3 tile).
-- Run: busted --lua=lua5.4 spec/39-streamer_los_spec.lua
--
-- The world: 4 x 1 x 4 tiles of 16 units (depth 4) over a ground slab, pillars, a wall with a gap, and
-- tile (3, 0, 3) wholly solid (a solid tile has no masks). For 0 and 2 workers:
--   * every tile streamed in has its masks as soon as update() installed it (tree:stats().los_tiles,
--     los_bytes equal to the fully loaded pack's after tree:los_prepare()), and 400 random segments
--     answer raycast exactly as on the fully loaded pack, with no mask built by them;
--   * an obstacle added before the tiles load is in the masks built beside the decode (the answers
--     equal the fully loaded pack's with the same obstacle);
--   * with the tree's masks off (tree:los_masks(false)) no tile gets masks, and the answers are the same.
local streamer = require "octonav.streamer"
local world_mod = require "octonav.world"

local boxpack = dofile("spec/support/boxpack.lua")
local rng = dofile("spec/support/prng.lua").lcg

local N, T = 4, 16
local pack

setup(function()
  pack = boxpack.bake(N, T, 4, {
    { { 0, 0, 0 }, { 64, 1, 64 } },
    { { 20, 0, 0 }, { 22, 16, 28 } }, { { 20, 0, 36 }, { 22, 16, 48 } },
    { { 6, 0, 40 }, { 10, 12, 44 } }, { { 36, 0, 10 }, { 41, 14, 13 } },
    { { 48, 0, 48 }, { 64, 16, 64 } }, -- tile (3, 0, 3): solid
  })
end)

teardown(boxpack.cleanup)

-- 400 segments inside the world, the same ones every run
local function segments()
  local r, segs = rng(11), {}
  for n = 1, 400 do
    segs[n] = { { r() * 64, 0.5 + r() * 15, r() * 64 }, { r() * 64, 0.5 + r() * 15, r() * 64 } }
  end
  return segs
end

local function answers(tree, segs)
  local out = {}
  for n, s in ipairs(segs) do out[n] = { tree:raycast(s[1], s[2]) } end
  return out
end

-- The streamer with every tile pinned and installed; returns it.
local function stream_all(workers, before_update)
  local s = assert(streamer.new(pack, { workers = workers, load_padding = 1, unload_padding = 2 }))
  if before_update then before_update(s.world.tree) end
  for i = 0, N - 1 do
    for k = 0, N - 1 do s:force_load({ i, 0, k }) end
  end
  s:update(true)
  for i = 0, N - 1 do
    for k = 0, N - 1 do assert.is_true(s:is_loaded({ i, 0, k })) end
  end
  return s
end

-- The fully loaded pack (its masks built by los_prepare when asked): world, bytes of its masks.
local function full(obstacle)
  local w = assert(world_mod.load(pack))
  if obstacle then assert(w.tree:add_obstacle(obstacle)) end
  return w
end

local OBSTACLE = { min = { 28, 1, 28 }, max = { 36, 9, 36 } }

for _, workers in ipairs { 0, 2 } do
  describe(("streamed tiles' line-of-sight masks, %d workers"):format(workers), function()
    it("are built beside the decode: present before any line of sight, the full load's bytes and answers", function()
      local ref = full()
      local ref_bytes = assert(ref.tree:los_prepare())
      local segs = segments()
      local want = answers(ref.tree, segs)
      ref:close()
      local s = stream_all(workers)
      local st = s.world.tree:stats()
      assert.are.equal(N * N, st.tiles_loaded)
      assert.are.equal(N * N - 1, st.los_tiles) -- all but the solid tile, before any line of sight
      assert.are.equal(ref_bytes, st.los_bytes)
      local got = answers(s.world.tree, segs)
      assert.are.same(want, got)
      local blocked = 0
      for _, a in ipairs(got) do if a[1] then blocked = blocked + 1 end end
      assert.is_true(blocked > 100 and blocked < 400, "blocked " .. blocked)
      st = s.world.tree:stats()
      assert.are.same({ N * N - 1, ref_bytes }, { st.los_tiles, st.los_bytes }) -- none built by the segments
      s:close()
    end)

    it("hold the obstacles over a tile when it loads", function()
      local ref = full(OBSTACLE)
      local segs = segments()
      local want = answers(ref.tree, segs)
      local ref_bytes = assert(ref.tree:los_prepare())
      ref:close()
      local s = stream_all(workers, function(tree) assert(tree:add_obstacle(OBSTACLE)) end)
      local st = s.world.tree:stats()
      assert.are.same({ N * N - 1, ref_bytes }, { st.los_tiles, st.los_bytes })
      assert.are.same(want, answers(s.world.tree, segs))
      -- the obstacle's own segment: blocked at its near face (x = 28 of a segment from x = 24 to 40)
      local th = s.world.tree:raycast({ 24, 5, 32 }, { 40, 5, 32 })
      assert.are.equal(0.25, th)
      s:close()
    end)

    it("are not built while the tree's masks are off", function()
      local ref = full()
      local segs = segments()
      local want = answers(ref.tree, segs)
      ref:close()
      local s = stream_all(workers, function(tree) tree:los_masks(false) end)
      assert.are.same({ 0, 0 }, { s.world.tree:stats().los_tiles, s.world.tree:stats().los_bytes })
      assert.are.same(want, answers(s.world.tree, segs))
      assert.are.equal(0, s.world.tree:stats().los_tiles)
      s:close()
    end)
  end)
end
