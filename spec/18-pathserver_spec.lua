-- spec/18-pathserver_spec.lua -- octonav.pathserver: path searches on worker threads.
-- Every result equals q:find's for the same request (points bit for bit, length, reason); ids and
-- pending counts; the tree is refused to edits (and close, and a streamer) while requests are out,
-- pause lets it be edited and later requests see the edit; stale results are detected; misuse raises
-- with the argument's name. Run under TSan by make check-tsan. Random scenes are seeded (OCTONAV_SEED).
local octonav = require "octonav"

local BASE_SEED = tonumber(os.getenv("OCTONAV_SEED") or "") or 20240611
local rng = dofile("spec/support/prng.lua").xorshift
local scenes = dofile("spec/support/scenes.lua")

-- A 2x1x2 scene of 16^3 tiles with random slabs and pillars.
local function random_scene(r)
  local s = scenes.scene { depth = 4, tiles = { 2, 1, 2 } }
  for i = 1, 30 do
    local mn = { r.range(0, s.X), r.range(0, s.Y), r.range(0, s.Z) }
    local ext = i % 2 == 0 and 6 or 1.5
    s:box(mn, { mn[1] + 0.3 + r.range(0, ext), mn[2] + 0.3 + r.range(0, ext), mn[3] + 0.3 + r.range(0, ext) })
  end
  return s
end

