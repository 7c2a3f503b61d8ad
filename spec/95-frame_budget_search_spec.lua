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
    assert.are.equal(2, w.tree:stats().adjacency_tiles) -- (as loaded: built by the load)
    w:close()
    w = small_world()
    w.tree:adjacency(false) -- (the load's adjacencies dropped: the deferred search's own builds counted)
    w.tree:adjacency(true)
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

  -- terrain over 2 x 1 x 2 tiles of 64^3 leaves with boxes on it (the searches' results bend often)
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
    t:add_box({ 60, 0, 0 }, { 68, 62, 100 })
    return t
  end
  local pairs_ = { { { 20, 45, 20 }, { 110, 45, 30 } }, { { 30, 40, 60 }, { 100, 42, 90 } },
    { { 50, 50, 10 }, { 90, 38, 50 } }, { { 5, 60, 120 }, { 120, 33, 5 } } }

  local function searched(q, a, b, opts)
    assert.are.equal("running", q:start(a, b, opts))
    local st
    repeat st = q:step(1000) until st ~= "running"
    assert.are.equal("found", st)
  end

  it("build a result in slices of a few checks each (q:result_step), the same as q:result's", function()
    local t = terrain_tree()
    local q = octonav.query.new(t)
    for _, opts in ipairs { {}, { any_angle = true }, { areas = { { min = { 40, 0, 40 }, max = { 80, 64, 80 }, cost = 3 } } } } do
      for _, ab in ipairs(pairs_) do
        local p0, i0 = q:find(ab[1], ab[2], opts)
        assert.is_truthy(p0, i0 and i0.reason)
        for _, limit in ipairs { 1, 3 } do
          searched(q, ab[1], ab[2], opts)
          local r, x
          local slices, checks = 0, 0
          repeat
            r, x = q:result_step(limit)
            if r == "pending" then
              -- the work-unit clock: exactly `limit` checks a slice until the last
              assert.are.equal(limit, x)
              slices, checks = slices + 1, checks + x
            end
          until r ~= "pending"
          assert.is_true(slices >= 3, ("%d slices"):format(slices))
          assert.are.same(p0, r)
          assert.are.same({ i0.length, i0.cost, i0.los, i0.turns, i0.cells }, { x.length, x.cost, x.los, x.turns, x.cells })
          assert.are.same(p0, (q:result())) -- (built: read again)
        end
      end
    end
    t:close()
  end)

  it("stop a result's slice at the deadline after one check, and check their arguments", function()
    local t = terrain_tree()
    local q = octonav.query.new(t)
    local ab = pairs_[4]
    local p0 = assert(q:find(ab[1], ab[2]))
    searched(q, ab[1], ab[2])
    local r, n = q:result_step(0, 0) -- the deadline passed: one check
    assert.are.same({ "pending", 1 }, { r, n })
    assert.are.same({ "pending", 1 }, { q:result_step(1000, octonav.core.clock() - 1) })
    assert.are.same(p0, (q:result_step(0))) -- no limit: the rest at once
    assert.matches("max_checks must be >= 0", select(2, pcall(q.result_step, q, -1)))
    assert.matches("deadline must be a number", select(2, pcall(q.result_step, q, 1, 0 / 0)))
    assert.has_error(function() q:result_step("many") end)
    local q2 = octonav.query.new(t)
    assert.has_error(function() q2:result_step(1) end, "query:result_step: no search started")
    assert.are.equal("running", q2:start(ab[1], ab[2]))
    assert.has_error(function() q2:result_step(1) end,
      "query:result_step: the search is still running (call step until it stops)")
    t:close()
  end)
end)
