-- spec/84-love_game_spec.lua -- the LÖVE example's octonav side (examples/love/game.lua) without LÖVE:
-- the world it bakes validates (its cave's two doors connected), and the scripted clicks of its
-- headless check (examples/love/check.lua: the same frames, 1/60 s each) bring every agent to every
-- goal, through the wall's gap and into the cave, with navigators sharing one frame budget. Frame
-- times are make test-love's (LÖVE's thread clock), not this spec's.
-- Run: busted --lua=lua5.4 spec/84-love_game_spec.lua
package.path = "examples/love/?.lua;" .. package.path
local game = require "game"
local check = require "check"

describe("examples/love/game.lua", function()
  local g
  setup(function()
    local world, dir = game.bake_and_load()
    g = game.new(world, { agents = 6, ms = 2, dir = dir })
  end)
  teardown(function()
    local dir = g.dir
    g:close()
    assert.is_nil(io.open(dir .. "/manifest.txt"))
  end)

  it("bakes a world of 3 x 1 x 2 tiles with a cave whose doors connect", function()
    local w = g.world
    assert.are.same({ 3, 1, 2 }, w.tiles)
    assert.are.equal("cave", w.holes[1].name)
    local r = w:validate()
    assert.is_true(r.ok)
    assert.are.equal(2, #r.doors)
    for _, d in ipairs(r.doors) do assert.is_true(d.connected) end
  end)

  it("flies every agent to every scripted click in the check's frames", function()
    local goals, k = {}, 1
    for f = 1, check.FRAMES do
      local c = check.CLICKS[k]
      if c and c.frame == f then
        if k > 1 then assert.are.same({ 6, 0, 0 }, { g:counts() }, "before click " .. k) end
        local goal = c.view == "top" and g:click_top(c.at[1], c.at[2]) or g:click_side(c.at[1], c.at[2])
        assert.is_table(goal)
        goals[k] = goal
        k = k + 1
      end
      g:update(1 / 60)
    end
    assert.are.equal(#check.CLICKS, k - 1)
    assert.are.same({ 6, 0, 0 }, { g:counts() })
    assert.are.equal(6 * #check.CLICKS, g.arrivals)
    assert.are.equal(0, g.failures)
    -- the third click put the goal inside the cave: the agents went in through a door
    assert.are.equal("cave", g.world:in_hole(goals[3]))
    for _, a in ipairs(g.agents) do
      local dx, dy, dz = a.pos[1] - a.goal[1], a.pos[2] - a.goal[2], a.pos[3] - a.goal[3]
      assert.is_true(math.sqrt(dx * dx + dy * dy + dz * dz) <= 0.5)
      assert.is_true(#a.path >= 2) -- the waypoints it was handed on the last leg
    end
  end)
end)
