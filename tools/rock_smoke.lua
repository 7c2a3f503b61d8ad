-- make check-rocks: run from a directory outside the source tree with a LuaRocks tree's `luarocks path`:
-- octonav is required from that tree, finds a path, and says where its C module came from.
local o = require "octonav"
local t = o.tree.new { depth = 5 }
t:add_box({ 10, 0, 0 }, { 12, 28, 32 })
local p, i = o.query.new(t):find({ 2, 2, 16 }, { 20, 2, 16 })
assert(p and #p == 4 and i.status == "found", "no path")
local from
for dir in package.cpath:gmatch("[^;]+") do
  local f = io.open((dir:gsub("%?", "octonav/core")), "rb")
  if f then f:close(); from = dir:gsub("/%?%.so$", ""); break end
end
print(("check-rocks: %s: %s, octonav.core from %s"):format(_VERSION, o._VERSION, from))
