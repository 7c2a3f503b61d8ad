-- Doors as run-time events (issue 12): a closed door blocks its box in the world tree and in its hole's
-- tree (temporary obstacles), world:set_door reaches the navigators whose route passes it (they plan
-- again: stats().door_replans) and the streamer's update (changes.doors, the agents in `stale`), and
-- a tile or hole tree loaded after the door closed gets the box blocked too. World: spec/support/
-- bakedworld.lua (two tiles; the hole "cave", a shell from 4 to 12 with doorways on -x and +x).
local navigator = require "octonav.navigator"
local streamer = require "octonav.streamer"
local world_mod = require "octonav.world"
local files = dofile("spec/support/files.lua")
local baked = dofile("spec/support/bakedworld.lua")

-- the doorways of the cave's shell (bakedworld.lua: gaps x in [4, 5] and [11, 12], y in [5, 7], z in [7, 9])
local BOX1 = { min = { 4, 5, 7 }, max = { 5, 7, 9 } }
local BOX2 = { min = { 11, 5, 7 }, max = { 12, 7, 9 } }
local MID1 = { 4.5, 6, 8 }

local function dist(a, b) return math.sqrt((a[1] - b[1]) ^ 2 + (a[2] - b[2]) ^ 2 + (a[3] - b[3]) ^ 2) end

local function step_toward(p, wp, speed)
  local d = dist(p, wp)
  if d <= speed then return { wp[1], wp[2], wp[3] } end
  local f = speed / d
  return { p[1] + (wp[1] - p[1]) * f, p[2] + (wp[2] - p[2]) * f, p[3] + (wp[3] - p[3]) * f }
end

-- Does segment a-b enter the inside of box (shrunk by eps: touching a face is not crossing)?
local function crosses(a, b, box)
  local eps = 1e-6
  local t0, t1 = 0, 1
  for k = 1, 3 do
    local lo, hi = box.min[k] + eps, box.max[k] - eps
    local d = b[k] - a[k]
    if math.abs(d) < 1e-15 then
      if a[k] <= lo or a[k] >= hi then return false end
    else
      local u, v = (lo - a[k]) / d, (hi - a[k]) / d
      if u > v then u, v = v, u end
      if u > t0 then t0 = u end
      if v < t1 then t1 = v end
      if t0 >= t1 then return false end
    end
  end
  return true
end

