-- spec/135-los_budget_spec.lua -- line of sight's masks within a byte budget (tree:los_budget, kept by
-- tree:los_step): the masks' bytes after a step are at most the budget, as the tree's stats report them;
-- the tiles read least recently lose theirs first; a tile whose masks alone pass the budget keeps none
-- and is not built again until it changes; no tile's masks are dropped for another's frame after frame;
-- the answers are the same; a world's tree keeps them within an eighth of its bytes (issue 31, goal 3; a quarter before session 26).
-- Run: busted --lua=lua5.4 spec/135-los_budget_spec.lua

-- A 4 x 1 x 2 tree of 64^3 tiles with slabs and posts (spec/68's scene), masks deferred.
local slabs = dofile("spec/support/slabs.lua")
local function scene()
  local t = slabs.scene()
  t:los_defer(true)
  return t
end

-- A line of sight inside tile (i, k) (y 0.5 .. 63.5): reads that tile only.
local function read_tile(t, i, k)
  local x, z = 64 * i, 64 * k
  return t:visible({ x + 0.5, 0.5, z + 0.5 }, { x + 63.5, 63.5, z + 63.5 })
end

local function read_all(t)
  local out = {}
  for k = 0, 1 do
    for i = 0, 3 do out[#out + 1] = read_tile(t, i, k) end
  end
  return out
end

-- Steps until no wanted tile is left to build (or none may be); the last step's results.
local function settle(t)
  local work, built, wanted, partial
  for _ = 1, 1000 do
    work, built, wanted, partial = t:los_step()
    if not partial and (wanted == 0 or work == 0) then break end
  end
  return work, built, wanted, partial
end

describe("line of sight's masks within a byte budget", function()
  it("holds at most the budget as the stats report it, dropping the least recently read tiles' first", function()
    local free = scene()
    assert.equal(false, free:los_budget()) -- (a tree's default: no limit)
    local answers = read_all(free)
    settle(free)
    local all = free:stats()
    assert.equal(8, all.los_tiles)
    assert.equal(0, all.los_dropped)
    -- the same tree with a budget of half the eight tiles' masks
    local t = scene()
    local budget = math.floor(all.los_bytes / 2)
    assert.equal(budget, t:los_budget(budget))
    assert.equal(budget, t:los_budget())
    assert.same(answers, read_all(t))
    settle(t)
    local st = t:stats()
    assert.is_true(st.los_bytes <= budget)
    assert.is_true(st.los_tiles >= 2 and st.los_tiles <= 5)
    -- every tile was read: the wanted ones left wait (no masks could fit without a drop)
    local _, built, wanted, partial = t:los_step()
    assert.same({ 0, 8 - st.los_tiles, false }, { built, wanted, partial })
    -- the same answers with masks in some tiles and node tables in the others
    assert.same(answers, read_all(t))
    -- a lower budget: the next step drops the least recently read: read tile (0, 0) last, it stays
    local kept = t:stats().los_tiles
    local _, b0, w = t:los_step()
    assert.same({ 0, 8 - kept }, { b0, w })
    read_tile(t, 0, 0)
    local _, _, w0 = t:los_step()
    t:los_budget(math.floor(st.los_bytes / kept) + 1) -- (room for about one tile's)
    local _, b1 = t:los_step()
    assert.equal(0, b1)
    local after = t:stats()
    assert.equal(1, after.los_tiles)
    assert.equal(kept - 1, after.los_dropped)
    assert.is_true(after.los_bytes <= t:los_budget())
    -- tile (0, 0) kept its masks: reading it wants nothing new
    read_tile(t, 0, 0)
    assert.equal(w0, select(3, t:los_step()))
    -- a tile read now that has none is wanted (one more)
    read_tile(t, 3, 1)
    assert.is_true(select(3, t:los_step()) >= w0)
  end)

  it("drops no tile's masks for another's while every tile is read, frame after frame", function()
    local t = scene()
    local free = scene()
    read_all(free)
    settle(free)
    t:los_budget(math.floor(free:stats().los_bytes / 2))
    read_all(t)
    settle(t)
    local st = t:stats()
    local tiles, dropped = st.los_tiles, st.los_dropped
    -- 100 frames: every tile read each frame, a step each frame (longer than the 60 steps after which
    -- a tile's masks not read count as idle): the same tiles keep theirs, nothing is built or dropped
    local built = 0
    for _ = 1, 100 do
      read_all(t)
      built = built + select(2, t:los_step())
    end
    assert.equal(0, built)
    assert.same({ tiles, dropped }, { t:stats().los_tiles, t:stats().los_dropped })
    -- tiles no longer read become idle after 60 steps: then a wanted tile's masks are built in their room
    for _ = 1, 61 do
      read_tile(t, 0, 0)
      read_tile(t, 1, 0)
      built = built + select(2, t:los_step())
    end
    assert.is_true(built >= 1)
    assert.is_true(t:stats().los_dropped > dropped)
    assert.is_true(t:stats().los_bytes <= t:los_budget())
  end)

  it("keeps no masks for a tile bigger than the budget and builds them no more until it changes", function()
    local t = scene()
    t:los_budget(100)
    read_all(t)
    local _, _, wanted = settle(t)
    local st = t:stats()
    assert.same({ 0, 0, 0 }, { st.los_tiles, st.los_bytes, wanted })
    -- read again: not wanted again (each tile passed the budget), no work
    read_all(t)
    assert.same({ 0, 0, 0, false }, { t:los_step() })
    -- an edit of tile (0, 0): its masks are tried again
    t:add_box({ 1, 1, 1 }, { 2, 2, 2 })
    read_tile(t, 0, 0)
    local work, built, w = t:los_step()
    assert.is_true(work > 0)
    assert.same({ 0, 0 }, { built, w })
    -- no limit again: every tile's masks are built when read
    assert.equal(false, t:los_budget(false))
    read_all(t)
    settle(t)
    assert.equal(8, t:stats().los_tiles)
  end)

  it("checks its argument", function()
    local t = scene()
    local msg = "bytes must be an integer >= 0, false or \"tree\""
    for _, bad in ipairs { -1, 1.5, "x", true, {} } do
      local ok, err = pcall(t.los_budget, t, bad)
      assert.is_false(ok)
      assert.truthy(tostring(err):find(msg, 1, true), tostring(err))
    end
    -- "tree": an eighth of the tree's bytes
    assert.equal(math.floor(t:stats().bytes / 8), t:los_budget("tree"))
  end)
end)
