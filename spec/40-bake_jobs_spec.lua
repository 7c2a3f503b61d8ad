-- spec/40-bake_jobs_spec.lua -- bake jobs (`--job N/M`, bake.job) deal every tile and hole to exactly one
-- job, and their files, joined and linked, are the one-process bake's byte for byte; tile and graph
-- files are written atomically without a sync each (core.write_file's third argument).
-- Run: busted --lua=lua5.4 spec/40-bake_jobs_spec.lua
--
-- The world: 5 x 1 x 3 tiles of 16 units (depth 4) over a ground slab, walls and pillars, and two holes
-- (closed rooms with a door each), so that a job may hold several tiles and a hole, or nothing.
local octonav = require "octonav"
local core = require "octonav.core"
local bake = require "octonav.bake"

local files = dofile("spec/support/files.lua")

local tmp = files.tracker(files.rm_rf)

local function box(a, b) return { box = { min = a, max = b } } end

-- A closed room (walls one unit thick) at x0..x0+8, z0..z0+8, y 1..9, a doorway in its -x wall.
local function room(geo, x0, z0)
  local function b(a, c) geo[#geo + 1] = box({ x0 + a[1], a[2], z0 + a[3] }, { x0 + c[1], c[2], z0 + c[3] }) end
  b({ 0, 1, 0 }, { 8, 2, 8 }); b({ 0, 8, 0 }, { 8, 9, 8 }); b({ 0, 1, 0 }, { 8, 9, 1 }); b({ 0, 1, 7 }, { 8, 9, 8 })
  b({ 7, 1, 0 }, { 8, 9, 8 }); b({ 0, 1, 0 }, { 1, 9, 3 }); b({ 0, 1, 5 }, { 1, 9, 8 })
  b({ 0, 1, 3 }, { 1, 4, 5 }); b({ 0, 6, 3 }, { 1, 9, 5 })
end

local function config(dir)
  local geo = {
    box({ 0, 0, 0 }, { 80, 1, 48 }), box({ 30, 0, 0 }, { 32, 14, 30 }), box({ 50, 0, 20 }, { 52, 12, 48 }),
    box({ 10, 0, 34 }, { 14, 10, 38 }), box({ 66, 0, 6 }, { 70, 15, 10 }),
  }
  room(geo, 4, 4)
  room(geo, 56, 30)
  local function hole(name, x0, z0)
    return { name = name, min = { x0, 1, z0 }, max = { x0 + 8, 9, z0 + 8 }, scale = 0.5, kind = "under_terrain",
      doors = { { inside = { x0 + 1.5, 5, z0 + 4 }, outside = { x0 - 0.5, 5, z0 + 4 } } } }
  end
  return { range = { min = { 0, 0, 0 }, max = { 80, 16, 48 } }, depth = 4, scale = 1, geometry = geo,
    holes = { hole("west", 4, 4), hole("east", 56, 30) }, output = dir, progress = function() end }
end

-- The files under dir (relative names, sorted).
local function listing(dir)
  local p = io.popen(("cd '%s' && find . -type f | sort"):format(dir))
  local names = {}
  for line in p:lines() do names[#names + 1] = line end
  p:close()
  return names
end

local serial -- the one-process bake's directory

setup(function()
  serial = tmp.dir(true)
  assert(bake.run(config(serial)))
end)

teardown(function() tmp.cleanup() end)

describe("bake jobs", function()
  it("deal every tile and hole to exactly one of m jobs; joined and linked, the one-process bake's bytes", function()
    local all = listing(serial)
    assert.are.equal(1 + 2 * 15 + 2, #all) -- the manifest, 15 tiles' tile and graph files, 2 holes
    for _, m in ipairs { 1, 2, 3, 4, 7, 16 } do
      local owner, joined = {}, tmp.dir(true)
      local total = 0
      for n = 0, m - 1 do
        local d = tmp.dir(true)
        local count = assert(bake.job(config(d), n, m))
        local names = listing(d)
        total = total + count
        local tiles = 0
        for _, name in ipairs(names) do
          assert.is_nil(owner[name], ("m = %d: %s in jobs %s and %d"):format(m, name, tostring(owner[name]), n))
          owner[name] = n
          if name:match("%.tile$") then tiles = tiles + 1 end
          assert.is_nil(name:match("%.tmp%."), name) -- no temporary left behind
          assert.is_true(os.execute(("mkdir -p '%s/%s' && cp '%s/%s' '%s/%s'"):format(joined,
            name:match("^(.*)/[^/]*$"), d, name, joined, name)))
        end
        assert.are.equal(count, tiles)
      end
      assert.are.equal(15, total)
      assert(bake.link(config(joined)))
      local got = listing(joined)
      assert.are.same(all, got)
      for _, name in ipairs(all) do
        assert.are.equal(files.read(serial .. "/" .. name), files.read(joined .. "/" .. name), ("m = %d: %s"):format(m, name))
      end
    end
  end)

  it("job n of m holds the tiles t % m == n and the holes h % m == n (h from 0)", function()
    local d = tmp.dir(true)
    assert.are.equal(5, (bake.job(config(d), 1, 3))) -- tiles 1, 4, 7, 10, 13
    local want = {}
    for _, t in ipairs { 1, 4, 7, 10, 13 } do
      local i, k = t % 5, math.floor(t / 5)
      want[#want + 1] = ("./tiles/%d_0_%d.graph"):format(i, k)
      want[#want + 1] = ("./tiles/%d_0_%d.tile"):format(i, k)
    end
    want[#want + 1] = "./holes/east.tree" -- hole 2 (index 1 from 0)
    table.sort(want)
    assert.are.same(want, listing(d))
  end)
end)

describe("core.write_file(path, data, sync)", function()
  it("writes the bytes with or without a sync, leaves no temporary, checks its third argument", function()
    local d = tmp.dir(true)
    local data = string.rep("octonav\0", 1000)
    assert.is_true(core.write_file(d .. "/a", data, false))
    assert.is_true(core.write_file(d .. "/b", data, true))
    assert.is_true(core.write_file(d .. "/c", data))
    assert.is_true(core.write_file(d .. "/a", "new", false)) -- over an existing file
    assert.are.same({ "./a", "./b", "./c" }, listing(d))
    assert.are.equal("new", files.read(d .. "/a"))
    assert.are.equal(data, files.read(d .. "/b"))
    assert.are.equal(data, files.read(d .. "/c"))
    assert.has_error(function() core.write_file(d .. "/x", "", "no") end,
      "octonav.core.write_file: argument #3: boolean expected, got string")
    local ok, err = core.write_file(d .. "/missing/x", "x", false)
    assert.is_nil(ok)
    assert.are.equal(d .. "/missing/x: cannot write: No such file or directory", err)
  end)
end)

describe("a pack of bake jobs", function()
  it("loads and plans as the one-process pack", function()
    local d = tmp.dir(true)
    for n = 0, 1 do assert(bake.job(config(d), n, 2)) end
    assert(bake.link(config(d)))
    local w1, w2 = assert(octonav.world.load(serial)), assert(octonav.world.load(d))
    local r1, c1 = w1:plan({ 2, 3, 2 }, { 78, 3, 46 })
    local r2, c2 = w2:plan({ 2, 3, 2 }, { 78, 3, 46 })
    assert.is_truthy(r1)
    assert.are.equal(c1, c2)
    assert.are.equal(#r1, #r2)
    w1:close()
    w2:close()
  end)
end)