local function door_vias(route)
  local out = {}
  for _, st in ipairs(route) do
    if st.via_kind == "door" then out[#out + 1] = st.via end
  end
  return out
end

describe("doors as run-time events", function()
  local dir, w
  setup(function()
    dir = files.tmpname()
    -- the doors' own obstacles alone: the cave's inside (which holds the boxless doorways) is not
    -- blocked in the world tree here (block_holes: spec/31)
    baked.bake_and_load(dir):close()
    w = assert(world_mod.load(dir, { block_holes = false }))
    w:door_box("cave", 1, BOX1)
    w:door_box("cave", 2, BOX2)
  end)
  teardown(function()
    if w then w:close() end
    files.rm_rf(dir)
  end)

  it("a closed door blocks its box in both trees; opening it restores them", function()
    local cave = w.holes[1]
    assert.equal("free", (w.tree:locate(MID1)))
    assert.equal("free", (cave.tree:locate(MID1)))
    w:set_door("cave", 1, false)
    assert.equal("blocked", (w.tree:locate(MID1)))
    assert.equal("blocked", (cave.tree:locate(MID1)))
    assert.equal(1, #w.tree:obstacles())
    assert.equal(1, #cave.tree:obstacles())
    local rev = w.door_revision
    w:set_door("cave", 1, false) -- no change
    assert.equal(rev, w.door_revision)
    assert.equal(1, #w.tree:obstacles())
    w:set_door("cave", 1, true)
    assert.equal("free", (w.tree:locate(MID1)))
    assert.equal("free", (cave.tree:locate(MID1)))
    assert.same({}, w.tree:obstacles())
    assert.same({}, cave.tree:obstacles())
    assert.same(BOX1, w:door_box("cave", 1))
    assert.has_error(function() w:door_box("cave", 1, { min = { 1, 2 } }) end,
      "world:door_box: box: { min = {x, y, z}, max = {x, y, z} } expected")
    assert.has_error(function() w:door_box("cave", 3) end, "world:door_box: door: integer 1..2 expected, got 3")
  end)

  it("a door closed while an agent walks towards it: it plans again and never crosses the opening", function()
    local start, goal = { 1, 6, 1 }, { 8, 6, 8 }
    local nav = navigator.new(w)
    nav:go(goal)
    local pos = { start[1], start[2], start[3] }
    local closed_at, status, wp
    local trail = {}
    for frame = 1, 2000 do
      status, wp = nav:update(pos)
      if status == "arrived" or status == "failed" then break end
      if status == "moving" then
        if not closed_at then
          local r = nav:route()
          assert.same({ 1 }, door_vias(r)) -- heading for door 1, the near one
          if frame >= 4 then
            assert.is_true(dist(pos, start) > 1) -- walking, still short of the door
            assert.is_true(dist(pos, { 3.5, 6, 8 }) > 1)
            w:set_door("cave", 1, false)
            closed_at = frame
          end
        end
        local to = step_toward(pos, wp, 0.5)
        if closed_at then trail[#trail + 1] = { pos, to } end
        pos = to
      end
    end
    assert.equal("arrived", status)
    assert.is_truthy(closed_at)
    assert.equal(1, nav:stats().door_replans)
    assert.same({ 2 }, door_vias(nav:route())) -- round by door 2
    assert.is_true(#trail > 20)
    for i, seg in ipairs(trail) do
      assert(not crosses(seg[1], seg[2], BOX1), ("step %d crosses the closed door's box"):format(i))
    end
    -- opened again: a new plan uses door 1
    w:set_door("cave", 1, true)
    local route = assert(w:plan(start, goal))
    assert.same({ 1 }, door_vias(route))
    nav:go(goal)
    pos = { start[1], start[2], start[3] }
    local crossed = false
    for _ = 1, 2000 do
      local to
      status, wp = nav:update(pos)
      if status == "arrived" or status == "failed" then break end
      if status == "moving" then
        to = step_toward(pos, wp, 0.5)
        if crosses(pos, to, BOX1) then crossed = true end
        pos = to
      end
    end
    assert.equal("arrived", status)
    assert.is_true(crossed)
    assert.same({ 1 }, door_vias(nav:route()))
    nav:close()
  end)

  it("a door closed behind the agent changes nothing", function()
    local nav = navigator.new(w)
    nav:go { 8, 6, 8 }
    local pos = { 3, 6, 8 }
    local status, wp
    local inside = false
    for _ = 1, 2000 do
      status, wp = nav:update(pos)
      if status == "arrived" or status == "failed" then break end
      if status == "moving" then pos = step_toward(pos, wp, 0.5) end
      if not inside and pos[1] > 6 then
        inside = true
        w:set_door("cave", 1, false)
      end
    end
    w:set_door("cave", 1, true)
    assert.is_true(inside)
    assert.equal("arrived", status)
    assert.equal(0, nav:stats().door_replans)
    nav:close()
  end)

  it("with a streamer: the change is listed, the agent is stale, a tile loaded later is blocked", function()
    local sw = assert(world_mod.load(dir, { tiles = false, block_holes = false }))
    sw:door_box("cave", 1, BOX1)
    local s = assert(streamer.new(sw, { load_padding = 2, unload_padding = 4, workers = 0 }))
    -- closed while its tile is not loaded: blocked once the tile loads
    sw:set_door("cave", 1, false)
    local id = s:add_agent { 2, 6, 8 }
    s:lock_hole("cave")
    local ch = s:update(true)
    assert.same({ { hole = "cave", door = 1, open = false } }, ch.doors)
    assert.is_true(s:is_loaded(0))
    assert.equal("blocked", (sw.tree:locate(MID1)))
    assert.equal("blocked", (sw.holes[1].tree:locate(MID1))) -- the hole tree read after the close
    sw:set_door("cave", 1, true)
    assert.equal("free", (sw.tree:locate(MID1)))
    assert.equal("free", (sw.holes[1].tree:locate(MID1)))
    assert.same({ { hole = "cave", door = 1, open = true } }, s:update(true).doors)
    s:remove_agent(id)
    s:unlock_hole("cave")
    -- a navigator bound to the streamer: closing its door lists its agent in `stale`
    local nav = navigator.new(sw, { streamer = s })
    nav:go { 8, 6, 8 }
    local pos = { 1, 6, 1 }
    local stale_seen, status = false, nil
    for frame = 1, 3000 do
      local wp
      status, wp = nav:update(pos)
      if status == "arrived" or status == "failed" then break end
      if status == "moving" then pos = step_toward(pos, wp, 0.5) end
      if frame > 1 and status == "moving" and sw.holes[1].doors[1].open and nav.known and nav.known >= 1 then
        sw:set_door("cave", 1, false)
      end
      local c = s:update(true)
      for _, a in ipairs(c.stale) do
        if a == nav.agent then stale_seen = true end
      end
    end
    assert.equal("arrived", status)
    assert.is_true(stale_seen)
    assert.equal(1, nav:stats().door_replans)
    nav:close()
    sw:set_door("cave", 1, true)
    s:close()
    sw:close()
  end)
end)
