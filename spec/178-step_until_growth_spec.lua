-- spec/178-step_until_growth_spec.lua -- q:step_until pays its node pool's growth at a call's start
-- (issue 31 goal 1): the growth (the map doubled, every node of the search indexed again: 0.5-2.5 ms at
-- 10,000-20,000 nodes) ran in whichever expansion reached it, past the call's deadline (13 of 13
-- step_until calls that ended over 0.25 ms past theirs in a streamed run of 1,000 navigators). Now a
-- call stops where its next expansion could bring a pool of 2,048 nodes or more within 512 of its growth,
-- and the next call grows the pool first (a smaller pool grows as it needs: a few hundredths of a ms).
-- A search of 8,203 expansions on unit cells (a 32^3 tile with every other leaf blocked, a wall with
-- one gap), asked for everything at once with no deadline: 4 calls (the first growing the small pool as
-- it goes, then one a growth, each holding more bytes than the last left), the same expansions and path
-- as q:find. Fails before the change (one call). Reads no clock (the deadline is math.huge).
-- Run: busted --lua=lua5.4 spec/178-step_until_growth_spec.lua
local octonav = require "octonav"

local function scene()
  local t = octonav.tree.new { depth = 5 }
  for x = 1, 31, 2 do
    for y = 1, 31, 2 do
      for z = 1, 31, 2 do t:add_box({ x, y, z }, { x + 1, y + 1, z + 1 }) end
    end
  end
  t:add_box({ 16, 0, 0 }, { 17, 32, 30 })
  return t
end

describe("q:step_until and the node pool's growth", function()
  local A, B, OPTS = { 0.5, 0.5, 0.5 }, { 31.5, 0.5, 0.5 }, { weight = 1, points = "centre" }

  it("stops before a growth and grows at the next call's start; the search is find's", function()
    local t = scene()
    local whole = octonav.query.new(t, { max_nodes = 100000 })
    local path, info = whole:find(A, B, OPTS)
    assert.equal("found", info.status)
    assert.equal(8203, info.expansions)
    assert.near(67.19512523369, info.length, 1e-9)

    local q = octonav.query.new(t, { max_nodes = 100000 })
    assert.equal("running", (q:start(A, B, OPTS)))
    local calls, expanded, grew, left = 0, 0, 0, q:bytes()
    local st
    repeat
      local before = q:bytes()
      if calls > 0 then
        assert.equal(left, before) -- (nothing between the calls)
      end
      local n
      st, n = q:step_until(1e9, math.huge)
      calls, expanded, left = calls + 1, expanded + n, q:bytes()
      if left > before then grew = grew + 1 end
      assert.is_true(n > 0)
    until st ~= "running"
    assert.equal("found", st)
    assert.equal(4, calls)
    assert.equal(4, grew)
    assert.equal(8203, expanded)
    local p2, i2 = q:result()
    assert.equal(info.length, i2.length)
    assert.equal(#path, #p2)
    for i = 1, #path do
      for k = 1, 3 do assert.equal(path[i][k], p2[i][k]) end
    end
    whole:close()
    q:close()
    t:close()
  end)

  it("runs a search that cannot grow any more to its end in one call", function()
    local t = scene()
    local q = octonav.query.new(t, { max_nodes = 64 })
    assert.equal("running", (q:start(A, B, OPTS)))
    local st, n = q:step_until(1e9, math.huge)
    assert.equal("failed", st)
    assert.equal(29, n) -- (a pool of 64 nodes starts as large as it gets: no growth to stop before)
    local p, info = q:result()
    assert.is_nil(p)
    assert.equal("out_of_nodes", info.reason)
    assert.equal(29, info.expansions)
    q:close()
    t:close()
  end)
end)
