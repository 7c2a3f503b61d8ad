-- spec/12-smoother_spec.lua -- octonav.smoother: whole-path smoothing and per-frame smoothing with a
-- line-of-sight budget, on trees with obstacles.
-- Run: busted --lua=lua5.4 spec/12-smoother_spec.lua
--
-- Input paths come from octonav.query with smooth = "none" and refine = false (cell centres: long,
-- zig-zagging, valid), so there is a lot to smooth. Every output segment is checked with tree:visible;
-- lengths never grow; the per-frame budget is checked by wrapping the tree in a counting proxy.
local octonav = require "octonav"
local smoother = require "octonav.smoother"

local BASE_SEED = tonumber(os.getenv("OCTONAV_SEED") or "") or 20240611

-- xorshift64 PRNG: rng(seed) with r.int, r.float, r.range (spec/support/prng.lua)
local rng = dofile("spec/support/prng.lua").xorshift

-- dist(p, q); fmt(p) = "(x, y, z)" with %.6g; step_toward(pos, wp, speed): one frame's move
-- (spec/support/geometry.lua)
local geometry = dofile("spec/support/geometry.lua")
local dist, fmt, step_toward = geometry.dist, geometry.formatter(6), geometry.step_toward

local function length(path)
  local len = 0
  for i = 1, #path - 1 do len = len + dist(path[i], path[i + 1]) end
  return len
end

local function expect_valid(tree, path)
  for i = 1, #path - 1 do
    assert(tree:visible(path[i], path[i + 1]),
      ("segment %d %s -> %s is not visible"):format(i, fmt(path[i]), fmt(path[i + 1])))
  end
end

-- A proxy that counts visible() calls (total and since the last reset).
local function counting(tree)
  local c = { total = 0, frame = 0 }
  function c:visible(a, b)
    self.total = self.total + 1
    self.frame = self.frame + 1
    return tree:visible(a, b)
  end
  return c
end

-- A 32 x 16 x 32 scene: two walls with windows, pillars and a floor slab.
local function obstacle_tree()
  local t = octonav.tree.new { tiles = { 2, 1, 2 }, depth = 4 }
  t:add_box({ 10, 0, 0 }, { 11, 16, 28 })     -- wall, open at z > 28
  t:add_box({ 21, 0, 4 }, { 22, 16, 32 })     -- wall, open at z < 4
  t:add_box({ 21, 6, 0 }, { 22, 16, 4 })      -- ... and only low down
  t:add_box({ 4, 0, 6 }, { 6, 12, 8 })        -- pillars
  t:add_box({ 14, 0, 14 }, { 17, 14, 17 })
  t:add_box({ 26, 0, 20 }, { 28, 16, 22 })
  t:add_box({ 0, 0, 0 }, { 32, 1, 32 })       -- floor
  return t
end

local function raw_path(tree, a, b)
  local q = octonav.query.new(tree)
  local path, info = q:find(a, b, { smooth = "none", refine = false, weight = 1 })
  assert.is_table(path, "no path: " .. tostring(info.reason))
  expect_valid(tree, path)
  return path
end

local function random_free(tree, r)
  for _ = 1, 1000 do
    local p = { r.range(0.5, 31.5), r.range(1.5, 15.5), r.range(0.5, 31.5) }
    if tree:locate(p) == "free" then return p end
  end
  error("no free point")
end

