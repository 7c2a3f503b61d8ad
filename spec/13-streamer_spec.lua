-- The streamer from Lua: a world of 16 x 1 x 16 tiles on disk, 100 agents random-walking for 10,000
-- frames with update() each frame; after every frame the loaded set equals the set the padding rules,
-- locks and pins require (a reference computed here). Corrupt and missing tile files are reported,
-- the rest keep streaming, and memory returns to the baseline when the agents leave.
local octonav = require "octonav"
local core = octonav.core

-- rng(seed): a function giving the next float in [0, 1) of a 63-bit LCG (spec/support/prng.lua)
local rng = dofile("spec/support/prng.lua").lcg
local files = dofile("spec/support/files.lua") -- files.tmpdir(): a fresh empty directory

local TX, TZ, DEPTH, SCALE = 16, 16, 3, 1.0
local ORIGIN = { 0, 0, 0 }
local TILE = 2 ^ DEPTH * SCALE

local function make_pack(dir, bad)
  local r = rng(7)
  local t = octonav.tree.new { tiles = { TX, 1, TZ }, depth = DEPTH, scale = SCALE, origin = ORIGIN }
  for _ = 1, 300 do
    local x, y, z = r() * TX * TILE, r() * TILE, r() * TZ * TILE
    t:add_box({ x, y, z }, { x + 1 + r() * 3, y + 1 + r() * 3, z + 1 + r() * 3 })
  end
  assert(require("octonav.core").mkdir(dir .. "/tiles"))
  for k = 0, TZ - 1 do
    for i = 0, TX - 1 do
      local blob = require("octonav.pack").tile_file(i, 0, k, t:encode_tile(i, 0, k))
      local name = ("%s/tiles/%d_0_%d.tile"):format(dir, i, k)
      local b = bad[i .. "," .. k]
      if b ~= "missing" then
        if b == "corrupt" then blob = blob:sub(1, 36) .. "\0\0\0" .. blob:sub(40) end -- inside the blob
        local f = assert(io.open(name, "wb"))
        f:write(blob)
        f:close()
      end
    end
  end
  return t
end

local function tile_dist(i, k, p)
  local function axis(v, lo)
    local hi = lo + TILE
    if v < lo then return lo - v elseif v > hi then return v - hi end
    return 0
  end
  local dx, dy, dz = axis(p[1], ORIGIN[1] + i * TILE), axis(p[2], ORIGIN[2]), axis(p[3], ORIGIN[3] + k * TILE)
  return math.sqrt(dx * dx + dy * dy + dz * dz)
end

-- the tiles within `pad` of p (a few per agent: the tile range the padding reaches, one more tile on
-- each side, and tile_dist decides)
local function near(p, pad, into)
  local i0 = math.max(0, math.floor((p[1] - pad) / TILE) - 1)
  local i1 = math.min(TX - 1, math.floor((p[1] + pad) / TILE) + 1)
  local k0 = math.max(0, math.floor((p[3] - pad) / TILE) - 1)
  local k1 = math.min(TZ - 1, math.floor((p[3] + pad) / TILE) + 1)
  for k = k0, k1 do
    for i = i0, i1 do
      if tile_dist(i, k, p) <= pad then into[i + TX * k] = true end
    end
  end
end

