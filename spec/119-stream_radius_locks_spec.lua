-- spec/119-stream_radius_locks_spec.lua -- a streamed navigator at a radius (a one-tree pack, issue 33)
-- locks the tiles its searches read within that radius (navlocks.lua, Locks:near).
-- Run: busted --lua=lua5.4 spec/119-stream_radius_locks_spec.lua
--
-- On a one-tree pack a navigator at radius r searches the radius-0 tree with a clearance test that
-- reads every tile within r of a cell, and reads an unloaded tile as blocked (csrc/core/clearance.c).
-- Its locks held only the tiles of its ends and steps, so a start within r of a tile border read the
-- tile beyond as a wall: start_blocked with the streamer's padding 0 (the navigator's locks alone load
-- tiles). Now its plan locks the tiles within r of its start's and goal's tiles, a step those within r
-- of its tile, start and exit, a path those within r of its legs.
-- (Left: a search at a radius does not report a tile it would enter as unloaded, it meets a wall
-- there, so a path through tiles no lock or padding loaded is not found: "unreachable".)
local octonav = require "octonav"
local bake = require "octonav.bake"
local world_mod = require "octonav.world"
local tilegrid = require "octonav.tilegrid"
local files = dofile("spec/support/files.lua")
local slot = dofile("spec/support/slotworld.lua")

local tmp = files.tracker(files.rm_rf)

local function dist(a, b)
  return math.sqrt((a[1] - b[1]) ^ 2 + (a[2] - b[2]) ^ 2 + (a[3] - b[3]) ^ 2)
end

-- The slot world's one-tree pack (4 x 2 x 4 tiles of 8^3 leaves; agents of radius 0 and 2).
local pack
local function baked()
  local dir = tmp.dir()
  assert(bake.run(slot.config(dir, { { name = "small", radius = 0 }, { name = "big", radius = 2 } }, true)))
  return dir
end

-- Walk a navigator at radius R from S to G over the pack streamed with padding 0: the tiles load only
-- for its locks (and the tile its own agent is in). -> status, reason or nil, length, the locks after
-- its first update, the moving frames whose tiles within R of the agent were not all loaded.
local function walk(R, S, G)
  local w = assert(world_mod.load(pack, { tiles = false, graphs = true }))
  local s = octonav.streamer.new(w, { workers = 1, load_padding = 0, unload_padding = 1 })
  local nav = octonav.navigator.new(w, { radius = R, arrive_distance = 0, streamer = s })
  nav:go(G)
  local pos, len, status, wp = { S[1], S[2], S[3] }, 0, nil, nil
  nav:update(pos)
  local first_locks = s:stats().locked
  local bare = 0
  for _ = 1, 5000 do
    s:update()
    status, wp = nav:update(pos)
    if status == "arrived" or status == "failed" then break end
    if status == "moving" then
      local lo, hi = { pos[1] - R, pos[2] - R, pos[3] - R }, { pos[1] + R, pos[2] + R, pos[3] + R }
      for _, t in ipairs(tilegrid.in_box(w, lo, hi)) do
        if not s:is_loaded(t) then
          bare = bare + 1
          break
        end
      end
      local d = dist(pos, wp)
      local t = d > 0 and math.min(1, 0.25 / d) or 0
      pos = { pos[1] + (wp[1] - pos[1]) * t, pos[2] + (wp[2] - pos[2]) * t, pos[3] + (wp[3] - pos[3]) * t }
      len = len + d * t
    end
  end
  nav:close()
  s:close()
  w:close()
  return status, status == "failed" and wp or nil, len, first_locks, bare
end

describe("a streamed navigator at a radius", function()
  setup(function() pack = baked() end)
  teardown(tmp.cleanup)

  -- S (6, 8, 4) in tile (0, 1, 0) = 4, on the border y = 8 and 2 from x = 8; G (6, 8, 11) in tile
  -- (0, 1, 1) = 12, 3 from the wall at z 14
  local S, G = { 6, 8, 4 }, { 6, 8, 11 }

  it("locks the tiles within its radius of its start's and goal's tiles, and arrives", function()
    -- tile 4's box grown by 2: tiles x 0-1, y 0-1, z 0-1 (8); tile 12's adds z 2 (4 more)
    local status, why, len, locks, bare = walk(2, S, G)
    assert.are.equal("arrived", status, tostring(why)) -- (before: "failed", start_blocked, 2 locks)
    assert.are.equal(12, locks)
    assert.near(7, len, 1e-6)
    assert.are.equal(0, bare)
  end)

  it("at radius 0 locks its ends' tiles alone, as before", function()
    local status, why, len, locks, bare = walk(0, S, G)
    assert.are.equal("arrived", status, tostring(why))
    assert.are.equal(2, locks)
    assert.near(7, len, 1e-6)
    assert.are.equal(0, bare)
  end)
end)