-- Requests between random points (some outside or blocked) with a mix of options.
local function requests(r, s, n)
  local out = {}
  local variants = { {}, { any_angle = true }, { smooth = "none" }, { max_expansions = 4, partial = true },
    { weight = 1.0, points = "centre" }, { relax = 0, direct = false } }
  for i = 1, n do
    local a = { r.range(-0.5, s.X + 0.5), r.range(0, s.Y), r.range(0, s.Z) }
    local b = { r.range(0, s.X), r.range(0, s.Y), r.range(-0.5, s.Z + 0.5) }
    out[i] = { a, b, variants[i % #variants + 1] }
  end
  return out
end

local function same_result(got, path, info)
  assert.equal(info.status, got.info.status)
  assert.equal(info.reason, got.info.reason)
  assert.equal(info.expansions, got.info.expansions)
  if not path then
    assert.is_nil(got.path)
    return
  end
  assert.equal(info.length, got.info.length) -- exactly: same search, same arithmetic
  assert.equal(#path, #got.path)
  for i = 1, #path do
    for k = 1, 3 do assert.equal(path[i][k], got.path[i][k]) end
  end
  assert.is_true(got.path:is_valid())
  assert.is_true(got.info.valid)
end

local it54 = dofile("spec/support/close54.lua")(it, pending, _ENV) -- <close> tests run on Lua 5.4 only

describe("octonav.pathserver", function()
  it("returns what q:find returns for every request, with 2 workers and with none", function()
    local r = rng(BASE_SEED + 17)
    local s = random_scene(r)
    local reqs = requests(r, s, 120)
    local q = octonav.query.new(s.tree)
    local want = {}
    for i, rq in ipairs(reqs) do
      local path, info = q:find(rq[1], rq[2], rq[3])
      want[i] = { path, info }
    end
    local found = 0
    for _, w in ipairs(want) do if w[1] and w[2].status == "found" then found = found + 1 end end
    assert.is_true(found > 30 and found < 120, "a scene with both outcomes: " .. found)
    for _, workers in ipairs { 2, 0 } do
      local ps = octonav.pathserver.new(s.tree, { workers = workers })
      local ids = {}
      for i, rq in ipairs(reqs) do
        ids[i] = ps:submit(rq[1], rq[2], rq[3])
        assert.equal(i, ids[i])
      end
      assert.equal(#reqs, ps:pending())
      local got = ps:update(true)
      assert.equal(#reqs, #got)
      assert.equal(0, ps:pending())
      local seen = {}
      for _, res in ipairs(got) do
        assert.is_nil(seen[res.id])
        seen[res.id] = true
        same_result(res, want[res.id][1], want[res.id][2])
      end
      assert.same({}, ps:update())
      ps:close()
    end
    q:close()
  end)

  it("hands back results across several updates without waiting", function()
    local s = scenes.scene { depth = 4 }
    local ps = octonav.pathserver.new(s.tree, { workers = 2 })
    for i = 1, 50 do ps:submit({ 0.5, 0.5, 0.5 + i % 10 }, { 15.5, 15.5, 15.5 - i % 7 }) end
    local n, rounds = 0, 0
    while n < 50 do
      local got = ps:update()
      for _, res in ipairs(got) do
        assert.equal("found", res.info.status)
        n = n + 1
      end
      rounds = rounds + 1
      assert.is_true(rounds < 1e7)
    end
    assert.equal(50, n)
    assert.equal(0, ps:pending())
  end)

  it("reports failures with q:find's reasons", function()
    local s = scenes.scene({ depth = 3 }, { { { 3, 0, 0 }, { 4, 8, 8 } } })
    local ps = octonav.pathserver.new(s.tree)
    local a = ps:submit({ 1, 1, 1 }, { 6, 1, 1 })
    local b = ps:submit({ 3.5, 1, 1 }, { 6, 1, 1 })
    local c = ps:submit({ 1, 1, 1 }, { 6, 99, 1 })
    local by = {}
    for _, res in ipairs(ps:update(true)) do by[res.id] = res end
    assert.equal("unreachable", by[a].info.reason)
    assert.equal("start_blocked", by[b].info.reason)
    assert.equal("goal_outside", by[c].info.reason)
    assert.is_nil(by[a].path)
    ps:close()
  end)

  it("refuses edits while requests are out; pause allows them and later requests see them", function()
    local s = scenes.scene { depth = 4 }
    local ps = octonav.pathserver.new(s.tree, { workers = 2 })
    ps:submit({ 1, 8, 8 }, { 15, 8, 8 })
    assert.has_error(function() s.tree:add_box({ 7, 0, 0 }, { 8, 16, 16 }) end,
      "tree:add_box: tree is in use by a running search")
    assert.has_error(function() s.tree:clear_tile(0, 0, 0) end)
    assert.has_error(function() s.tree:prepare() end)
    assert.has_error(function() s.tree:close() end,
      "tree:close: tree is in use by a running search")
    local got = ps:update(true)
    assert.equal("found", got[1].info.status)
    local before = got[1].path
    -- all results collected: edits are allowed again, and the earlier path goes stale
    s.tree:add_box({ 7, 0, 0 }, { 8, 16, 16 })
    assert.is_false(before:is_valid())
    -- pause: the queued request waits while the wall goes away
    ps:pause()
    local id = ps:submit({ 1, 8, 8 }, { 15, 8, 8 })
    s.tree:clear_tile(0, 0, 0)
    assert.has_error(function() ps:update(true) end,
      "pathserver:update: waiting on a paused path server would never end (resume it first)")
    ps:resume()
    assert.has_error(function() s.tree:add_box({ 7, 0, 0 }, { 8, 16, 16 }) end)
    got = ps:update(true)
    assert.equal(id, got[1].id)
    assert.equal("found", got[1].info.status)
    assert.equal(14, got[1].info.length)
    ps:close()
    s.tree:add_box({ 7, 0, 0 }, { 8, 16, 16 }) -- a closed server holds nothing
  end)

  it("with 0 workers runs the queue inside update", function()
    local s = scenes.scene { depth = 3 }
    local ps = octonav.pathserver.new(s.tree, { workers = 0 })
    ps:submit({ 0.5, 0.5, 0.5 }, { 7.5, 0.5, 0.5 })
    local got = ps:update()
    assert.equal(1, #got)
    assert.equal(7, got[1].info.length)
  end)

  it("limits the queue with max_queued", function()
    local s = scenes.scene { depth = 3 }
    local ps = octonav.pathserver.new(s.tree, { workers = 1, max_queued = 2 })
    assert.equal(1, ps:submit({ 1, 1, 1 }, { 6, 6, 6 }))
    assert.equal(2, ps:submit({ 1, 1, 1 }, { 6, 6, 6 }))
    local id, err = ps:submit({ 1, 1, 1 }, { 6, 6, 6 })
    assert.is_nil(id)
    assert.equal("queue_full", err)
    assert.equal(2, #ps:update(true))
    assert.equal(3, ps:submit({ 1, 1, 1 }, { 6, 6, 6 }))
    ps:close()
  end)

  it54("closes with requests out by <close>", { scenes = scenes, octonav = octonav }, [[
    local s = scenes.scene { depth = 4 }
    do
      local ps <close> = octonav.pathserver.new(s.tree, { workers = 2 })
      for _ = 1, 20 do ps:submit({ 1, 1, 1 }, { 15, 15, 15 }) end
    end
    s.tree:add_box({ 7, 0, 0 }, { 8, 16, 16 }) -- released by __close
  ]])

  it("closes with requests out, by close", function()
    local s = scenes.scene { depth = 4 }
    do
      local ps = octonav.pathserver.new(s.tree, { workers = 2 })
      for _ = 1, 20 do ps:submit({ 1, 1, 1 }, { 15, 15, 15 }) end
      ps:close()
    end
    s.tree:add_box({ 7, 0, 0 }, { 8, 16, 16 }) -- released by close
    local ps = octonav.pathserver.new(s.tree, { workers = 2 })
    ps:submit({ 1, 1, 1 }, { 15, 15, 15 })
    ps:close()
    assert.matches("closed", tostring(ps))
    assert.has_error(function() ps:submit({ 1, 1, 1 }, { 2, 2, 2 }) end, "pathserver:submit: attempt to use a closed octonav.pathserver")
    ps:close() -- twice is fine
  end)

  it("raises for misuse, naming the argument", function()
    local s = scenes.scene { depth = 3 }
    assert.has_error(function() octonav.pathserver.new(nil) end)
    assert.has_error(function() octonav.pathserver.new(s.tree, { workers = -1 }) end,
      "octonav.pathserver.new: option 'workers' must be 0..64")
    assert.has_error(function() octonav.pathserver.new(s.tree, { max_nodes = 1 }) end,
      "octonav.pathserver.new: option 'max_nodes' must be 2..2^30")
    assert.has_error(function() octonav.pathserver.new(s.tree, { wrokers = 2 }) end,
      "octonav.pathserver.new: unknown option 'wrokers'")
    local ps = octonav.pathserver.new(s.tree, { workers = 1 })
    local ok, err = pcall(ps.submit, ps, nil, { 1, 1, 1 })
    assert.is_false(ok)
    assert.matches("start", err)
    ok, err = pcall(ps.submit, ps, { 1, 1, 1 }, { 1, 0 / 0, 1 })
    assert.is_false(ok)
    assert.matches("goal", err)
    assert.has_error(function() ps:submit({ 1, 1, 1 }, { 2, 2, 2 }, { heuristic = function() return 0 end }) end,
      "pathserver:submit: option 'heuristic' is not supported (searches run on worker threads)")
    assert.has_error(function() ps:submit({ 1, 1, 1 }, { 2, 2, 2 }, { smooth = "yes" }) end)
    assert.has_error(function() ps:submit({ 1, 1, 1 }, { 2, 2, 2 }, { bogus = 1 }) end,
      "pathserver:submit: unknown option 'bogus'")
    assert.equal(0, ps:pending())
    ps:close()
  end)

  it("refuses to close its tree while the server is open, paused or idle; a closed server releases it", function()
    local s = scenes.scene { depth = 4 }
    local a, b = { 1, 8, 8 }, { 15, 8, 8 }
    -- paused with a request queued: the tree may be edited but not closed (resume would search it)
    local ps = octonav.pathserver.new(s.tree, { workers = 1 })
    ps:submit(a, b)
    ps:pause()
    s.tree:add_box({ 7, 0, 0 }, { 8, 16, 16 })
    assert.has_error(function() s.tree:close() end, "tree:close: tree is in use by a path server")
    s.tree:clear_tile(0, 0, 0)
    ps:resume()
    local got = ps:update(true)
    assert.equal(14, got[1].info.length)
    -- idle (every result handed back): still refused, the next submit would search it
    ps:submit(a, b)
    ps:update(true)
    assert.has_error(function() s.tree:close() end, "tree:close: tree is in use by a path server")
    ps:submit(a, b)
    assert.equal(14, ps:update(true)[1].info.length)
    -- two servers over one tree: closing one leaves the other holding it
    local ps2 = octonav.pathserver.new(s.tree, { workers = 0 })
    ps:close()
    assert.has_error(function() s.tree:close() end, "tree:close: tree is in use by a path server")
    ps2:close()
    s.tree:close()
    assert.has_error(function() octonav.pathserver.new(s.tree) end, "octonav.pathserver.new: attempt to use a closed octonav.tree")
  end)

  it("releases its tree when collected", function()
    local s = scenes.scene { depth = 3 }
    local ps = octonav.pathserver.new(s.tree, { workers = 1 })
    ps:submit({ 1, 1, 1 }, { 6, 6, 6 })
    ps:update(true)
    ps = nil -- luacheck: ignore 311
    collectgarbage()
    collectgarbage()
    s.tree:close()
  end)

  it("refuses a streamer's update on a tree it reads", function()
    local s = scenes.scene { depth = 3 }
    local ps = octonav.pathserver.new(s.tree, { workers = 1 })
    ps:submit({ 1, 1, 1 }, { 6, 6, 6 })
    local sopts = { load_padding = 1, unload_padding = 2 }
    assert.has_error(function() octonav.core.streamer.new(s.tree, "/nonexistent", sopts) end,
      "octonav.streamer.new: tree is in use by a running search")
    ps:close()
  end)
end)
