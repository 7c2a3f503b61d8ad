-- spec/36-agents_spec.lua -- several agent sizes from one bake (issue 16): the bake config's `agents`,
-- the pack's layout (the first agent's files where a one-agent pack has them, the others' under
-- agents/NAME/), the world's agents (world:agent, world:agent_tree, world:plan(a, b, { agent }),
-- world:stats), the navigator's `agent` option, streaming, doors and validate per agent.
-- Run: busted --lua=lua5.4 spec/36-agents_spec.lua
--
-- The gap world: 6 x 1 x 3 tiles of 4 leaves (scale 1, depth 2), box [0,24] x [0,4] x [0,12]; tile
-- index i + 6k. A wall fills the middle row (z in [4, 8], every height) but for a gap 2 wide at
-- x in [5, 7] (tile 7) and an opening 4 wide at x in [16, 20] (tile 10). Agent "small" (radius 0)
-- goes from S = (6, 2, 2) straight through the gap to G = (6, 2, 10): tiles 1, 7, 13, length 8. For
-- agent "large" (radius 1) the walls grow by 1: the gap is shut ([.., 6] and [6, ..]), the opening
-- leaves x in [17, 19], and the wall east of the gap is the box x in [6, 17], z in [3, 9]; its way
-- round is S -> (17, 2, 3) -> (17, 2, 9) -> G, length 2 sqrt(11^2 + 1) + 6, through tiles 1, 2, 3, 4
-- (the south row), 10 (the opening), 16, 15, 14, 13 (the north row back west).
local LUA = os.getenv("OCTONAV_LUA") or "lua5.4" -- the Lua under test (tools/runtests.sh)
local octonav = require "octonav"
local files = dofile("spec/support/files.lua")
local bake = require "octonav.bake"
local world_mod = require "octonav.world"
local pack = require "octonav.pack"

local S, G = { 6, 2, 2 }, { 6, 2, 10 }
local LARGE_LENGTH = 2 * math.sqrt(122) + 6

local function wall(x0, x1, z0, z1) return { box = { min = { x0, -8, z0 }, max = { x1, 12, z1 } } } end

local function gap_config(dir, agents)
  return {
    range = { min = { 0, 0, 0 }, max = { 24, 4, 12 } }, depth = 2, scale = 1,
    agents = agents or { { name = "small", radius = 0 }, { name = "large", radius = 1 } },
    geometry = { wall(-8, 5, 4, 8), wall(7, 16, 4, 8), wall(20, 32, 4, 8) },
    output = dir, progress = function() end,
  }
end

local function route_tiles(route)
  local out = {}
  for n, st in ipairs(route) do out[n] = st.tile end
  return out
end

local walker = dofile("spec/support/walker.lua")
local dist = dofile("spec/support/geometry.lua").dist
-- Walks a navigator (made with opts) from a to b, 0.5 a frame: the status and the length walked.
local function walk(w, opts, a, b)
  local status, len = walker.walk(octonav.navigator.new(w, opts), a, b, { step = 0.5, frames = 5000 })
  return status, len
end

