-- spec/43-planner_scratch_spec.lua -- the planners of one world graph share one join scratch (the
-- endpoints' local-search arrays, csrc/world/route.h): routes are the same as a lone planner's, whatever
-- the order in which sliced plans start and step, and the scratch is held once per graph.
-- Run: busted --lua=lua5.4 spec/43-planner_scratch_spec.lua
local octonav = require "octonav"
local route = require("octonav.core").route

-- xorshift64*: the same worlds and pairs on every run
-- (octonav.core.xorshift: the same generator in C, for every Lua version)
local function rng(seed) return require("octonav.core").xorshift(seed) end

-- nx x 1 x nz tiles of 2^depth leaves with random walls (holes in them) and pillars.
local function random_world(seed, nx, nz, depth)
  local rnd = rng(seed)
  local n = math.floor(2 ^ depth)
  local t = octonav.tree.new { depth = depth, tiles = { nx, 1, nz } }
  for _ = 1, 6 * nx * nz do
    local x, z = rnd() * nx * n, rnd() * nz * n
    local len, axis = (0.2 + rnd() * 0.6) * n, rnd() < 0.5
    local lo = { math.floor(x), 0, math.floor(z) }
    local hi = axis and { lo[1] + math.floor(len), math.floor(n * 0.75), lo[3] + 1 }
      or { lo[1] + 1, math.floor(n * 0.75), lo[3] + math.floor(len) }
    t:add_box(lo, hi)
  end
  local g = route.world(t)
  for i = 0, nx - 1 do
    for k = 0, nz - 1 do assert(g:add_tile(i, 0, k, assert(route.build(t, i, 0, k)))) end
  end
  local pts = {}
  while #pts < 40 do
    local p = { rnd() * nx * n, 0.5 + rnd() * (n - 1), rnd() * nz * n }
    if t:locate(p) == "free" then pts[#pts + 1] = p end
  end
  return t, g, pts
end

-- A sliced plan to its end: its result (or failure) as one table.
local function finish(p, st, a, b)
  local out = { st = st }
  while out.st == "running" do out.st, out.reason = p:step(3) end
  if out.st == "found" then out.r = p:result() else out.reason = out.reason or select(2, p:result()) end
  out.a, out.b = a, b
  return out
end

for _, case in ipairs {
  { name = "8x1x8 tiles of 16 leaves", seed = 3, nx = 4, nz = 4, depth = 4 },
  { name = "2x1x2 tiles of 128 leaves (directed joins, lazy box sets)", seed = 5, nx = 2, nz = 2, depth = 7 },
} do
  describe("planners sharing a world graph's join scratch, " .. case.name, function()
    it("give the routes a lone planner gives, plans started and stepped in turns", function()
      local t, g, pts = random_world(case.seed, case.nx, case.nz, case.depth)
      assert.are.equal(0, g:joins_bytes()) -- made with the first planner, grown by its first start
      local p1, p2 = g:planner(), g:planner()
      local own = p1:bytes()
      -- in turns: p2 starts (a join in the shared scratch) while p1's plan is half way
      local shared = {}
      for i = 1, #pts - 2, 2 do
        local a1, b1, a2, b2 = pts[i], pts[i + 1], pts[i + 1], pts[i + 2]
        local s1 = p1:start_multi(t, { a1 }, { b1 })
        local r1 = s1 == "running" and p1:step(1) or s1
        local s2 = p2:start_multi(t, { a2 }, { b2 })
        shared[#shared + 1] = finish(p1, r1, a1, b1)
        shared[#shared + 1] = finish(p2, s2, a2, b2)
      end
      -- the join arrays are the graph's, not each planner's: a new planner's first plan, one that
      -- others made before, grows them no more (each planner holds its own nodes, goal joins,
      -- endpoint lists and box sets of unprepared tiles)
      local jb = g:joins_bytes()
      assert.is_true(jb > 0)
      assert.is_true(p1:bytes() > own) -- (its goal joins)
      local p3 = g:planner()
      finish(p3, p3:start_multi(t, { pts[1] }, { pts[2] }))
      assert.are.equal(jb, g:joins_bytes())
      -- the same pairs, each planned alone by a fresh planner over another graph of the same tiles
      local found = 0
      for _, s in ipairs(shared) do
        local g2 = route.world(t)
        for i = 0, case.nx - 1 do
          for k = 0, case.nz - 1 do assert(g2:add_tile(i, 0, k, assert(route.build(t, i, 0, k)))) end
        end
        local p = g2:planner()
        local alone = finish(p, p:start_multi(t, { s.a }, { s.b }), s.a, s.b)
        assert.are.same(alone, s)
        if s.st == "found" then found = found + 1 end
      end
      assert.is_true(found >= math.floor(#shared / 2)) -- most pairs have a route: the comparison is not of failures
    end)

    it("frees the scratch with the graph; a planner of a closed graph raises", function()
      local t, g, pts = random_world(case.seed, case.nx, case.nz, case.depth)
      local p = g:planner()
      finish(p, p:start_multi(t, { pts[1] }, { pts[2] }))
      assert.is_true(g:joins_bytes() > 0)
      g:close()
      assert.has_error(function() p:start(t, pts[1], pts[2]) end, "planner:start: its world graph was closed")
      assert.has_error(function() g:joins_bytes() end)
    end)
  end)
end
