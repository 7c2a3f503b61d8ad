-- spec/33-reentry_spec.lua -- a Lua heuristic calling back into the library while the C search runs
-- (issue 13, memory safety). Each reproducer below crashed (use after free, NULL lua_State) or gave a
-- wrong answer before the busy guard: now the call inside the heuristic raises a clear error, the
-- outer search finishes with the same path as without the callback, and the objects stay usable.
-- A heuristic that raises (any value, from any depth, or by yielding) leaves no guard set.
-- Run: busted --lua=lua5.4 spec/33-reentry_spec.lua (and under `make check` for ASan).
local octonav = require "octonav"

local sqrt = math.sqrt

-- scattered pillars (depth 5): a search of a few hundred expansions, so the heuristic runs often
local function pillars()
  local t = octonav.tree.new { depth = 5 }
  for i = 0, 3 do
    for j = 0, 3 do t:add_box({ 4 + 7 * i, 0, 4 + 7 * j }, { 5 + 7 * i, 24, 5 + 7 * j }) end
  end
  return t
end
local A, B = { 1, 3, 1 }, { 30, 20, 29 }

local function euclid(x, y, z, gx, gy, gz)
  local dx, dy, dz = x - gx, y - gy, z - gz
  return sqrt(dx * dx + dy * dy + dz * dz)
end

-- The reference answer: the same search with the Lua Euclidean heuristic and no callback.
local function reference(t)
  local q = octonav.query.new(t)
  local path, info = q:find(A, B, { heuristic = euclid })
  assert.is_table(path, tostring(info.reason))
  q:close()
  return path, info
end

