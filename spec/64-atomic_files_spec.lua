-- spec/64-atomic_files_spec.lua -- issue 30 items 6 and 7: nothing published half written.
-- A write that fails (a full disk, a file size limit) or a process killed half way leaves the previous
-- file or pack as it was, and the failure carries the OS's reason: tree:export_obj (csrc/core/export.c),
-- bake and rebake (lua/octonav/bake.lua, lua/octonav/bake/publish.lua).
--
-- Two ways to make writes fail: a child process under a file size limit (`ulimit -f`: a write past it
-- fails with EFBIG "File too large" when SIGXFSZ is ignored, or kills the process when it is not: a
-- crash half way), which needs no privilege; and a small tmpfs (ENOSPC), mounted when the spec runs
-- as root where mount works, pending otherwise.
local LUA = os.getenv("OCTONAV_LUA") or "lua5.4" -- the Lua under test (tools/runtests.sh)
local core = require "octonav.core"

local root = os.getenv("PWD")
local build = os.getenv("OCTONAV_BUILD") or (root .. "/build")

local function sh(cmd) return os.execute(cmd .. " >/dev/null 2>&1") == true end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

local function tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(core.mkdir(d))
  return d
end

-- Runs the Lua chunk `code` in a child (the module from this build) under a file size limit of
-- `blocks` 512-byte blocks (none when nil); kill: the child dies of SIGXFSZ at the first write past
-- the limit instead of seeing EFBIG. Returns the child's stdout and whether it exited 0.
local function child(dir, code, blocks, kill)
  local script = dir .. "/child.lua"
  write(script, ("package.path = %q .. package.path\npackage.cpath = %q .. package.cpath\n%s\n"):format(
    root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;", build .. "/?.so;", code))
  local lim = blocks and ("%s ulimit -f %d; "):format(kill and "" or "trap '' XFSZ;", blocks) or ""
  local outf = dir .. "/child.out"
  -- the output through a pipe (no file size limit on it), the exit code after it
  os.execute(("(sh -c \"%sexec " .. LUA .. " %s\" 2>&1; echo \"exit $?\") | cat > %s"):format(lim, script, outf))
  local o = read(outf) or ""
  local text, rc = o:match("^(.-)exit (%d+)\n$")
  return text or o, rc == "0"
end

-- the names in a directory (ls -A), sorted
local function names(dir)
  local p = io.popen("ls -A '" .. dir .. "' 2>/dev/null")
  local t = {}
  for l in p:lines() do t[#t + 1] = l end
  p:close()
  return table.concat(t, " ")
end

-- a tree whose exports run to a few kilobytes
local TREE = [[
local core = require "octonav.core"
local t = core.tree.new { tiles = { 2, 1, 2 }, depth = 5 }
for i = 0, 30 do t:add_box({ i + 0.2, 0.1, 0.3 }, { i + 0.6, 3.5 + (i % 5), 7.7 }) end
]]

-- a tmpfs of `size` at a fresh directory, or nil, why not
local function tmpfs(size)
  local d = tmpdir()
  if not sh(("mount -t tmpfs -o size=%s tmpfs '%s'"):format(size, d)) then
    os.remove(d)
    return nil, "cannot mount a tmpfs here (not root, or no mount): the full-disk case runs where it can"
  end
  return d
end
local function unmount(d)
  sh(("umount '%s'"):format(d))
  os.remove(d)
end

describe("tree:export_obj writes beside and renames (issue 30, item 7)", function()
  local dir
  before_each(function() dir = tmpdir() end)
  after_each(function() sh("rm -rf '" .. dir .. "'") end)

  it("a write that fails leaves the previous export whole and says why (file size limit)", function()
    local out = dir .. "/x.obj"
    for _, form in ipairs { "surface", "boxes" } do
      local o, ok = child(dir, TREE .. ("print(t:export_obj(%q, { form = %q }))"):format(out, "surface"))
      assert.is_true(ok, o)
      local good = read(out)
      assert.is_true(#good > 3000, #good)
      -- either form of the free cells is larger than 2 KB: it fails past the limit
      o, ok = child(dir, TREE .. ("print(t:export_obj(%q, { form = %q, what = 'free' }))"):format(out, form), 4)
      assert.is_true(ok, o)
      assert.equal(("nil\t%s: cannot write: File too large\n"):format(out), o)
      assert.equal(good, read(out))
      assert.equal("child.lua child.out x.obj", names(dir)) -- no temporary left behind
    end
  end)

  it("a device is written in place and its error is the OS's (/dev/full)", function()
    local t = core.tree.new { tiles = { 1, 1, 1 }, depth = 3 }
    t:add_box({ 0.1, 0.1, 0.1 }, { 3.5, 3.5, 3.5 })
    assert.same({ nil, "/dev/full: cannot write: No space left on device" }, { t:export_obj("/dev/full") })
    assert.same({ nil, "/dev/full: cannot write: No space left on device" },
      { t:export_obj("/dev/full", { form = "boxes" }) })
    assert.same({ nil, dir .. "/no/x.obj: cannot write: No such file or directory" },
      { t:export_obj(dir .. "/no/x.obj") })
    t:close()
  end)

  it("on a full disk (tmpfs) the previous export stays and the reason is ENOSPC", function()
    local fs, why = tmpfs("64k")
    if not fs then return pending(why) end
    local ok, err = pcall(function()
      local out = fs .. "/x.obj"
      local o = child(dir, TREE .. ("print(t:export_obj(%q))"):format(out))
      local good = read(out)
      assert.is_truthy(o:match("^%d+\t%d+\n$"), o)
      -- fill the disk but 4 KB (a page): the boxes of the free cells do not fit
      sh(("dd if=/dev/zero of='%s/fill' bs=1k count=%d"):format(fs, 64 - 4 - 4))
      o = child(dir, TREE .. ("print(t:export_obj(%q, { form = 'boxes', what = 'free' }))"):format(out))
      assert.equal(("nil\t%s: cannot write: No space left on device\n"):format(out), o)
      assert.equal(good, read(out))
      assert.equal("fill x.obj", names(fs))
    end)
    unmount(fs)
    assert(ok, err)
  end)
end)

-- ---- bake and rebake (issue 30, item 6) ----------------------------------------------------------

-- Config file text for variant v (1 or 2) of a 4 x 1 x 2 world of 16-unit tiles with one hole: the
-- same grid and hole, other pillars (a different count in each tile: tile files of many sizes).
local function config_text(out, v)
  local geo = { "{ box = { min = { 0, 0, 0 }, max = { 64, 1, 32 } } }" }
  for i = 0, 3 do
    for k = 0, 1 do
      for n = 1, 3 * ((i + 2 * k + v) % 5) + 1 do
        local x, z = i * 16 + 0.5 + 0.9 * n + 0.3 * v, k * 16 + 1 + 0.8 * n + 0.1 * (n % 3)
        geo[#geo + 1] = ("{ box = { min = { %g, 0, %g }, max = { %g, %d, %g } } }"):format(x, z, x + 0.6 + 0.3 * v,
          3 + n + v, z + 0.7)
      end
    end
  end
  return ([[return { range = { min = { 0, 0, 0 }, max = { 64, 16, 32 } }, depth = 6, scale = 0.25, output = %q,
  geometry = { %s },
  holes = { { name = "den", min = { 40, 1, 20 }, max = { 48, 9, 28 }, scale = 0.5, kind = "under_terrain",
    doors = { { inside = { 41.5, 5, 24 }, outside = { 39.5, 5, 24 } } } } } }
]]):format(out, table.concat(geo, ",\n  "))
end

-- Every file of the pack at dir by its name in the pack ("manifest.txt", "tiles/0_0_0.tile", ...) ->
-- "size:crc32" (bit for bit, short in a failure's output), and the loaded world's tree as `save`
-- writes it ("tree.save"), or the reason it does not load.
local function snapshot(dir)
  local pack, world = require "octonav.pack", require "octonav.world"
  local s = {}
  local function add(name)
    local bytes = read(dir .. "/" .. name)
    s[name] = bytes and ("%d:%08x"):format(#bytes, core.crc32(bytes)) or "missing"
  end
  add("manifest.txt")
  for k = 0, 1 do
    for i = 0, 3 do
      add(pack.tile_name(i, 0, k))
      add(pack.graph_name(i, 0, k))
    end
  end
  add("holes/den.tree")
  local w, err = world.load(dir, { tiles = true })
  if not w then
    s["tree.save"] = "does not load: " .. tostring(err)
  else
    local tmp = os.tmpname()
    assert(w.tree:save(tmp))
    local bytes = read(tmp)
    s["tree.save"] = ("%d:%08x"):format(#bytes, core.crc32(bytes))
    os.remove(tmp)
    w:close()
  end
  return s
end

-- a region over tiles 0,0,0 and 1,0,0 only (the rebake grows it by the radius and half a leaf)
local REGION = "{ min = { 2, 2, 2 }, max = { 28, 12, 12 } }"

describe("bake and rebake publish whole or not at all (issue 30, item 6)", function()
  local dir, P, cfgA, cfgB, snapA, snapB, sizes
  before_each(function()
    dir = tmpdir()
    P = dir .. "/pack"
    cfgA, cfgB = dir .. "/a.lua", dir .. "/b.lua"
    write(cfgA, config_text(P, 1))
    write(cfgB, config_text(P, 2))
    -- the two bakes as references: A into P, B into dir/b
    write(dir .. "/bref.lua", config_text(dir .. "/b", 2))
    assert(sh((LUA .. " %s/bin/octonav bake %s"):format(root, cfgA)))
    assert(sh((LUA .. " %s/bin/octonav bake %s/bref.lua"):format(root, dir)))
    snapA, snapB = snapshot(P), snapshot(dir .. "/b")
    sizes = {}
    for name, v in pairs(snapB) do
      if name ~= "tree.save" then sizes[#sizes + 1] = tonumber(v:match("^(%d+)")) end
    end
    table.sort(sizes)
  end)
  after_each(function() sh("rm -rf '" .. dir .. "'") end)

  local function bake_child(blocks, kill)
    return child(dir, ("arg = { [0] = %q, 'bake', %q }\nos.exit(dofile(%q) and 0)"):format(
      root .. "/bin/octonav", cfgB, root .. "/bin/octonav"), blocks, kill)
  end

  it("a bake that fails or dies at any file leaves the old bake, bit for bit; one that ends, the new one", function()
    assert.are_not.same(snapA, snapB)
    for name, v in pairs(snapA) do
      if name:match("^tiles/.*%.tile$") then assert.are_not.equal(snapB[name], v, name) end
    end
    -- limits between the file sizes of bake B: the first file over the limit fails (EFBIG) or kills
    local limits, partial = {}, 0
    for n = 1, #sizes - 1 do
      local b = math.floor(sizes[n] / 512)
      if b * 512 < sizes[#sizes] and b ~= limits[#limits] then limits[#limits + 1] = b end
    end
    assert.is_true(#limits >= 3, #limits)
    for _, kill in ipairs { false, true } do
      for _, blocks in ipairs(limits) do
        local o, ok = bake_child(blocks, kill)
        assert.is_false(ok, o)
        if not kill then assert.truthy(o:find(": cannot write: File too large", 1, true), o) end
        assert.same(snapA, snapshot(P))
        -- what was written before the failure: a stage beside the pack when killed (removed on EFBIG)
        local left = names(dir):match("pack%.stage%.%w+")
        assert.equal(kill, left ~= nil, names(dir))
        if left then
          for name, v in pairs(snapshot(dir .. "/" .. left)) do
            if name:match("^tiles/") and v == snapB[name] then
              partial = partial + 1
              break
            end
          end
          sh(("rm -rf '%s/%s'"):format(dir, left))
        end
      end
    end
    assert.is_true(partial >= 2, partial) -- crashes half way, after some of B's files were written
    local o, ok = bake_child(nil)
    assert.is_true(ok, o)
    assert.same(snapB, snapshot(P))
    assert.equal("a.lua b b.lua bref.lua child.lua child.out pack", names(dir))
  end)

  it("bake jobs over an old pack: the pack does not load from their first file to the link step", function()
    local function job(args, blocks)
      return child(dir, ("arg = { [0] = %q, 'bake', %q, %s }\nos.exit(dofile(%q) and 0)"):format(root .. "/bin/octonav",
        cfgB, args, root .. "/bin/octonav"), blocks)
    end
    -- job 0 of 2 failing at its second tile (EFBIG): before, the old manifest loaded a mix
    local o, ok = job("'--job', '0/2'", math.floor(snapB["tiles/1_0_0.tile"]:match("^%d+") / 512))
    assert.is_false(ok, o)
    assert.truthy(o:find(": cannot write: File too large", 1, true), o)
    local s = snapshot(P)
    assert.equal(("does not load: %s/manifest.txt: No such file or directory"):format(P), s["tree.save"])
    assert.equal("missing", s["manifest.txt"])
    -- both jobs, then the link: bake B exactly
    for _, args in ipairs { "'--job', '0/2'", "'--job', '1/2'" } do
      o, ok = job(args)
      assert.is_true(ok, o)
      assert.equal("missing", snapshot(P)["manifest.txt"])
    end
    o, ok = job("'--link'")
    assert.is_true(ok, o)
    assert.same(snapB, snapshot(P))
  end)

  it("world:rebake that fails leaves the pack as it was; one that ends rewrites exactly its tiles", function()
    local code = ([[
local world, cli = require "octonav.world", require "octonav.cli"
local w = assert(world.load(%q))
local s, err = w:rebake(%s, assert(cli.load_config(%q)))
print(s and table.concat(s.rebaked, ",") or err)
os.exit(s and 0 or 1)]]):format(P, REGION, cfgB)
    -- the limit under the second rebaked tile file: the first tile and its graph are written, then
    -- the second tile fails (no limit: everything fails at its first file)
    local second = math.floor(snapB["tiles/1_0_0.tile"]:match("^%d+") / 512)
    assert.is_true(tonumber(snapB["tiles/0_0_0.tile"]:match("^%d+")) <= second * 512)
    for _, blocks in ipairs { 0, second } do
      local o, ok = child(dir, code, blocks)
      assert.is_false(ok, o)
      assert.truthy(o:find(": cannot write: File too large", 1, true), o)
      assert.same(snapA, snapshot(P))
      assert.equal("a.lua b b.lua bref.lua child.lua child.out pack", names(dir))
    end
    local o, ok = child(dir, code)
    assert.is_true(ok, o)
    assert.equal("0,1\n", o)
    local want = {}
    for name, v in pairs(snapA) do want[name] = v end
    for _, name in ipairs { "tiles/0_0_0.tile", "tiles/0_0_0.graph", "tiles/1_0_0.tile", "tiles/1_0_0.graph" } do
      want[name] = snapB[name]
    end
    local got = snapshot(P)
    want["tree.save"] = got["tree.save"] -- two tiles of B among A's: checked file by file
    assert.same(want, got)
    assert.are_not.equal(snapA["tree.save"], got["tree.save"])
  end)

  it("on a full disk (tmpfs) bake and world:rebake fail with ENOSPC and leave the old bake", function()
    local fs, why = tmpfs("4m")
    if not fs then return pending(why) end
    local ok, err = pcall(function()
      local world, cli = require "octonav.world", require "octonav.cli"
      local bake = require "octonav.bake"
      local Pf = fs .. "/pack"
      local a = assert(cli.load_config(cfgA))
      a.output, a.progress = Pf, function() end
      assert(bake.run(a))
      assert.same(snapA, snapshot(Pf))
      -- the disk full but two pages (two small files: a rewrite in place would fit, a new copy does not)
      sh(("{ dd if=/dev/zero of='%s/fill' bs=4k; truncate -s -8K '%s/fill'; }"):format(fs, fs))
      local b = assert(cli.load_config(cfgB))
      b.output, b.progress = Pf, function() end
      local s, e = bake.run(b)
      assert.is_nil(s)
      assert.truthy(e:find(": cannot write: No space left on device", 1, true), e)
      assert.same(snapA, snapshot(Pf))
      assert.equal("fill pack", names(fs))
      local w = assert(world.load(Pf))
      s, e = w:rebake(require("octonav.compat").load("return " .. REGION)(), b) -- (compat.load: a string on 5.1)
      assert.is_nil(s)
      assert.truthy(e:find(": cannot write: No space left on device", 1, true), e)
      w:close()
      assert.same(snapA, snapshot(Pf))
      assert.equal("fill pack", names(fs))
      os.remove(fs .. "/fill")
      assert(bake.run(b))
      assert.same(snapB, snapshot(Pf))
      assert.equal("pack", names(fs))
    end)
    unmount(fs)
    assert(ok, err)
  end)
end)
