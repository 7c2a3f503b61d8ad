-- spec/146-onetree_memory_spec.lua -- a one-tree pack's agents hold their identical tile graphs once (issue 33,
-- "memory at most 1.25x a single-radius tree"): the slot world (spec/support/slotworld.lua, 4 x 2 x 4 tiles of 8
-- leaves) baked as one tree for radii 0, 1 and 2, whose 16 open-air tiles an agent (the rows z 0-8 and 24-32, away
-- from the wall) have one graph file for every radius. The world graphs' bytes, exactly; routes of graphs sharing
-- their records equal to those of graphs of their own; a tile graph removed from one radius keeps the other radii's
-- routes through that tile, and its record goes with its last holder (octonav.core.route.world(tree, graph2),
-- csrc/world/wgraph_pool.c).
-- Run: busted --lua=lua5.4 spec/146-onetree_memory_spec.lua
local octonav = require "octonav"
local core = require "octonav.core"
local bake = require "octonav.bake"
local pack = require "octonav.pack"
local files = dofile("spec/support/files.lua")
local slot = dofile("spec/support/slotworld.lua")

local AGENTS = { { name = "small", radius = 0 }, { name = "mid", radius = 1 }, { name = "big", radius = 2 } }
local TILE28 = 28 -- (0, 1, 3): open air at the world's -x, +y and +z border, on every radius's route from S to G

local function each_tile(f)
  for t = 0, 31 do f(t, t % 4, math.floor(t / 4) % 2, math.floor(t / 8)) end
end

-- the graph of an agent's files in a graph of its own (no sharing)
local function alone(w, name)
  local aw = w:agent(name)
  local g = core.route.world(w.tree)
  each_tile(function(_, i, j, k) assert(g:add_tile(i, j, k, assert(pack.read_graph(aw.graph_dir or aw.dir, i, j, k)))) end)
  return g
end

local function graph_bytes(w)
  local out = {}
  for n, a in ipairs(w:stats().agents) do out[n] = a.graph_bytes end
  return out
end

-- route at each radius: steps' tiles and cost (17 digits), or the reason
local function routes(w)
  local out = {}
  for n, r in ipairs { 0, 1, 2 } do
    local route, cost = w:plan(slot.S, slot.G, { radius = r })
    if route then
      local tiles = {}
      for s, st in ipairs(route) do tiles[s] = st.tile end
      out[n] = ("%.17g via %s"):format(cost, table.concat(tiles, " "))
    else
      out[n] = cost
    end
  end
  return out
end

