-- spec/17-path_spec.lua -- what a search returns, seen from a REPL and a game loop: the path's helpers
-- (length, point_at, points, is_valid), tostring of paths, infos, queries, trees and grids, the
-- readable message of assert(q:find(a, b)), and no internal fields in pairs(info).
-- Run: busted --lua=lua5.4 spec/17-path_spec.lua
local octonav = require "octonav"

local sqrt = math.sqrt

-- depth 4 (16^3 leaves), a wall x in [8, 9] up to y = 12: the path from (1,1,1) to (15,1,1) climbs over it
local function wall()
  local t = octonav.tree.new { depth = 4 }
  t:add_box({ 8, 0, 0 }, { 9, 12, 16 })
  return t
end
local A, B = { 1, 1, 1 }, { 15, 1, 1 }
-- the exact answer: over the wall's two top edges
local WANT = { { 1, 1, 1 }, { 8, 12, 1 }, { 9, 12, 1 }, { 15, 1, 1 } }
local WANT_LEN = sqrt(49 + 121) + 1 + sqrt(36 + 121)

local function point_equal(want, got)
  assert.equal(3, #got)
  for k = 1, 3 do assert.equal(want[k], got[k]) end
end

describe("path helpers", function()
  local path, info, mt
  setup(function()
    local q = octonav.query.new(wall())
    path, info = q:find(A, B)
    mt = getmetatable(path)
  end)

  it("the search gives the known path, and ipairs still walks it", function()
    assert.equal(#WANT, #path)
    local n = 0
    for i, p in ipairs(path) do
      point_equal(WANT[i], p)
      n = n + 1
    end
    assert.equal(4, n)
    assert.near(WANT_LEN, info.length, 1e-12)
  end)

  it("path:length() is info.length exactly (the same sum) and the known length", function()
    assert.equal(info.length, path:length())
    assert.near(WANT_LEN, path:length(), 1e-12)
  end)

  it("path:point_at(d) on a hand-made path: exact vertices, interpolation, clamping", function()
    local p = setmetatable({ { 0, 0, 0 }, { 3, 4, 0 }, { 3, 4, 12 } }, mt)
    assert.equal(17, p:length())
    local function at(d, want, want_i)
      local got, i = p:point_at(d)
      point_equal(want, got)
      assert.equal(want_i, i)
    end
    at(0, { 0, 0, 0 }, 1)
    at(2.5, { 1.5, 2, 0 }, 1)
    at(5, { 3, 4, 0 }, 2)      -- a vertex, exactly
    at(11, { 3, 4, 6 }, 2)
    at(17, { 3, 4, 12 }, 3)    -- the end
    at(-1, { 0, 0, 0 }, 1)     -- clamped
    at(1e300, { 3, 4, 12 }, 3)
    at(-math.huge, { 0, 0, 0 }, 1)
    at(math.huge, { 3, 4, 12 }, 3)
    -- a repeated point (a zero-length segment) is stepped over
    local z = setmetatable({ { 0, 0, 0 }, { 0, 0, 0 }, { 1, 0, 0 } }, mt)
    point_equal({ 0.5, 0, 0 }, (z:point_at(0.5)))
    point_equal({ 0, 0, 0 }, (z:point_at(0)))
    -- one point
    point_equal({ 7, 8, 9 }, (setmetatable({ { 7, 8, 9 } }, mt):point_at(3)))
  end)

  it("path:point_at on the searched path returns each vertex at its distance", function()
    local d = 0
    for i = 1, #path do
      if i > 1 then
        local a, b = path[i - 1], path[i]
        d = d + sqrt((b[1] - a[1]) ^ 2 + (b[2] - a[2]) ^ 2 + (b[3] - a[3]) ^ 2)
      end
      local got, at = path:point_at(d)
      point_equal(WANT[i], got)
      assert.equal(i, at)
    end
  end)

  it("path:points() yields index, point and distance from the start", function()
    local seen = {}
    for i, p, d in path:points() do seen[#seen + 1] = { i, p, d } end
    assert.equal(4, #seen)
    assert.equal(0, seen[1][3])
    assert.equal(sqrt(170), seen[2][3])
    assert.equal(sqrt(170) + 1, seen[3][3])
    assert.equal(path:length(), seen[4][3])
    for i = 1, 4 do
      assert.equal(i, seen[i][1])
      assert.equal(path[i], seen[i][2]) -- the path's own point tables
    end
  end)

  it("path:tiles() lists the tiles the search read (linear indices); {} for a hand-made path", function()
    local t = octonav.tree.new { depth = 3, tiles = { 3, 1, 1 } }
    local p = octonav.query.new(t):find({ 1, 1, 1 }, { 14, 1, 1 })
    local tiles = p:tiles()
    table.sort(tiles)
    assert.same({ 0, 1 }, tiles)
    assert.same({}, setmetatable({ { 0, 0, 0 } }, mt):tiles())
  end)

  it("misuse raises", function()
    assert.error_matches(function() path:point_at(0 / 0) end, "distance must not be NaN", 1, true)
    assert.error_matches(function() path:point_at("far") end, "number expected", 1, true)
    assert.error_matches(function() setmetatable({}, mt):point_at(1) end, "the path has no points", 1, true)
    assert.error_matches(function() setmetatable({ { 1, 2 } }, mt):length() end,
      "path[1] is not a point {x, y, z}", 1, true)
    assert.error_matches(function() path.length(5) end, "table expected", 1, true)
  end)
end)

describe("tostring and pairs for REPLs", function()
  it("path and info say count, length and status; pairs(info) shows data only", function()
    local t = wall()
    local q = octonav.query.new(t, { max_nodes = 4096 })
    local path, info = q:find(A, B)
    assert.equal(("octonav.path: 4 points, length %.6g"):format(WANT_LEN), tostring(path))
    assert.equal(("octonav.query: found, length %.6g, %d expansions"):format(WANT_LEN, info.expansions), tostring(info))
    local keys = {}
    for k in pairs(info) do keys[#keys + 1] = k end
    table.sort(keys)
    assert.same({ "cells", "expansions", "graph", "length", "status", "visited" }, keys)
    for k in pairs(path) do assert.equal("number", type(k)) end
    assert.is_true(info.valid)
    assert.is_true(path:is_valid())
    t:add_box({ 0, 14, 0 }, { 2, 16, 2 })
    assert.is_false(info.valid)
    assert.is_false(path:is_valid())
  end)

  it("a failed search's info reads well in assert, and has no validity", function()
    local t = wall()
    local q = octonav.query.new(t)
    local path, info = q:find(A, { 99, 1, 1 })
    assert.is_nil(path)
    assert.equal("octonav.query: failed (goal_outside), 0 expansions", tostring(info))
    assert.is_nil(info.valid)
    local ok, err = pcall(function() assert(q:find(A, { 99, 1, 1 })) end)
    assert.is_false(ok)
    assert.equal("octonav.query: failed (goal_outside), 0 expansions", tostring(err))
    -- the standalone interpreter prints the same text for an uncaught assert (but the assert of Lua 5.1
    -- and 5.2 takes a string message only: there it names the table; docs/lua-versions.md)
    local lua = os.getenv("OCTONAV_LUA") or "lua5.4"
    local cmd = ("%s -e 'package.path=\"lua/?.lua;lua/?/init.lua;\"..package.path; package.cpath=\"%s\"' "
      .. "-e 'local o = require \"octonav\"; local q = o.query.new(o.tree.new { depth = 3 }); "
      .. "assert(q:find({ 1, 1, 1 }, { 99, 1, 1 }))' 2>&1"):format(lua, package.cpath:gsub("'", ""))
    local f = io.popen(cmd)
    local out = f:read("*a")
    f:close()
    if (_VERSION == "Lua 5.1" and not rawget(_G, "jit")) or _VERSION == "Lua 5.2" then
      assert.matches("bad argument #2 to 'assert' (string expected, got table)", out, 1, true)
    else
      assert.matches("octonav.query: failed (goal_outside), 0 expansions", out, 1, true)
    end
    -- unreachable, with its expansions
    t:add_box({ 0, 0, 0 }, { 16, 16, 16 })
    local t2 = octonav.tree.new { depth = 3 }
    t2:add_box({ 3, 0, 0 }, { 4, 8, 8 })
    local _, i2 = octonav.query.new(t2):find({ 1, 1, 1 }, { 6, 1, 1 })
    assert.equal(("octonav.query: failed (unreachable), %d expansions"):format(i2.expansions), tostring(i2))
    assert.is_true(i2.expansions > 0)
  end)

  it("a partial result says so", function()
    local t = wall()
    local path, info = octonav.query.new(t):find(A, B, { max_expansions = 2, partial = true })
    assert.equal("partial", info.status)
    assert.is_table(path)
    assert.equal(("octonav.query: partial (budget), length %.6g, %d expansions"):format(info.length, info.expansions),
      tostring(info))
    assert.equal(("octonav.path: %d points, length %.6g"):format(#path, path:length()), tostring(path))
  end)

  it("query, tree and grid tostring, open and closed", function()
    local t = wall()
    local q = octonav.query.new(t, { max_nodes = 1000 })
    assert.equal("octonav.query: idle, 1000 nodes", tostring(q))
    assert.equal("running", q:start(A, B))
    assert.equal("octonav.query: sliced search started, 1000 nodes", tostring(q))
    local inside
    q:find(A, B, { heuristic = function()
      inside = tostring(q) .. " | " .. tostring(t)
      return 0
    end })
    assert.matches("^octonav.query: running, 1000 nodes | octonav.tree: 1x1x1 tiles of 16%^3 leaves .*, in use by a running search$",
      inside)
    assert.matches("^octonav.tree: 1x1x1 tiles of 16%^3 leaves %(scale 1%), %d+ nodes, [%d.]+ MB$", tostring(t))
    q:close()
    assert.equal("octonav.query (closed)", tostring(q))
    local g = octonav.grid.new(3, 4, 5)
    assert.equal("octonav.grid: 3x4x5 cells", tostring(g))
    g:close()
    assert.equal("octonav.grid (closed)", tostring(g))
    assert.error_matches(function() g:find({ 0, 0, 0 }, { 1, 1, 1 }) end, "attempt to use a closed octonav.grid", 1, true)
  end)

  it("a result of a closed tree: invalid, and the info of result() reads well", function()
    local t = wall()
    local q = octonav.query.new(t)
    local path, info = q:find(A, B)
    assert.equal("running", q:start(A, B))
    t:close()
    assert.is_false(path:is_valid())
    assert.is_false(info.valid)
    local p2, i2 = q:result()
    assert.is_nil(p2)
    assert.equal("octonav.query: failed (tree_closed)", tostring(i2))
  end)
end)
