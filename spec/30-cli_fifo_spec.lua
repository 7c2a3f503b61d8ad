-- spec/30-cli_fifo_spec.lua -- the command line never blocks on a FIFO (lua/octonav/cli.lua,
-- lua/octonav/cli_view.lua): an input that is a FIFO (bench's map or scenario, view's pack manifest)
-- and an output that is one (view -o / --png, path --obj, bench --paths) are refused with the reason,
-- checked by stat before any open. Each command runs in a child under `timeout`, so a regression fails
-- (exit 124) instead of hanging the suite.
local LUA = os.getenv("OCTONAV_LUA") or "lua5.4" -- the Lua under test (tools/runtests.sh)
local core = require "octonav.core"

local dir -- a fresh directory per test: fifo (a FIFO), pack/manifest.txt (a FIFO), out.png (regular)

local function sh(cmd) return os.execute(cmd .. " 2>/dev/null") == true end

-- run bin/octonav with args in dir; exit code and stderr
local function octonav(args)
  local errf = dir .. "/stderr"
  local _, _, code = os.execute(("cd %s && timeout 20 " .. LUA .. " %s/bin/octonav %s >/dev/null 2>%s"):format(dir,
    os.getenv("PWD"), args, errf))
  local f = assert(io.open(errf, "rb"))
  local e = f:read("*a")
  f:close()
  return code, e
end

describe("octonav CLI and FIFOs", function()
  before_each(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(core.mkdir(dir .. "/pack"))
    if not (sh("mkfifo " .. dir .. "/fifo") and sh("mkfifo " .. dir .. "/pack/manifest.txt")) then dir = nil end
  end)
  after_each(function()
    if dir then sh("rm -rf " .. dir) end
  end)

  local function need_fifo()
    if not dir then pending("mkfifo is not available") end
    return dir ~= nil
  end

  it("refuses FIFO inputs: bench's map and scenario, view's pack manifest", function()
    if not need_fifo() then return end
    assert.same({ 1, "octonav: bench: fifo: not a regular file (a FIFO)\n" }, { octonav("bench fifo") })
    local f = assert(io.open(dir .. "/m.3dmap", "wb")) -- a regular map: its scenario is the FIFO
    f:write("type octile\n")
    f:close()
    assert.same({ 1, "octonav: bench: fifo: not a regular file (a FIFO)\n" }, { octonav("bench m.3dmap fifo") })
    assert.same({ 1, "octonav: view: pack/manifest.txt: not a regular file (a FIFO)\n" }, { octonav("view pack") })
    -- a missing input is still "no such file", not a FIFO's message
    local code, e = octonav("bench missing.3dmap")
    assert.equal(1, code)
    assert.equal("octonav: bench: missing.3dmap: No such file or directory\n", e)
  end)

  it("refuses FIFO outputs: view -o and --png, path --obj, bench --paths", function()
    if not need_fifo() then return end
    local msg = "octonav: %s: fifo: cannot write: not a regular file (a FIFO)\n"
    assert.same({ 1, msg:format("view") }, { octonav("view pack -o fifo") })
    assert.same({ 1, msg:format("view") }, { octonav("view pack --png fifo") })
    assert.same({ 1, msg:format("view") }, { octonav("view pack --png out.png -o fifo") })
    assert.same({ 1, msg:format("path") }, { octonav("path pack 1 2 3 4 5 6 --obj fifo") })
    assert.same({ 1, msg:format("bench") }, { octonav("bench missing.3dmap --paths fifo") })
    -- a character device is fine as an output (not blocked, not refused): the input's error comes first
    assert.same({ 1, "octonav: view: pack/manifest.txt: not a regular file (a FIFO)\n" },
      { octonav("view pack --png /dev/null") })
  end)
end)