describe("a one-tree pack's agents share their identical tile graphs", function()
  local dir
  setup(function()
    dir = files.tmpdir()
    assert(bake.run(slot.config(dir, AGENTS, true)))
  end)
  teardown(function() files.rm_rf(dir) end)

  it("holds the open-air tiles' graph once for every radius: the bytes, exactly", function()
    -- the files: of the 96 graphs, 48 (16 tiles x 3 radii) are one file
    local count, most = {}, 0
    local w = assert(octonav.world.load(dir))
    for _, a in ipairs(AGENTS) do
      local aw = w:agent(a.name)
      each_tile(function(_, i, j, k)
        local blob = assert(pack.read_graph(aw.graph_dir or aw.dir, i, j, k))
        count[blob] = (count[blob] or 0) + 1
        most = math.max(most, count[blob])
      end)
    end
    assert.equal(48, most)
    local st = w:stats()
    assert.same({ 4892, 1548, 1536 }, graph_bytes(w))
    assert.equal(7976, st.graph_bytes)
    assert.equal(11372, st.bytes) -- with the one tree's 3396
    -- an agent but the first holds its tiles' own parts only: a graph joining the pool (408 bytes: the graph
    -- and its 32 tile pointers) + 24 bytes a tile + its links (6 bytes each: tiles of 8 leaves); the records
    -- (portals, weights) are counted once, in the first agent's graph
    local e = core.route.world(w.tree, w.graph)
    assert.equal(408, e:stats().bytes)
    e:close()
    for n = 2, 3 do
      local gs = w:agent(AGENTS[n].name).graph:stats()
      assert.equal(32, gs.tiles)
      assert.equal(408 + 32 * 24 + gs.links * 6, st.agents[n].graph_bytes)
    end
    -- the same files in graphs of their own: 9240 bytes, 1264 more
    local own, sum = {}, 0
    for n, a in ipairs(AGENTS) do
      own[n] = alone(w, a.name)
      sum = sum + own[n]:stats().bytes
    end
    assert.equal(9240, sum)
    -- the same routes: each agent's graph and its graph alone, planned by the same C planner
    for n, a in ipairs(AGENTS) do
      local p1, p2 = w:agent(a.name).graph:planner(), own[n]:planner()
      local r1, r2 = assert(p1:plan(w.tree, slot.S, slot.G)), assert(p2:plan(w.tree, slot.S, slot.G))
      assert.equal(("%.17g"):format(r2.cost), ("%.17g"):format(r1.cost))
      assert.same(r2.steps, r1.steps)
      p1:close()
      p2:close()
      own[n]:close()
    end
    w:close()
  end)

  it("keeps the other radii's routes through a tile whose graph one radius dropped", function()
    local w = assert(octonav.world.load(dir))
    local before = routes(w)
    assert.same({ "28.375 via 4 12 20 28", "28.375 via 4 12 20 28",
      "50.319271909999159 via 4 5 13 14 22 21 29 28" }, before)
    -- mid drops tile 28's graph: its own part goes (24 + 6 bytes of its one owned link), its links with the
    -- 3 neighbours are kept dormant (8 slots of 32 bytes, 3 links of 12): +262; the record stays (small's and
    -- big's tile 28 hold it): small's bytes, which count the records, do not change
    w:agent("mid"):remove_graph(TILE28)
    assert.same({ 4892, 1548 + 262, 1536 }, graph_bytes(w))
    assert.same({ before[1], "unloaded", before[3] }, routes(w))
    w:agent("big"):remove_graph(TILE28)
    assert.same({ 4892, 1548 + 262, 1536 + 262 }, graph_bytes(w))
    assert.same({ before[1], "unloaded", "unloaded" }, routes(w))
    -- small drops it last: the record goes with it, 45 bytes (a 20-byte header, 3 portals x 3 bytes, 2
    -- bytes of components, 3 weights x 2; its 8-byte slot in the pool's index), as from a graph of its own
    w:agent("small"):remove_graph(TILE28)
    assert.same({ 4892 + 262 - 45, 1548 + 262, 1536 + 262 }, graph_bytes(w))
    assert.same({ "unloaded", "unloaded", "unloaded" }, routes(w))
    local g = alone(w, "small")
    local b0 = g:stats().bytes
    g:remove_tile(0, 1, 3)
    assert.equal(262 - 45, g:stats().bytes - b0)
    g:close()
    -- back, in another order: the dormant links restored, the bytes and routes as at first
    for _, n in ipairs { "big", "small", "mid" } do assert(w:agent(n):add_graph(TILE28)) end
    assert.same({ 4892, 1548, 1536 }, graph_bytes(w))
    assert.same(before, routes(w))
    w:close()
  end)

  it("keeps a graph's routes when the graph it shares with is closed first", function()
    local w = assert(octonav.world.load(dir))
    local first = core.route.world(w.tree)
    local second = core.route.world(w.tree, first)
    each_tile(function(_, i, j, k)
      assert(first:add_tile(i, j, k, assert(pack.read_graph(dir, i, j, k))))
      assert(second:add_tile(i, j, k, assert(pack.read_graph(dir .. "/agents/big", i, j, k))))
    end)
    local big = alone(w, "big")
    local p, q = second:planner(), big:planner()
    local want = ("%.17g"):format(assert(q:plan(w.tree, slot.S, slot.G)).cost)
    q:close()
    assert.equal(want, ("%.17g"):format(assert(p:plan(w.tree, slot.S, slot.G)).cost))
    assert.is_true(second:stats().bytes < big:stats().bytes)
    first:close() -- (its own records freed; the shared ones stay, counted by the graph left)
    assert.equal(big:stats().bytes, second:stats().bytes)
    assert.equal(want, ("%.17g"):format(assert(p:plan(w.tree, slot.S, slot.G)).cost))
    p:close()
    second:close()
    big:close()
    w:close()
  end)

  it("refuses a graph2 that is not an open world graph, naming the argument", function()
    local w = assert(octonav.world.load(dir))
    local function err(...)
      local ok, e = pcall(core.route.world, ...)
      assert.is_false(ok)
      return tostring(e)
    end
    assert.equal("octonav.route.world: argument #2: octonav.route.graph expected, got number", err(w.tree, 5))
    assert.equal("octonav.route.world: argument #2: octonav.route.graph expected, got octonav.tree", err(w.tree, w.tree))
    local g = core.route.world(w.tree)
    g:close()
    assert.equal("octonav.route.world: attempt to use a closed octonav.route.graph", err(w.tree, g))
    w:close()
  end)
end)
