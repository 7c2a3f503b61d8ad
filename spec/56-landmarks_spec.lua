-- spec/56-landmarks_spec.lua -- tree:landmarks_prepare([n]) (csrc/lua/lua_tree.c, csrc/search/landmarks.c): landmarks
-- for the search's heuristic and an unreachable answer without a search; its argument errors, its
-- bytes in tree:stats(), an edit dropping them, refusal while a path server holds the tree, searches
-- with them giving the paths' lengths found without them on a known scene.
-- Run: busted --lua=lua5.4 spec/56-landmarks_spec.lua
local octonav = require "octonav"
local tree = octonav.tree

local function raises(fn, text)
  assert.error_matches(fn, text, 1, true)
end

-- two 16^3 tiles; a wall with a gap in the first (searches round it)
local function walled()
  local t = tree.new { tiles = { 2, 1, 1 }, depth = 4 }
  t:add_box({ 6, 0, 0 }, { 7, 12, 16 })
  t:add_box({ 6, 12, 0 }, { 7, 14, 12 })
  t:add_box({ 6, 12, 14 }, { 7, 16, 16 })
  t:add_box({ 6, 14, 12 }, { 7, 16, 14 })
  return t
end

describe("tree:landmarks_prepare", function()
  it("checks its argument", function()
    local t = walled()
    local msg = "tree:landmarks_prepare: n: must be an integer from 1 to 64"
    raises(function() t:landmarks_prepare(0) end, msg)
    raises(function() t:landmarks_prepare(65) end, msg)
    raises(function() t:landmarks_prepare(2.5) end, msg)
    raises(function() t:landmarks_prepare("8") end, msg)
    raises(function() t:landmarks_prepare({}) end, msg)
    assert.are.equal(0, t:stats().landmark_bytes)
    t:adjacency(false)
    assert.are.same({ nil, "adjacency is off" }, { t:landmarks_prepare(4) })
    t:close()
    raises(function() t:landmarks_prepare() end, "attempt to use a closed octonav.tree")
  end)

  it("reports their bytes in stats; an edit anywhere drops them; searches find the same lengths", function()
    local t = walled()
    local q = octonav.query.new(t)
    local ends = { { { 1, 1, 1 }, { 30, 2, 3 } }, { { 2, 8, 3 }, { 12, 1, 15 } }, { { 0.5, 15, 0.5 }, { 31, 0.5, 15 } } }
    local lengths = {}
    for n, ab in ipairs(ends) do
      local path, info = q:find(ab[1], ab[2])
      assert.is_not_nil(path)
      lengths[n] = info.length
    end
    local bytes = t:landmarks_prepare() -- 16 landmarks: 36 bytes a free cell
    assert.are.equal(bytes, t:stats().landmark_bytes)
    local eight = t:landmarks_prepare(8) -- building again replaces them: 16 bytes a cell fewer
    assert.are.equal(eight, t:stats().landmark_bytes)
    local cells = math.floor((bytes - eight) / 16)
    assert.are.equal(bytes - eight, 16 * cells)
    assert.is_true(cells > 100, cells .. " cells")
    assert.is_true(bytes >= 36 * cells and bytes < 36 * cells + 1024, bytes .. " bytes, " .. cells .. " cells")
    for n, ab in ipairs(ends) do
      local path, info = q:find(ab[1], ab[2])
      assert.is_not_nil(path)
      assert.is_true(math.abs(info.length - lengths[n]) < 1e-9, n .. ": " .. info.length .. " vs " .. lengths[n])
    end
    t:add_box({ 20, 0, 0 }, { 21, 1, 1 }) -- the second tile: the landmarks go tree-wide
    assert.are.equal(0, t:stats().landmark_bytes)
    for _, ab in ipairs(ends) do assert.is_not_nil(q:find(ab[1], ab[2])) end
    assert.is_true(t:landmarks_prepare(4) > 0)
    t:clear_tile(1, 0, 0)
    assert.are.equal(0, t:stats().landmark_bytes)
  end)

  it("answers unreachable without a search when the ends lie in different components", function()
    local t = tree.new { tiles = { 2, 1, 1 }, depth = 4 }
    t:add_box({ 20, 0, 0 }, { 21, 16, 16 })
    local q = octonav.query.new(t)
    local path, info = q:find({ 2.5, 8.5, 8.5 }, { 28.5, 8.5, 8.5 })
    assert.is_nil(path)
    assert.equal("unreachable", info.reason)
    assert.is_true(info.expansions > 0)
    assert.is_true(t:landmarks_prepare(2) > 0)
    path, info = q:find({ 2.5, 8.5, 8.5 }, { 28.5, 8.5, 8.5 })
    assert.is_nil(path)
    assert.equal("unreachable", info.reason)
    assert.equal(0, info.expansions)
  end)

  it("is refused while a path server holds the tree", function()
    local t = walled()
    local ps = octonav.pathserver.new(t, { workers = 1 })
    ps:submit({ 1, 1, 1 }, { 30, 2, 3 })
    raises(function() t:landmarks_prepare() end, "landmarks_prepare: tree is in use by a running search")
    local got = ps:update(true)
    assert.equal("found", got[1].info.status)
    ps:close()
    assert.is_true(t:landmarks_prepare(4) > 0)
    ps = octonav.pathserver.new(t, { workers = 2 })
    for _ = 1, 8 do ps:submit({ 1, 1, 1 }, { 30, 2, 3 }) end
    got = ps:update(true)
    while #got < 8 do
      for _, r in ipairs(ps:update(true)) do got[#got + 1] = r end
    end
    for _, r in ipairs(got) do assert.equal("found", r.info.status) end
    ps:close()
  end)
end)
