-- spec/151-query_room_spec.lua -- a query's room follows its searches down as well as up (issue 31
-- goal 3): a query whose node pool one big search grew gives the room back once 8 to 16 searches in a
-- row used under an eighth of it (on_pool_reset, csrc/search/nodepool.c), so that the few queries a crowd's navigators
-- share, or the many a streamed crowd's waiting searches hold, do not each keep the largest search's
-- ~4 MB; one whose searches stay big keeps it. q:bytes() after a known sequence, exact (64-bit).
-- Run: busted --lua=lua5.4 spec/151-query_room_spec.lua
local octonav = require "octonav"

local scene = dofile("spec/support/pillars.lua") -- (one 64^3 tile of pillars and a wall at x = 32)

local A, FAR, NEAR = { 1.5, 10.5, 1.5 }, { 45.5, 25.5, 45.5 }, { 3.5, 10.5, 3.5 }
-- the pool's room a cut leaves beyond a new query's: (1,024 - 256) nodes of 80 bytes (the node, its
-- heap entry, f and heap position) and (2,048 - 512) map slots of 16 bytes (nodepool.h)
local KEPT = (1024 - 256) * 80 + (2048 - 512) * 16

describe("a query's node pool after a much smaller search", function()
  it("gives back the room a bigger one grew, and grows it again the same way", function()
    local t = scene()
    local q = octonav.query.new(t, { max_nodes = 30000 })
    local _, info = q:find(A, FAR)
    assert.are.same({ "failed", "out_of_nodes", 30000, 28005 }, { info.status, info.reason, info.visited, info.expansions })
    local big = q:bytes()
    assert.are.equal(3991400, big)
    -- searches of 21 nodes (two pool resets each: the search runs from the goal's end): the room kept
    -- for 8 of them in a row (ON_POOL_TRIM_AFTER: 16 resets), cut to ON_POOL_KEEP_NODES at the 9th's start (before: 3,994,032 bytes)
    for _ = 1, 8 do
      local _, n8 = q:find(A, NEAR)
      assert.are.same({ "found", 21 }, { n8.status, n8.visited })
      assert.are.equal(3994032, q:bytes())
    end
    local path, near = q:find(A, NEAR)
    local fresh = octonav.query.new(t, { max_nodes = 30000 })
    local fpath, finfo = fresh:find(A, NEAR)
    assert.are.equal(fresh:bytes() + KEPT, q:bytes())
    assert.are.equal(135856, q:bytes())
    assert.are.same(fpath, path)
    assert.are.same({ finfo.length, finfo.expansions }, { near.length, near.expansions })
    -- the big search again: the same search, the room a query that made the same searches holds
    local _, again = q:find(A, FAR)
    assert.are.same({ "failed", "out_of_nodes", 30000, 28005 }, { again.status, again.reason, again.visited, again.expansions })
    fresh:find(A, FAR) -- (the same searches: the same arrays, the near search's result arrays included)
    assert.are.equal(fresh:bytes(), q:bytes())
    assert.are.equal(3994032, q:bytes())
    q:close()
    fresh:close()
    t:close()
  end)

  it("keeps the room while its searches stay big, and the cut room while they stay small", function()
    local t = scene()
    local q = octonav.query.new(t, { max_nodes = 30000 })
    q:find(A, FAR)
    local big = q:bytes()
    for _ = 1, 2 do
      local _, info = q:find(A, FAR)
      assert.are.equal(30000, info.visited)
      assert.are.equal(big, q:bytes())
    end
    -- a big search among small ones starts the count again
    for _ = 1, 5 do q:find(A, NEAR) end
    q:find(A, FAR)
    for _ = 1, 8 do q:find(A, NEAR) end
    assert.are.equal(3994032, q:bytes())
    q:find(A, NEAR)
    local cut = q:bytes()
    assert.are.equal(135856, cut)
    for _ = 1, 9 do
      local _, info = q:find(A, NEAR)
      assert.are.equal(21, info.visited)
      assert.are.equal(cut, q:bytes())
    end
    q:close()
    t:close()
  end)
end)