-- Simulate an agent that moves `speed` toward the waypoint each frame. Returns the walked polyline,
-- the number of frames and the largest number of checks one frame spent.
local function walk(tree, path, speed, budget)
  local proxy = counting(tree)
  local s = smoother.new(proxy, path, { checks_per_frame = budget })
  local pos = { path[1][1], path[1][2], path[1][3] }
  local walked = { { pos[1], pos[2], pos[3] } }
  local goal = path[#path]
  local frames, worst = 0, 0
  while true do
    proxy.frame = 0
    local wp = s:update(pos)
    worst = math.max(worst, proxy.frame)
    frames = frames + 1
    assert(frames < 100000, "the agent never arrives")
    pos = step_toward(pos, wp, speed)
    local last = walked[#walked]
    if pos[1] ~= last[1] or pos[2] ~= last[2] or pos[3] ~= last[3] then walked[#walked + 1] = pos end
    if s:remaining() == 1 and pos[1] == goal[1] and pos[2] == goal[2] and pos[3] == goal[3] then break end
  end
  assert.equal(proxy.total, s:checks())
  return walked, frames, worst, s
end

describe("octonav.smoother.smooth", function()
  local tree = obstacle_tree()

  it("keeps paths valid and never longer, on fixed and random endpoints", function()
    local r = rng(BASE_SEED)
    local pairs_ = { { { 2, 8, 2 }, { 30, 8, 30 } }, { { 2, 3, 30 }, { 30, 3, 2 } } }
    for _ = 1, 40 do pairs_[#pairs_ + 1] = { random_free(tree, r), random_free(tree, r) } end
    local shortened = 0
    for _, ab in ipairs(pairs_) do
      local path = raw_path(tree, ab[1], ab[2])
      local short, spent = smoother.smooth(tree, path)
      expect_valid(tree, short)
      assert.same(path[1], short[1])
      assert.same(path[#path], short[#short])
      assert.is_true(length(short) <= length(path) + 1e-9)
      assert.is_true(#short <= #path)
      assert.is_true(spent <= #path)
      if length(short) < length(path) - 1e-6 then shortened = shortened + 1 end
    end
    assert.is_true(shortened >= math.floor(#pairs_ / 2), "smoothing shortened only " .. shortened .. " paths")
  end)

  it("pulls a detour straight when the line is clear", function()
    local open = octonav.tree.new { depth = 4 }
    local path = { { 1, 1, 1 }, { 8, 14, 1 }, { 15, 1, 1 } }
    local short, spent = smoother.smooth(open, path)
    assert.same({ { 1, 1, 1 }, { 15, 1, 1 } }, short)
    assert.equal(1, spent)
  end)

  it("honours max_checks and stays valid when it runs out", function()
    local path = raw_path(tree, { 2, 8, 2 }, { 30, 8, 30 })
    for _, budget in ipairs { 0, 1, 2, 5 } do
      local proxy = counting(tree)
      local short, spent = smoother.smooth(proxy, path, budget)
      assert.is_true(spent <= budget)
      assert.equal(spent, proxy.total)
      expect_valid(tree, short)
      assert.is_true(length(short) <= length(path) + 1e-9)
    end
    local same = smoother.smooth(tree, path, 0)
    assert.equal(#path, #same)
    for i = 1, #path do assert.same({ path[i][1], path[i][2], path[i][3] }, same[i]) end
  end)

  it("handles one- and two-point paths", function()
    assert.same({ { 1, 2, 3 } }, (smoother.smooth(tree, { { 1, 2, 3 } })))
    assert.same({ { 1, 2, 3 }, { 2, 2, 3 } }, (smoother.smooth(tree, { { 1, 2, 3 }, { 2, 2, 3 } })))
  end)

  it("raises on misuse", function()
    assert.has_error(function() smoother.smooth(nil, { { 1, 2, 3 } }) end)
    assert.has_error(function() smoother.smooth(tree, {}) end)
    assert.has_error(function() smoother.smooth(tree, { { 1, 2 } }) end)
    assert.has_error(function() smoother.smooth(tree, { { 1, 2, 0 / 0 } }) end)
    assert.has_error(function() smoother.smooth(tree, { { 1, 2, 3 } }, -1) end)
    assert.has_error(function() smoother.smooth(tree, { { 1, 2, 3 } }, 1.5) end)
  end)
end)

describe("octonav.smoother.new / update", function()
  local tree = obstacle_tree()

  it("walks valid, never longer paths within the per-frame budget", function()
    local r = rng(BASE_SEED + 1)
    for trial = 1, 24 do
      local a, b = random_free(tree, r), random_free(tree, r)
      local path = raw_path(tree, a, b)
      local budget = ({ 1, 2, 3, 8 })[trial % 4 + 1]
      local walked, _, worst = walk(tree, path, r.range(0.2, 1.5), budget)
      assert.is_true(worst <= budget, ("a frame spent %d checks, budget %d"):format(worst, budget))
      expect_valid(tree, walked)
      assert.is_true(length(walked) <= length(path) + 1e-6,
        ("walked %.6f > path %.6f"):format(length(walked), length(path)))
      assert.same(b, walked[#walked])
    end
  end)

  it("smooths as it goes: a zig-zag in the open becomes one straight line", function()
    local open = octonav.tree.new { depth = 4 }
    local path = {}
    for i = 0, 14 do path[#path + 1] = { 1 + i, (i % 2 == 0) and 2 or 6, 8 } end
    local walked = walk(open, path, 0.5, 16)
    assert.near(dist(path[1], path[#path]), length(walked), 1e-9)
    local walked2 = walk(open, path, 0.5, 2)
    assert.is_true(length(walked2) < 0.5 * length(path))
  end)

  it("spends no more than the budget even when everything is visible", function()
    local open = octonav.tree.new { depth = 4 }
    local path = {}
    for i = 0, 14 do path[#path + 1] = { 1 + i, 8, 8 } end
    local proxy = counting(open)
    local s = smoother.new(proxy, path, { checks_per_frame = 3 })
    assert.same({ 5, 8, 8 }, s:update(path[1])) -- target 2 ({2, 8, 8}) plus three checks
    assert.equal(3, proxy.total)
    assert.equal(3, s:checks())
    assert.equal(11, s:remaining())
    assert.same({ 8, 8, 8 }, s:update(path[1]))
    assert.equal(6, s:checks())
    assert.same({ 8, 8, 8 }, s:waypoint())
    assert.near(14, s:length(path[1]), 1e-12)
  end)

  it("does not repeat a failed check from the same position", function()
    local path = raw_path(tree, { 2, 8, 2 }, { 30, 8, 30 })
    local proxy = counting(tree)
    local s = smoother.new(proxy, path, { checks_per_frame = 8 })
    local p = path[1]
    s:update(p)
    local after_first = proxy.total
    local wp = s:update(p)
    assert.equal(after_first, proxy.total)
    assert.same(wp, s:waypoint())
  end)

  it("extends a path with the next leg", function()
    local open = octonav.tree.new { depth = 4 }
    local s = smoother.new(open, { { 1, 1, 1 }, { 5, 1, 1 } })
    local pos = { 5, 1, 1 }
    assert.same({ 5, 1, 1 }, s:update(pos))
    assert.equal(0, s:remaining()) -- standing on the last point: arrived (spec/66)
    s:extend { { 5, 1, 1 }, { 5, 9, 1 }, { 9, 9, 1 } }
    assert.equal(3, s:remaining())
    assert.same({ 9, 9, 1 }, s:update(pos))
  end)

  it("a one-point path stays on that point", function()
    local s = smoother.new(tree, { { 3, 3, 3 } })
    assert.same({ 3, 3, 3 }, s:update { 3, 3, 3 })
    assert.equal(0, s:remaining()) -- (on it: arrived, spec/66)
    assert.equal(0, s:checks())
  end)

  it("raises on misuse and rejects unknown options", function()
    local path = { { 1, 2, 3 }, { 2, 2, 3 } }
    assert.has_error(function() smoother.new(tree, path, { checks_per_frame = 0 }) end)
    assert.has_error(function() smoother.new(tree, path, { checks_per_frame = 2.5 }) end)
    assert.has_error(function() smoother.new(tree, path, { budget = 3 }) end,
      "octonav.smoother.new: unknown option 'budget'")
    assert.has_error(function() smoother.new(tree, path, 5) end)
    assert.has_error(function() smoother.new({}, path) end)
    local s = smoother.new(tree, path)
    assert.has_error(function() s:update { 1, 2 } end)
    assert.has_error(function() s:update "here" end)
  end)
end)
