-- spec/72-cli_version_spec.lua -- the command line's version (--version, -V, version: the same line,
-- exit code 0) and the benchmark tables' writer (octonav.bench.write_section: the section between its
-- markers replaced, the file written beside and renamed, nothing changed when the markers are absent
-- or the file cannot be written).
-- Run: busted --lua=lua5.4 spec/72-cli_version_spec.lua
local cli = require "octonav.cli"
local bench = require "octonav.bench"
local core = require "octonav.core"

local function run(args)
  local out, errs = {}, {}
  local so, se = cli.stdout, cli.stderr
  cli.stdout = { write = function(_, ...) for _, s in ipairs { ... } do out[#out + 1] = s end end }
  cli.stderr = { write = function(_, ...) for _, s in ipairs { ... } do errs[#errs + 1] = s end end }
  local ok, code = pcall(cli.run, args)
  cli.stdout, cli.stderr = so, se
  assert(ok, code)
  return code, table.concat(out), table.concat(errs)
end

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

describe("octonav's version", function()
  it("answers --version, -V and version with one line, exit code 0", function()
    for _, a in ipairs { "--version", "-V", "version" } do
      local code, out, errs = run { a }
      assert.same({ 0, "octonav " .. core.version .. "\n", "" }, { code, out, errs })
    end
    local code, out = run { "--help" }
    assert.equal(0, code)
    assert.truthy(out:find("octonav --help | --version (-V, version)", 1, true))
    local c2, _, e2 = run { "-v" }
    assert.equal(2, c2)
    assert.truthy(e2:find("unknown command '-v'", 1, true))
  end)
end)

describe("octonav.bench.write_section", function()
  local path
  before_each(function() path = os.tmpname() end)
  after_each(function()
    os.remove(path)
    os.remove(path .. ".tmp")
  end)

  it("replaces the text between the markers and leaves the rest", function()
    local f = assert(io.open(path, "wb"))
    f:write("# head\n<!-- bench:t -->\nold\nlines\n<!-- /bench:t -->\ntail\n")
    f:close()
    assert.is_true(bench.write_section(path, "t", "| new |"))
    assert.equal("# head\n<!-- bench:t -->\n| new |\n<!-- /bench:t -->\ntail\n", slurp(path))
    local ok, err = bench.write_section(path, "other", "x")
    assert.is_nil(ok)
    assert.equal("markers for other not found in " .. path, err)
    assert.equal("# head\n<!-- bench:t -->\n| new |\n<!-- /bench:t -->\ntail\n", slurp(path))
    assert.is_nil(io.open(path .. ".tmp", "rb"))
  end)

  it("leaves the file as it was when the new text cannot be written beside it", function()
    local f = assert(io.open(path, "wb"))
    f:write("<!-- bench:t -->\nold\n<!-- /bench:t -->\n")
    f:close()
    assert(os.execute("mkdir " .. path .. ".tmp")) -- (a directory where the temporary file goes)
    local ok, err = bench.write_section(path, "t", "new")
    os.execute("rmdir " .. path .. ".tmp")
    assert.is_nil(ok)
    assert.truthy(err:find(path .. ".tmp", 1, true), err)
    assert.equal("<!-- bench:t -->\nold\n<!-- /bench:t -->\n", slurp(path))
    assert.same({ nil, "cannot read /nonexistent/b.md" }, { bench.write_section("/nonexistent/b.md", "t", "x") })
  end)
end)
