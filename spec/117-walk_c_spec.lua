-- spec/117-walk_c_spec.lua -- walking navigators updated by one C call a frame (issue 31, goal 1):
-- budget:update holds the navigators that only walk their smoothed path in the group's core.walker
-- (csrc/lua/lua_walk.c, csrc/crowd/walk.c) and hands them back to Lua when their update needs it
-- (lua/octonav/navgroup.lua). The C walk's answers are the Lua walk's, exactly: the same waypoints
-- (the very point tables), the same statuses, checks and update counts, frame by frame, on a known
-- scene; and the walker keeps what it holds alive (a path or a tree dropped by Lua) and hands a
-- navigator back when its tree is closed.
-- Run: busted --lua=lua5.4 spec/117-walk_c_spec.lua
local octonav = require "octonav"
local core = require "octonav.core"
local navigator = require "octonav.navigator"

-- A 64^3 tree with walls and pillars: paths with corners the smoother cuts by line of sight.
local function scene()
  local t = octonav.tree.new { depth = 6 }
  t:add_box({ 20, 0, 0 }, { 22, 40, 50 })
  t:add_box({ 40, 10, 14 }, { 42, 64, 64 })
  t:add_box({ 8, 0, 30 }, { 30, 30, 32 })
  for k = 0, 4 do t:add_box({ 30 + k * 5, 0, 4 + k * 9 }, { 32 + k * 5, 50, 6 + k * 9 }) end
  return t
end

local PAIRS = {
  { { 4, 4, 4 }, { 60, 6, 60 } }, { { 60, 50, 4 }, { 4, 8, 60 } }, { { 10, 20, 50 }, { 50, 4, 8 } },
  { { 30, 60, 30 }, { 2, 2, 20 } }, { { 58, 30, 40 }, { 12, 40, 10 } }, { { 2, 50, 2 }, { 62, 20, 36 } },
}

