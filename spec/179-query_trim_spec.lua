-- spec/179-query_trim_spec.lua -- a query's node pool cut back when its caller chooses (issue 31 goal
-- 1): a query cuts its pool at a search's start after 16 searches in a row that used under an eighth
-- of it, and giving the pages back cost the game's thread 0.2-3.75 ms inside a frame (a TLB shootdown
-- of every CPU the process ran on; traced, session 33: the longest call of 10 of 15 streamed frames
-- over 4.5 ms). With `auto_trim = false` the start leaves the cut due and `q:trim()` makes it: the same
-- cut (the same bytes after it as a query that cut at its start), its search ended, nothing when no
-- cut is due or a big search came since.
-- Run: busted --lua=lua5.4 spec/179-query_trim_spec.lua
local octonav = require "octonav"

local function scene()
  local t = octonav.tree.new { depth = 7 }
  t:add_box({ 8, 0, 0 }, { 9, 126, 128 })
  t:add_box({ 16, 2, 0 }, { 17, 128, 128 })
  return t
end

local FAR, NEAR = { { 2, 2, 2 }, { 30, 2, 124 } }, { { 2, 2, 2 }, { 4, 4, 4 } }

local function run(q, ends)
  local st = q:start(ends[1], ends[2])
  while st == "running" do st = q:step_until(1e9, math.huge) end
  assert.equal("found", st)
  return (q:result())
end

describe("q:trim and auto_trim", function()
  it("holds the cut until q:trim, which makes the cut a start would have made", function()
    local t = scene()
    local auto = octonav.query.new(t, { max_nodes = 100000 })
    local held = octonav.query.new(t, { max_nodes = 100000, auto_trim = false })
    local far = run(auto, FAR)
    assert.near(far:length(), run(held, FAR):length(), 1e-12)
    local big = held:bytes()
    assert.equal(big, auto:bytes())
    assert.equal(0, held:trim()) -- (no cut due yet)
    for _ = 1, 17 do
      run(auto, NEAR)
      run(held, NEAR)
    end
    local cut = auto:bytes()
    assert.is_true(cut < big / 8)
    assert.equal(big, held:bytes()) -- held: the room kept
    assert.equal(0, auto:trim()) -- (cut at its start already)
    assert.equal(big - cut, held:trim())
    assert.equal(cut, held:bytes())
    assert.equal(0, held:trim())
    local ok, err = pcall(held.result, held)
    assert.is_false(ok)
    assert.matches("query:result: no search started", err, 1, true)
    -- searches after the cut: the same paths as the other query's
    assert.near(far:length(), run(held, FAR):length(), 1e-12)
    assert.near(far:length(), run(auto, FAR):length(), 1e-12)
  end)

  it("drops a due cut when a big search comes before q:trim", function()
    local held = octonav.query.new(scene(), { max_nodes = 100000, auto_trim = false })
    run(held, FAR)
    for _ = 1, 17 do run(held, NEAR) end
    local big = held:bytes()
    run(held, FAR) -- (the room is used again: no longer due)
    assert.equal(0, held:trim())
    assert.equal(big, held:bytes())
    local path = held:result()
    assert.is_true(path:length() > 50)
  end)

  it("rejects an auto_trim that is not a boolean", function()
    local t = scene()
    local ok, err = pcall(octonav.query.new, t, { auto_trim = "no" })
    assert.is_false(ok)
    assert.matches("octonav.query.new", err, 1, true)
    assert.matches("auto_trim", err, 1, true)
    ok, err = pcall(octonav.query.new, t, { auto_trimm = false })
    assert.is_false(ok)
    assert.matches("auto_trimm", err, 1, true)
  end)
end)
