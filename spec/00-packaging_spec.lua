-- The rockspec must build what `make` builds: every C source and every Lua module is listed.
describe("octonav-scm-1.rockspec", function()
  local f = assert(io.open("octonav-scm-1.rockspec", "rb"))
  local text = f:read("*a")
  f:close()

  local function listing(cmd)
    local out, p = {}, assert(io.popen(cmd))
    for line in p:lines() do out[#out + 1] = line end
    p:close()
    return out
  end

  it("lists every C source file", function()
    local missing = {}
    for _, path in ipairs(listing("ls csrc/*/*.c")) do
      if not text:find('"' .. path .. '"', 1, true) then missing[#missing + 1] = path end
    end
    assert.are.same({}, missing)
  end)

  it("lists every Lua module under its module name", function()
    local missing = {}
    for _, path in ipairs(listing("find lua/octonav -name '*.lua' | sort")) do
      local name = path:match("lua/(.*)%.lua$"):gsub("/", ".")
      if name == "octonav.init" then name = "octonav" end
      if not text:find('["' .. name .. '"] = "' .. path .. '"', 1, true) then missing[#missing + 1] = path end
    end
    assert.are.same({}, missing)
  end)
end)
