-- Issue 34: one source on Lua 5.1, LuaJIT 2.1, 5.2, 5.3 and 5.4. These run on whichever Lua runs the
-- suite (`make test LUA=luajit`, lua5.1, lua5.3; 5.4 by default) and check that the binding's compat
-- layer (csrc/lua_compat.h, csrc/lua_compat.c) and octonav.compat answer as Lua 5.4 does.
local octonav = require "octonav"
local compat = require "octonav.compat"
local core = octonav.core

local int64 = math.type ~= nil -- luacheck: ignore 143

-- the call raises an error containing `text` (plain)
local function raises(fn, text) assert.error_matches(fn, text, 1, true) end

describe("the binding on " .. _VERSION .. (rawget(_G, "jit") and " (LuaJIT)" or ""), function()
  it("loads, builds a tree and finds a path", function()
    local tree = octonav.tree.new { depth = 5 }
    tree:add_box({ 10, 0, 0 }, { 12, 28, 32 })
    local q = octonav.query.new(tree)
    local path, info = q:find({ 2, 2, 16 }, { 20, 2, 16 })
    assert.are.equal(4, #path)
    assert.are.equal("found", info.status)
    assert.are.equal("octonav.tree: 1x1x1 tiles of 32^3 leaves (scale 1), 77 nodes, 0.00 MB", tostring(tree))
  end)

  it("refuses a non-integral number where an integer is expected (5.1's API would truncate it)", function()
    raises(function() octonav.grid.new(1.5, 2) end, "octonav.grid.new: argument #1: number has no integer representation")
    raises(function() octonav.grid.new("x", 2) end, "octonav.grid.new: argument #1: number expected, got string")
  end)

  it("names the function and counts a method's arguments, also in a tail call (5.1 and LuaJIT lose the name)", function()
    local t = octonav.tree.new { tiles = { 2, 3, 4 }, depth = 4 }
    raises(function() return t:add_box(nil, { 1, 1, 1 }) end, "tree:add_box: min: point {x, y, z} expected, got nil")
    local call = function(i, j, k) return t:encode_tile(i, j, k) end
    raises(function() call(2, 0, 0) end, "tree:encode_tile: argument #1: tile index out of range (0..1)")
    local locate = t.locate
    raises(function() locate({}, { 1, 1, 1 }) end, "tree:locate: self: octonav.tree expected, got table")
    raises(function() t.params(octonav.query.new(t)) end, "tree:params: self: octonav.tree expected, got octonav.query")
  end)

  it("formats lua_Integer (%I) in messages, also past 2^32", function()
    local tree = octonav.tree.new { depth = 4 }
    local ok, why = tree:remove_obstacle(12345678901)
    assert.is_nil(ok)
    assert.are.equal("no obstacle 12345678901 in place", why)
  end)

  it("keeps user values: a query holds its tree alive", function()
    local q = octonav.query.new(octonav.tree.new { depth = 4 })
    collectgarbage()
    collectgarbage()
    local path = q:find({ 1, 1, 1 }, { 14, 14, 14 })
    assert.are.equal(2, #path)
  end)
end)

describe("octonav.compat on " .. _VERSION, function()
  it("tells integers as 5.4 does where it can, and refuses what a double cannot hold", function()
    assert.is_true(compat.isinteger(3))
    assert.is_false(compat.isinteger(1.5))
    assert.is_false(compat.isinteger("3"))
    assert.are.equal(7, compat.tointeger(7))
    assert.is_nil(compat.tointeger(7.5))
    if int64 then
      assert.is_false(compat.isinteger(2.0)) -- a float, as math.type says
      assert.is_true(compat.isinteger(compat.tointeger(2 ^ 53) + 2))
    else
      assert.is_true(compat.isinteger(2.0)) -- one number type: 2.0 is 2
      assert.is_false(compat.isinteger(2 ^ 53 + 2)) -- beyond 2^53 a double may already be rounded
      assert.is_nil(compat.tointeger(2 ^ 60))
    end
  end)

  it("pow2, idiv, log2 and move give integers and exact values", function()
    assert.are.equal(512, compat.pow2(9))
    assert.are.equal("512", tostring(compat.pow2(9))) -- an integer on 5.4, not 512.0
    assert.are.equal(3, compat.idiv(7, 2))
    assert.are.equal(-4, compat.idiv(-7, 2))
    assert.are.equal(9, compat.log2(512))
    assert.are.same({ 1, 1, 2, 3 }, compat.move({ 1, 2, 3 }, 1, 3, 2))
    assert.are.same({ "b", "c" }, { compat.unpack({ "a", "b", "c" }, 2) })
  end)
end)

describe("core.pack / core.unpack (string.pack's formats octonav uses)", function()
  local function hex(s) return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end)) end

  it("writes the bytes string.pack writes", function()
    assert.are.equal("4f4e54460100020003000400", hex(core.pack("<c4 I2 I2 I2 I2", "ONTF", 1, 2, 3, 4)))
    assert.are.equal("000000ff", hex(core.pack(">I4", 255)))
    assert.are.equal("0000c03f", hex(core.pack("<f", 1.5)))
    assert.are.equal("000000000000f83f", hex(core.pack("<d", 1.5)))
    assert.are.equal("fdff", hex(core.pack("<i2", -3)))
    assert.are.equal("01ffff0000", hex(core.pack("<BI2I2", 1, 65535, 0)))
    assert.are.equal("4142000000", hex(core.pack("c5", "AB")))
  end)

  it("reads them back, with the next position", function()
    local a, b, c, d, e, nxt = core.unpack(">i2 I4 b f d", core.pack(">i2 I4 b f d", -3, 4000000000, -1, 0.5, 1e300))
    assert.are.same({ -3, 4000000000, -1, 0.5, 1e300, 20 }, { a, b, c, d, e, nxt })
    local tag, v, pos = core.unpack("<c4 I2", "ONTF\1\0rest")
    assert.are.same({ "ONTF", 1, 7 }, { tag, v, pos })
    assert.are.equal(258, (core.unpack("<I2", "xx\2\1", 3)))
  end)

  it("raises as string.pack does", function()
    raises(function() core.pack("<I2", 70000) end, "octonav.core.pack: argument #2: unsigned overflow")
    raises(function() core.pack("<i1", 200) end, "octonav.core.pack: argument #2: integer overflow")
    raises(function() core.pack("c2", "abc") end, "octonav.core.pack: argument #2: string longer than given size")
    raises(function() core.unpack("<I4", "abc") end, "octonav.core.unpack: argument #2: data string too short")
    raises(function() core.pack("<q", 1) end, "octonav.core.pack: invalid format option 'q'")
  end)

  if string.pack then -- luacheck: ignore 143
    it("matches string.pack byte for byte on this Lua (5.3+)", function()
      local r = core.xorshift(7)
      for _ = 1, 200 do
        local i2, u4, f = r(65536) - 32769, r(2 ^ 31) * 2 - 1, (r() - 0.5) * 1e6
        local fmt = "<i2 >I4 f d b B"
        local args = { i2, u4, f, f, r(256) - 129, r(256) - 1 }
        assert.are.equal(string.pack(fmt, table.unpack(args)), core.pack(fmt, table.unpack(args))) -- luacheck: ignore 143
      end
    end)
  else
    it("refuses an 8-byte integer beyond 2^53, which this Lua's numbers would round", function()
      local big = "\0\0\0\0\0\0\32\0" -- 2^53 + ... little-endian: 0x0020000000000000 = 2^53
      assert.are.equal(2 ^ 53, (core.unpack("<j", big)))
      raises(function() core.unpack("<j", "\1\0\0\0\0\0\32\0") end,
        "octonav.core.unpack: an integer beyond 2^53 at byte 1 does not fit this Lua's numbers")
    end)
  end
end)

