-- spec/110-nav_stale_gate_spec.lua -- a walking navigator asks its paths whether they went stale
-- (path:is_valid, a read of each path's record in the results registry) only after its tree changed
-- (tree:revision() moved since the last check that found them valid: navigator_search.lua's
-- stale_step), and still replans at the first update after a change that makes its path stale.
-- Run: busted --lua=lua5.4 spec/110-nav_stale_gate_spec.lua
local navigator = require "octonav.navigator"

local hw = dofile("spec/support/handworld.lua")
local geometry = dofile("spec/support/geometry.lua")
local step_toward = geometry.step_toward

describe("navigator stale check", function()
  local A, B = { 2, 8, 2 }, { 46, 8, 8 }

  it("tree:revision() is bumped by every change of the tree", function()
    local w = hw.make_world { tiles = 3, obstacles = true }
    local r0 = w.tree:revision()
    assert.are.equal(w.tree:stats().revision, r0)
    w.tree:add_box({ 40, 1, 14 }, { 41, 2, 15 })
    assert.is_true(w.tree:revision() > r0)
    assert.are.equal(w.tree:stats().revision, w.tree:revision())
    assert.has_error(function() w.tree.revision({}) end)
  end)

  it("asks no path while the tree is unchanged, and replans at the first update after a change", function()
    local w = hw.make_world { tiles = 3, obstacles = true }
    local nav = navigator.new(w, {})
    nav:go(B)
    local pos = { A[1], A[2], A[3] }
    local st, wp
    -- until the whole route is searched (its steps joined into one search here) and one update more
    for _ = 1, 400 do
      st, wp = nav:update(pos)
      assert.are.equal("moving", st == "planning" and "moving" or st)
      if st == "moving" then pos = step_toward(pos, wp, 0.25) end
      if nav.known == #(nav.cells or { 0 }) and nav.search == nil and st == "moving" then break end
    end
    assert.are.equal("moving", st)
    st, wp = nav:update(pos)
    pos = step_toward(pos, wp, 0.25)
    local methods = getmetatable(nav.step_paths[1]).__index
    local is_valid, calls = methods.is_valid, 0
    methods.is_valid = function(p)
      calls = calls + 1
      return is_valid(p)
    end
    local ok, err = pcall(function()
      for _ = 1, 20 do
        st, wp = nav:update(pos)
        assert.are.equal("moving", st)
        pos = step_toward(pos, wp, 0.25)
      end
      assert.are.equal(0, calls) -- (one a walking update before: 20)
      -- a box dropped into the last tile, which the path read: stale at the next update, planned again
      w.tree:add_box({ 40, 1, 14 }, { 41, 2, 15 })
      assert.are.equal(0, nav:stats().replans)
      st = nav:update(pos)
      assert.are.equal(1, calls)
      assert.are.equal(1, nav:stats().replans)
      assert.are.equal("planning", st == "moving" and "planning" or st)
    end)
    methods.is_valid = is_valid
    assert(ok, err)
    -- it walks on to the goal from where it was
    local arrived = false
    for _ = 1, 2000 do
      st, wp = nav:update(pos)
      if st == "arrived" then
        arrived = true
        break
      end
      assert.is_true(st == "moving" or st == "planning", tostring(st) .. " " .. tostring(wp))
      if st == "moving" then pos = step_toward(pos, wp, 0.5) end
    end
    assert.is_true(arrived)
    nav:close()
  end)
end)
