-- spec/180-result_records_spec.lua -- the records that make path:is_valid() and info.valid work (the
-- tree and the salts of the tiles a search read) are kept in weak-keyed registry tables, out of the
-- result's own tables. One table for every result made a crowd's searches rehash it into a new 24-48
-- KB node array every few hundred results, and Lua 5.4 charges such an allocation to its collector at
-- once: a 3-5 ms step inside one navigator's update at 1,000 navigators (issue 31, session 34). The
-- records are now spread over 64 tables. Counted without a clock: with the collector stopped, what each
-- search's result call allocates (collectgarbage("count") before and after it) while 3,000 results are
-- kept, a rehash of one table for all showing as the 2,048-slot table's 48 KB.
-- Run: busted --lua=lua5.4 spec/180-result_records_spec.lua
local octonav = require "octonav"

-- depth 4 (16^3 leaves), a wall x in [8, 9] up to y = 12: the path from (1,1,1) to (15,1,1) climbs over it
local function wall()
  local t = octonav.tree.new { depth = 4 }
  t:add_box({ 8, 0, 0 }, { 9, 12, 16 })
  return t
end

describe("result records", function()
  it("3,000 kept results: no result call allocates over 8 KB (no big rehash), and each stays valid", function()
    local t = wall()
    local q = octonav.query.new(t)
    local kept, most, sum = {}, 0, 0
    local was_running = _VERSION == "Lua 5.1" or collectgarbage("isrunning") -- (5.1, LuaJIT: cannot tell)
    collectgarbage("collect")
    collectgarbage("stop")
    for i = 1, 3000 do
      local y = 1 + (i % 10)
      assert.equal("running", q:start({ 1, y, 1 }, { 15, y, 1 }))
      local st = q:step(100000)
      assert.equal("found", st)
      local k0 = collectgarbage("count")
      local path, info = q:result()
      local kb = collectgarbage("count") - k0
      sum = sum + kb
      if kb > most then most = kb end
      kept[i] = { path, info }
    end
    if was_running then collectgarbage("restart") end
    -- (a result of 4-6 points: its tables, the record and its tile list, about 1 KB; the 64 tables'
    -- rehashes at most 128 slots, 3 KB, each)
    assert.is_true(most < 8, ("the most one result call allocated: %.1f KB"):format(most))
    assert.is_true(sum / 3000 < 2, ("mean %.2f KB a result"):format(sum / 3000))
    for i = 1, 3000, 97 do
      assert.is_true(kept[i][1]:is_valid())
      assert.is_true(kept[i][2].valid)
      assert.same({ 0 }, kept[i][1]:tiles())
    end
    t:add_box({ 2, 14, 2 }, { 3, 15, 3 }) -- (a change of the one tile: every result read it)
    for i = 1, 3000, 97 do
      assert.is_false(kept[i][1]:is_valid())
      assert.is_false(kept[i][2].valid)
    end
  end)

  it("a dropped result's record goes with it (the tables are weak-keyed), a kept one stays", function()
    local t = wall()
    local q = octonav.query.new(t)
    local keep = assert(q:find({ 1, 1, 1 }, { 15, 1, 1 }))
    local probe = setmetatable({}, { __mode = "k" })
    for _ = 1, 200 do
      local p = assert(q:find({ 1, 2, 1 }, { 15, 2, 1 }))
      probe[p] = true
    end
    collectgarbage("collect")
    collectgarbage("collect")
    assert.is_nil(next(probe))
    assert.is_true(keep:is_valid())
  end)
end)
