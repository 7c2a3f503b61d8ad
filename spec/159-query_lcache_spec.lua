-- spec/159-query_lcache_spec.lua -- what a query holds at the least (issue 31 goal 3): its node-table
-- lookup cache (tree.h's on_lcache, 2^ON_LCACHE_BITS entries of 10 bytes) is 1,024 entries, 10,248
-- bytes, where it was 4,096 (40,968 bytes): every query holds one, idle or searching (a streamed
-- crowd's 100 navigators held 38-50 queries), and the searches' lookups fit the smaller one (make
-- bench-query-ir: the same instructions a query within 0.01 %). q:bytes() after a known sequence,
-- exact (64-bit); the answers are the cache's size's business not at all.
-- Run: busted --lua=lua5.4 spec/159-query_lcache_spec.lua
local octonav = require "octonav"

local scene = dofile("spec/support/pillars.lua") -- (one 64^3 tile of pillars and a wall at x = 32)

local A, NEAR, UP = { 1.5, 10.5, 1.5 }, { 3.5, 10.5, 3.5 }, { 30.5, 62.5, 30.5 }

describe("a query's least bytes", function()
  it("holds a lookup cache of 1,024 entries: 47,208 bytes new (77,928 with 4,096)", function()
    local t = scene()
    local q = octonav.query.new(t)
    assert.are.equal(47208, q:bytes())
    -- (its size does not follow max_nodes: the cache is the same for every query)
    local small = octonav.query.new(t, { max_nodes = 1000 })
    assert.are.equal(47208, small:bytes())
    small:close()
    q:close()
    t:close()
  end)

  it("gives the same answers after known searches, with the bytes they grew", function()
    local t = scene()
    local q = octonav.query.new(t)
    local p, info = q:find(A, NEAR)
    assert.are.same({ "found", 21, 5, 3 }, { info.status, info.visited, info.expansions, #p })
    assert.are.near(math.sqrt(10), info.length, 1e-12)
    assert.are.equal(49840, q:bytes())
    local p2, up = q:find(A, UP)
    assert.are.same({ "found", 325, 104, 17 }, { up.status, up.visited, up.expansions, #p2 })
    assert.are.near(66.790878253012, up.length, 1e-9)
    assert.are.equal(87544, q:bytes())
    -- the same searches by a second query: the same bytes (nothing shared, nothing kept elsewhere)
    local q2 = octonav.query.new(t)
    q2:find(A, NEAR)
    q2:find(A, UP)
    assert.are.equal(q:bytes(), q2:bytes())
    q2:close()
    q:close()
    t:close()
  end)
end)
