-- spec/91-lua_layout_spec.lua -- the Lua side of the house (issue 32): no library file over 700 lines,
-- each opens with a comment saying its job, no benchmark code in the library's module tree (the
-- benchmarks are in bench/lua/, which the rockspec and `make install` do not ship), and the CLI's
-- bench commands saying what to do where bench/lua/ is absent (an installed octonav).
local function lines_of(cmd)
  local out, p = {}, assert(io.popen(cmd))
  for line in p:lines() do out[#out + 1] = line end
  p:close()
  return out
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

describe("lua/octonav/", function()
  local files = lines_of("find lua -name '*.lua' | sort")

  it("has no file over 700 lines", function()
    assert.is_true(#files >= 30, "files found: " .. #files)
    local long = {}
    for _, path in ipairs(files) do
      local _, n = read(path):gsub("\n", "")
      if n > 700 then long[#long + 1] = ("%s: %d lines"):format(path, n) end
    end
    assert.are.same({}, long)
  end)

  it("opens every file with a comment saying its job", function()
    local bare = {}
    for _, path in ipairs(files) do
      local first = read(path):match("^[^\n]*")
      if not first:match("^%-%-%-? %S") then bare[#bare + 1] = path .. ": " .. first end
    end
    assert.are.same({}, bare)
  end)

  it("holds no benchmark module, and neither the rockspec nor make install ships one", function()
    local bench = {}
    for _, path in ipairs(files) do
      if path:match("/bench[^/]*%.lua$") then bench[#bench + 1] = path end
    end
    assert.are.same({}, bench)
    assert.is_nil(read("octonav-scm-1.rockspec"):find("octonav.bench", 1, true))
    assert.is_truthy(io.open("bench/lua/octonav/bench.lua", "rb"))
    assert.is_truthy(io.open("bench/lua/octonav/bench_world.lua", "rb"))
  end)
end)

describe("the CLI's bench commands without bench/lua/ (an installed octonav)", function()
  local cli = require "octonav.cli"
  local function run(root, argv)
    local saved = { cli.root, cli.stdout, cli.stderr, package.loaded["octonav.bench"],
      package.loaded["octonav.bench_world"], package.path }
    local out, err = {}, {}
    cli.stdout = { write = function(_, ...) for _, s in ipairs { ... } do out[#out + 1] = s end end }
    cli.stderr = { write = function(_, ...) for _, s in ipairs { ... } do err[#err + 1] = s end end }
    cli.root = root
    package.loaded["octonav.bench"], package.loaded["octonav.bench_world"] = nil, nil
    package.path = "lua/?.lua;lua/?/init.lua" -- (busted's own path names bench/lua/)
    local code = cli.run(argv)
    cli.root, cli.stdout, cli.stderr = saved[1], saved[2], saved[3]
    package.loaded["octonav.bench"], package.loaded["octonav.bench_world"], package.path = saved[4], saved[5], saved[6]
    return code, table.concat(out), table.concat(err)
  end

  it("fail saying where the benchmarks are, exit code 1", function()
    local root = os.tmpname()
    for _, c in ipairs { { "bench-world", "octonav.bench_world" }, { "bench-tree", "octonav.bench" },
                         { "bench-all", "octonav.bench" }, { "bench", "octonav.bench" } } do
      local code, out, err = run(root, { c[1] })
      assert.are.equal(1, code)
      assert.are.equal("", out)
      assert.are.equal(("octonav: %s: %s/bench/lua/%s.lua not found: the benchmarks are in octonav's source tree "
        .. "(bench/lua/), not in an installed octonav; run bin/octonav from a clone of the source tree\n")
        :format(c[1], root, (c[2]:gsub("%.", "/"))), err)
    end
    os.remove(root)
  end)

  it("still print their usage there", function()
    local code, out = run(os.tmpname(), { "bench-world", "--help" })
    assert.are.equal(0, code)
    assert.are.equal("usage: octonav bench-world", out:match("^usage: octonav bench%-world"))
  end)

  it("find them from the source tree", function()
    local code, out, err = run(".", { "bench-tree", "/nonexistent" })
    assert.are.equal(0, code)
    assert.are.equal("bench: no voxel maps in /nonexistent: skipped\n", out)
    assert.are.equal("", err)
  end)
end)
