-- spec/101-luajit_bug829_spec.lua -- issue 34: the LuaJIT lane's SIGSEGV. Debian 12's luajit
-- (2.1.0~beta3+git20220320) has LuaJIT bug 829 (github.com/LuaJIT/LuaJIT/issues/829, fixed upstream on
-- 2022-04-05): where the register allocator swaps the two results of a compiled next() (pairs loops), it
-- emits the one-byte 32-bit `xchg eax, edx` right after `call lj_vm_next`, cutting the TValue pointer
-- next returns to 32 bits; the trace then reads through it and dies. busted died so in spec/37 (its own
-- pairs loop over `count`) in 2 of 4 runs of specs 00-37; the core dumps show that exact instruction
-- pair. tools/luajit.sh then gives the specs a LuaJIT without the bug (docs/lua-versions.md).
-- Run: make LUA=luajit && LUA=luajit bash tools/runtests.sh build/luajit spec/101-luajit_bug829_spec.lua
local jit = rawget(_G, "jit")

local function sh(cmd)
  local f = assert(io.popen(cmd))
  local out = f:read("*a")
  f:close()
  return (out:gsub("%s+$", ""))
end

-- Debian's luajit package version when `bin` is that package's interpreter, else nil
local function debian_luajit_version(bin)
  local path = sh("command -v '" .. bin .. "' 2>/dev/null | xargs -r readlink -f")
  if path ~= "/usr/bin/luajit" then return nil end
  local v = sh("dpkg-query -W -f='${Version}' luajit 2>/dev/null")
  return v ~= "" and v or nil
end

local function before_fix(v)
  return os.execute("dpkg --compare-versions '" .. v .. "' lt 2.1.0~beta3+git20220405") == true
end

describe("LuaJIT bug 829 (issue 34)", function()
  it("tools/luajit.sh names a LuaJIT without the bug for the specs, or the one OCTONAV_LUAJIT gives", function()
    assert.equal("/opt/some/luajit", sh("OCTONAV_LUAJIT=/opt/some/luajit bash tools/luajit.sh"))
    if not jit then return end -- (on LuaJIT tools/runtests.sh has run it already: nothing to fetch)
    local v = debian_luajit_version("luajit")
    if not v or not before_fix(v) then
      assert.equal("luajit", sh("bash tools/luajit.sh 2>/dev/null"))
      return
    end
    local bin = sh("bash tools/luajit.sh 2>/dev/null")
    assert.is_nil(debian_luajit_version(bin), bin)
    assert.truthy(sh("'" .. bin .. "' -v"):match("^LuaJIT 2%.1"), bin)
    -- (its jit.util has ircalladdr, which the next test reads)
    assert.equal("function", sh("'" .. bin .. "' -e 'io.write(type(require(\"jit.util\").ircalladdr))'"))
  end)

  it("the LuaJIT running the suite is not Debian's luajit before the fix", function()
    if not jit then
      pending("LuaJIT only (" .. _VERSION .. ")")
      return
    end
    local lua = os.getenv("OCTONAV_LUA") or "luajit"
    local v = debian_luajit_version(lua)
    assert.is_false(v ~= nil and before_fix(v),
      "the specs run on Debian's luajit " .. tostring(v) .. ", which has LuaJIT bug 829: run them through tools/runtests.sh")
  end)

  it("no compiled pairs loop cuts next's result to 32 bits (the machine code of every trace read back)", function()
    if not jit then
      pending("LuaJIT only (" .. _VERSION .. ")")
      return
    end
    local jutil = require "jit.util"
    -- lj_vm_next's address: the IR call whose table of contents names it (jit/vmdef.lua of this LuaJIT)
    local idx
    local ok, vmdef = pcall(require, "jit.vmdef")
    if ok then
      for i = 0, 400 do
        if vmdef.ircall[i] == "lj_vm_next" then idx = i end
      end
    end
    assert.is_number(idx, "jit.vmdef lists lj_vm_next")
    local target = jutil.ircalladdr(idx)
    local calls, cut = 0, {}
    local function scan(what, tr)
      if what ~= "stop" then return end
      local mc, addr = jutil.tracemc(tr)
      if not mc then return end
      local pos = 1
      while true do
        local i = mc:find("\232", pos, true) -- call rel32
        if not i or i + 5 > #mc then break end
        local b1, b2, b3, b4, after = mc:byte(i + 1, i + 5)
        local rel = b1 + b2 * 256 + b3 * 65536 + b4 * 16777216
        if rel >= 2147483648 then rel = rel - 4294967296 end
        if addr + (i - 1) + 5 + rel == target then
          calls = calls + 1
          if after == 0x92 then cut[#cut + 1] = tr end -- xchg eax, edx (no REX.W)
        end
        pos = i + 1
      end
    end
    jit.flush()
    jit.attach(scan, "trace")
    -- pairs loops under register pressure, as spec/37's crowd loop: many numbers live across the loop
    local ok2, err = pcall(function()
      local count = { steps = 0, found = 0, plans = 0, checks = 0 }
      for round = 1, 40 do
        local most = {}
        local a, b, c, d, e, f, g, h = 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5
        for frame = 1, 300 do
          count.steps, count.found, count.plans, count.checks = frame, frame % 3, frame % 5, round
          a, b, c, d = a * 0.99 + frame, b * 0.98 + frame, c * 0.97 + frame, d * 0.96 + frame
          e, f, g, h = e * 0.95 + a, f * 0.94 + b, g * 0.93 + c, h * 0.92 + d
          for k, v in pairs(count) do
            most[k] = math.max(most[k] or 0, v)
            a = a + v
          end
        end
        assert(most.steps == 300 and most.checks == round and a + b + c + d + e + f + g + h > 0)
      end
    end)
    jit.attach(scan)
    assert(ok2, err)
    assert.is_true(calls > 0, "the loops above were compiled with calls to lj_vm_next")
    assert.same({}, cut)
  end)
end)
