-- spec/115-onetree_spec.lua -- the one-tree pack (pack version 3, octonav.onetree; issue 33 "one tree for
-- every agent size"): the bake config's one_tree, the pack's files, the world's agents over one tree, its
-- memory against a single-radius pack, and navigators at a radius on the slot world (spec/115-world_radius)
-- and on the dungeon of ../shared, whose walks are checked by an independent distance test (every walked
-- point's Euclidean distance to the OBJ's triangles, computed in spec/support/tri_distance.lua) and
-- compared with the walks on the old pack of a tree per agent.
-- Run: busted --lua=lua5.4 spec/115-onetree_spec.lua
local octonav = require "octonav"
local files = dofile("spec/support/files.lua")
local tri = dofile("spec/support/tri_distance.lua")
local bake = require "octonav.bake"
local world_mod = require "octonav.world"
local pack = require "octonav.pack"

local DUNGEON = "/work/shared/data/worlds/dungeon.lua"

-- the slot world of spec/115-world_radius: a wall with a gap 3 wide and an opening 10 wide
local slot = dofile("spec/support/slotworld.lua")
local S, G, slot_config, box_clearance = slot.S, slot.G, slot.config, slot.clearance

local walker = dofile("spec/support/walker.lua")
local dist = dofile("spec/support/geometry.lua").dist
-- walks nav from a to b, 0.25 a frame: status, length, least clearance(p) over the walked points, last waypoint
local function walk(nav, a, b, clearance)
  return walker.walk(nav, a, b, { frames = 40000, clearance = clearance })
end

local function list_files(dir)
  local p = io.popen(("cd '%s' && find . -type f | sort"):format(dir))
  local names = {}
  for line in p:lines() do names[#names + 1] = line:sub(3) end
  p:close()
  return names
end

local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert(not ok, "expected an error")
  return tostring(e)
end

describe("the one-tree pack", function()
  local dirs = {}
  local function tmpdir()
    dirs[#dirs + 1] = files.tmpdir()
    return dirs[#dirs]
  end
  teardown(function()
    for _, d in ipairs(dirs) do files.rm_rf(d) end
  end)

  it("holds one tree, its holes and a tile graph per agent radius; the manifest says version 3", function()
    local dir = tmpdir()
    local agents = { { name = "big", radius = 2 }, { name = "small", radius = 0 }, { name = "mid", radius = 1 } }
    assert(bake.run(slot_config(dir, agents, true)))
    local names = list_files(dir)
    local tiles, graphs, other = 0, {}, {}
    for _, n in ipairs(names) do
      if n:match("^tiles/%d+_%d+_%d+%.tile$") then tiles = tiles + 1
      elseif n:match("graph$") then
        local where = n:match("^(.*)tiles/") or ""
        graphs[where] = (graphs[where] or 0) + 1
      else other[#other + 1] = n end
    end
    assert.equal(32, tiles) -- one tree: 4 x 2 x 4 tiles, no agent has tiles of its own
    -- the tree is baked for radius 0 (the smallest): small's graphs are beside it, the others' apart
    assert.same({ [""] = 32, ["agents/big/"] = 32, ["agents/mid/"] = 32 }, graphs)
    assert.same({ "manifest.txt" }, other)
    local m = assert(pack.read_manifest(dir))
    assert.is_true(m.one_tree)
    assert.equal(0, m.radius)
    assert.equal("octonav-pack 3", files.read(dir .. "/manifest.txt"):match("^[^\n]+"))
    local w = assert(world_mod.load(dir))
    assert.same({ { name = "big", radius = 2 }, { name = "small", radius = 0 }, { name = "mid", radius = 1 } },
      w:agents())
    assert.equal(0, w.tree:params().radius)
    -- every agent plans over the one tree
    assert.equal(w.tree, w:agent("mid").tree)
    assert.equal(w.tree, w:agent_tree("small"))
    local st = w:stats()
    assert.equal(st.tree_bytes, st.agents[1].tree_bytes) -- counted once
    assert.equal(0, st.agents[2].tree_bytes + st.agents[3].tree_bytes)
    w:close()
    assert.equal("world:agent: the world is closed (world:close())", err_of(w.agent, w, "mid"))
    -- bad manifests: the radius line must be the smallest agent radius; a version-3 pack does not stream yet
    local text = files.read(dir .. "/manifest.txt")
    local function reseal(t)
      local body = t:gsub("crc32 %x+\n?$", "")
      return body .. ("crc32 %08x\n"):format(pack.crc32(body))
    end
    files.write(dir .. "/manifest.txt", reseal(text:gsub("\nradius 0\n", "\nradius 1\n")))
    assert.same({ nil, dir .. "/manifest.txt: the 'radius' line is not the smallest agent radius (the one tree's)" },
      { world_mod.load(dir) })
    files.write(dir .. "/manifest.txt", text)
    assert.same({ nil, dir .. "/manifest.txt: a one-tree pack (version 3) streams its tree only: load it with "
      .. "{ tiles = false, graphs = true }" }, { world_mod.load(dir, { tiles = false }) })
    assert.equal("octonav.bake: config.one_tree: boolean expected, got string",
      err_of(bake.check, slot_config(dir, agents, "yes")))
  end)

  it("walks a navigator of radius 2 on the one tree as on the tree baked for 2, never nearer than 2", function()
    local agents = { { name = "small", radius = 0 }, { name = "big", radius = 2 } }
    local one, per = tmpdir(), tmpdir()
    assert(bake.run(slot_config(one, agents, true)))
    assert(bake.run(slot_config(per, agents, false)))
    local w1, w2 = assert(world_mod.load(one)), assert(world_mod.load(per))
    local s1, l1, c1 = walk(octonav.navigator.new(w1, { radius = 2, arrive_distance = 0 }), S, G, box_clearance)
    local s2, l2 = walk(octonav.navigator.new(w2, { radius = 2, arrive_distance = 0 }), S, G, box_clearance)
    assert.equal("arrived", s1)
    assert.equal("arrived", s2)
    assert.is_true(l1 > 40, "went round the gap: " .. l1)
    assert.is_true(c1 >= 2 - 1e-9, "clearance " .. c1)
    assert.is_true(math.abs(l1 / l2 - 1) <= 0.01, ("one tree %.4f, tree per agent %.4f"):format(l1, l2))
    -- the big agent's navigator without option radius keeps big's radius on the one tree, as on its own tree
    local sb, lb, cb = walk(octonav.navigator.new(w1, { agent = "big", arrive_distance = 0 }), S, G, box_clearance)
    assert.equal("arrived", sb)
    assert.near(l1, lb, 1e-9)
    assert.is_true(cb >= 2 - 1e-9, "clearance " .. cb)
    -- radius 0 goes through the gap on the same pack
    local s0, l0 = walk(octonav.navigator.new(w1, { radius = 0, arrive_distance = 0 }), S, G, box_clearance)
    assert.equal("arrived", s0)
    assert.near(24, l0, 1e-6)
    -- the plan at radius 2 is big's graph's: round the gap, as on the old pack
    local function route_tiles(route)
      local out = {}
      for n, st in ipairs(route) do out[n] = st.tile end
      return out
    end
    assert.same(route_tiles(assert(w2:plan(S, G, { radius = 2 }))), route_tiles(assert(w1:plan(S, G, { radius = 2 }))))
    w1:close()
    w2:close()
  end)

  it("streams its one tree under every agent's graphs (tiles = false, graphs = true)", function()
    local dir = tmpdir()
    assert(bake.run(slot_config(dir, { { name = "small", radius = 0 }, { name = "big", radius = 2 } }, true)))
    local w = assert(world_mod.load(dir, { tiles = false, graphs = true }))
    assert.equal(32, w:agent("big").graph:stats().tiles) -- every agent's graphs read at load, and kept
    assert.equal(32, w.graph:stats().tiles)
    assert.equal(0, w.tree:stats().tiles_loaded)
    local s = octonav.streamer.new(w, { workers = 1, load_padding = 40, unload_padding = 80 })
    local nav = octonav.navigator.new(w, { radius = 0, arrive_distance = 0, streamer = s })
    nav:go(G)
    local pos, len, status, wp = { S[1], S[2], S[3] }, 0, nil, nil
    for _ = 1, 20000 do
      s:update()
      status, wp = nav:update(pos)
      if status == "arrived" or status == "failed" then break end
      if status == "moving" then
        local d = dist(pos, wp)
        local t = d > 0 and math.min(1, 0.25 / d) or 0
        pos = { pos[1] + (wp[1] - pos[1]) * t, pos[2] + (wp[2] - pos[2]) * t, pos[3] + (wp[3] - pos[3]) * t }
        len = len + d * t
      end
    end
    nav:close()
    assert.equal("arrived", status, tostring(wp))
    assert.near(24, len, 1e-6)
    assert.is_true(w.tree:stats().tiles_loaded > 0)
    s:close()
    w:close()
  end)

  it("bin/octonav info counts the one tree's files once and every agent's graphs", function()
    local dir = tmpdir()
    assert(bake.run(slot_config(dir, { { name = "small", radius = 0 }, { name = "big", radius = 2 } }, true)))
    local total = 0
    for _, n in ipairs(list_files(dir)) do total = total + #files.read(dir .. "/" .. n) end
    local p = io.popen(((os.getenv("OCTONAV_LUA") or "lua5.4") .. " bin/octonav info %s"):format(dir))
    local text = p:read("*a")
    p:close()
    assert.equal(("files     %d bytes"):format(total), text:match("files +%d+ bytes"))
    assert.equal("agents    2 (one tree, pack version 3)", text:match("agents[^\n]*"))
  end)

  it("rebakes every agent's graphs with the one tree's tiles", function()
    local dir = tmpdir()
    local agents = { { name = "small", radius = 0 }, { name = "big", radius = 2 } }
    assert(bake.run(slot_config(dir, agents, true)))
    local w = assert(world_mod.load(dir))
    local before = assert(w:plan(S, G, { radius = 2 }))
    assert.equal(8, #before) -- round the gap, through the opening
    -- the gap widened to x in [4, 12]: 8 wide, room for radius 2
    local cfg = slot_config(dir, agents, true)
    cfg.geometry[2] = { box = { min = { 12, -8, 14 }, max = { 20, 24, 18 } } }
    local sum = assert(w:rebake({ min = { 4, 0, 12 }, max = { 14, 16, 20 } }, cfg))
    assert.is_true(#sum.rebaked > 0)
    local after = assert(w:plan(S, G, { radius = 2 }))
    assert.equal(4, #after) -- straight through the gap on big's new graphs
    local status, len, least = walk(octonav.navigator.new(w, { radius = 2, arrive_distance = 0 }), { 8, 8, 4 },
      { 8, 8, 28 }, function(p)
        local best = math.huge -- (the walls of the new geometry)
        for _, g in ipairs(cfg.geometry) do
          local q = 0
          for a = 1, 3 do
            local d = math.max(g.box.min[a] - p[a], 0, p[a] - g.box.max[a])
            q = q + d * d
          end
          best = math.min(best, math.sqrt(q))
        end
        return best
      end)
    assert.equal("arrived", status)
    assert.near(24, len, 1e-6)
    assert.is_true(least >= 2 - 1e-9, "clearance " .. least)
    w:close()
  end)

  describe("the dungeon", function()
    local cfgs = {}
    local function dungeon(agents, one_tree)
      local cfg = dofile(DUNGEON)
      for _, g in ipairs(cfg.geometry) do
        if g.obj then g.obj = "/work/shared/data/worlds/" .. g.obj end
      end
      cfg.output, cfg.radius, cfg.agents, cfg.one_tree, cfg.progress = tmpdir(), nil, agents, one_tree, function() end
      assert(bake.run(cfg))
      cfgs[#cfgs + 1] = cfg
      return assert(world_mod.load(cfg.output)), cfg
    end
    local have = io.open(DUNGEON) ~= nil
    local AGENTS = { { name = "point", radius = 0 }, { name = "one", radius = 1 } }

    it("holds three radii in at most 1.25 times a single-radius pack's memory", function()
      if not have then return pending("no " .. DUNGEON) end
      -- (1.302x before session 25: each agent's graph kept 8 KB of pending faces' slots, and the open-air
      -- tiles' graphs, one file for every radius, were held once a tile and radius)
      local three = { AGENTS[1], { name = "half", radius = 0.5 }, AGENTS[2] }
      local single = dungeon({ { name = "point", radius = 0 } }, false)
      local one = dungeon(three, true)
      local per = dungeon(three, false)
      local b0, b1, b2 = single:stats().bytes, one:stats().bytes, per:stats().bytes
      assert.is_true(b1 <= 1.25 * b0, ("one tree %d bytes, single radius %d: %.3fx"):format(b1, b0, b1 / b0))
      assert.is_true(b2 > 1.5 * b0, ("a tree per agent %d bytes, single radius %d"):format(b2, b0)) -- (before)
      single:close()
      one:close()
      per:close()
    end)

    it("walks radius 0.5 and 1 never nearer than r to a triangle, within 1 % of the old pack's length", function()
      if not have then return pending("no " .. DUNGEON) end
      local agents = { { name = "point", radius = 0 }, { name = "half", radius = 0.5 }, { name = "one", radius = 1 } }
      local w1, cfg = dungeon(agents, true)
      local w2 = dungeon(agents, false)
      local near = tri.index(tri.read_obj(cfg.geometry[1].obj), 1, 1.5)
      local seed = 7 -- a fixed LCG: start and goal points outside the holes, each with room for radius 1
      local function rnd()
        seed = (seed * 1103515245 + 12345) % 2147483648
        return seed / 2147483648
      end
      local pts = {}
      while #pts < 12 do
        local p = { -25 + rnd() * 74, 1 + rnd() * 15, -90 + rnd() * 98 }
        -- (chosen by the library's sphere test at 1.5: p's leaf of 0.5 keeps 1 from blocked leaves, so a
        -- search at radius 1 may start and end there; what the walks are checked by is `near`)
        if w1:in_hole(p) == nil and w1.tree:visible_radius(p, p, 1.5) then pts[#pts + 1] = p end
      end
      local longest = 0
      for i = 1, #pts, 2 do
        for _, r in ipairs { 0.5, 1 } do
          local s1, l1, c1, why1 = walk(octonav.navigator.new(w1, { radius = r, arrive_distance = 0 }), pts[i], pts[i + 1], near)
          local s2, l2 = walk(octonav.navigator.new(w2, { radius = r, arrive_distance = 0 }), pts[i], pts[i + 1], near)
          local what = ("pair %d radius %g"):format((i + 1) / 2, r)
          assert.equal("arrived", s1, what .. ": " .. tostring(why1))
          assert.equal("arrived", s2, what)
          assert.is_true(c1 >= r - 1e-9, ("%s: came %.4f from a triangle"):format(what, c1))
          -- the one tree's searches keep exactly ceil(r / scale) leaves: never longer than the grown tree's
          -- path by more than 1 %; shorter by up to a few % where the grown tree's leaves round outwards
          assert.is_true(l1 <= 1.01 * l2, ("%s: one tree %.4f, tree per agent %.4f"):format(what, l1, l2))
          longest = math.max(longest, l1)
        end
      end
      assert.is_true(longest > 50, "a long walk among them: " .. longest)
      w1:close()
      w2:close()
    end)
  end)
end)
