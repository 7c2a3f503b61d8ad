-- spec/54-nav_query_share_spec.lua -- navigators share their queries (lua/octonav/navigator.lua,
-- idle_queries): a navigator holds a query only while a search of its runs and gives it back when
-- the search ends (found, failed, cancelled, closed); the next search of any navigator on that tree
-- with the same max_nodes takes an idle one instead of making a query (whose node pool would grow
-- again: the first frames of a crowd paid that for every navigator). Identities and counts only.
-- Run: busted --lua=lua5.4 spec/54-nav_query_share_spec.lua
local navigator = require "octonav.navigator"
local World = require("octonav.world").World

local hw = dofile("spec/support/handworld.lua")
local geometry = dofile("spec/support/geometry.lua")

local A, B = { 2.5, 8.5, 8.5 }, { 56.5, 8.5, 8.5 }

-- Updates nav from pos until its search of the first leg has started (it holds a query); returns it.
local function search_started(nav, pos)
  for _ = 1, 20 do
    nav:update(pos)
    local _, q = next(nav.queries)
    if q then return q end
  end
  error("no search started")
end

-- Walks nav to its goal; returns the queries it held on the way (a set) and the last status.
local function walk(nav, pos)
  local held, st = {}, nil
  for _ = 1, 600 do
    local wp
    st, wp = nav:update(pos)
    for _, q in pairs(nav.queries) do held[q] = true end
    if st == "arrived" or st == "failed" then break end
    if st == "moving" then pos = geometry.step_toward(pos, wp, 0.5) end
  end
  return held, st
end

describe("navigators share their queries", function()
  it("a search holds one while it runs and gives it back; the next search takes it", function()
    local w = hw.make_world { tiles = 4 }
    local n1 = navigator.new(w, { query_budget = 3 })
    n1:go(B)
    local q1 = search_started(n1, A)
    assert.equal(q1, n1.queries[w.tree])
    -- a second navigator searching meanwhile gets another query
    local n2 = navigator.new(w, { query_budget = 3 })
    n2:go(B)
    local q2 = search_started(n2, A)
    assert.are_not.equal(q1, q2)
    -- n1 walks to the goal: its leg's search ends, the query goes back
    local held, st = walk(n1, { A[1], A[2], A[3] })
    assert.equal("arrived", st)
    assert.same({ [q1] = true }, held)
    assert.is_nil(next(n1.queries))
    -- a third navigator's search takes q1 (the idle one), not a new query
    local n3 = navigator.new(w, { query_budget = 3 })
    n3:go(B)
    assert.equal(q1, search_started(n3, A))
    -- closing n2 mid-search gives q2 back; cancelling n3 mid-search gives q1 back
    n2:close()
    assert.is_nil(next(n2.queries))
    n3:cancel()
    assert.is_nil(next(n3.queries))
    local n4, n5 = navigator.new(w, { query_budget = 3 }), navigator.new(w, { query_budget = 3 })
    n4:go(B)
    n5:go(B)
    local got = { [search_started(n4, A)] = true, [search_started(n5, A)] = true }
    assert.same({ [q1] = true, [q2] = true }, got)
    -- the queries still work: both walk to the goal on them
    assert.equal("arrived", select(2, walk(n4, { A[1], A[2], A[3] })))
    assert.equal("arrived", select(2, walk(n5, { A[1], A[2], A[3] })))
    for _, n in ipairs { n1, n3, n4, n5 } do n:close() end
  end)

  it("only between navigators of the same tree and max_nodes; a failed search gives its query back", function()
    local w = hw.make_world { tiles = 4 }
    local n1 = navigator.new(w, { query_budget = 3 })
    n1:go(B)
    local q1 = search_started(n1, A)
    n1:close()
    local small = navigator.new(w, { query_budget = 3, max_nodes = 4096 })
    small:go(B)
    local qs = search_started(small, A)
    assert.are_not.equal(q1, qs) -- another max_nodes: another query
    small:close()
    local other = hw.make_world { tiles = 4 }
    local n2 = navigator.new(other, { query_budget = 3 })
    n2:go(B)
    local q2 = search_started(n2, A)
    assert.are_not.equal(q1, q2) -- another tree
    n2:close()
    -- a search that fails (4 nodes: out of them) fails the navigator, which gives its query back
    -- (the search starts and fails within one update: the query is seen by its start)
    local qmethods = getmetatable(q1).__index
    local real_start, started = qmethods.start, {}
    qmethods.start = function(q, ...)
      started[#started + 1] = q
      return real_start(q, ...)
    end
    local ok, err = pcall(function()
      for _ = 1, 2 do
        local n3 = navigator.new(w, { query_budget = 3, max_nodes = 4 })
        n3:go(B)
        assert.same({ "failed" }, { select(2, walk(n3, { A[1], A[2], A[3] })) })
        assert.same({ "failed", "out_of_nodes" }, { n3:status() })
        assert.is_nil(next(n3.queries))
        n3:close()
      end
    end)
    qmethods.start = real_start
    assert(ok, err)
    assert.equal(2, #started)
    assert.equal(started[1], started[2]) -- the second navigator's search on the first's query
    assert.are_not.equal(q1, started[1])
    -- q1 came back each time: a search on w with the default max_nodes takes it
    local n4 = navigator.new(w, { query_budget = 3 })
    n4:go(B)
    assert.equal(q1, search_started(n4, A))
    n4:close()
  end)

  it("world:close() closes the idle queries; a query of a tree no longer the world's is closed, not kept", function()
    local w = hw.make_world { tiles = 4 }
    local n1 = navigator.new(w, { query_budget = 3 })
    n1:go(B)
    local q1 = search_started(n1, A)
    n1:close()
    assert.equal(q1, w.idle_queries[w.tree][65536][1])
    World.close(w) -- (a hand-made world: the world class's close)
    assert.is_nil(w.idle_queries)
    assert.matches("%(closed%)", tostring(q1))
    -- a search whose tree is replaced under it (as a streamer replaces a hole's tree): its query closed
    local w2 = hw.make_world { tiles = 4 }
    local n2 = navigator.new(w2, { query_budget = 3 })
    n2:go(B)
    local q2 = search_started(n2, A)
    local old = w2.tree
    w2.tree = hw.make_world({ tiles = 4 }).tree
    n2:cancel()
    assert.matches("%(closed%)", tostring(q2))
    assert.is_nil(w2.idle_queries[old])
    w2.tree = old
    World.close(w2)
  end)
end)
