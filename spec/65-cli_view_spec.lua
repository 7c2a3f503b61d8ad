-- spec/65-cli_view_spec.lua -- issue 30 items 9 and 13 (lua/octonav/cli.lua, cli_view.lua, view*.lua):
-- every CLI error is one line (no traceback, no "attempt to ..."), a config that is a FIFO or a
-- device is refused at once, and what the viewer and the bake show a user.
local cli = require "octonav.cli"

local dir

local function sh(cmd) return os.execute(cmd .. " 2>/dev/null") == true end

-- bin/octonav with args, run in dir under `timeout` (a blocking read fails as exit code 124, it does
-- not hang the suite): exit code, stdout, stderr
local function octonav(args)
  local o, e = dir .. "/stdout", dir .. "/stderr"
  local _, _, code = os.execute(("cd %s && timeout 20 lua5.4 %s/bin/octonav %s >%s 2>%s"):format(dir,
    os.getenv("PWD"), args, o, e))
  local function slurp(p)
    local f = assert(io.open(p, "rb"))
    local s = f:read("a")
    f:close()
    return s
  end
  return code, slurp(o), slurp(e)
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
    assert.same({ 1, "octonav: fifo.lua: not a regular file (a FIFO)\n" }, { code, e })
    code, _, e = octonav("bake /dev/null")
    assert.same({ 1, "octonav: /dev/null: not a regular file (a character device)\n" }, { code, e })
    assert(sh("mkdir " .. dir .. "/d.lua"))
    code, _, e = octonav("bake d.lua")
    assert.same({ 1, "octonav: d.lua: not a regular file (a directory)\n" }, { code, e })
    code, _, e = octonav("bake missing.lua")
    assert.same({ 1, "octonav: missing.lua: No such file or directory\n" }, { code, e })
  end)

  it("--job N/M with a number past 2^63 is bad usage of --job, not a comparison with nil", function()
    write(dir .. "/c.lua", "return {}\n")
    for _, job in ipairs { "1/99999999999999999999", "99999999999999999999/3", "1/0", "3/3" } do
      local code, _, e = octonav("bake c.lua --job " .. job)
      assert.same({ 1, "octonav: octonav.bake: --job: N/M expected (job N of M, 0 <= N < M)\n" }, { code, e })
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