-- n navigators on a plain tree, sharing a budget whose counts never run short (so that the order of
-- the updates within a frame changes nothing), for `frames` frames; each agent moves `speed` a frame
-- toward its waypoint. group: budget:update, else budget:frame() and a loop of nav:update. Returns
-- the answers frame by frame ("status x y z" per navigator), every navigator's checks and update
-- count at the end, the waypoint tables answered, and the C walk's totals (walked, held at most).
local function run(group, n, frames, speed)
  local t = scene()
  local budget = navigator.budget { plans = 1000, results = 1000, expansions = 1000000, checks = 1000000,
    portals = 1000000 }
  local navs, pos = {}, {}
  for i = 1, n do
    local pr = PAIRS[(i - 1) % #PAIRS + 1]
    navs[i] = navigator.new(t, { budget = budget })
    navs[i]:go(pr[2])
    pos[i] = { pr[1][1], pr[1][2], pr[1][3] }
  end
  local log, tables, walked, held = {}, {}, 0, 0
  local st, wp = {}, {}
  for f = 1, frames do
    if group then
      budget:update(navs, pos, st, wp)
      local g = budget:stats().group
      walked = walked + g.walked
      if g.held > held then held = g.held end
    else
      budget:frame()
      for i = 1, n do st[i], wp[i] = navs[i]:update(pos[i]) end
    end
    local line = {}
    for i = 1, n do
      local w = wp[i]
      line[i] = st[i] .. (type(w) == "table" and (" %.17g %.17g %.17g"):format(w[1], w[2], w[3]) or "")
      tables[f * n + i] = w
      if st[i] == "moving" then
        local p = pos[i]
        local dx, dy, dz = w[1] - p[1], w[2] - p[2], w[3] - p[3]
        local d = math.sqrt(dx * dx + dy * dy + dz * dz)
        local k = d > speed and speed / d or 1
        p[1], p[2], p[3] = p[1] + dx * k, p[2] + dy * k, p[3] + dz * k
      end
    end
    log[f] = table.concat(line, " | ")
  end
  local counts = {}
  for i = 1, n do counts[i] = { checks = navs[i]:stats().checks, frame = navs[i].frame, state = navs[i].state } end
  for i = 1, n do navs[i]:close() end
  t:close()
  return log, counts, tables, walked, held
end

describe("the C walk of budget:update", function()
  it("answers what a loop of nav:update answers, frame by frame, on a known scene", function()
    local n, frames = 12, 160
    local lua_log, lua_counts = run(false, n, frames, 1.5)
    local c_log, c_counts, _, walked, held = run(true, n, frames, 1.5)
    -- the C walk did the walking (not a spec that passes without it)
    assert.is_true(walked > 300, "updates made by the C walk: " .. tostring(walked))
    assert.is_true(held >= 6, "navigators held at once: " .. tostring(held))
    for f = 1, frames do assert.equal(lua_log[f], c_log[f], "frame " .. f) end
    assert.same(lua_counts, c_counts)
    local arrived = 0
    for i = 1, n do if c_counts[i].state == "arrived" then arrived = arrived + 1 end end
    assert.is_true(arrived >= 6, "arrived: " .. arrived)
  end)

  it("answers with the path's own point tables", function()
    local _, _, tables = run(true, 6, 40, 1.5)
    local _, _, lua_tables = run(false, 6, 40, 1.5)
    -- (two runs build two trees: the tables differ between runs, but each run answers points of its
    -- paths, never copies: a point answered twice is the same table)
    local seen = {}
    local repeats = 0
    for _, w in pairs(tables) do
      if type(w) == "table" then
        if seen[w] then repeats = repeats + 1 end
        seen[w] = true
      end
    end
    local lua_repeats = 0
    seen = {}
    for _, w in pairs(lua_tables) do
      if type(w) == "table" then
        if seen[w] then lua_repeats = lua_repeats + 1 end
        seen[w] = true
      end
    end
    assert.equal(lua_repeats, repeats)
  end)

  it("hands a held navigator back to nav:update, nav:stats and nav:go with its state synced", function()
    local t = scene()
    local budget = navigator.budget()
    local nav = navigator.new(t, { budget = budget })
    nav:go(PAIRS[1][2])
    local pos = { { 4, 4, 4 } }
    local st, wp = {}, {}
    for _ = 1, 40 do
      budget:update({ nav }, pos, st, wp)
      if nav.walk_slot then break end
    end
    assert.equal(1, nav.walk_slot)
    local frames = nav.frame
    budget:update({ nav }, pos, st, wp) -- (a C update: the agent has not moved)
    assert.equal(1, budget:stats().group.walked)
    assert.equal(frames, nav.frame) -- (counted in the walker until handed back)
    local stats = nav:stats()
    assert.is_nil(nav.walk_slot)
    assert.equal(frames + 1, nav.frame)
    assert.is_number(stats.checks)
    assert.equal(0, budget:stats().group.held)
    nav:close()
    t:close()
  end)
end)

describe("core.walker", function()
  local function held_walker()
    local t = octonav.tree.new { depth = 4 }
    t:add_box({ 10, 0, 0 }, { 12, 7, 16 }) -- (hides (14, 8, 1) from (3, 1, 1), not (8, 8, 1))
    local w = core.walker()
    local path = { { 1, 1, 1 }, { 8, 1, 1 }, { 8, 8, 1 }, { 14, 8, 1 } }
    local nav = {}
    w:attach(1, nav, t, path, 2, nil, nil, 0, 8, 0.5, nil, nil, nil, 1e-6)
    return w, t, nav, path
  end

  it("keeps a path Lua dropped alive while it holds it", function()
    local w, t, nav = held_walker()
    collectgarbage()
    collectgarbage()
    local ret, st, wp = {}, {}, {}
    local nret, used, walked = w:walk({ nav }, { { 3, 1, 1 } }, st, wp, ret, 100)
    assert.equal(0, nret)
    assert.equal(1, walked)
    assert.equal(2, used) -- (8, 8, 1) seen from (3, 1, 1), (14, 8, 1) not
    assert.equal("moving", st[1])
    assert.same({ 8, 8, 1 }, wp[1])
    t:close()
  end)

  it("hands a navigator back when its tree was closed, and when navs[k] is another", function()
    local w, t, nav = held_walker()
    t:close()
    local ret = {}
    local nret = w:walk({ nav }, { { 3, 1, 1 } }, {}, {}, ret, 100)
    assert.equal(1, nret)
    assert.equal(1, ret[1])
    nret = w:walk({ {} }, { { 3, 1, 1 } }, {}, {}, ret, 100)
    assert.equal(1, nret)
    assert.equal(-1, ret[1])
    local held, i, fj = w:take(1)
    assert.equal(nav, held)
    assert.equal(2, i)
    assert.is_nil(fj)
    assert.is_nil(w:take(1))
    assert.equal(0, w:size())
  end)

  -- Lua 5.1 raises a finalizer's error out of the allocation that ran it (5.2+ make it a warning; LuaJIT
  -- is left out: its own test of this crashes), the same way out of a C call as an out-of-memory error:
  -- a walk that an error leaves must leave the walker usable (it stayed "walking" for good before).
  local puc51 = _VERSION == "Lua 5.1" and not rawget(_G, "jit")
  ;(puc51 and it or pending)("is usable after an error raised inside its walk (Lua 5.1: a finalizer's)", function()
    local w, t, nav = held_walker()
    local pause, stepmul = collectgarbage("setpause", 0), collectgarbage("setstepmul", 1000000)
    collectgarbage("collect") -- (a cycle under way would end without the proxy: start from a finished one)
    collectgarbage("stop")
    local p = newproxy(true) -- luacheck: ignore 113 (Lua 5.1's)
    local where, armed = nil, true
    getmetatable(p).__gc = function()
      if armed then
        where = debug.traceback()
        error("finalizer's error")
      end
    end
    p = nil -- luacheck: ignore 311
    local navs, pos, st, wp, ret = { nav }, { { 3, 1, 1 } }, {}, {}, {}
    local ok, err = pcall(function()
      collectgarbage("restart") -- (the walk's first allocation runs a whole cycle: the finalizer)
      return w:walk(navs, pos, st, wp, ret, 100)
    end)
    armed = false -- (had it not run inside the walk, it must not raise in another test)
    collectgarbage("setpause", pause)
    collectgarbage("setstepmul", stepmul)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("finalizer's error", 1, true), tostring(err))
    assert.truthy(where:find("in function 'walk'", 1, true), where) -- (it ran inside the walk)
    local held = w:take(1) -- (raised "walker:take: walker is walking" before)
    assert.equal(nav, held)
    w:attach(1, nav, t, { { 1, 1, 1 }, { 8, 1, 1 }, { 8, 8, 1 } }, 2, nil, nil, 0, 8, 0.5, nil, nil, nil, 1e-6)
    assert.equal(1, select(3, w:walk({ nav }, { { 3, 1, 1 } }, {}, {}, {}, 100)))
    t:close()
  end)

  it("refuses changes while it walks (a finalizer calling it), and names its arguments", function()
    local w, t, nav = held_walker()
    local err
    -- a table whose finalizer runs during the walk's writes (the statuses table grows)
    local st = {}
    setmetatable({}, { __gc = function() err = select(2, pcall(w.take, w, 1)) end })
    collectgarbage("step", 0)
    local ok = pcall(function()
      for _ = 1, 50 do
        collectgarbage("step", 1)
        w:walk({ nav }, { { 3, 1, 1 } }, st, {}, {}, 100)
      end
    end)
    assert.is_true(ok)
    collectgarbage()
    -- (ran during a walk: refused; between two: taken)
    assert.is_true(err == nil or err == nav or tostring(err):find("walker is walking") ~= nil, tostring(err))
    assert.has_error(function() w:attach(0, nav, t, {}, 1) end)
    assert.has_error(function() w:attach(1, nav, t, { { 0, 0, 0 }, { 1, 1, 1 } }, 3) end,
      "walker:attach: argument #5: i must be an integer in [1, #path]")
    assert.has_error(function() w:walk({}, {}, {}, {}, {}, -1) end,
      "walker:walk: argument #6: checks must be an integer >= 0")
    t:close()
  end)
end)

describe("budget:update's first moves", function()
  -- Stand-ins with what budget:update reads (epoch, state, known, search, update; deterministic, a
  -- work-unit clock): 20 navigators walking while their next step's search runs (it never ends
  -- here) are in the group's list of searches under way ahead of one whose first path is being
  -- searched. Before, the list was served first come first served and the walkers at its head took
  -- every frame's time: the one behind them was never updated again (at 1,000 navigators on the
  -- seed's world one never moved in 3,000 frames).
  it("serves a navigator that has not moved before the walkers' searches", function()
    local now = 0
    local function clock() return now end
    local COST = 3e-4 -- an update: 0.3 ms of the work clock, a 1 ms frame holds 3
    local FAR = { 1e6, 0, 0 }
    local function walker(i)
      local nav = { epoch = 1, state = "moving", known = 1, search = { status = "running" }, cfg = { arrive_distance = 0.5 },
        group_i = i, group_wp = FAR, group_st = "moving", group_ans = FAR, group_epoch = 1, group_a2 = 0.25 }
      function nav.update()
        now = now + COST
        return "moving", FAR
      end
      return nav
    end
    local newcomer = { epoch = 1, state = "planning", known = 0, cells = { {} }, search = { status = "running" },
      cfg = { arrive_distance = 0.5 }, group_i = 21, group_st = "planning", group_epoch = 1, served = nil }
    function newcomer.update(self)
      now = now + COST
      self.served = self.served or self.frame_no
      self.state, self.known, self.search = "moving", 1, nil -- (its first path: it moves)
      return "moving", FAR
    end
    local budget = navigator.budget { ms = 1, clock = clock, plans = 0 }
    budget:update({}, {}) -- (the group's state made)
    local g = budget.group
    local navs, pos = {}, {}
    for i = 1, 20 do navs[i], pos[i] = walker(i), { 0, 0, 0 } end
    navs[21], pos[21] = newcomer, { 0, 0, 0 }
    for i = 1, 21 do
      g.work[i] = navs[i]
      g.inwork[navs[i]] = true
    end
    local st, wp = {}, {}
    for f = 1, 30 do
      newcomer.frame_no = f
      budget:update(navs, pos, st, wp)
    end
    assert.equal(1, newcomer.served)
    assert.equal("moving", st[21])
  end)

  -- 30 navigators at their waypoint every frame (each update 0.1 ms of a 1 ms frame) and 30 waiting
  -- to start a plan, one plan a frame: before, 11 of the 30 never started in 200 frames (passed
  -- over by turns that found the frame's plan taken, their place in the turns lost each time)
  it("starts the plan of the navigator that waited longest: none waits more than 60 frames", function()
    local now = 0
    local function clock() return now end
    local COST = 1e-4
    local budget = navigator.budget { ms = 1, clock = clock, plans = 1 }
    local function walker()
      local nav = { epoch = 1, state = "moving", cfg = { arrive_distance = 0.5 } }
      function nav.update(_, p)
        now = now + COST
        return "moving", { p[1], p[2], p[3] }
      end
      return nav
    end
    local function starter()
      local nav = { epoch = 1, state = "planning", cfg = { arrive_distance = 0.5 } }
      function nav.update(self)
        now = now + COST
        if self.state == "planning" and budget:take("plans", self, 1) == 1 then
          self.state, self.cells, self.moved = "moving", {}, self.frame_no
          now = now + 8 * COST -- (the plan's start)
          budget:give("plans", self, 0, false)
          return "moving", { 1e6, 0, 0 }
        end
        return self.state, self.state == "moving" and { 1e6, 0, 0 } or nil
      end
      return nav
    end
    local navs, pos = {}, {}
    for i = 1, 30 do navs[i], pos[i] = walker(), { i, 0, 0 } end
    for i = 31, 60 do navs[i], pos[i] = starter(), { 0, 5, 0 } end
    local st, wp = {}, {}
    for f = 1, 200 do
      for i = 1, #navs do navs[i].frame_no = f end
      budget:update(navs, pos, st, wp)
    end
    local latest, never = 0, 0
    for i = 31, 60 do
      local m = navs[i].moved
      if not m then never = never + 1 elseif m > latest then latest = m end
    end
    assert.equal(0, never)
    assert.is_true(latest <= 60, "the last first move in frame " .. latest)
  end)
end)
