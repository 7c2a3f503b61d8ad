-- spec/42-route_joins_spec.lua -- streamed tiles come with their route join sets (issue 11): a route's
-- start and goal join the world graph by a search over their tile's boxes, which a tile of more than one
-- 64-leaf block otherwise builds block by block during the plan (~1 ms a block on a 512^3 terrain
-- surface). With option joins = true (off by default) the streamer's workers build each tile's boxes
-- beside its decode and the tree keeps them as the tile's join set, read by the route planner only.
-- Run: busted --lua=lua5.4 spec/42-route_joins_spec.lua
--
-- The world: 3 x 1 x 3 tiles of 128 leaves (depth 7: 8 blocks a tile) over a ground slab, with walls,
-- gaps and pillars. For 0 and 2 workers:
--   * a tile counts as loaded (update's `loaded`, s:is_loaded) only with its join set: join_tiles equals
--     loaded after every update, and join_bytes equals the prepared full pack's box_bytes; the sets
--     are not the search's (tree:stats().tiles_prepared stays 0);
--   * routes over the streamed tiles cost exactly what they cost over the prepared full pack, and a
--     planner that plans them builds no boxes of its own (its bytes equal the prepared pack's
--     planner's); without join sets it builds blocks (more bytes) and the routes are the full pack's as
--     loaded;
--   * an obstacle drops the join set of every tile it touches, and only theirs (so does its removal);
--     the next update(true) builds them again (joins_rebuilt, the same bytes); routes cost what they
--     cost over the full pack as loaded with the same obstacle while the sets are gone, and over the
--     prepared one once they are back;
--   * joins off (the default, and joins = false) builds none, prepare = true none either (the prepared set serves); a non-boolean
--     joins raises.
local streamer = require "octonav.streamer"
local world_mod = require "octonav.world"

local boxpack = dofile("spec/support/boxpack.lua")
local rng = dofile("spec/support/prng.lua").lcg

local N = 3
local pack

setup(function()
  pack = boxpack.bake_walled {
    { { 0, 0, 250 }, { 230, 40, 254 } }, { { 250, 0, 250 }, { 384, 40, 254 } }, -- a second wall, one gap
    { { 40, 30, 300 }, { 90, 34, 360 } },                                         -- a slab in the air
  }
end)

teardown(boxpack.cleanup)

-- Seeded pairs of free points in opposite corner tiles (never neighbours: the planner joins both).
local function pairs_of(tree)
  local r, out = rng(5), {}
  local function free_in(ti, tk) return boxpack.free_in(tree, r, ti, tk) end
  local corners = { { 0, 0, 2, 2 }, { 2, 0, 0, 2 }, { 0, 2, 2, 0 }, { 2, 2, 0, 0 }, { 0, 0, 2, 1 }, { 1, 0, 1, 2 } }
  for n = 1, 12 do
    local c = corners[(n - 1) % #corners + 1]
    out[n] = { free_in(c[1], c[2]), free_in(c[3], c[4]) }
  end
  return out
end

-- Route costs over a world (nil entries as "reason" strings) and the bytes of one planner that planned
-- them all.
local function costs(world, prs)
  local out, planner = {}, world.graph:planner()
  for n, pr in ipairs(prs) do
    local route, cost = world:plan(pr[1], pr[2])
    out[n] = route and cost or ("no route: " .. tostring(cost))
    planner:plan(world.tree, pr[1], pr[2])
  end
  -- (the box sets its joins built are the graph's, shared by its planners: route_boxes.h)
  local bytes = planner:bytes() + select(2, world.graph:joins_bytes())
  planner:close()
  return out, bytes
end

-- The full pack, its tree prepared (the same obstacle added first when given).
local function prepared(obstacle)
  local w = assert(world_mod.load(pack))
  if obstacle then assert(w.tree:add_obstacle(obstacle)) end
  w.tree:prepare()
  return w
end

local function force_all(s)
  for i = 0, N - 1 do
    for k = 0, N - 1 do s:force_load({ i, 0, k }) end
  end
end

local OBSTACLE = { min = { 120, 2, 120 }, max = { 140, 30, 140 } } -- over tiles (0..1, 0, 0..1)
local SLAB = { min = { 0, 2, 0 }, max = { 384, 4, 384 } }           -- the ground raised, every tile

for _, workers in ipairs { 0, 2 } do
  describe(("streamed join sets, %d workers"):format(workers), function()
    it("a tile counts as loaded only with its join set, the prepared pack's boxes byte for byte", function()
      local full = prepared()
      local want_bytes = full.tree:stats().box_bytes
      assert.is_true(want_bytes > 0)
      full:close()
      local s = assert(streamer.new(pack, { workers = workers, load_padding = 1, unload_padding = 2, joins = true }))
      local seen = 0
      for i = 0, N - 1 do -- a column of tiles an update
        for k = 0, N - 1 do s:force_load({ i, 0, k }) end
        local ch = s:update(true)
        seen = seen + #ch.loaded
        local st = s:stats()
        assert.equal(N * (i + 1), st.loaded)
        assert.equal(st.loaded, seen)
        assert.equal(st.loaded, st.join_tiles)
      end
      local st = s:stats()
      assert.equal(want_bytes, st.join_bytes)
      assert.equal(0, st.joins_rebuilt)
      assert.is_true(st.join_seconds > 0)
      assert.equal(0, s.world.tree:stats().tiles_prepared) -- queries still walk the cells
      s:close()
    end)

    it("routes cost the prepared pack's, with no boxes built by the planner", function()
      local full = prepared()
      local prs = pairs_of(full.tree)
      local want, want_bytes = costs(full, prs)
      full:close()
      for n = 1, #want do assert.equal("number", type(want[n])) end
      local s = assert(streamer.new(pack, { workers = workers, load_padding = 1, unload_padding = 2, joins = true }))
      force_all(s)
      s:update(true)
      local got, got_bytes = costs(s.world, prs)
      assert.same(want, got)
      assert.equal(want_bytes, got_bytes)
      s:close()
      local lazy = assert(streamer.new(pack, { workers = workers, load_padding = 1, unload_padding = 2, joins = false }))
      force_all(lazy)
      lazy:update(true)
      assert.equal(0, lazy:stats().join_tiles)
      local lgot, lbytes = costs(lazy.world, prs)
      assert.is_true(lbytes > want_bytes) -- the blocks it built
      lazy:close()
      -- which are the full pack's as loaded: its joins are the directed ones over blocks, where a small
      -- tile's prepared set is searched whole (some of these routes cost more there)
      local loaded = assert(world_mod.load(pack))
      assert.same((costs(loaded, prs)), lgot)
      loaded:close()
    end)

    it("an obstacle drops the sets of the tiles it touches; the next update builds them again", function()
      local s = assert(streamer.new(pack, { workers = workers, load_padding = 1, unload_padding = 2, joins = true }))
      force_all(s)
      s:update(true)
      local tree = s.world.tree
      local before = s:stats().join_bytes
      local id = assert(tree:add_obstacle(OBSTACLE))
      local st = s:stats()
      assert.equal(N * N - 4, st.join_tiles) -- only the four it touches
      assert.equal(N * N, st.loaded)
      tree:remove_obstacle(id)
      assert.equal(N * N - 4, s:stats().join_tiles)
      s:update(true)
      st = s:stats()
      assert.equal(N * N, st.join_tiles)
      assert.equal(4, st.joins_rebuilt)
      assert.equal(before, st.join_bytes)
      -- a slab over every tile: the planner builds blocks (the as-loaded pack's routes), then the sets
      -- come back (the prepared pack's)
      assert(tree:add_obstacle(SLAB))
      assert.equal(0, s:stats().join_tiles)
      local full = prepared(SLAB)
      local prs = pairs_of(full.tree)
      local want = costs(full, prs)
      full:close()
      local loaded = assert(world_mod.load(pack))
      assert(loaded.tree:add_obstacle(SLAB))
      local as_loaded = costs(loaded, prs)
      loaded:close()
      assert.same(as_loaded, (costs(s.world, prs)))
      s:update(true)
      st = s:stats()
      assert.equal(N * N, st.join_tiles)
      assert.equal(4 + N * N, st.joins_rebuilt)
      assert.same(want, (costs(s.world, prs)))
      s:close()
    end)

    it("joins off by default and with joins = false builds none; prepare = true builds the search's sets instead", function()
      for _, o in ipairs { { workers = workers, load_padding = 1, unload_padding = 2 },
                           { workers = workers, load_padding = 1, unload_padding = 2, joins = false } } do
        local d = assert(streamer.new(pack, o))
        force_all(d)
        d:update(true)
        local dst = d:stats()
        assert.equal(N * N, dst.loaded)
        assert.equal(0, dst.join_tiles)
        assert.equal(0, dst.join_bytes)
        assert.equal(0, dst.join_seconds)
        d:close()
      end
      local p = assert(streamer.new(pack, { workers = workers, load_padding = 1, unload_padding = 2, prepare = true }))
      force_all(p)
      p:update(true)
      assert.equal(0, p:stats().join_tiles)
      assert.equal(N * N, p.world.tree:stats().tiles_prepared)
      p:close()
    end)
  end)
end

describe("streamed join sets: misuse", function()
  it("joins must be a boolean", function()
    assert.has_error(function()
      streamer.new(pack, { workers = 0, load_padding = 1, unload_padding = 2, joins = 1 })
    end, "octonav.core.streamer.new: option 'joins': boolean expected, got number")
  end)
end)
