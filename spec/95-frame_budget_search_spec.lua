-- A search's work on the game's thread under a frame budget (issue 31, goal 1): nothing a search needs is
-- built whole inside one of its expansions or its result.
local octonav = require "octonav"
local bake = require "octonav.bake"
local world = require "octonav.world"
local files = dofile("spec/support/files.lua")

local tmp = files.tracker(files.rm_rf)

-- a loaded world of 2 x 1 x 1 tiles with a wall the searches go round
local function small_world()
  local dir = tmp.dir()
  assert(bake({ range = { min = { 0, 0, 0 }, max = { 32, 16, 16 } }, depth = 4, scale = 1,
    geometry = { { box = { min = { 0, 0, 0 }, max = { 32, 1, 16 } } },
      { box = { min = { 14, 1, 0 }, max = { 18, 12, 14 } } } }, output = dir }))
  return assert(world.load(dir))
end

describe("frame budget: searches", function()
  teardown(tmp.cleanup)

  it("build no cell adjacency inside an expansion on a deferred tree, and find the same paths", function()
    local w = small_world()
    local a, b = { 2, 4, 8 }, { 30, 4, 8 }
    local p0, i0 = octonav.query.new(w.tree):find(a, b)
    assert.is_truthy(p0, i0 and i0.reason)
    assert.are.equal(2, w.tree:stats().adjacency_tiles) -- (as loaded: built by the search)
    w:close()
    w = small_world()
    w.tree:los_defer(true)
    local q = octonav.query.new(w.tree)
    assert.are.equal("running", q:start(a, b))
    local st
    repeat st = q:step_until(1, math.huge) until st ~= "running"
    assert.are.equal("found", st)
    local p, info = q:result()
    assert.are.same(p0, p)
    assert.are.same({ i0.expansions, i0.neighbors, i0.length }, { info.expansions, info.neighbors, info.length })
    assert.are.same({ 0, 0 }, { w.tree:stats().adjacency_tiles, w.tree:stats().adjacency_bytes })
    -- built by the game's own call only (a prepare step, or a worker)
    local bytes = assert(w.tree:adjacency_prepare())
    assert.are.same({ 2, bytes }, { w.tree:stats().adjacency_tiles, w.tree:stats().adjacency_bytes })
    assert.are.same(p0, (q:find(a, b)))
    w:close()
  end)
end)
