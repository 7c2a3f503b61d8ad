-- spec/65-cli_view_spec.lua -- issue 30 items 9 and 13 (lua/octonav/cli.lua, cli_view.lua, view*.lua):
-- every CLI error is one line (no traceback, no "attempt to ..."), a config that is a FIFO or a
-- device is refused at once, and what the viewer and the bake show a user.
local LUA = os.getenv("OCTONAV_LUA") or "lua5.4" -- the Lua under test (tools/runtests.sh)
local cli = require "octonav.cli"

local dir

local function sh(cmd) return os.execute(cmd .. " 2>/dev/null") == true end

-- bin/octonav with args, run in dir under `timeout` (a blocking read fails as exit code 124, it does
-- not hang the suite): exit code, stdout, stderr
local function octonav(args)
  local o, e = dir .. "/stdout", dir .. "/stderr"
  local _, _, code = os.execute(("cd %s && timeout 20 " .. LUA .. " %s/bin/octonav %s >%s 2>%s"):format(dir,
    os.getenv("PWD"), args, o, e))
  local function slurp(p)
    local f = assert(io.open(p, "rb"))
    local s = f:read("*a")
    f:close()
    return s
  end
  return code, slurp(o), slurp(e)
end

local function read_all(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

describe("octonav CLI: one line per error (issue 30, item 9)", function()
  before_each(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(sh("mkdir -p " .. dir))
  end)
  after_each(function() sh("rm -rf " .. dir) end)

  it("refuses a config that is a FIFO, a device or a directory without reading it", function()
    if not sh("mkfifo " .. dir .. "/fifo.lua") then return pending("mkfifo is not available") end
    local code, _, e = octonav("bake fifo.lua")
    assert.same({ 1, "octonav: bake: fifo.lua: not a regular file (a FIFO)\n" }, { code, e })
    code, _, e = octonav("bake /dev/null")
    assert.same({ 1, "octonav: bake: /dev/null: not a regular file (a character device)\n" }, { code, e })
    assert(sh("mkdir " .. dir .. "/d.lua"))
    code, _, e = octonav("bake d.lua")
    assert.same({ 1, "octonav: bake: d.lua: not a regular file (a directory)\n" }, { code, e })
    code, _, e = octonav("bake missing.lua")
    assert.same({ 1, "octonav: bake: missing.lua: No such file or directory\n" }, { code, e })
  end)

  it("--job N/M with a number past 2^63 is bad usage of --job, not a comparison with nil", function()
    write(dir .. "/c.lua", "return {}\n")
    for _, job in ipairs { "1/99999999999999999999", "99999999999999999999/3", "1/0", "3/3" } do
      local code, _, e = octonav("bake c.lua --job " .. job)
      assert.same({ 1, "octonav: bake: --job " .. job .. ": N/M expected (job N of M, 0 <= N < M)\n" }, { code, e })
    end
  end)

  it("an empty PACK or input is bad usage (exit code 2), with no traceback", function()
    for _, cmd in ipairs { "info", "validate" } do
      local code, o, e = octonav(cmd .. " ''")
      assert.equal(2, code)
      assert.equal("", o)
      assert.equal(("octonav: %s: PACK: an empty path\nusage: octonav %s PACK\n"):format(cmd, cmd),
        e:match("^[^\n]*\n[^\n]*\n"))
      assert.is_nil(e:find("traceback", 1, true))
    end
    local code, _, e = octonav("path '' 1 2 3 4 5 6")
    assert.equal(2, code)
    assert.equal("octonav: path: PACK: an empty path\n", e:match("^[^\n]*\n"))
    code, _, e = octonav("bake ''")
    assert.equal(2, code)
    assert.equal("octonav: bake: CONFIG.lua: an empty path\n", e:match("^[^\n]*\n"))
    code, _, e = octonav("view ''")
    assert.equal(2, code)
    assert.equal("octonav: view: the input is an empty path\n", e:match("^[^\n]*\n"))
  end)

  it("an error raised inside a command is one line naming the command, without its Lua position", function()
    local lines = {}
    local saved_out, saved_err = cli.stdout, cli.stderr
    cli.stdout = { write = function() error("the terminal went away") end }
    cli.stderr = { write = function(_, ...) lines[#lines + 1] = table.concat { ... } end }
    local ok, code = pcall(cli.main, "bench-tree", { dir .. "/none" })
    cli.stdout, cli.stderr = saved_out, saved_err
    assert.is_true(ok)
    assert.equal(1, code)
    assert.equal("octonav: bench-tree: the terminal went away\n", table.concat(lines))
  end)
end)

-- ---- what misleads a user on screen (issue 30, item 13) -------------------------------------------

-- A config file for spec/support/bakedworld.lua's world (two tiles, a cave with two doors) into
-- dir/pack; leaky: the cave's bounds reach past its walls, so each door's outside point lies inside
-- them and the sealing floods in through both doorways.
local function cave_config(leaky)
  local f = dir .. (leaky and "/leaky.lua" or "/cave.lua")
  write(f, ([[
local c = dofile(%q).config(%q)
if %s then
  local h = c.holes[1]
  h.min, h.max = { 3, 2, 4 }, { 13, 10, 12 }
  h.doors[1].outside, h.doors[2].outside = { 3.25, 6, 8 }, { 12.75, 6, 8 }
end
return c
]]):format(os.getenv("PWD") .. "/spec/support/bakedworld.lua", dir .. "/pack", tostring(leaky)))
  return f
end

describe("octonav view and bake, what the user sees (issue 30, item 13)", function()
  before_each(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(sh("mkdir -p " .. dir))
  end)
  after_each(function() sh("rm -rf " .. dir) end)

  it("view --path into a cave routes the world as `octonav path` does", function()
    local code, o, e = octonav("bake " .. cave_config(false))
    assert.same({ 0, "" }, { code, e })
    assert.truthy(o:find("^baked "))
    -- octonav path: into the cave through door 1
    code, o = octonav("path pack 1 6 8 8 6 8")
    assert.equal(0, code)
    assert.truthy(o:find("\npath: 4 points, length 7 [^\n]*\n  %(1, 6, 8%)\n  %(3%.5, 6, 8%)\n  %(5%.5, 6, 8%)\n  %(8, 6, 8%)\n$"), o)
    -- the viewer draws that path (it searched the world tree, where the cave is blocked: goal_blocked)
    code, o, e = octonav("view pack --path 1 6 8 8 6 8 --png v.png")
    assert.same({ 0, "v.png: 32x16\n", "" }, { code, o, e })
    code, o, e = octonav("view pack --path 1 6 8 8 6 8 30 6 8 -o v.html --corridor")
    assert.same({ 0, "" }, { code, e })
    assert.truthy(o:find("^v%.html: octonav%.view: "), o)
    local w = assert(require("octonav.world").load(dir .. "/pack"))
    local pts = assert(require("octonav.cli_view").find_leg({ tree = w.tree, world = w }, { 1, 6, 8 }, { 8, 6, 8 }))
    assert.same({ { 1, 6, 8 }, { 3.5, 6, 8 }, { 5.5, 6, 8 }, { 8, 6, 8 } }, pts)
    w:close()
    -- still a one-line reason where there is no route
    code, o, e = octonav("view pack --path 1 6 8 40 6 8 --png v.png")
    assert.same({ 1, "octonav: view: no route from (1, 6, 8) to (40, 6, 8): goal_outside\n" }, { code, e })
    assert.equal("", o)
  end)

  it("view's page and PNG and path --obj are written beside and renamed: a failure leaves the old file", function()
    local code = octonav("bake " .. cave_config(false))
    assert.equal(0, code)
    -- bin/octonav under a file size limit of `blocks` 512-byte blocks (a write past it fails: EFBIG),
    -- its output through a pipe
    local function limited(args, blocks)
      local outf = dir .. "/limited.out"
      os.execute(("cd %s && (sh -c \"trap '' XFSZ; ulimit -f %d; exec " .. LUA .. " %s/bin/octonav %s\" 2>&1; echo \"exit $?\")"
        .. " | cat > %s"):format(dir, blocks, os.getenv("PWD"), args, outf))
      return read_all(outf)
    end
    local cases = {
      { "view pack --path 1 6 8 8 6 8 30 6 8 -o v.html", "v.html", "octonav: view: v.html: cannot write: File too large\n" },
      { "view pack --png v.png --slice y=6", "v.png", "octonav: view: v.png: cannot write: File too large\n" },
    }
    for _, c in ipairs(cases) do
      local full = octonav(c[1])
      assert.equal(0, full)
      local good = read_all(dir .. "/" .. c[2])
      assert.is_true(#good > 1024, c[2] .. " " .. #good)
      assert.equal(c[3] .. "exit 1\n", limited(c[1], 2))
      assert.equal(good, read_all(dir .. "/" .. c[2]))
    end
    -- path --obj: its OBJ is small, written under a limit of 0 bytes
    local args = "path pack 1 6 8 8 6 8 --obj p.obj"
    assert.equal(0, (octonav(args)))
    local good = read_all(dir .. "/p.obj")
    assert.truthy(good:find("^# octonav path %(1, 6, 8%) %-> %(8, 6, 8%)"), good)
    local o = limited(args, 0)
    assert.truthy(o:find("\noctonav: path: p.obj: cannot write: File too large\n", 1, true) or
      o:find("^octonav: path: p.obj: cannot write: File too large\n"), o) -- stderr among the route's lines
    assert.equal("1", o:match("exit (%d+)\n$"))
    assert.equal(good, read_all(dir .. "/p.obj"))
    local p = io.popen("ls -A '" .. dir .. "'")
    local listing = p:read("*a")
    p:close()
    assert.is_nil(listing:find(".tmp.", 1, true), listing) -- no temporary left behind
  end)

  it("a bake whose holes leak at every door says so on stderr (and still succeeds)", function()
    local code, o, e = octonav("bake " .. cave_config(true))
    assert.equal(0, code)
    assert.truthy(o:find("^baked "))
    assert.equal(("octonav: bake: warning: hole cave: 2 of 2 doors not ok, 2 leaking (the sealing reached the "
      .. "inside) (octonav validate %s/pack)\n"):format(dir), e)
  end)

  it("the bake's hole check opens only the tiles the holes need and reports what a full load reports", function()
    for _, leaky in ipairs { false, true, "wide" } do
      if leaky == "wide" then -- the hole across both tiles, its second door's outside point in tile 1
        local f = cave_config(true)
        write(f, (read_all(f):gsub("{ 13, 10, 12 }", "{ 20, 10, 12 }"):gsub("{ 12.75, 6, 8 }", "{ 19.75, 6, 8 }")))
        assert.equal(0, (octonav("bake " .. f)))
        local w = assert(cli.hole_world(dir .. "/pack"))
        assert.equal(2, #w.holes[1].tiles)
        w:close()
      else
        assert.equal(0, (octonav("bake " .. cave_config(leaky))))
      end
      local W = require "octonav.world"
      local full = assert(W.load(dir .. "/pack"))
      local part = assert(cli.hole_world(dir .. "/pack"))
      local want, got = full:validate(), part:validate()
      assert.same(want, got)
      assert.equal(not leaky, got.ok)
      local n, of = part.tree:stats().tiles_loaded, full.tree:stats().tiles_loaded
      local need = {}
      for _, t in ipairs(part.holes[1].tiles) do need[t] = true end
      local count = 0
      for _ in pairs(need) do count = count + 1 end
      assert.equal(count, n) -- (the doors' outside points lie in the hole's tiles here)
      assert.is_true(leaky == "wide" or n < of, n .. " of " .. of)
      full:close()
      part:close()
    end
  end)

  it("the page shows why it stays blank without WebGL2; view --help gives the Chromium flags", function()
    local code, o = octonav("view --help")
    assert.equal(0, code)
    assert.truthy(o:find("chromium --use-angle=swiftshader --enable-unsafe-swiftshader FILE.html", 1, true), o)
    local page = require("octonav.view").new { title = "t" }
    assert(page:write(dir .. "/p.html"))
    local html = read_all(dir .. "/p.html")
    assert.truthy(html:find('<div id="fatal"></div>', 1, true))
    local chromium
    for _, name in ipairs { "chromium", "chromium-browser" } do
      local p = io.popen("command -v " .. name .. " 2>/dev/null")
      local path = p:read("*l")
      p:close()
      if path and path ~= "" then chromium = path break end
    end
    if not chromium then return pending("chromium is not installed: the page is not rendered without WebGL") end
    local p = io.popen(("env -u LD_PRELOAD timeout 120 %s --headless --no-sandbox --disable-gpu --disable-webgl "
      .. "--dump-dom 'file://%s/p.html' 2>/dev/null"):format(chromium, dir))
    local dom = p:read("*a")
    p:close()
    assert.truthy(dom:find('<div id="fatal" style="display: block;">WebGL2 is not available in this browser, '
      .. "so the nav data cannot be drawn.\n", 1, true), dom:sub(-600))
  end)
end)