describe("octonav.core.streamer", function()
  local dir, orig
  local bad = { ["3,4"] = "corrupt", ["10,10"] = "missing" }

  setup(function()
    dir = files.tmpdir()
    orig = make_pack(dir, bad)
  end)
  teardown(function() -- without a shell (the spec also runs under a preloaded sanitizer runtime)
    for k = 0, TZ - 1 do
      for i = 0, TX - 1 do os.remove(("%s/tiles/%d_0_%d.tile"):format(dir, i, k)) end
    end
    os.remove(dir .. "/tiles")
    os.remove(dir)
  end)

  local function fresh_tree()
    return octonav.tree.new { tiles = { TX, 1, TZ }, depth = DEPTH, scale = SCALE, origin = ORIGIN }
  end

  it("keeps exactly the required tiles loaded over 10,000 frames of 100 random-walking agents", function()
    local tree = fresh_tree()
    local base = tree:stats().bytes
    local LOAD, UNLOAD = 4, 10
    local s = core.streamer.new(tree, dir, { load_padding = LOAD, unload_padding = UNLOAD, workers = 2 })
    local r = rng(42)
    local pos, ids = {}, {}
    for a = 1, 100 do
      pos[a] = { r() * TX * TILE, r() * TILE, r() * TZ * TILE }
      ids[a] = s:add_agent(pos[a])
    end
    local ref, mismatches, failures, first_bad = {}, 0, {}, nil
    local locked = 5 + TX * 5
    for frame = 1, 10000 do
      for a = 1, 100 do
        local p = pos[a]
        p[1] = math.max(-5, math.min(TX * TILE + 5, p[1] + (r() - 0.5) * 2))
        p[3] = math.max(-5, math.min(TZ * TILE + 5, p[3] + (r() - 0.5) * 2))
        s:move_agent(ids[a], p)
      end
      if frame == 2000 then s:lock { 5, 0, 5 } end
      if frame == 6000 then s:unlock { 5, 0, 5 } end
      local ev = s:update(true)
      for _, f in ipairs(ev.failed) do failures[f.tile[1] .. "," .. f.tile[3]] = f.reason end
      local load, keep = {}, {}
      for a = 1, 100 do
        near(pos[a], LOAD, load)
        near(pos[a], UNLOAD, keep)
      end
      if frame >= 2000 and frame < 6000 then load[locked] = true end
      local want = {}
      for t in pairs(load) do want[t] = true end
      for t in pairs(ref) do
        if keep[t] then want[t] = true end
      end
      want[3 + TX * 4], want[10 + TX * 10] = nil, nil -- bad files never load
      ref = want
      if frame % 10 == 0 or frame < 50 then
        for k = 0, TZ - 1 do
          for i = 0, TX - 1 do
            local got = s:is_loaded { i, 0, k }
            if got ~= (want[i + TX * k] == true) then
              mismatches = mismatches + 1
              first_bad = first_bad or ("frame %d tile %d,%d: got %s"):format(frame, i, k, tostring(got))
            end
          end
        end
      end
    end
    assert.are.equal(0, mismatches, first_bad)
    assert.are.equal("corrupt tile file", failures["3,4"])
    assert.are.equal("missing or unreadable tile file", failures["10,10"])
    -- loaded tiles hold what was baked
    for k = 0, TZ - 1 do
      for i = 0, TX - 1 do
        if s:is_loaded { i, 0, k } then assert.are.equal(orig:encode_tile(i, 0, k), tree:encode_tile(i, 0, k)) end
      end
    end
    -- everyone leaves: back to the baseline
    for a = 1, 100 do s:remove_agent(ids[a]) end
    s:update(true)
    local st = s:stats()
    assert.are.equal(0, st.loaded)
    assert.are.equal(0, st.agents)
    assert.are.equal(base, st.tree_bytes)
    assert.is_true(st.decoded > 0)
    s:close()
  end)

  it("queries see streamed tiles and tile salts change on load and unload", function()
    local tree = fresh_tree()
    local s = core.streamer.new(tree, dir, { load_padding = 1, unload_padding = 2, workers = 1 })
    local salt0 = tree:tile_salt(0, 0, 0)
    assert.are.equal(nil, select(1, tree:locate { 4, 4, 4 }) == "free" and "free" or nil) -- unloaded: not free
    local id = s:add_agent { 4, 4, 4 }
    s:update(true)
    assert.is_true(s:is_loaded { 0, 0, 0 })
    assert.are_not.equal(salt0, tree:tile_salt(0, 0, 0))
    assert.are.equal(orig:locate { 4, 4, 4 }, tree:locate { 4, 4, 4 })
    local salt1 = tree:tile_salt(0, 0, 0)
    s:move_agent(id, { 100, 4, 100 })
    s:update(true)
    assert.is_false(s:is_loaded { 0, 0, 0 })
    assert.are_not.equal(salt1, tree:tile_salt(0, 0, 0))
    s:close()
  end)

  it("prepare = true: workers build each tile's box graph, equal to tree:prepare's", function()
    local ref = make_pack(files.tmpdir(), {}) -- the same contents (seeded), in memory
    ref:prepare()
    for _, workers in ipairs { 0, 2 } do
      local tree = fresh_tree()
      local s = core.streamer.new(tree, dir, { load_padding = 12, unload_padding = 20, workers = workers,
        prepare = true })
      local id = s:add_agent { 20, 4, 20 }
      s:update(true)
      local loaded = 0
      for k = 0, TZ - 1 do
        for i = 0, TX - 1 do
          if s:is_loaded { i, 0, k } then
            loaded = loaded + 1
            assert.same(ref:boxes(i, 0, k), tree:boxes(i, 0, k))
          else
            assert.same({ nil, "tile not prepared" }, { tree:boxes(i, 0, k) })
          end
        end
      end
      assert.is_true(loaded >= 9)
      local st = tree:stats()
      assert.equal(loaded, st.tiles_prepared)
      assert.equal(ref:stats().boxes > 0 and st.boxes > 0, true)
      -- a search inside the loaded tiles runs over the boxes, as on the prepared reference
      local q, rq = octonav.query.new(tree), octonav.query.new(ref)
      local a, b = { 9.5, 4.5, 9.5 }, { 30.5, 4.5, 28.5 }
      local p1, i1 = q:find(a, b)
      local p2, i2 = rq:find(a, b)
      assert.equal("boxes", i1.graph)
      assert.equal(#p2, #p1)
      for n = 1, #p1 do assert.same(p2[n], p1[n]) end
      assert.equal(i2.length, i1.length)
      assert.equal(i2.expansions, i1.expansions)
      -- leaving: tiles unload and their graphs go with them
      s:remove_agent(id)
      s:update(true)
      st = tree:stats()
      assert.equal(0, st.tiles_prepared)
      assert.equal(0, st.box_bytes)
      q:close()
      rq:close()
      s:close()
      tree:close()
    end
    -- without the option (the default) tiles come in unprepared
    local tree = fresh_tree()
    local s = core.streamer.new(tree, dir, { load_padding = 1, unload_padding = 2, workers = 0 })
    s:add_agent { 4, 4, 4 }
    s:update(true)
    assert.is_true(s:is_loaded { 0, 0, 0 })
    assert.equal(0, tree:stats().tiles_prepared)
    s:close()
    assert.has_error(function() core.streamer.new(tree, dir, { load_padding = 1, unload_padding = 2, prepare = 1 }) end,
      "octonav.core.streamer.new: option 'prepare': boolean expected, got number")
    tree:close()
    ref:close()
  end)

  it("force_load, force_unload, lock and retry", function()
    local tree = fresh_tree()
    local s = core.streamer.new(tree, dir, { load_padding = 1, unload_padding = 2, workers = 0 })
    s:force_load { 7, 0, 7 }
    s:update()
    assert.is_true(s:is_loaded { 7, 0, 7 })
    s:lock { 7, 0, 7 }
    s:force_unload { 7, 0, 7 }
    s:update()
    assert.is_true(s:is_loaded { 7, 0, 7 }) -- locked: stays
    s:unlock { 7, 0, 7 }
    s:update()
    assert.is_false(s:is_loaded { 7, 0, 7 })
    s:force_load { 3, 0, 4 }
    local ev = s:update()
    assert.are.equal(1, #ev.failed)
    assert.are.equal("failed", s:state { 3, 0, 4 })
    assert.are.equal(0, #s:update().failed) -- not retried by itself
    s:retry { 3, 0, 4 }
    assert.are.equal(1, #s:update().failed)
    s:close()
  end)

  it("a search waits for tiles that are not loaded yet and resumes; paths turn stale on unload", function()
    local tree = fresh_tree()
    local s = core.streamer.new(tree, dir, { load_padding = 0.5, unload_padding = 1, workers = 1 })
    local a, b = { 1.5, 7.5, 1.5 }, { 60.5, 7.5, 1.5 } -- tile (0,0,0) to tile (7,0,0), along the top row
    s:force_load { 0, 0, 0 }
    s:force_load { 7, 0, 0 }
    s:update(true)
    local q = octonav.query.new(tree)
    -- find cannot wait: it reports the tile it needs
    local path, info = q:find(a, b)
    assert.is_nil(path)
    assert.are.equal("loading", info.reason)
    assert.are.same({ 1, 0, 0 }, info.tile)
    -- the sliced search waits, resuming as tiles arrive
    local st = q:start(a, b)
    local tile
    local waits = 0
    while st ~= "found" and st ~= "failed" do
      st, tile = q:step(100)
      if st == "loading" then
        waits = waits + 1
        s:force_load(tile)
        s:update(true)
      end
    end
    assert.are.equal("found", st)
    assert.is_true(waits >= 1)
    path, info = q:result()
    assert.is_true(path:is_valid())
    assert.is_true(info.valid)
    -- the same path on the fully loaded original tree has the same length
    local p2, i2 = octonav.query.new(orig):find(a, b)
    assert.is_not_nil(p2)
    assert.is_true(math.abs(i2.length - info.length) < 1e-9)
    -- unloading a tile the path crosses makes it stale
    s:force_unload { 1, 0, 0 }
    s:update(true)
    assert.is_false(path:is_valid())
    assert.is_false(info.valid)
    s:close()
  end)

  -- 3 x 3 x 3 tiles of side 8 on disk -> dir, a function removing them
  local function pack3()
    local d3 = files.tmpdir()
    local t = octonav.tree.new { tiles = { 3, 3, 3 }, depth = 3, scale = 1, origin = { 0, 0, 0 } }
    t:add_box({ 1, 1, 1 }, { 2, 2, 2 })
    assert(core.mkdir(d3 .. "/tiles"))
    local names = {}
    for k = 0, 2 do
      for j = 0, 2 do
        for i = 0, 2 do
          names[#names + 1] = ("%s/tiles/%d_%d_%d.tile"):format(d3, i, j, k)
          local f = assert(io.open(names[#names], "wb"))
          f:write(require("octonav.pack").tile_file(i, j, k, t:encode_tile(i, j, k)))
          f:close()
        end
      end
    end
    t:close()
    return d3, function()
      for _, n in ipairs(names) do os.remove(n) end
      os.remove(d3 .. "/tiles")
      os.remove(d3)
    end
  end

  it("loads a tile exactly load_padding away on all 6 sides, none farther", function()
    -- the agent at the centre of the middle tile is exactly 4 from its six face neighbours, sqrt(32)
    -- from the edge ones
    local d3, remove = pack3()
    for _, workers in ipairs { 0, 2 } do
      for _, pad in ipairs { 4, 3.5 } do
        local tree = octonav.tree.new { tiles = { 3, 3, 3 }, depth = 3, scale = 1, origin = { 0, 0, 0 } }
        local s = core.streamer.new(tree, d3, { load_padding = pad, unload_padding = 8, workers = workers })
        s:add_agent { 12, 12, 12 }
        s:update(true)
        local sides, loaded = 0, 0
        for k = 0, 2 do
          for j = 0, 2 do
            for i = 0, 2 do
              local off = math.abs(i - 1) + math.abs(j - 1) + math.abs(k - 1)
              local got = s:is_loaded { i, j, k }
              assert.are.equal(off == 0 or (off == 1 and pad == 4), got, ("tile %d,%d,%d pad %g"):format(i, j, k, pad))
              if got then loaded = loaded + 1 end
              if got and off == 1 then sides = sides + 1 end
            end
          end
        end
        assert.are.equal(pad == 4 and 7 or 1, loaded)
        assert.are.equal(pad == 4 and 6 or 0, sides)
        s:close()
        tree:close()
      end
    end
    remove()
  end)

  it("max_loaded below what an agent needs: nearest first, the rest listed as waiting, a lock wins", function()
    local d3, remove = pack3()
    for _, workers in ipairs { 0, 2 } do
      local tree = octonav.tree.new { tiles = { 3, 3, 3 }, depth = 3, scale = 1, origin = { 0, 0, 0 } }
      local s = core.streamer.new(tree, d3, { load_padding = 4, unload_padding = 30, workers = workers,
        max_loaded = 3 })
      local id = s:add_agent { 12, 12, 12 } -- wants its tile and the 6 face neighbours
      s:update(true)
      assert.is_true(s:is_loaded { 1, 1, 1 }) -- its own tile first
      local st = s:stats()
      assert.are.equal(3, st.loaded)
      assert.are.equal(4, st.waiting)
      local w = s:waiting()
      assert.are.equal(4, #w)
      for _, e in ipairs(w) do
        assert.are.equal("max_loaded", e.reason)
        local off = math.abs(e.tile[1] - 1) + math.abs(e.tile[2] - 1) + math.abs(e.tile[3] - 1)
        assert.are.equal(1, off)
        assert.are.equal("unloaded", s:state(e.tile))
      end
      s:lock { 0, 0, 0 } -- a lock wins over the limit
      s:update(true)
      assert.is_true(s:is_loaded { 0, 0, 0 })
      assert.are.equal(4, s:stats().loaded)
      -- away to the far corner: tiles only unload_padding keeps make room
      s:move_agent(id, { 20, 20, 20 })
      s:update(true)
      st = s:stats()
      assert.is_true(s:is_loaded { 2, 2, 2 })
      assert.is_true(s:is_loaded { 0, 0, 0 })
      assert.are.equal(3, st.loaded)
      assert.are.equal(2, st.waiting)
      assert.are.equal(3, st.evicted)
      s:unlock { 0, 0, 0 }
      s:update(true)
      assert.are.equal("unloaded", s:state { 0, 0, 0 })
      assert.are.equal(1, #s:waiting())
      s:close()
      tree:close()
    end
    remove()
  end)

  it("tree:close() with loads still queued stops the streamer first; a tree takes one streamer", function()
    for round = 1, 10 do
      local tree = fresh_tree()
      local s = core.streamer.new(tree, dir, { load_padding = 200, unload_padding = 400, workers = 1 })
      assert.has_error(function() core.streamer.new(tree, dir, { load_padding = 1, unload_padding = 2 }) end,
        "octonav.streamer.new: tree is used by a streamer")
      s:add_agent { 60, 4, 60 }
      s:update(false) -- 256 tiles queued for one worker
      if round == 1 then assert.is_true(s:stats().queued > 100) end
      tree:close() -- joins the worker, drops the queue (under ASan: no use after free)
      assert.has_error(function() s:update() end, "octonav.streamer: its tree was closed")
      assert.has_error(function() s:stats() end, "octonav.streamer: its tree was closed")
      s:close()
      assert.are.equal("octonav.streamer (closed)", tostring(s))
    end
    -- once its streamer is closed, the tree takes another
    local tree = fresh_tree()
    core.streamer.new(tree, dir, { load_padding = 1, unload_padding = 2 }):close()
    local s = core.streamer.new(tree, dir, { load_padding = 1, unload_padding = 2 })
    s:close()
    tree:close()
  end)

  it("rejects misuse with clear errors", function()
    local tree = fresh_tree()
    assert.has_error(function() core.streamer.new(tree, dir, { load_padding = 5, unload_padding = 5 }) end,
      "octonav.streamer.new: unload_padding must be greater than load_padding")
    assert.has_error(function() core.streamer.new(tree, dir, { load_padding = 1 }) end,
      "octonav.streamer.new: option 'unload_padding' is required")
    assert.has_error(function() core.streamer.new(tree, dir, { load_padding = 1, unload_padding = 2, bogus = 1 }) end,
      "octonav.streamer.new: unknown option 'bogus'")
    local s = core.streamer.new(tree, dir, { load_padding = 1, unload_padding = 2 })
    assert.has_error(function() s:lock { 99, 0, 0 } end)
    assert.has_error(function() s:unlock { 1, 0, 1 } end, "streamer:unlock: the tile is not locked")
    assert.has_error(function() s:move_agent(12, { 1, 2, 3 }) end)
    assert.has_error(function() s:add_agent { 0 / 0, 1, 2 } end)
    tree:close()
    assert.has_error(function() s:update() end, "octonav.streamer: its tree was closed")
    s:close()
    assert.has_error(function() s:update() end, "streamer:update: attempt to use a closed octonav.streamer")
  end)
end)