local function same_result(want_path, want_info, path, info)
  assert.is_table(path, "no path: " .. tostring(info and info.reason))
  assert.equal("found", info.status)
  assert.equal(want_info.length, info.length)
  assert.equal(want_info.expansions, info.expansions)
  assert.equal(#want_path, #path)
  for i = 1, #path do
    for k = 1, 3 do assert.equal(want_path[i][k], path[i][k]) end
  end
end

-- Run q:find(A, B) with a heuristic that calls `inner` once (on its `when`-th call, default 3) in
-- pcall, and returns the Euclidean distance. Returns the path, the info and what pcall gave.
local function find_calling(q, inner, when)
  local n, ok, err = 0, nil, nil
  local path, info = q:find(A, B, {
    heuristic = function(x, y, z, gx, gy, gz)
      n = n + 1
      if n == (when or 3) then ok, err = pcall(inner) end
      return euclid(x, y, z, gx, gy, gz)
    end,
  })
  assert.is_true(n >= (when or 3), "the heuristic was called " .. n .. " times")
  return path, info, ok, err
end

local TREE_BUSY = "tree is in use by a running search"
local QUERY_BUSY = "query is running"

describe("reentry: a heuristic calling back into the library", function()
  local t, want_path, want_info
  before_each(function()
    t = pillars()
    want_path, want_info = reference(t)
  end)

  -- each call must raise `msg` inside the heuristic; the outer result is unchanged
  local function refused(make_call, msg)
    local q = octonav.query.new(t)
    local path, info, ok, err = find_calling(q, make_call(q))
    assert.is_false(ok, "the call inside the heuristic was allowed")
    assert.matches(msg, err, 1, true)
    same_result(want_path, want_info, path, info)
    -- afterwards everything works again: the same query, edits, and closing
    same_result(want_path, want_info, q:find(A, B, { heuristic = euclid }))
    return q
  end

  it("tree:close() raises (was a heap-use-after-free in lua_heuristic)", function()
    local q = refused(function() return function() t:close() end end, TREE_BUSY)
    assert.matches("octonav.tree:", tostring(t), 1, true) -- still open
    q:close()
    t:close()
    assert.equal("octonav.tree (closed)", tostring(t))
  end)

  it("q:close() raises (was a use after free in expand)", function()
    local q = refused(function(q) return function() q:close() end end, QUERY_BUSY)
    q:close()
    assert.matches("closed", tostring(q), 1, true)
  end)

  it("q:start(..., { heuristic = ... }) raises (was a SEGV on a NULL lua_State)", function()
    refused(function(q)
      return function() q:start(A, B, { heuristic = function() return 0 end }) end
    end, QUERY_BUSY)
  end)

  it("q:find on the same query raises (was a wrong answer: the outer find returned the inner path)", function()
    refused(function(q) return function() q:find(B, A) end end, QUERY_BUSY)
  end)

  it("q:step and q:result on the same query raise", function()
    refused(function(q) return function() q:step(10) end end, QUERY_BUSY)
    refused(function(q) return function() q:result() end end, QUERY_BUSY)
  end)

  it("tree:add_box raises (was a use after free in node_box with prepare)", function()
    refused(function() return function() t:add_box({ 0, 0, 0 }, { 32, 32, 32 }) end end, TREE_BUSY)
    -- the tree was not changed: the box was refused, not half-added
    assert.equal("free", (t:locate { 2, 2, 2 }))
  end)

  it("tree:prepare() raises, on a prepared tree too", function()
    refused(function() return function() t:prepare() end end, TREE_BUSY)
    t:prepare()
    want_path, want_info = reference(t)
    refused(function() return function() t:prepare() end end, TREE_BUSY)
    refused(function() return function() t:add_box({ 10, 0, 10 }, { 11, 1, 11 }) end end, TREE_BUSY)
  end)

  it("every other tree edit raises: triangles, heightfield, obj, fill, compact, clear_tile, decode_tile", function()
    local blob = t:encode_tile(0, 0, 0)
    local calls = {
      function() t:add_triangles({ 0, 0, 0, 9, 0, 0, 0, 9, 0 }, { 1, 2, 3 }) end,
      function() t:add_heightfield { nx = 2, nz = 2, heights = { 1, 1, 1, 1 } } end,
      function() t:add_obj("/nonexistent.obj") end,
      function() t:fill { 2, 2, 2 } end,
      function() t:compact() end,
      function() t:clear_tile(0, 0, 0) end,
      function() t:decode_tile(0, 0, 0, blob) end,
    }
    for _, call in ipairs(calls) do
      refused(function() return call end, TREE_BUSY)
    end
  end)

  it("obstacles and areas raise: add_obstacle, remove_obstacle, set_areas; obstacles() and areas() read", function()
    local id = assert(t:add_obstacle { min = { 60, 60, 60 }, max = { 61, 61, 61 } })
    want_path, want_info = reference(t)
    refused(function() return function() t:add_obstacle { min = { 0, 0, 0 }, max = { 32, 32, 32 } } end end,
      "add_obstacle: " .. TREE_BUSY)
    refused(function() return function() t:remove_obstacle(id) end end, "remove_obstacle: " .. TREE_BUSY)
    refused(function() return function() t:set_areas { { min = { 0, 0, 0 }, max = { 9, 9, 9 }, cost = 5 } } end end,
      "set_areas: " .. TREE_BUSY)
    assert.equal(1, #t:obstacles())
    assert.same({}, t:areas())
    local q = octonav.query.new(t)
    local seen
    local path = q:find(A, B, { heuristic = function(...)
      seen = { #t:obstacles(), #t:areas() }
      return euclid(...)
    end })
    assert.is_not_nil(path)
    assert.same({ 1, 0 }, seen)
  end)

  it("reading the tree is allowed: locate, raycast, visible, stats, encode_tile, save", function()
    local q = octonav.query.new(t)
    local got = {}
    local path, info = find_calling(q, function()
      got.locate = t:locate { 2, 2, 2 }
      got.visible = t:visible({ 1, 1, 1 }, { 2, 1, 1 })
      got.nodes = t:stats().nodes
      got.blob = #t:encode_tile(0, 0, 0)
    end)
    same_result(want_path, want_info, path, info)
    assert.equal("free", got.locate)
    assert.is_true(got.visible)
    assert.is_true(got.nodes > 0 and got.blob > 0)
  end)

  it("another query on the same tree runs inside the heuristic and both answers are right", function()
    local q = octonav.query.new(t)
    local inner_path, inner_info
    local path, info, ok, err = find_calling(q, function()
      local q2 = octonav.query.new(t)
      inner_path, inner_info = q2:find(A, B, { heuristic = euclid })
      q2:close()
    end)
    assert.is_true(ok, tostring(err))
    same_result(want_path, want_info, path, info)
    same_result(want_path, want_info, inner_path, inner_info)
  end)

  it("an inner query's heuristic error leaves the outer guard set and clears its own", function()
    local q = octonav.query.new(t)
    local q2 = octonav.query.new(t)
    local inner_err, edit_err
    local path, info = find_calling(q, function()
      local ok, err = pcall(q2.find, q2, A, B, { heuristic = function() error("inner boom") end })
      assert(not ok)
      inner_err = err
      -- the outer search still runs: the tree is still busy
      ok, err = pcall(t.add_box, t, { 0, 0, 0 }, { 1, 1, 1 })
      assert(not ok)
      edit_err = err
      -- the inner query is idle again
      inner_err = inner_err .. " / " .. select(2, q2:find(A, B)).status
    end)
    same_result(want_path, want_info, path, info)
    assert.matches("inner boom", inner_err, 1, true)
    assert.matches("/ found", inner_err, 1, true)
    assert.matches(TREE_BUSY, edit_err, 1, true)
  end)

  it("a heuristic that raises leaves no guard set (find, start and step; any error value)", function()
    local q = octonav.query.new(t)
    local obj = { why = "a table as error value" }
    local ok, err = pcall(q.find, q, A, B, { heuristic = function() error(obj) end })
    assert.is_false(ok)
    assert.equal(obj, err)
    ok, err = pcall(q.find, q, A, B, { heuristic = function() return "x" end })
    assert.is_false(ok)
    assert.matches("heuristic must return a finite number >= 0", err, 1, true)
    assert.equal("running", q:start(A, B, { heuristic = function(...) return euclid(...) end }))
    assert.equal("running", q:step(1))
    q:close()
    q = octonav.query.new(t)
    local n = 0
    assert.equal("running", q:start(A, B, { heuristic = function(...)
      n = n + 1
      if n > 1 then error("in step") end
      return euclid(...)
    end }))
    ok, err = pcall(q.step, q, 100)
    assert.is_false(ok)
    assert.matches("in step", err, 1, true)
    -- nothing is left busy: edit, search, close
    t:add_box({ 0, 31, 0 }, { 1, 32, 1 })
    same_result(want_path, want_info, q:find(A, B, { heuristic = euclid }))
    q:close()
    t:close()
  end)

  it("a heuristic that yields (in a coroutine) raises and leaves no guard set", function()
    local q = octonav.query.new(t)
    local co = coroutine.wrap(function()
      return pcall(q.find, q, A, B, { heuristic = function() coroutine.yield(1) return 0 end })
    end)
    local ok, err = co()
    assert.is_false(ok)
    assert.matches("yield", err, 1, true)
    same_result(want_path, want_info, q:find(A, B, { heuristic = euclid }))
    t:add_box({ 0, 31, 0 }, { 1, 32, 1 })
  end)

  it("a sliced search guards the tree only while step runs", function()
    local q = octonav.query.new(t)
    local ok, err
    local n = 0
    assert.equal("running", q:start(A, B, { heuristic = function(...)
      n = n + 1
      if n == 5 then ok, err = pcall(t.close, t) end
      return euclid(...)
    end }))
    while q:step(7) == "running" do end
    assert.is_false(ok)
    assert.matches(TREE_BUSY, err, 1, true)
    same_result(want_path, want_info, q:result())
    -- between steps the tree may change (the result then says tree_changed)
    assert.equal("running", q:start(A, B))
    q:step(1)
    t:add_box({ 0, 31, 0 }, { 1, 32, 1 })
  end)

  it("a core streamer of the tree cannot load, unload or start inside the heuristic", function()
    local core = require "octonav.core"
    local files = dofile("spec/support/files.lua")
    local dir = files.tmpdir()
    assert(core.mkdir(dir .. "/tiles"))
    files.write(dir .. "/tiles/0_0_0.tile", require("octonav.pack").tile_file(0, 0, 0, t:encode_tile(0, 0, 0)))
    local s = core.streamer.new(t, dir, { load_padding = 1, unload_padding = 2, workers = 0 })
    s:add_agent { 16, 16, 16 }
    s:update(true)
    assert.is_true(s:is_loaded { 0, 0, 0 })
    local calls = {
      function() s:update(true) end,
      function() s:force_unload { 0, 0, 0 } end,
      function() s:force_load { 0, 0, 0 } end,
      function() core.streamer.new(t, dir, { load_padding = 1, unload_padding = 2, workers = 0 }) end,
    }
    for _, call in ipairs(calls) do refused(function() return call end, TREE_BUSY) end
    assert.is_true(s:is_loaded { 0, 0, 0 })
    s:close()
    os.remove(dir .. "/tiles/0_0_0.tile")
    os.remove(dir .. "/tiles")
    os.remove(dir)
  end)

  it("a full garbage collection inside the heuristic frees nothing in use", function()
    local q = octonav.query.new(pillars()) -- the tree is held by the query only
    local path, info = find_calling(q, function()
      collectgarbage()
      collectgarbage()
    end, 1)
    same_result(want_path, want_info, path, info)
  end)
end)
