-- spec/80-include_graph_spec.lua -- tools/include_graph.lua (the house's rules, run by `make lint`) on small
-- fake trees: a clean one passes; a circle of calls, a room including a higher one, an include of no file, a
-- room the layer table lacks and a file over 700 lines each fail, named in the output.
local function tmpdir()
  local p = assert(io.popen("mktemp -d"))
  local d = p:read("*l")
  p:close()
  return d
end

local function write(root, path, text)
  assert(os.execute("mkdir -p '" .. root .. "/" .. path:match("^(.*)/[^/]+$") .. "'"))
  local f = assert(io.open(root .. "/" .. path, "wb"))
  f:write(text)
  f:close()
end

-- runs the tool over root: its output and whether it exited 0
local function check(root)
  local p = assert(io.popen("lua5.4 tools/include_graph.lua --root '" .. root .. "' 2>&1"))
  local out = p:read("*a")
  local ok = p:close()
  return out, ok == true
end

-- a clean little house: core/a (a_get), search/b calling it, a test of b
local function clean_tree()
  local root = tmpdir()
  write(root, "csrc/core/a.h", '#ifndef A_H\n#define A_H\nint a_get(int x);\n#endif\n')
  write(root, "csrc/core/a.c", '#include "a.h"\n/* b_use( in a comment is no call */\nint a_get(int x) { return x + 1; }\n')
  write(root, "csrc/search/b.h", '#ifndef B_H\n#define B_H\n#include "a.h"\nint b_use(int x);\n#endif\n')
  write(root, "csrc/search/b.c", '#include "b.h"\nstatic const char *s = "a_get(";\n' ..
    'int b_use(int x) { (void)s; return a_get(x) * 2; }\n')
  write(root, "tests/minitest.h", "/* test helpers */\n")
  write(root, "tests/search/test_b.c", '#include "minitest.h"\n#include "b.h"\nint main(void) { return b_use(1) != 4; }\n')
  write(root, "lua/octonav/x.lua", "return {}\n")
  return root
end

describe("tools/include_graph.lua", function()
  local roots = {}
  local function tree()
    local r = clean_tree()
    roots[#roots + 1] = r
    return r
  end
  teardown(function()
    for _, r in ipairs(roots) do os.execute("rm -rf '" .. r .. "'") end
  end)

  it("passes a clean tree and says what it read", function()
    local out, ok = check(tree())
    assert.is_true(ok, out)
    assert.are.equal("include_graph: 6 C files in 4 units, no circle, no room includes a higher one, " ..
      "0 files over 700 lines (allowed while they are split)\n", out)
  end)

  it("fails on a circle of calls and names the files and the names that tie them", function()
    local root = tree()
    -- a calls c, c calls a back: a loop of two units in one room (includes alone are no circle)
    write(root, "csrc/core/a.c", '#include "a.h"\nint c_put(int x);\nint a_get(int x) { return c_put(x) + 1; }\n')
    write(root, "csrc/core/c.c", '#include "a.h"\nint c_put(int x);\nint c_put(int x) { return x > 0 ? a_get(x - 1) : 0; }\n')
    local out, ok = check(root)
    assert.is_false(ok)
    assert.are.equal("include_graph: circle of 2 units: csrc/core/a.[ch] csrc/core/c.c\n" ..
      "  the loop: csrc/core/a.[ch]\n" ..
      "    -> csrc/core/c.c (c_put)\n" ..
      "    -> csrc/core/a.[ch] (a_get)\n", out)
  end)

  it("counts a header's inline function as its unit's, and an ops table's initialiser as a use", function()
    local root = tree()
    write(root, "csrc/search/b.h", '#ifndef B_H\n#define B_H\n#include "a.h"\nint b_use(int x);\n' ..
      'int d_slow(int x);\nstatic inline int b_fast(int x) { return x ? x : d_slow(x); }\n#endif\n')
    write(root, "csrc/search/d.c", '#include "b.h"\nstatic int f(int x) { return b_fast(x); }\n' ..
      'int d_slow(int x) { return x; }\nconst struct { int (*fn)(int); } d_ops = {f};\n')
    write(root, "csrc/search/e.c", '#include "b.h"\nextern const struct { int (*fn)(int); } d_ops;\n' ..
      'const void *e_ops = &d_ops;\n')
    local out, ok = check(root)
    assert.is_false(ok)
    assert.are.equal("include_graph: circle of 2 units: csrc/search/b.[ch] csrc/search/d.c\n" ..
      "  the loop: csrc/search/b.[ch]\n" ..
      "    -> csrc/search/d.c (d_slow)\n" ..
      "    -> csrc/search/b.[ch] (b_fast)\n", out)
  end)

  it("fails on a room including a higher room or a side room", function()
    local root = tree()
    write(root, "csrc/core/a.c", '#include "a.h"\n#include "b.h"\nint a_get(int x) { return x + 1; }\n')
    write(root, "csrc/grid/g.c", '#include "b.h"\nint g_n(void) { return 0; }\n')
    local out, ok = check(root)
    assert.is_false(ok)
    assert.are.equal('include_graph: csrc/core/a.c:2: room core includes "b.h" of room search (a higher room ' ..
      'or a side one: core may include core)\n' ..
      'include_graph: csrc/grid/g.c:1: room grid includes "b.h" of room search (a higher room or a side one: ' ..
      'grid may include core, grid)\n', out)
  end)

  it("fails on an include of no file, a room the layers lack, a C file outside the rooms", function()
    local root = tree()
    write(root, "csrc/search/b.c", '#include "b.h"\n#include "nowhere.h"\nint b_use(int x) { return a_get(x); }\n')
    write(root, "csrc/attic/old.c", "int old(void) { return 0; }\n")
    write(root, "csrc/loose.c", "int loose(void) { return 0; }\n")
    local out, ok = check(root)
    assert.is_false(ok)
    assert.truthy(out:find("include_graph: csrc/loose.c: a C file outside the rooms (csrc/ROOM/NAME; csrc/README.md)\n",
      1, true), out)
    assert.truthy(out:find("include_graph: csrc/attic/old.c: room attic is not in tools/include_graph.lua's LAYERS " ..
      "(what it may include)\n", 1, true), out)
    assert.truthy(out:find('include_graph: csrc/search/b.c:2: #include "nowhere.h" names no file of a room ' ..
      "(nor of tests/)\n", 1, true), out)
  end)

  it("fails on a C or Lua file over 700 lines, and passes one of 700", function()
    local root = tree()
    write(root, "csrc/core/a.c", '#include "a.h"\nint a_get(int x) { return x + 1; }\n' .. ("\n"):rep(698))
    write(root, "lua/octonav/x.lua", "return {}\n" .. ("\n"):rep(699))
    local out, ok = check(root)
    assert.is_true(ok, out)
    write(root, "csrc/core/a.c", '#include "a.h"\nint a_get(int x) { return x + 1; }\n' .. ("\n"):rep(699))
    write(root, "lua/octonav/x.lua", "return {}\n" .. ("\n"):rep(700))
    out, ok = check(root)
    assert.is_false(ok)
    assert.are.equal("include_graph: csrc/core/a.c: 701 lines (at most 700: split it by concern)\n" ..
      "include_graph: lua/octonav/x.lua: 701 lines (at most 700: split it by concern)\n", out)
  end)

  it("passes the project's own tree", function()
    local out, ok = check(".")
    assert.is_true(ok, out)
  end)
end)
