-- spec/152-navigator_size_spec.lua -- a navigator's own table stays small (issue 31, goal 3: the Lua heap of
-- 1,000 navigators): the options it reads while it runs live in one read-only table shared by the
-- navigators made with the same options (nav.cfg, lua/octonav/navigator_opts.lua), so that its own table
-- keeps at most 64 fields. With them inside it had 75 fields, which Lua sizes to 128 hash slots: 3,199
-- bytes an idle navigator on Lua 5.4 (1,663 apart).
local octonav = require "octonav"

local function tree()
  local t = octonav.tree.new { depth = 5 }
  t:add_box({ 10, 0, 0 }, { 12, 28, 32 })
  return t
end

-- the heap's growth, in bytes, for n tables made by make(i), all kept
local function bytes_of(n, make)
  local keep = {}
  collectgarbage(); collectgarbage()
  local k0 = collectgarbage("count")
  for i = 1, n do keep[i] = make(i) end
  collectgarbage(); collectgarbage()
  local b = (collectgarbage("count") - k0) * 1024
  return b / n, keep
end

-- a table made by a constructor of `n` fields (what a navigator's own table was, with n = 75)
local function fields(n)
  local src = { "return function() return { " }
  for i = 1, n do src[#src + 1] = ("f%d = %d, "):format(i, i) end
  src[#src + 1] = "} end"
  local loadstr = rawget(_G, "loadstring") or load -- (Lua 5.1: load takes a function)
  return assert(loadstr(table.concat(src)))()
end

describe("a navigator's table", function()
  it("is smaller than a table of 65 fields, and made with room for every field its updates set", function()
    local t = tree()
    local budget = octonav.navigator.budget { ms = 2 }
    local per_nav = bytes_of(200, function() return octonav.navigator.new(t, { budget = budget }) end)
    local per_65 = bytes_of(200, fields(65))
    local per_64 = bytes_of(200, fields(64))
    assert.is_true(per_64 < per_65) -- (the power of two the test stands on)
    assert.is_true(per_nav < per_65, ("a navigator %.0f bytes, a table of 65 fields %.0f"):format(per_nav, per_65))
    -- walked to its goal, its own table does not grow (the fields an update sets are made with it)
    local nav = octonav.navigator.new(t, { budget = budget })
    local before = bytes_of(1, function() return octonav.navigator.new(t, { budget = budget }) end)
    nav:go({ 30, 2, 16 })
    local pos, st = { 2, 2, 16 }, nil
    for _ = 1, 400 do
      budget:frame()
      local wp
      st, wp = nav:update(pos)
      if st == "arrived" then break end
      if st == "moving" then pos = { wp[1], wp[2], wp[3] } end
    end
    assert.are.equal("arrived", st)
    local n = 0
    for _ in pairs(nav) do n = n + 1 end
    assert.is_true(n <= 64, ("%d fields set"):format(n))
    assert.is_true(before < per_65)
  end)

  it("shares its options with the navigators made with the same options, and only with them", function()
    local t = tree()
    local a = octonav.navigator.new(t, { arrive_distance = 0.25 })
    local b = octonav.navigator.new(t, { arrive_distance = 0.25 })
    local c = octonav.navigator.new(t, { arrive_distance = 0.5 })
    local d = octonav.navigator.new(t, {})
    assert.are.equal(a.cfg, b.cfg)
    assert.are_not.equal(a.cfg, c.cfg)
    assert.are.equal(c.cfg, d.cfg) -- (0.5 is the default)
    assert.are.equal(0.25, a.cfg.arrive_distance)
    assert.are.equal(200, a.cfg.query_budget)
    assert.are.equal(65536, a.cfg.max_nodes)
    local s1, s2 = { heuristic = 1.5 }, { heuristic = 1.5 }
    local e = octonav.navigator.new(t, { search = s1 })
    local f = octonav.navigator.new(t, { search = s2 })
    assert.are_not.equal(e.cfg, f.cfg) -- (a search table by its identity)
    assert.are.equal(s1, e.cfg.search_opts)
    local budget = octonav.navigator.budget { ms = 2 }
    local g = octonav.navigator.new(t, { budget = budget })
    assert.are.equal(budget, g.budget)
    assert.are.equal(d.cfg, g.cfg) -- (a plain tree: no lead distance under a budget)
  end)

  it("still checks every option and names the bad one", function()
    local t = tree()
    assert.has_error(function() octonav.navigator.new(t, { arrive_distance = -1 }) end,
      "octonav.navigator.new: option 'arrive_distance' must be a number >= 0")
    assert.has_error(function() octonav.navigator.new(t, { budget = 3 }) end,
      "octonav.navigator.new: option 'budget' must be an octonav.navigator.budget")
    assert.has_error(function() octonav.navigator.new(t, { arive_distance = 1 }) end,
      "octonav.navigator.new: unknown option 'arive_distance'")
  end)
end)
