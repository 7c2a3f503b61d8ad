-- The search's cell adjacency in its compact form (csrc/celladj.h, issue 31 goal 3): a few bytes a
-- stored node, under the tree's own bytes, so that worlds keep it on; the same paths as the tree walk.
local octonav = require "octonav"
local bake = require "octonav.bake"
local world = require "octonav.world"
local files = dofile("spec/support/files.lua")

local tmp = files.tracker(files.rm_rf)

-- terrain over 2 x 1 x 2 tiles of 64^3 leaves: a rolling heightfield with a few boxes on it
local function terrain_tree()
  local t = octonav.tree.new { tiles = { 2, 1, 2 }, depth = 6 }
  local nx, nz, heights = 33, 33, {}
  for k = 0, nz - 1 do
    for i = 0, nx - 1 do
      heights[#heights + 1] = 20 + 9 * math.sin(i / 3.1) * math.cos(k / 4.3) + 4 * math.sin((i + k) / 2.3)
    end
  end
  t:add_heightfield { origin = { 0, 0, 0 }, cell = 4, nx = nx, nz = nz, heights = heights }
  for j = 0, 5 do t:add_box({ 10 + 17 * j, 30, 20 + 13 * j }, { 14 + 17 * j, 50, 26 + 13 * j }) end
  t:add_box({ 60, 0, 0 }, { 68, 62, 100 }) -- a wall the searches go round
  return t
end

describe("compact cell adjacency", function()
  teardown(tmp.cleanup)

  it("holds under 0.7 times the tree's bytes on terrain tiles, and the searches' paths are the walk's", function()
    local t = terrain_tree()
    local bytes = assert(t:adjacency_prepare())
    local st = t:stats()
    assert.are.same({ 4, bytes }, { st.adjacency_tiles, st.adjacency_bytes })
    assert.is_true(bytes < 0.7 * st.bytes, ("adjacency %d bytes, tree %d"):format(bytes, st.bytes))
    local q = octonav.query.new(t)
    local pairs_ = { { { 20, 45, 20 }, { 110, 45, 30 } }, { { 30, 40, 60 }, { 100, 42, 90 } },
      { { 50, 50, 10 }, { 90, 38, 50 } } }
    local with = {}
    for i, ab in ipairs(pairs_) do
      local p, info = q:find(ab[1], ab[2])
      assert.is_truthy(p, info and info.reason)
      assert.is_true(info.expansions > 50)
      with[i] = { p = p, expansions = info.expansions, neighbors = info.neighbors }
    end
    t:adjacency(false)
    for i, ab in ipairs(pairs_) do
      local p, info = q:find(ab[1], ab[2])
      assert.are.same(with[i].p, p)
      assert.are.same({ with[i].expansions, with[i].neighbors }, { info.expansions, info.neighbors })
    end
    t:close()
  end)

  it("is on in a loaded world: built by the load for every tile, read by the searches", function()
    local dir = tmp.dir()
    assert(bake({ range = { min = { 0, 0, 0 }, max = { 32, 16, 16 } }, depth = 4, scale = 1,
      geometry = { { box = { min = { 0, 0, 0 }, max = { 32, 1, 16 } } },
        { box = { min = { 14, 1, 0 }, max = { 18, 12, 16 } } } }, output = dir }))
    local w = assert(world.load(dir))
    assert.are.equal(2, w.tree:stats().adjacency_tiles)
    assert.is_truthy(octonav.query.new(w.tree):find({ 2, 4, 8 }, { 30, 4, 8 }))
    local st = w.tree:stats()
    assert.are.equal(2, st.adjacency_tiles)
    assert.is_true(st.adjacency_bytes > 0 and st.adjacency_bytes < st.bytes)
    w:close()
  end)
end)
