-- spec/99-radius_spec.lua -- one tree for every agent size (issue 33): q:find's `radius` on a tree
-- baked for a point. On the Warframe map Simple (../shared/data/voxel; pending when absent) the paths
-- for radius 1, 2 and 3 keep that far from every blocked voxel and the map's border, checked here by
-- brute force from the .3dmap file itself (samples every 1/8 leaf against every voxel), not through
-- the tree; on a hand-made slot the exact path and the radius that no longer fits; misuse.
-- Run: busted --lua=lua5.4 spec/99-radius_spec.lua
local octonav = require "octonav"
local movingai = require "octonav.movingai"

local DIR = "../shared/data/voxel/"

local function readable(path)
  local f = io.open(path)
  if f then f:close() end
  return f ~= nil
end

-- The map's dims and blocked voxels, read from the file (not through octonav).
local function read_map(path)
  local voxels, dims = {}, nil
  for line in io.lines(path) do
    local a, b, c = line:match("^voxel%s+(%d+)%s+(%d+)%s+(%d+)")
    if a then
      dims = { tonumber(a), tonumber(b), tonumber(c) }
    else
      local x, y, z = line:match("^(%d+)%s+(%d+)%s+(%d+)")
      if x then voxels[#voxels + 1] = { tonumber(x), tonumber(y), tonumber(z) } end
    end
  end
  return dims, voxels
end

-- Euclidean distance from p to the nearest voxel cube or the map's border (brute force).
local function distance(dims, voxels, p)
  local best = math.huge
  for k = 1, 3 do best = math.min(best, p[k], dims[k] - p[k]) end
  for _, v in ipairs(voxels) do
    local d2 = 0
    for k = 1, 3 do
      local e = 0
      if p[k] < v[k] then e = v[k] - p[k] elseif p[k] > v[k] + 1 then e = p[k] - v[k] - 1 end
      d2 = d2 + e * e
    end
    if d2 < best * best then best = math.sqrt(d2) end
  end
  return best
end

-- Is the leaf holding p within Chebyshev distance r of a blocked voxel or the outside (the bake's
-- inflation by r, in leaves: such an end is blocked for radius r)?
local function near_blocked(dims, voxels, p, r)
  local x = { math.floor(p[1]), math.floor(p[2]), math.floor(p[3]) }
  for k = 1, 3 do
    if x[k] < r or x[k] > dims[k] - 1 - r then return true end
  end
  for _, v in ipairs(voxels) do
    if math.abs(v[1] - x[1]) <= r and math.abs(v[2] - x[2]) <= r and math.abs(v[3] - x[3]) <= r then return true end
  end
  return false
end

local least_along = dofile("spec/support/geometry.lua").least_along
local function least_clearance(dims, voxels, path) -- (sampled every 1/8 leaf)
  return least_along(path, 8, function(p) return distance(dims, voxels, p) end)
end

describe("q:find's radius on the Warframe map Simple", function()
  local map = DIR .. "Simple.3dmap"
  if not readable(map) or not readable(map .. ".3dscen") then
    pending("Simple.3dmap absent (../shared/data/voxel)")
    return
  end
  local dims, voxels = read_map(map)
  local scen = {}
  local n = 0
  for line in io.lines(map .. ".3dscen") do
    n = n + 1
    local v = {}
    for w in line:gmatch("%S+") do v[#v + 1] = tonumber(w) end
    if n > 2 and #v >= 6 and #scen < 40 then
      scen[#scen + 1] = { { v[1] + 0.5, v[2] + 0.5, v[3] + 0.5 }, { v[4] + 0.5, v[5] + 0.5, v[6] + 0.5 } }
    end
  end

  for _, r in ipairs { 1, 2, 3 } do
    it(("radius %d: every path keeps %d from blocked space (brute force), ends too near fail as blocked"):format(r, r),
      function()
        local t = assert(movingai.load_map(map))
        local q = octonav.query.new(t)
        local found, blocked, free0 = 0, 0, 0
        for i, s in ipairs(scen) do
          local p0 = q:find(s[1], s[2])
          if p0 then free0 = free0 + 1 end
          local path, info = q:find(s[1], s[2], { radius = r })
          local na, nb = near_blocked(dims, voxels, s[1], r), near_blocked(dims, voxels, s[2], r)
          if na or nb then -- (found by brute force from the voxels)
            assert.is_nil(path, "scenario " .. i)
            assert.are.equal(na and "start_blocked" or "goal_blocked", info.reason)
            blocked = blocked + 1
          else -- (Simple is open: every other scenario has a path)
            assert.is_table(path, ("scenario %d: %s"):format(i, tostring(info.reason)))
            found = found + 1
            local c = least_clearance(dims, voxels, path)
            assert(c >= r - 1e-9, ("scenario %d: the path passes %.6f from blocked space, radius %d"):format(i, c, r))
            assert.are.equal(info.length, path:length())
          end
        end
        assert.are.equal(#scen, free0)
        assert.are.equal(#scen, found + blocked)
        assert.is_true(found >= 5, "too few paths found to mean anything: " .. found)
        q:close()
        t:close()
      end)
  end
end)

describe("q:find's radius in a slot", function()
  -- a wall z 13..18 across a 32^3 tree with a slot x 14..19 (5 leaves wide) through it
  local function slot()
    local t = octonav.tree.new { tiles = { 1, 1, 1 }, depth = 5 }
    t:add_box({ 0, 0, 13 }, { 14, 32, 18 })
    t:add_box({ 19, 0, 13 }, { 32, 32, 18 })
    return t
  end

  it("goes straight through the middle for radius 2, and finds none for radius 3", function()
    local t = slot()
    local q = octonav.query.new(t)
    local a, b = { 16.5, 16.5, 5.5 }, { 16.5, 16.5, 26.5 }
    local path, info = q:find(a, b, { radius = 2 })
    assert.is_table(path, tostring(info.reason))
    assert.are.equal(21, info.length)
    for _, p in ipairs(path) do assert.is_true(p[1] >= 16 and p[1] <= 17) end
    -- 1.5 rounds up to 2 leaves: the same path
    local p15, i15 = q:find(a, b, { radius = 1.5 })
    assert.is_table(p15)
    assert.are.equal(21, i15.length)
    local none, why = q:find(a, b, { radius = 3 })
    assert.is_nil(none)
    assert.are.equal("unreachable", why.reason)
    -- off centre the radius-2 agent has to come back to x 16..17 for the slot
    local c, ci = q:find({ 4.5, 16.5, 5.5 }, { 28.5, 16.5, 26.5 }, { radius = 2 })
    assert.is_table(c, tostring(ci.reason))
    local d0 = q:find({ 4.5, 16.5, 5.5 }, { 28.5, 16.5, 26.5 })
    assert.is_true(ci.length > d0:length())
    local through = false
    for i = 1, #c - 1 do -- the segment crossing z 13..18 lies in x 16..17
      local p, n = c[i], c[i + 1]
      if p[3] <= 13 and n[3] >= 18 then
        for _, zz in ipairs { 13, 18 } do
          local x = p[1] + (n[1] - p[1]) * (zz - p[3]) / (n[3] - p[3])
          assert.is_true(x >= 16 - 1e-9 and x <= 17 + 1e-9, "crosses the wall at x " .. x)
        end
        through = true
      end
    end
    assert.is_true(through or #c > 2)
    q:close()
    t:close()
  end)

  it("fails an end too near a wall as blocked", function()
    local t = slot()
    local q = octonav.query.new(t)
    -- (15.5, 16.5, 12.5) is 1.58 from the wall's edge x 14, z 13; 16.5 at z 11.5 would be 2.5 from it
    local path, info = q:find({ 15.5, 16.5, 12.5 }, { 16.5, 16.5, 26.5 }, { radius = 2 })
    assert.is_nil(path)
    assert.are.equal("start_blocked", info.reason)
    path, info = q:find({ 16.5, 16.5, 5.5 }, { 16.5, 0.5, 26.5 }, { radius = 1 })
    assert.is_nil(path)
    assert.are.equal("goal_blocked", info.reason) -- (the map's border counts as blocked)
    q:close()
    t:close()
  end)

  it("raises for a radius that is not a finite number >= 0, and refuses the boxes", function()
    local t = slot()
    local q = octonav.query.new(t)
    local a, b = { 16.5, 16.5, 5.5 }, { 16.5, 16.5, 26.5 }
    assert.has_error(function() q:find(a, b, { radius = -1 }) end,
      "query:find: option 'radius' must be a finite number >= 0")
    for _, bad in ipairs { 0 / 0, math.huge } do
      assert.has_error(function() q:find(a, b, { radius = bad }) end,
        "query:find: option 'radius': must be a finite number")
    end
    assert.is_table(q:find({ 16.5, 16.5, 11.5 }, b, { radius = 2 })) -- (2.5 from the wall: usable)
    assert.has_error(function() q:find(a, b, { radius = "two" }) end,
      "query:find: option 'radius': number expected, got string")
    local path, info = q:find(a, b, { radius = 2, graph = "boxes" })
    assert.is_nil(path)
    assert.are.equal("invalid", info.reason)
    q:close()
    t:close()
  end)
end)
