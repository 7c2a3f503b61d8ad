-- spec/103-smoother_recheck_spec.lua -- fewer line-of-sight checks on a path pulled taut
-- (octonav.smoother's recheck option; the navigator's smoothers use 0.5): a failed check is repeated
-- only once the agent has come within recheck times the distance it had to its target when it
-- failed, and an agent standing on its target steps on without a check. The waypoints it answers
-- are the same on a corner that comes into view only at the corner; on the hand world the
-- navigator's walks stay within their paths' lengths, arrive, and spend fewer checks. (Not checked
-- here: each step free by a line of sight; a path pulled taut against the post in tile 1 grazes its
-- edge, where a sub-segment's line of sight reads blocked with recheck 0 as well.)
-- Run: busted --lua=lua5.4 spec/103-smoother_recheck_spec.lua
local smoother = require "octonav.smoother"
local navigator = require "octonav.navigator"

local hw = dofile("spec/support/handworld.lua")
local geometry = dofile("spec/support/geometry.lua")
local dist, step_toward = geometry.dist, geometry.step_toward

describe("smoother recheck", function()
  -- a corner seen only from the corner itself: visible(a, b) is true from path[2] (the path's own
  -- segment), false from anywhere else
  local path = { { 0, 0, 0 }, { 32, 0, 0 }, { 32, 32, 0 } }
  local function corner_tree()
    local t = { calls = {} }
    function t.visible(_, a, _)
      t.calls[#t.calls + 1] = a[1]
      return a[1] == 32 and a[2] == 0 and a[3] == 0
    end
    return t
  end

  local function walk(recheck)
    local tree = corner_tree()
    local s = smoother.new(tree, path, { recheck = recheck })
    local answers = {}
    for x = 1, 32 do
      local wp = s:update({ x, 0, 0 })
      answers[#answers + 1] = ("%g,%g,%g"):format(wp[1], wp[2], wp[3])
    end
    return tree.calls, answers, s:checks()
  end

  it("checks at each halving of the distance to the target, and none on the target", function()
    local calls0, answers0, n0 = walk(0)
    local calls, answers, n = walk(0.5)
    assert.are.equal(32, n0) -- every frame (the last from the corner: true)
    assert.are.same({ 1, 17, 25, 29, 31 }, calls)
    assert.are.equal(5, n)
    assert.are.same(answers0, answers) -- the same waypoints, frame by frame
    assert.are.equal(31, #calls0 - 1)
  end)

  it("rejects a recheck outside [0, 1)", function()
    assert.has_error(function() smoother.new(corner_tree(), path, { recheck = 1 }) end,
      "octonav.smoother.new: recheck must be a number >= 0 and < 1")
    assert.has_error(function() navigator.new(hw.make_world(), { recheck = -0.5 }) end,
      "octonav.navigator.new: option 'recheck' must be a number >= 0 and < 1")
  end)

  it("navigator walks on the hand world: within their paths, arrived, fewer checks", function()
    local w = hw.make_world { tiles = 3, obstacles = true }
    local pts = { { 2, 8, 2 }, { 30, 6, 2 }, { 46, 8, 8 }, { 24, 6, 14 }, { 40, 8, 14 }, { 14, 12, 2 } }
    local totals = {}
    for _, r in ipairs { 0, 0.5 } do
      local checks, n = 0, 0
      for a = 1, #pts do
        for b = 1, #pts do
          if a ~= b then
            local nav = navigator.new(w, { recheck = r })
            nav:go(pts[b])
            local pos, len, arrived = { pts[a][1], pts[a][2], pts[a][3] }, 0, false
            for _ = 1, 3000 do
              local st, wp = nav:update(pos)
              if st == "arrived" then
                arrived = true
                break
              end
              if st == "moving" then
                local nxt = step_toward(pos, wp, 0.25)
                len = len + dist(pos, nxt)
                pos = nxt
              end
            end
            assert.is_true(arrived, ("%d -> %d"):format(a, b))
            local plen = 0
            for _, p in ipairs(nav.step_paths) do
              for i = 2, #p do plen = plen + dist(p[i - 1], p[i]) end
            end
            assert.is_true(len <= plen + 0.5 + 1e-9, ("%d -> %d: walk %.6f, path %.6f"):format(a, b, len, plen))
            checks, n = checks + nav:stats().checks, n + 1
            nav:close()
          end
        end
      end
      totals[#totals + 1] = checks
      assert.are.equal(30, n)
    end
    assert.is_true(totals[2] * 2 < totals[1], ("checks %d with recheck 0.5, %d with 0"):format(totals[2], totals[1]))
  end)
end)
