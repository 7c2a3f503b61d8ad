-- A loaded world's cell adjacencies (issue 31, goal 3): world.load builds every tile's it reads, within
-- the tree's bytes, so that searches on a frame budget's deferred tree (which build none) read them;
-- { adjacency = false } builds none; an edit drops its tile's alone; the paths are the tree walk's.
local octonav = require "octonav"
local bake = require "octonav.bake"
local world = require "octonav.world"
local files = dofile("spec/support/files.lua")

local tmp = files.tracker(files.rm_rf)

-- 3 x 1 x 2 tiles of 16^3 leaves: a floor, a wall with a gap, pillars
local function baked()
  local dir = tmp.dir()
  local geometry = { { box = { min = { 0, 0, 0 }, max = { 48, 1, 32 } } },
    { box = { min = { 22, 1, 0 }, max = { 26, 14, 26 } } } }
  for i = 0, 4 do
    geometry[#geometry + 1] = { box = { min = { 4 + 9 * i, 1, 20 }, max = { 6 + 9 * i, 9, 22 } } }
  end
  assert(bake({ range = { min = { 0, 0, 0 }, max = { 48, 16, 32 } }, depth = 4, scale = 1,
    geometry = geometry, output = dir }))
  return dir
end

describe("world cell adjacency", function()
  teardown(tmp.cleanup)

  it("is built by world.load for every tile, within the tree's bytes, and read by deferred searches", function()
    local dir = baked()
    local w = assert(world.load(dir))
    local st = w.tree:stats()
    assert.are.equal(6, st.tiles_loaded)
    assert.are.equal(6, st.adjacency_tiles)
    assert.is_true(st.adjacency_bytes > 0 and st.adjacency_bytes <= st.bytes,
      ("adjacency %d bytes, tree %d"):format(st.adjacency_bytes, st.bytes))
    local off = assert(world.load(dir, { adjacency = false }))
    assert.are.same({ 0, 0 }, { off.tree:stats().adjacency_tiles, off.tree:stats().adjacency_bytes })
    local a, b = { 2, 4, 4 }, { 46, 4, 6 }
    local p0, i0 = octonav.query.new(off.tree):find(a, b)
    assert.is_truthy(p0, i0 and i0.reason)
    w.tree:los_defer(true) -- (a frame budget's tree: its searches build no adjacency themselves)
    local q = octonav.query.new(w.tree)
    assert.are.equal("running", q:start(a, b))
    local s
    repeat s = q:step_until(1, math.huge) until s ~= "running"
    assert.are.equal("found", s)
    local p, info = q:result()
    assert.are.same(p0, p)
    assert.are.same({ i0.expansions, i0.neighbors }, { info.expansions, info.neighbors })
    assert.are.equal(6, w.tree:stats().adjacency_tiles)
    -- an edit drops its own tile's adjacency, and the deferred tree builds it no more
    w.tree:add_box({ 40, 8, 8 }, { 41, 9, 9 })
    assert.are.equal(5, w.tree:stats().adjacency_tiles)
    assert.is_truthy(q:find(a, b))
    assert.are.equal(5, w.tree:stats().adjacency_tiles)
    off:close()
    w:close()
  end)
end)
