-- spec/124-onetree_crowd_spec.lua -- a crowd on a world sends each agent by a navigator of the agent's
-- radius (issue 33, one tree for every agent size). Before, crowd.lua gave the radius to navigators on
-- plain trees only: on a world the navigator planned for a point, so an agent of radius 2 on the slot
-- world (spec/support/slotworld.lua) was sent at the gap 3 wide, which the crowd's wall rule does not let
-- it enter: it never arrived. Now it goes round by the opening 10 wide, keeping 2 from the walls (the
-- distance to the boxes computed in slotworld.lua, not by the library).
-- Run: busted --lua=lua5.4 spec/124-onetree_crowd_spec.lua
local octonav = require "octonav"
local files = dofile("spec/support/files.lua")
local bake = require "octonav.bake"
local slot = dofile("spec/support/slotworld.lua")

describe("a crowd on a one-tree world", function()
  local dir
  setup(function()
    dir = files.tmpdir()
    assert(bake.run(slot.config(dir, { { name = "small", radius = 0 }, { name = "big", radius = 2 } }, true)))
  end)
  teardown(function() files.rm_rf(dir) end)

  -- one agent of radius r from slot.S to slot.G: frames run (nil: not arrived), its last state, the
  -- least clearance of its positions, the greatest x it reached
  local function run(r, nav_opts)
    local w = assert(octonav.world.load(dir))
    local crowd = octonav.crowd.new(w, { max_agents = 1, navigator = nav_opts })
    local a = assert(crowd:add { pos = slot.S, radius = r, max_speed = 4 })
    crowd:set_goal(a, slot.G[1], slot.G[2], slot.G[3])
    local least, maxx, arrived = math.huge, -math.huge, nil
    for f = 1, 1500 do
      assert(crowd:update(1 / 30))
      local t = crowd:agent(a)
      least = math.min(least, slot.clearance(t.pos))
      maxx = math.max(maxx, t.pos[1])
      if t.state == "arrived" or t.nav_status == "arrived" and t.state ~= "moving" then
        arrived = f
        break
      end
    end
    local st = crowd:agent(a)
    crowd:close()
    w:close()
    return arrived, st, least, maxx
  end

  it("an agent of radius 2 goes round by the wide opening and arrives, 2 from the walls", function()
    local arrived, st, least, maxx = run(2)
    assert.is_truthy(arrived, ("not arrived: state %s, nav %s at %.2f %.2f %.2f"):format(st.state,
      tostring(st.nav_status), st.pos[1], st.pos[2], st.pos[3]))
    assert.is_true(maxx > 20, "went by the opening (x 20 - 30): greatest x " .. maxx)
    assert.is_true(least >= 2 * 0.99, "least clearance " .. least)
    local d = math.sqrt((st.pos[1] - slot.G[1]) ^ 2 + (st.pos[2] - slot.G[2]) ^ 2 + (st.pos[3] - slot.G[3]) ^ 2)
    assert.is_true(d <= 2, "ends within its radius of the goal: " .. d)
  end)

  it("a navigator option agent or radius still decides: agent 'small' plans the gap", function()
    local arrived, _, least, maxx = run(2, { agent = "small" })
    assert.is_nil(arrived) -- sent at the gap 3 wide, the crowd keeps it out: it waits there
    assert.is_true(maxx < 10, "stayed by the gap: greatest x " .. maxx)
    assert.is_true(least >= 2 * 0.99, "least clearance " .. least)
  end)

  it("an agent of radius 0 goes through the gap", function()
    local arrived, _, _, maxx = run(0.4)
    assert.is_truthy(arrived)
    assert.is_true(maxx < 10, "went by the gap (x 4 - 7): greatest x " .. maxx)
  end)
end)