-- Every file under dir, relative names sorted.
local function list_files(dir)
  local p = io.popen(("cd '%s' && find . -type f | sort"):format(dir))
  local names = {}
  for line in p:lines() do names[#names + 1] = line:sub(3) end
  p:close()
  return names
end

local function points(path)
  local out = {}
  for i = 1, #path do out[i] = { path[i][1], path[i][2], path[i][3] } end
  return out
end

local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert(not ok, "expected an error")
  return tostring(e)
end

describe("agents", function()
  local dir
  local tmp = {}

  setup(function()
    dir = files.tmpdir()
    assert(bake.run(gap_config(dir)))
  end)

  teardown(function()
    files.rm_rf(dir)
    for _, d in ipairs(tmp) do files.rm_rf(d) end
  end)

  local function tmpdir()
    tmp[#tmp + 1] = files.tmpdir()
    return tmp[#tmp]
  end

  describe("bake config", function()
    it("rejects duplicate names, negative radii, bad names, unknown keys, and radius with agents", function()
      local function check(agents, extra)
        local cfg = gap_config("/nonexistent", agents)
        for k, v in pairs(extra or {}) do cfg[k] = v end
        return err_of(bake.check, cfg)
      end
      assert.equal("octonav.bake: config.agents[2].name: duplicate agent name 'a'",
        check { { name = "a", radius = 0 }, { name = "a", radius = 1 } })
      assert.equal("octonav.bake: config.agents[1].radius: must be >= 0",
        check { { name = "a", radius = -0.5 } })
      assert.equal("octonav.bake: config.agents[1].name: identifier expected (a letter or '_', then letters, "
        .. "digits or '_')", check { { name = "big-one", radius = 1 } })
      assert.equal("octonav.bake: config.agents[1].name: identifier expected (a letter or '_', then letters, "
        .. "digits or '_')", check { { name = "1st", radius = 1 } })
      assert.equal("octonav.bake: config.agents[1]: unknown key 'height'",
        check { { name = "a", radius = 1, height = 2 } })
      assert.equal("octonav.bake: config.agents[1].radius: required (the agent's clearance, world units, >= 0)",
        check { { name = "a" } })
      assert.equal("octonav.bake: config.agents: at least one agent expected", check {})
      assert.equal("octonav.bake: config.agents: array of agents expected (no other keys)",
        check { { name = "a", radius = 0 }, large = { name = "b", radius = 1 } })
      assert.equal("octonav.bake: config: give either 'radius' (one agent) or 'agents' (a list of { name, radius }), "
        .. "not both", check(nil, { radius = 0.5 }))
      -- a config without agents is one agent "default" of its radius
      local cfg = gap_config("/nonexistent")
      cfg.agents, cfg.radius = nil, 0.5
      assert.same({ { name = "default", radius = 0.5 } }, bake.check(cfg).agents)
    end)
  end)

  describe("the pack", function()
    it("holds the first agent's files where a one-agent pack has them, the others' under agents/NAME", function()
      local names = list_files(dir)
      local want = { "manifest.txt" }
      for t = 0, 17 do
        local i, k = t % 6, math.floor(t / 6)
        for _, prefix in ipairs { "", "agents/large/" } do
          want[#want + 1] = ("%stiles/%d_0_%d.tile"):format(prefix, i, k)
          want[#want + 1] = ("%stiles/%d_0_%d.graph"):format(prefix, i, k)
        end
      end
      table.sort(want)
      assert.same(want, names)
      local m = assert(pack.read_manifest(dir))
      assert.same({ { name = "small", radius = 0 }, { name = "large", radius = 1 } }, m.agents)
      assert.is_true(m.agents_listed)
      assert.equal(0, m.radius)
      assert.matches("\nradius 0\nagent small 0\nagent large 1\ncrc32 ", files.read(dir .. "/manifest.txt"))
    end)

    it("each agent's files are those of a one-agent bake of its radius (a one-agent pack is unchanged)", function()
      for _, a in ipairs { { name = "small", radius = 0, sub = "" }, { name = "large", radius = 1, sub = "agents/large/" } } do
        local one = tmpdir()
        local cfg = gap_config(one)
        cfg.agents, cfg.radius = nil, a.radius
        local s = assert(bake.run(cfg))
        assert.is_nil(s.agents[2])
        assert.equal("default", s.agents[1].name)
        for _, n in ipairs(list_files(one)) do
          if n ~= "manifest.txt" then
            assert.equal(files.read(one .. "/" .. n), files.read(dir .. "/" .. a.sub .. n), a.name .. ": " .. n)
          end
        end
        -- its manifest has no agent line; loaded, it is one agent "default"
        assert.is_nil(files.read(one .. "/manifest.txt"):find("\nagent ", 1, true))
        local w = assert(world_mod.load(one))
        assert.same({ { name = "default", radius = a.radius } }, w:agents())
        w:close()
      end
    end)

    it("a manifest whose agents are bad is refused with its line", function()
      local text = files.read(dir .. "/manifest.txt"):gsub("crc32 %x+\n$", "")
      local function parse(body) return pack.parse_manifest("M", body .. ("crc32 %08x\n"):format(pack.crc32(body))) end
      assert.same({ nil, "M:8: duplicate agent 'small'" },
        { parse(text:gsub("agent large 1", "agent small 1")) })
      assert.same({ nil, "M:8: agent radius must be >= 0" }, { parse(text:gsub("agent large 1", "agent large -1")) })
      assert.same({ nil, "M:7: agent name 'sm-all' is not an identifier" },
        { parse(text:gsub("agent small 0", "agent sm-all 0")) })
      assert.same({ nil, "M: the first agent's radius is not the 'radius' line's" },
        { parse(text:gsub("radius 0\n", "radius 1\n")) })
    end)

    it("the bake's summary gives the bytes per agent (the files' sizes) and their totals", function()
      local d = tmpdir()
      local s = assert(bake.run(gap_config(d)))
      assert.equal(2, #s.agents)
      local total = 0
      for n, a in ipairs(s.agents) do
        local sub = n == 1 and "" or "agents/" .. a.name .. "/"
        local tiles, graphs = 0, 0
        for _, f in ipairs(list_files(d .. "/" .. sub .. "tiles")) do
          local size = #files.read(d .. "/" .. sub .. "tiles/" .. f)
          if f:match("%.tile$") then tiles = tiles + size else graphs = graphs + size end
        end
        assert.equal(tiles, a.tile_bytes, a.name)
        assert.equal(graphs, a.graph_bytes, a.name)
        assert.equal(0, a.hole_bytes)
        assert.equal(tiles + graphs, a.bytes)
        total = total + a.bytes
      end
      assert.equal("small", s.agents[1].name)
      assert.equal(1, s.agents[2].radius)
      assert.equal(total, s.bytes)
      assert.equal(s.agents[1].graph_bytes + s.agents[2].graph_bytes, s.graph_bytes)
      assert.equal(s.agents[1].portals + s.agents[2].portals, s.portals)
    end)

    it("serial and --job bakes (two processes) give the same bytes for both agents", function()
      local d2 = tmpdir()
      local cfgfile = files.tmpname(".lua")
      tmp[#tmp + 1] = cfgfile
      files.write(cfgfile, ([[
        local function wall(x0, x1, z0, z1) return { box = { min = { x0, -8, z0 }, max = { x1, 12, z1 } } } end
        return { range = { min = { 0, 0, 0 }, max = { 24, 4, 12 } }, depth = 2, scale = 1,
          agents = { { name = "small", radius = 0 }, { name = "large", radius = 1 } },
          geometry = { wall(-8, 5, 4, 8), wall(7, 16, 4, 8), wall(20, 32, 4, 8) }, output = %q }]]):format(d2))
      assert.is_true(os.execute(("printf '0/2\\n1/2\\n' | xargs -P2 -I{} " .. LUA .. " bin/octonav bake %s --job {} > /dev/null")
        :format(cfgfile)))
      assert.is_true(os.execute((LUA .. " bin/octonav bake %s --link > /dev/null"):format(cfgfile)))
      local names = list_files(dir)
      assert.same(names, list_files(d2))
      for _, n in ipairs(names) do assert.equal(files.read(dir .. "/" .. n), files.read(d2 .. "/" .. n), n) end
      -- the link step and info print a line per agent
      local p = io.popen((LUA .. " bin/octonav bake %s --link"):format(cfgfile))
      local o = p:read("*a")
      p:close()
      local m = assert(pack.read_manifest(dir))
      assert.equal(2, #m.agents)
      local lw = assert(world_mod.load(dir))
      local s = lw:stats()
      lw:close()
      assert.matches("\n  agent small radius 0: tiles checked, tile graphs %d+ bytes %(%d+ portals%), holes 0 bytes\n", o)
      assert.matches("\n  agent large radius 1: tiles checked, tile graphs %d+ bytes %(%d+ portals%), holes 0 bytes\n", o)
      p = io.popen((LUA .. " bin/octonav info %s"):format(d2))
      o = p:read("*a")
      p:close()
      assert.matches("\nagents    2\n", o)
      for _, a in ipairs(s.agents) do
        assert.matches(("\n  %s radius %g: tree %d nodes %%(%d bytes%%), graph %d portals %%(%d bytes%%), holes' trees 0 bytes")
          :format(a.name, a.radius, a.nodes, a.tree_bytes, a.portals, a.graph_bytes), o)
      end
      -- --tile bakes that tile for every agent
      local d3 = tmpdir()
      files.write(cfgfile, files.read(cfgfile):gsub(("%q"):format(d2):gsub("%p", "%%%0"), ("%q"):format(d3)))
      assert.is_true(os.execute((LUA .. " bin/octonav bake %s --tile 4,0,1 > /dev/null"):format(cfgfile)))
      assert.same({ "agents/large/tiles/4_0_1.graph", "agents/large/tiles/4_0_1.tile", "tiles/4_0_1.graph",
        "tiles/4_0_1.tile" }, list_files(d3))
      for _, n in ipairs(list_files(d3)) do assert.equal(files.read(dir .. "/" .. n), files.read(d3 .. "/" .. n), n) end
    end)
  end)

  describe("the world", function()
    it("opens every agent; the first is the default; agents, agent, agent_tree, stats", function()
      local w = assert(world_mod.load(dir))
      assert.same({ { name = "small", radius = 0 }, { name = "large", radius = 1 } }, w:agents())
      assert.equal("small", w.agent_name)
      assert.equal(0, w.radius)
      local large = w:agent("large")
      assert.equal(1, large.radius)
      assert.equal(large.tree, w:agent_tree("large"))
      assert.equal(w.tree, w:agent_tree())
      assert.equal(w.tree, w:agent_tree("small"))
      assert.equal(1, large:agent_tree():params().radius)
      assert.are_not.equal(w.tree:encode_tile(1, 0, 1), large.tree:encode_tile(1, 0, 1)) -- the gap's tile
      assert.equal("free", (w.tree:locate { 6, 2, 6 }))
      assert.equal("blocked", (large.tree:locate { 6, 2, 6 }))
      assert.equal(dir .. "/agents/large", large.dir)
      assert.equal(dir, large.pack_dir)
      local st = w:stats()
      assert.equal(2, #st.agents)
      for n, a in ipairs(w:agents()) do
        local e, aw = st.agents[n], w:agent(a.name)
        assert.equal(a.name, e.name)
        assert.equal(a.radius, e.radius)
        assert.equal(aw.tree:stats().bytes, e.tree_bytes)
        assert.equal(aw:graph_bytes(), e.graph_bytes)
        assert.equal(18, e.tiles_loaded)
        assert.equal(e.tree_bytes + e.graph_bytes + e.hole_bytes, e.bytes)
      end
      assert.equal(st.agents[1].bytes + st.agents[2].bytes, st.bytes)
      assert.equal(st.agents[1].tree_bytes + st.agents[2].tree_bytes, st.tree_bytes)
      assert.has_error(function() w:agent("huge") end, "world:agent: agent: unknown agent huge (loaded: small, large)")
      assert.matches("agents small r=0, large r=1 %(this: small%)", tostring(w))
    end)

    it("plans per agent: the small agent through the gap, the large one round by the opening", function()
      local w = assert(world_mod.load(dir))
      local r, cost = w:plan(S, G, { agent = "small" })
      assert.same({ 1, 7, 13 }, route_tiles(r))
      assert.equal(8, cost)
      assert.same({ 1, 7, 13 }, route_tiles((w:plan(S, G)))) -- the default agent
      r = w:plan(S, G, { agent = "large" })
      assert.same({ 1, 2, 3, 4, 10, 16, 15, 14, 13 }, route_tiles(r))
      assert.same({ 1, 2, 3, 4, 10, 16, 15, 14, 13 }, route_tiles((w:agent("large"):plan(S, G))))
      -- the searches on each agent's tree
      local q = octonav.query.new(w:agent_tree("small"))
      local path, info = q:find(S, G)
      assert.same({ S, G }, points(path))
      assert.equal(8, info.length)
      q:close()
      q = octonav.query.new(w:agent_tree("large"))
      path, info = q:find(S, G)
      assert.same({ S, { 17, 2, 3 }, { 17, 2, 9 }, G }, points(path))
      assert.near(LARGE_LENGTH, info.length, 1e-9)
      q:close()
      assert.has_error(function() w:plan(S, G, { agent = "huge" }) end,
        "world:plan: agent: unknown agent huge (loaded: small, large)")
      assert.has_error(function() w:plan(S, G, { agnet = "large" }) end, "world:plan: unknown option 'agnet'")
    end)

    it("a navigator with agent = NAME walks that agent's way", function()
      local w = assert(world_mod.load(dir))
      local status, len = walk(w, { agent = "small", arrive_distance = 0 }, S, G)
      assert.equal("arrived", status)
      assert.near(8, len, 1e-9)
      status, len = walk(w, { agent = "large", arrive_distance = 0 }, S, G)
      assert.equal("arrived", status)
      assert.near(LARGE_LENGTH, len, 1e-9)
      local nav = octonav.navigator.new(w, { agent = "large" })
      assert.equal(w:agent("large"), nav.world)
      nav:close()
      assert.has_error(function() octonav.navigator.new(w, { agent = "huge" }) end,
        "world:agent: agent: unknown agent huge (loaded: small, large)")
    end)

    it("loads the agents asked for (the first is the default); an unknown one is nil, reason", function()
      local w = assert(world_mod.load(dir, { agents = { "large" } }))
      assert.same({ { name = "large", radius = 1 } }, w:agents())
      assert.equal(1, w.radius)
      assert.same({ 1, 2, 3, 4, 10, 16, 15, 14, 13 }, route_tiles((w:plan(S, G))))
      assert.same({ nil, dir .. ": no agent 'huge' (the pack's agents: small, large)" },
        { world_mod.load(dir, { agents = { "large", "huge" } }) })
      for _, bad in ipairs { {}, "large", { "large", "large" }, { 1 } } do
        assert.has_error(function() world_mod.load(dir, { agents = bad }) end,
          "octonav.world.load: option 'agents' must be a non-empty list of distinct agent names")
      end
    end)

    it("bin/octonav path --agent plans and searches for that agent; an unknown agent is an error", function()
      local function run(args)
        local p = io.popen((LUA .. " bin/octonav path %s %s 2>&1"):format(dir, args))
        local o = p:read("*a")
        local _, _, code = p:close()
        return o, code
      end
      local o, code = run("6 2 2 6 2 10")
      assert.equal(0, code)
      assert.matches("route: 3 steps\n", o)
      assert.matches("\npath: 2 points, length 8 ", o)
      o, code = run("6 2 2 6 2 10 --agent large")
      assert.equal(0, code)
      assert.matches("route: 9 steps\n", o)
      assert.matches(("\npath: 4 points, length %s "):format(("%g"):format(LARGE_LENGTH):gsub("%p", "%%%0")), o)
      assert.matches("\n  %(17, 2, 3%)\n  %(17, 2, 9%)\n", o)
      o, code = run("6 2 2 6 2 10 --agent huge")
      assert.equal(1, code)
      assert.equal("octonav: path: --agent: no agent 'huge' in this pack (it has: small, large)\n", o)
    end)

    it("a rebake rebakes every agent: with the opening shut the large agent has no way", function()
      local d = tmpdir()
      local cfg = gap_config(d)
      assert(bake.run(cfg))
      local w = assert(world_mod.load(d))
      local salt = w:agent_tree("large"):tile_salt(4, 0, 1)
      table.insert(cfg.geometry, wall(16, 20, 4, 8))
      local s = assert(w:rebake({ min = { 16, 0, 4 }, max = { 20, 4, 8 } }, cfg))
      assert.same({ 3, 4, 5, 9, 10, 11, 15, 16, 17 }, s.rebaked)
      assert.are_not.equal(salt, w:agent_tree("large"):tile_salt(4, 0, 1))
      assert.same({ nil, "unreachable" }, { w:plan(S, G, { agent = "large" }) })
      assert.same({ 1, 7, 13 }, route_tiles((w:plan(S, G, { agent = "small" }))))
      -- the files are a fresh bake's
      local fresh = tmpdir()
      cfg.output = fresh
      assert(bake.run(cfg))
      for _, n in ipairs(list_files(fresh)) do assert.equal(files.read(fresh .. "/" .. n), files.read(d .. "/" .. n), n) end
    end)
  end)

  -- The cave world of spec/support/bakedworld.lua (two tiles of 16 along x, a wall with a window, the
  -- hole "cave" with two doors 2 x 2 wide), baked for "small" (radius 0) and "large" (radius 0.5),
  -- door 1 with its box (the doorway x in [4, 5], y in [5, 7], z in [7, 9]). For the large agent the
  -- cave's wall x in [4, 5] grows to [3.5, 5.5]: the world leaf holding door 1's outside point
  -- (3.5, 6, 8) is blocked, and so is door 2's: the doors are there but the large agent cannot use
  -- them (validate says so for it alone); the window (y, z in [6, 10]) still lets it through.
  describe("with holes and streaming", function()
    local bw = dofile("spec/support/bakedworld.lua")
    local cave

    setup(function()
      cave = files.tmpdir()
      local cfg = bw.config(cave)
      cfg.agents = { { name = "small", radius = 0 }, { name = "large", radius = 0.5 } }
      cfg.holes[1].doors[1].box = { min = { 4, 5, 7 }, max = { 5, 7, 9 } }
      assert(bw.call_bake(cfg))
    end)

    teardown(function() files.rm_rf(cave) end)

    it("validates per agent: the large agent cannot reach the cave's doors", function()
      local w = assert(world_mod.load(cave))
      local r = w:validate()
      assert.is_false(r.ok)
      assert.equal(2, #r.agents)
      assert.equal("small", r.agents[1].name)
      assert.is_true(r.agents[1].ok)
      assert.equal("large", r.agents[2].name)
      assert.equal(0.5, r.agents[2].radius)
      assert.is_false(r.agents[2].ok)
      for j, d in ipairs(r.agents[2].doors) do
        assert.same({ j, true, true, true, false }, { d.door, d.outside_blocked, d.inside_free, d.connected, d.outside_free })
      end
      assert.same(r.agents[1].doors, r.doors) -- the top level is the default agent's
      local large = w:agent("large")
      assert.is_false(large:validate().ok)
      assert.equal(7, select(2, w:plan({ 2, 8, 8 }, { 8, 6, 8 })))
      assert.same({ nil, "unreachable" }, { w:plan({ 2, 8, 8 }, { 8, 6, 8 }, { agent = "large" }) })
      assert.same({ 0, 1 }, route_tiles((w:plan({ 2, 8, 8 }, { 30, 8, 8 }, { agent = "large" }))))
    end)

    it("bin/octonav validate prints every agent's doors, prefixed with its name, and fails for one", function()
      local p = io.popen((LUA .. " bin/octonav validate %s 2>&1"):format(cave))
      local o = p:read("*a")
      local _, _, code = p:close()
      assert.equal(1, code)
      local w = assert(world_mod.load(cave))
      local r = w:validate()
      local lines = {}
      for line in o:gmatch("[^\n]+") do lines[#lines + 1] = line end
      local expect = {}
      for _, ar in ipairs(r.agents) do
        for _, d in ipairs(ar.doors) do
          expect[#expect + 1] = ("agent %s: hole %s door %d:"):format(ar.name, d.name, d.door)
        end
      end
      local seen = 0
      for _, line in ipairs(lines) do
        for _, e in ipairs(expect) do
          if line:sub(1, #e) == e then seen = seen + 1 end
        end
      end
      assert.equal(#expect, seen)
      assert.truthy(#expect >= 2)
      assert.matches("\nagent small: ok\n", o)
      assert.matches("\nagent large: NOT OK\n", o)
      assert.matches(" %-> NOT OK\n", o)
      assert.matches("doors: NOT OK\n$", o)
    end)

    it("a door closed or opened applies to every agent's world tree and hole tree", function()
      local w = assert(world_mod.load(cave))
      local before = {}
      for _, a in ipairs(w:agents()) do
        local aw = w:agent(a.name)
        before[a.name] = { aw.tree:encode_tile(0, 0, 0), aw.holes[1].tree:encode_tile(0, 0, 0),
          #aw.tree:obstacles() }
        assert.equal(0, #aw.holes[1].tree:obstacles())
      end
      assert.equal("free", (w.tree:locate { 4.5, 6, 8 }))
      w:agent("large"):set_door("cave", 1, false) -- from any agent's world
      for _, a in ipairs(w:agents()) do
        local aw = w:agent(a.name)
        assert.is_false(aw.holes[1].doors[1].open, a.name)
        assert.equal(before[a.name][3] + 1, #aw.tree:obstacles(), a.name)
        assert.equal(1, #aw.holes[1].tree:obstacles(), a.name)
        assert.equal("blocked", (aw.tree:locate { 4.5, 6, 8 }), a.name)
        assert.equal(1, aw.door_revision, a.name)
      end
      w:set_door("cave", 1, true)
      for _, a in ipairs(w:agents()) do
        local aw = w:agent(a.name)
        assert.is_true(aw.holes[1].doors[1].open)
        assert.equal(before[a.name][1], aw.tree:encode_tile(0, 0, 0), a.name)
        assert.equal(before[a.name][2], aw.holes[1].tree:encode_tile(0, 0, 0), a.name)
        assert.equal(before[a.name][3], #aw.tree:obstacles(), a.name)
      end
      -- door_box too
      w:door_box("cave", 2, { min = { 11, 5, 7 }, max = { 12, 7, 9 } })
      assert.same({ min = { 11, 5, 7 }, max = { 12, 7, 9 } }, w:agent("large").holes[1].doors[2].box)
    end)

    it("one streamer loads and unloads a tile's files for every agent together", function()
      local streamer = require "octonav.streamer"
      local s = assert(streamer.new(cave, { load_padding = 1, unload_padding = 2, workers = 0 }))
      local w = s.world
      assert.same({ { name = "small", radius = 0 }, { name = "large", radius = 0.5 } }, w:agents())
      local small, large = w:agent("small"), w:agent("large")
      local function states(p) return { (small.tree:locate(p)), (large.tree:locate(p)) } end
      local id = s:add_agent { 2, 8, 8 }
      local ch = s:update(true)
      assert.same({ { 0, 0, 0 } }, ch.loaded)
      assert.same({ "free", "free" }, states { 2, 8, 8 })
      assert.same({ "unloaded", "unloaded" }, states { 20, 8, 8 })
      assert.is_true(s:is_loaded(0))
      assert.equal("loaded", s:state(0))
      assert.equal("unloaded", s:state(1))
      assert.is_true(small.graph:has_tile(0, 0, 0) and large.graph:has_tile(0, 0, 0))
      local st = s:stats()
      assert.equal(2, #st.per_agent)
      for n, aw in ipairs { small, large } do
        local e = st.per_agent[n]
        assert.equal(aw.agent_name, e.name)
        assert.equal(aw.radius, e.radius)
        assert.equal(1, e.loaded)
        assert.equal(aw.tree:stats().bytes, e.tree_bytes)
        assert.equal(aw:graph_bytes(), e.graph_bytes)
        assert.is_true(e.graph_bytes > 0)
      end
      assert.equal(st.per_agent[1].tree_bytes + st.per_agent[2].tree_bytes, st.tree_bytes)
      -- across to tile 1: tile 0 leaves both trees as tile 1 enters both
      s:move_agent(id, { 30, 8, 8 })
      ch = s:update(true)
      assert.same({ { 1, 0, 0 } }, ch.loaded)
      assert.same({ { 0, 0, 0 } }, ch.unloaded)
      assert.same({ "unloaded", "unloaded" }, states { 2, 8, 8 })
      assert.same({ "free", "free" }, states { 30, 8, 8 })
      assert.is_false(small.graph:has_tile(0, 0, 0) or large.graph:has_tile(0, 0, 0))
      -- locks and pins reach every agent's tiles
      s:force_load(0)
      ch = s:update(true)
      assert.same({ { 0, 0, 0 } }, ch.loaded)
      assert.same({ "free", "free" }, states { 2, 8, 8 })
      s:force_unload(0)
      assert.same({ "unloaded", "unloaded" }, states { 2, 8, 8 })
      assert.same({ { 0, 0, 0 } }, s:update(true).unloaded)
      -- the cave: every agent's tree of it comes in the same update
      s:move_agent(id, { 8, 6, 8 })
      ch = s:update(true)
      assert.same({ "cave" }, ch.holes_loaded)
      assert.is_not_nil(small.holes[1].tree)
      assert.is_not_nil(large.holes[1].tree)
      assert.equal(0.5, large.holes[1].tree:params().radius)
      assert.equal(0, small.holes[1].tree:params().radius)
      -- a door closed while streaming: both trees, listed once
      w:set_door("cave", 1, false)
      assert.equal(1, #small.holes[1].tree:obstacles())
      assert.equal(1, #large.holes[1].tree:obstacles())
      assert.same({ { hole = "cave", door = 1, open = false } }, s:update(true).doors)
      s:move_agent(id, { 30, 8, 8 })
      ch = s:update(true)
      assert.same({ "cave" }, ch.holes_unloaded)
      assert.is_nil(small.holes[1].tree)
      assert.is_nil(large.holes[1].tree)
    end)

    it("a file one agent cannot read fails the tile or the hole for the unit", function()
      local streamer = require "octonav.streamer"
      local d = tmpdir()
      os.execute(("cp -r '%s/.' '%s'"):format(cave, d))
      files.write(d .. "/agents/large/tiles/0_0_0.tile", "not a tile")
      files.write(d .. "/agents/large/holes/cave.tree", "not a tree")
      local s = assert(streamer.new(d, { load_padding = 1, unload_padding = 2, workers = 0 }))
      local small, large = s.world:agent("small"), s.world:agent("large")
      s:add_agent { 8, 6, 8 } -- in tile 0 and in the cave
      local ch = s:update(true)
      assert.same({}, ch.loaded) -- the small agent's tree has tile 0, the unit does not
      assert.equal("free", (small.tree:locate { 2, 8, 8 }))
      assert.equal("unloaded", (large.tree:locate { 2, 8, 8 }))
      assert.is_false(s:is_loaded(0))
      assert.equal("failed", s:state(0))
      assert.equal("loaded", s:agent_state(small, 0))
      assert.equal("failed", s:agent_state(large, 0))
      assert.equal(1, #ch.failed)
      assert.same({ 0, 0, 0 }, ch.failed[1].tile)
      assert.equal("large", ch.failed[1].agent)
      -- the cave: the small agent's tree was read, the large one's failed: neither is installed
      assert.same({}, ch.holes_loaded)
      assert.equal(1, #ch.holes_failed)
      assert.equal("cave", ch.holes_failed[1].hole)
      assert.equal("failed", s:hole_state("cave"))
      assert.is_nil(small.holes[1].tree)
      assert.is_nil(large.holes[1].tree)
    end)

    it("a navigator for the large agent walks through the window with the streamer", function()
      local streamer = require "octonav.streamer"
      local s = assert(streamer.new(cave, { load_padding = 2, unload_padding = 6, workers = 0 }))
      local nav = octonav.navigator.new(s.world, { agent = "large", streamer = s })
      assert.equal(s.world:agent("large"), nav.world)
      nav:go { 30, 8, 8 }
      local pos, status, wp = { 2, 8, 8 }, nil, nil
      local large = s.world:agent("large")
      for _ = 1, 3000 do
        s:update(true)
        status, wp = nav:update(pos)
        if status == "arrived" or status == "failed" then break end
        if status == "moving" then
          local d = dist(pos, wp)
          local t = d > 0 and math.min(1, 0.5 / d) or 0
          local np = { pos[1] + (wp[1] - pos[1]) * t, pos[2] + (wp[2] - pos[2]) * t, pos[3] + (wp[3] - pos[3]) * t }
          assert.is_true(large.tree:visible(pos, np), "a step the large agent's tree does not allow")
          pos = np
        end
      end
      assert.equal("arrived", status, tostring(wp))
      nav:close()
    end)
  end)
end)
