-- spec/64-atomic_files_spec.lua -- issue 30 items 6 and 7: nothing published half written.
-- A write that fails (a full disk, a file size limit) or a process killed half way leaves the previous
-- file or pack as it was, and the failure carries the OS's reason: tree:export_obj (csrc/export.c),
-- bake and rebake (lua/octonav/bake.lua, lua/octonav/bake/publish.lua).
--
-- Two ways to make writes fail: a child process under a file size limit (`ulimit -f`: a write past it
-- fails with EFBIG "File too large" when SIGXFSZ is ignored, or kills the process when it is not: a
-- crash half way), which needs no privilege; and a small tmpfs (ENOSPC), mounted when the spec runs
-- as root where mount works, pending otherwise.
local core = require "octonav.core"

local root = os.getenv("PWD")
local build = os.getenv("OCTONAV_BUILD") or (root .. "/build")

local function sh(cmd) return os.execute(cmd .. " >/dev/null 2>&1") == true end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
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
  local ok = os.execute(("sh -c \"%sexec lua5.4 %s\" > %s 2>&1"):format(lim, script, outf))
  return read(outf) or "", ok == true
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