describe("core.xorshift (the benchmarks' generator)", function()
  it("draws the xorshift64* sequence the benchmarks always drew", function()
    local r = core.xorshift(42)
    assert.are.equal("0.48530946094334826", ("%.17g"):format(r()))
    assert.are.equal("0.73593835919670592", ("%.17g"):format(r()))
    assert.are.equal(758, r(1000))
  end)

  it("xorshift64 draws bench/crowd.lua's plain xorshift64 sequence (written in 5.3's operators before)", function()
    local want = { "4.1068970446644926e-10", "0.43752712433707119", "0.75525091590096094" }
    if int64 then -- the Lua 5.3+ code bench/crowd.lua had, loaded from a string (older parsers never see it)
      local ref = assert(compat.load([[local s = ...
        return function()
          s = s ~ (s << 13); s = s ~ (s >> 7); s = s ~ (s << 17)
          return ((s >> 11) & 0x1fffffffffffff) / 9007199254740992.0
        end]]))(7)
      for i = 1, 3 do assert.are.equal(want[i], ("%.17g"):format(ref())) end
    end
    local r = core.xorshift64(7)
    for i = 1, 3 do assert.are.equal(want[i], ("%.17g"):format(r())) end
    raises(function() core.xorshift64(0) end, "argument #1: seed must not be 0")
    raises(function() core.xorshift64(1.5) end, "argument #1: number has no integer representation")
  end)
end)

-- Every Lua file of the project parses on Lua 5.1's grammar (LuaJIT's and lua5.1's parsers), checked from
-- whichever Lua runs the suite: a 5.3+ operator (`1 << 20`, `//`, `~`) or `<close>` in a spec is otherwise
-- found only by the LuaJIT and 5.1 lanes, where it stops busted before its first test (a clean-clone CI run
-- of 45a66cd: spec/94's `1 << 20`).
describe("the sources on Lua 5.1's grammar", function()
  local function have(cmd)
    local r = os.execute(cmd .. " -v >/dev/null 2>&1")
    return r == true or r == 0 -- (5.1 and LuaJIT without 5.2 compat answer a number)
  end
  local list = os.tmpname()
  local function parse_errors(lua)
    assert(os.execute("find spec lua bench tools examples -name '*.lua' > " .. list .. " && echo bin/octonav >> " .. list))
    local p = assert(io.popen(lua .. [[ -e 'local n = 0
      for f in io.lines() do n = n + 1; local ok, e = loadfile(f); if not ok then print(e) end end
      print(n .. " files")' < ]] .. list))
    local out = p:read("*a")
    p:close()
    os.remove(list)
    return out
  end
  for _, lua in ipairs({ "luajit", "lua5.1" }) do
    it("every .lua file under spec, lua, bench, tools, examples and bin/octonav loads on " .. lua, function()
      if not have(lua) then
        pending(lua .. " is not installed (tools/deps.sh installs it)")
        return
      end
      local out = parse_errors(lua)
      local n = tonumber(out:match("(%d+) files\n$"))
      assert.is_true(n ~= nil and n > 100, "the file list was read: " .. out)
      assert.are.equal(n .. " files\n", out)
    end)
  end
end)
