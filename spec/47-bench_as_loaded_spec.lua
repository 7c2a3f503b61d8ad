-- spec/47-bench_as_loaded_spec.lua -- bench_world.as_loaded (issue 11): route plans on a pack as loaded
-- (no prepared boxes, no streamer join sets), each pair's first plan on a fresh open, fastest over the
-- passes; the world benchmark reports them beside the prepared tree's (option as_loaded).
-- Run: busted --lua=lua5.4 spec/47-bench_as_loaded_spec.lua
--
-- The world: 3 x 1 x 3 tiles of 128 leaves (the planner's lazy sets build their 16-leaf blocks) over a
-- ground slab, with a wall with one gap and pillars. Asserted:
--   * every pair planned, its cost exactly world:plan's on the pack as loaded (the planner's box
--     cache holds other tiles there: the same routes), and never below the straight line;
--   * the times and bytes are measured (positive, p50 <= p90 <= p99), passes as asked;
--   * with walks, every walk arrives (walked / seamless within the issue's 1.30);
--   * loaded_table gives a row for a measured world and nothing for rows without it.
local octonav = require "octonav"
local bw = require "octonav.bench_world"

local boxpack = dofile("spec/support/boxpack.lua")
local rng = dofile("spec/support/prng.lua").lcg

local T = 128
local pack

setup(function() pack = boxpack.bake_walled() end)

teardown(boxpack.cleanup)

local function dist(a, b) return math.sqrt((a[1] - b[1]) ^ 2 + (a[2] - b[2]) ^ 2 + (a[3] - b[3]) ^ 2) end

-- Seeded pairs of free points in opposite corner tiles (never neighbours: the planner joins both ends),
-- with the seamless query's length.
local function pairs_of(world, n)
  local r, out = rng(7), {}
  local q = octonav.query.new(world.tree)
  local function free_in(ti, tk)
    for _ = 1, 10000 do
      local p = { ti * T + 1 + r() * (T - 2), 3 + r() * 60, tk * T + 1 + r() * (T - 2) }
      if world.tree:locate(p) == "free" then return p end
    end
  end
  while #out < n do
    local a, b = free_in(0, 0), free_in(2, 2)
    if #out % 2 == 1 then a, b = free_in(2, 0), free_in(0, 2) end
    local path, info = q:find(a, b)
    if path then out[#out + 1] = { a = a, b = b, seamless = info.length } end
  end
  q:close()
  return out
end

describe("bench_world.as_loaded", function()
  it("plans each pair on the pack as loaded, the costs of world:plan", function()
    local world = assert(octonav.world.load(pack))
    local prs = pairs_of(world, 8)
    assert.has_error(function() bw.as_loaded(pack, prs, { pases = 2 }) end,
      "octonav.bench_world.as_loaded: unknown option 'pases'")
    assert.has_error(function() bw.measure("t16", { pair = 3 }) end,
      "octonav.bench_world.measure: unknown option 'pair'")
    assert.has_error(function() bw.run { worlds = {}, frame = 3 } end,
      "octonav.bench_world.run: unknown option 'frame'")
    local r = bw.as_loaded(pack, prs, { passes = 2, walks = true })
    assert.equal(2, r.passes)
    assert.equal(0, r.failed)
    for i, pr in ipairs(prs) do
      local _, cost = world:plan(pr.a, pr.b)
      assert.is_number(r.costs[i])
      assert.is_true(math.abs(r.costs[i] - cost) < 1e-9, ("pair %d: %.9f vs %.9f"):format(i, r.costs[i], cost))
      assert.is_true(r.costs[i] >= dist(pr.a, pr.b) - 1e-9)
    end
    for _, k in ipairs { "p50_us", "p90_us", "p99_us", "cpu_p50_us", "cpu_p99_us" } do assert.is_number(r[k]) end
    assert.is_true(r.planner_bytes > 0)
    assert.equal(0, r.walk_failures)
    assert.is_true(r.ratio_mean > 0 and r.ratio_max <= 1.30, ("walked/seamless max %.3f"):format(r.ratio_max))
    world:close()
    local row = { name = "w", plan_p50_us = 100, plan_p99_us = 200, loaded = r }
    r.cost_mean, r.cost_max = 1, 1
    local t = bw.loaded_table { row }
    assert.truthy(t:find("| w | 0.10 / 0.20 |", 1, true))
    assert.equal("", bw.loaded_table { { name = "x", plan_p50_us = 1, plan_p99_us = 1 } })
  end)
end)
