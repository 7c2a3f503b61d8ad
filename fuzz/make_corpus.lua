--- Writes the fuzzers' seed corpora (fuzz/corpus/TARGET/) with the project's own writers, small on
-- purpose: libFuzzer grows them. Run from the repository root after `make`:
--   lua5.4 fuzz/make_corpus.lua
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = "build/?.so;" .. package.cpath
local core = require "octonav.core"
local pack = require "octonav.pack"

local function put(target, name, bytes)
  assert(pack.mkdir("fuzz/corpus/" .. target))
  local f = assert(io.open(("fuzz/corpus/%s/%s"):format(target, name), "wb"))
  assert(f:write(bytes))
  assert(f:close())
end

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- A 2 x 2 x 2 tree (the tile target's): a solid tile, an empty one, boxes in others.
local t = core.tree.new { tiles = { 2, 2, 2 }, depth = 3, scale = 1 }
t:add_box({ 0, 0, 0 }, { 8, 8, 8 })
t:add_box({ 9, 1, 1 }, { 11.5, 3, 2 })
t:add_box({ 1, 9, 9 }, { 2, 10, 15 })
put("tile", "solid", t:encode_tile(0, 0, 0))
put("tile", "boxes", t:encode_tile(1, 0, 0))
put("tile", "column", t:encode_tile(0, 1, 1))
put("tile", "empty", t:encode_tile(1, 1, 1))
local t2 = core.tree.new { tiles = { 2, 2, 2 }, depth = 2, scale = 1 }
t2:add_box({ 0.5, 0.5, 0.5 }, { 1.5, 1.5, 3 })
put("tile", "depth2", t2:encode_tile(0, 0, 0))
put("tile", "file", pack.tile_file(1, 0, 1, t:encode_tile(1, 0, 1)))

-- Tree files: a small tree of depth 2 and one tile of depth 1 with a radius.
local tmp = os.tmpname()
local small = core.tree.new { tiles = { 2, 1, 1 }, depth = 2, scale = 0.5, origin = { -1, 0, 2 }, radius = 0.25 }
small:add_box({ -0.5, 0.25, 2.25 }, { 0.5, 1, 2.75 })
assert(small:save(tmp))
put("tree", "small", slurp(tmp))
local one = core.tree.new { tiles = { 1, 1, 1 }, depth = 1, scale = 1 }
one:add_box({ 0, 0, 0 }, { 1, 1, 1 })
assert(one:save(tmp))
put("tree", "one", slurp(tmp))

-- OBJ: the tree's blocked boxes as export_obj writes them, and a face with every vertex form.
assert(small:export_obj(tmp))
put("obj", "boxes", slurp(tmp))
os.remove(tmp)
put("obj", "forms", "# forms\nv 0 0 0\nv 1 0 0 1\nv 1 1 0 0.5 0.5 0.5\nv 0 1 0\r\nvt 0 0\nvn 0 0 1\n" ..
  "f 1/1/1 2//1 3/1 4\nf -1 -2 -3\ng x\nusemtl y\n")

-- .3dmap (the first byte picks the bake depth) and 2D .map.
put("voxmap", "small", "\2voxel 4 3 2\n0 0 0\n1 0 0\n3 2 1\n1 0 0\n")
put("voxmap", "crlf", "\5voxel 40 2 9\r\n\r\n39 1 8\r\n")
put("map2d", "small", "type octile\nheight 3\nwidth 4\nmap\n..@.\nT.G.\n.S..\n")
put("map2d", "crlf", "type octile\r\nwidth 2\r\nheight 1\r\nmap\r\n.@\r\n\r\n")

-- Manifests (the manifest target, fuzz_pack.c): one with a hole and its door, one bare.
put("manifest", "pack", pack.manifest_text { scale = 0.5, depth = 3, origin = { 0, -1.5, 2 }, tiles = { 3, 2, 1 },
  radius = 0.25, holes = {
    { name = "cave", kind = "under_terrain", min = { 1, 1, 1 }, max = { 3, 3, 3 }, scale = 0.25, depth = 2,
      origin = { 1, 1, 1 }, tiles = { 2, 2, 2 }, doors = { { inside = { 2, 2, 2 }, outside = { 2, 4, 2 } } } } } })
put("manifest", "bare", pack.manifest_text { scale = 1, depth = 9, origin = { 0, 0, 0 }, tiles = { 1, 1, 1 }, radius = 0 })
-- Tile graph blobs (the tgraph target): an open tile, a wall with a gap, a small portal bound with a stretch.
local tg = core.tree.new { tiles = { 2, 1, 1 }, depth = 3, scale = 1 }
tg:add_box({ 10, 0, 0 }, { 11, 5, 8 })
tg:add_box({ 2, 2, 2 }, { 4, 8, 3 })
put("tgraph", "open", core.route.build(tg, 0, 0, 0, { tag = 1 }))
put("tgraph", "wall", core.route.build(tg, 1, 0, 0))
put("tgraph", "small", core.route.build(tg, 0, 0, 0, { bound = 2, stretch = 1.5 }))
print("fuzz/corpus written")
