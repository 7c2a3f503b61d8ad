-- Every example in the documentation that prints is run and its output compared (issue 32).
-- In README.md and docs/*.md, a fenced ```lua block followed (blank lines allowed between) by a
-- fenced ```output block is run with this build (lua5.4, the source tree's lua/ and the build under
-- test: OCTONAV_BUILD, else build/) from the project root, stdout and stderr together, and what it
-- prints must equal the output block exactly. A ```lua block that calls print must have an output
-- block (so a printed example cannot go unchecked); `lua data=PATH` marks a block that needs PATH
-- (e.g. ../shared/data/...): pending where PATH is absent.
local LUA = os.getenv("OCTONAV_LUA") or "lua5.4" -- the Lua under test (tools/runtests.sh)
local build = os.getenv("OCTONAV_BUILD") or "build"

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

-- the doc files: README.md and docs/*.md
local function doc_files()
  local files = { "README.md" }
  local p = assert(io.popen("ls docs/*.md 2>/dev/null"))
  for line in p:lines() do files[#files + 1] = line end
  p:close()
  return files
end

-- { { line =, code =, info =, output = string or nil, prints = bool } ... } of a markdown text
local function blocks(text)
  local lines = {}
  for line in (text .. "\n"):gmatch("(.-)\r?\n") do lines[#lines + 1] = line end
  local out, i = {}, 1
  while i <= #lines do
    local lang, info = lines[i]:match("^```(%S*)%s*(.-)%s*$")
    if lang then
      local j = i + 1
      while j <= #lines and not lines[j]:match("^```%s*$") do j = j + 1 end
      assert(j <= #lines, "unclosed fence at line " .. i)
      if lang == "lua" then
        local code = table.concat(lines, "\n", i + 1, j - 1)
        local b = { line = i, code = code, info = info, prints = code:find("print%s*%(") ~= nil }
        local k = j + 1
        while k <= #lines and lines[k]:match("^%s*$") do k = k + 1 end
        if k <= #lines and lines[k]:match("^```output%s*$") then
          local e = k + 1
          while e <= #lines and not lines[e]:match("^```%s*$") do e = e + 1 end
          assert(e <= #lines, "unclosed output fence at line " .. k)
          b.output = e > k + 1 and table.concat(lines, "\n", k + 1, e - 1) .. "\n" or ""
          j = e
        end
        out[#out + 1] = b
      end
      i = j + 1
    else
      i = i + 1
    end
  end
  return out
end

local function run(code)
  local path = os.tmpname()
  local f = assert(io.open(path, "wb"))
  f:write(code, "\n")
  f:close()
  local cmd = ("LUA_PATH='%s/lua/?.lua;%s/lua/?/init.lua;;' LUA_CPATH='%s/?.so;;' " .. LUA .. " %s 2>&1")
    :format(os.getenv("PWD") or ".", os.getenv("PWD") or ".", build, path)
  local p = assert(io.popen(cmd))
  local s = p:read("*a")
  local ok, _, rc = p:close()
  os.remove(path)
  return s, ok and 0 or rc
end

describe("doctests", function()
  it("the parser finds a block and its output, and a block without one", function()
    local b = blocks("x\n```lua\nprint(1)\n```\n\n```output\n1\n```\n```lua\nlocal a = 1\n```\n")
    assert.are.equal(2, #b)
    assert.are.equal("print(1)", b[1].code)
    assert.are.equal("1\n", b[1].output)
    assert.is_true(b[1].prints)
    assert.is_nil(b[2].output)
    assert.is_false(b[2].prints)
  end)

  it("a wrong expected output is caught (the runner compares)", function()
    local got = run('print("a", 1 + 1)')
    assert.are.equal("a\t2\n", got)
    assert.are_not.equal("a\t3\n", got)
  end)

  local total = 0
  for _, file in ipairs(doc_files()) do
    local list = blocks(read(file))
    for _, b in ipairs(list) do
      if b.prints and not b.output then
        it(("%s:%d prints and has an output block"):format(file, b.line), function()
          error(("%s:%d: a lua block that prints needs a following ```output block"):format(file, b.line))
        end)
      elseif b.output then
        total = total + 1
        local need = b.info:match("data=(%S+)")
        local name = ("%s:%d prints what its output block says"):format(file, b.line)
        if need and not io.open(need, "rb") then
          pending(name .. " (" .. need .. " absent)")
        else
          it(name, function()
            local got, rc = run(b.code)
            assert.are.equal(b.output, got)
            assert.are.equal(0, rc)
          end)
        end
      end
    end
  end

  it("README.md is a guide of at most 300 lines", function()
    local n = select(2, read("README.md"):gsub("\n", ""))
    assert.is_true(n <= 300, "README.md: " .. n .. " lines")
  end)

  it("README.md has its tour's examples as doctests", function()
    local n = 0
    for _, b in ipairs(blocks(read("README.md"))) do if b.output then n = n + 1 end end
    assert.is_true(n >= 5, "README.md: " .. n .. " doctests")
    assert.is_true(total >= n)
  end)
end)
