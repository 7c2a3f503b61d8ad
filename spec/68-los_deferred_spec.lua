-- spec/68-los_deferred_spec.lua -- deferred line-of-sight masks (tree:los_defer, tree:los_step) and the
-- navigator budget that builds them in its frames (option los, lua/octonav/navbudget.lua): no line of
-- sight builds a tile's masks inside a navigator's update, the answers are the same, the masks built in
-- slices are the ones a whole build gives, and a frame's mask work stays within its los reads.
-- Run: busted --lua=lua5.4 spec/68-los_deferred_spec.lua
local navigator = require "octonav.navigator"

local hw = dofile("spec/support/handworld.lua")
local geometry = dofile("spec/support/geometry.lua")
local dist, step_toward = geometry.dist, geometry.step_toward

local slabs = dofile("spec/support/slabs.lua") -- (the LCG and the scene: a 4 x 1 x 2 tree of 64^3 tiles
-- with slabs and posts, the same boxes every call)
local lcg, scene = slabs.lcg, slabs.scene

local function segments(n)
  local st, out = 777, {}
  local function r(m)
    st = lcg(st)
    return (st % (m * 100)) / 100
  end
  for i = 1, n do out[i] = { { r(256), r(64), r(128) }, { r(256), r(64), r(128) } } end
  return out
end

describe("deferred line-of-sight masks", function()
  it("give the same answers with no masks built, then build in slices the masks a whole build gives", function()
    local lazy, d = scene(), scene()
    assert.equal(d, d:los_defer(true))
    local segs = segments(400)
    local blocked = 0
    for _, s in ipairs(segs) do
      local a = lazy:visible(s[1], s[2])
      assert.equal(a, d:visible(s[1], s[2]))
      local ha, ta = lazy:raycast(s[1], s[2])
      local hb, tb = d:raycast(s[1], s[2])
      assert.same({ ha, ta }, { hb, tb })
      if not a then blocked = blocked + 1 end
    end
    assert.is_true(blocked > 50 and blocked < 350)
    assert.equal(8, lazy:stats().los_tiles) -- (built whole by the first lines of sight)
    assert.equal(0, d:stats().los_tiles)
    -- every tile was read: 8 wanted; steps of 300 reads build them one slice at a time
    local work, built, wanted, partial = d:los_step { work = 300 }
    assert.same({ 0, 8, true }, { built, wanted, partial })
    assert.is_true(work >= 300 and work <= 300 + 72 + 8 * 64)
    local steps, total_built = 1, 0
    repeat
      work, built, wanted, partial = d:los_step { work = 300 }
      assert.is_true(work <= 300 + 72 + 8 * 64)
      total_built = total_built + built
      steps = steps + 1
    until wanted == 0 and not partial
    assert.equal(8, total_built)
    assert.is_true(steps > 8) -- (a tile takes several steps)
    assert.equal(lazy:stats().los_bytes, d:stats().los_bytes)
    assert.same({ 0, 0, 0, false }, { d:los_step { work = 300 } })
    for _, s in ipairs(segs) do assert.equal(lazy:visible(s[1], s[2]), d:visible(s[1], s[2])) end
    -- an edit drops a tile's masks; its next line of sight wants it again
    d:add_box({ 1, 1, 1 }, { 3, 3, 3 })
    lazy:add_box({ 1, 1, 1 }, { 3, 3, 3 })
    assert.equal(7, d:stats().los_tiles)
    assert.equal(lazy:visible({ 0.5, 2, 2 }, { 60, 2, 2 }), d:visible({ 0.5, 2, 2 }, { 60, 2, 2 }))
    assert.same({ 1, 0, false }, { select(2, d:los_step()) })
    -- all: every loaded tile, wanted or not
    local fresh = scene()
    fresh:los_defer(true)
    local _, b2, w2, p2, left = fresh:los_step { all = true }
    assert.same({ 8, 0, false, 0 }, { b2, w2, p2, left })
    assert.equal(scene():los_prepare(), fresh:stats().los_bytes)
    -- masks off: nothing to build
    fresh:los_masks(false)
    assert.same({ nil, "masks are off" }, { fresh:los_step() })
  end)

  it("checks its arguments", function()
    local t = scene()
    assert.has_error(function() t:los_step { work = -1 } end,
      "tree:los_step: option 'work' must be an integer >= 0")
    assert.has_error(function() t:los_step { ms = -1 } end,
      "tree:los_step: option 'ms' must be a number from 0 to 1e9")
    assert.has_error(function() t:los_step { ms = 0 / 0 } end)
    assert.has_error(function() t:los_step { speed = 1 } end)
    assert.has_error(function() t:los_defer(1) end)
    assert.has_error(function() navigator.budget { los = -1 } end,
      "octonav.navigator.budget: option 'los' must be an integer >= 0")
    assert.has_error(function() navigator.budget { los = 1.5 } end,
      "octonav.navigator.budget: option 'los' must be an integer >= 0")
    t:close()
    assert.has_error(function() t:los_step() end, "tree:los_step: attempt to use a closed octonav.tree")
  end)
end)

describe("a navigator budget with los", function()
  -- Walks one navigator across the hand-built world's two tiles under a budget; returns the masks built
  -- inside the navigator's updates (tiles that gained masks during an update) and after the walk.
  local function walk(los)
    local w = hw.make_world { obstacles = true }
    local b = navigator.budget { los = los }
    local nav = navigator.new(w, { budget = b })
    local pos, goal = { 2, 8, 2 }, { 29.5, 5, 14 }
    nav:go(goal)
    local in_update, status = 0, nil
    for _ = 1, 400 do
      b:frame()
      local before = w.tree:stats().los_tiles
      local wp
      status, wp = nav:update(pos)
      local after = w.tree:stats().los_tiles
      if after > before then in_update = in_update + (after - before) end
      if status == "arrived" or status == "failed" then break end
      if status == "moving" and wp then pos = step_toward(pos, wp, 0.5) end
    end
    local st = b:stats()
    return in_update, status, pos, w.tree:stats().los_tiles, st, dist(pos, goal)
  end

  it("builds masks in its frames, never inside an update, and the walk is the same", function()
    local in_upd, status, pos, tiles, st = walk(200)
    assert.equal("arrived", status)
    assert.equal(0, in_upd)
    assert.equal(2, tiles)
    assert.equal(2, st.los_built)
    assert.equal(200, st.los)
    -- the same walk with masks built whole on a tile's first line of sight (los = 0): the masks come
    -- inside the updates (the frame spike this option removes), and the agent ends at the same point
    local in_upd0, status0, pos0, tiles0, st0 = walk(0)
    assert.equal("arrived", status0)
    assert.is_true(in_upd0 >= 1)
    assert.equal(2, tiles0)
    assert.equal(0, st0.los_built)
    assert.same(pos0, pos)
  end)
end)
