-- Issue 34: library paths run with Lua 5.1's semantics on whichever Lua runs the suite (5.4 in the
-- gating lane), so that a call to what 5.1 lacks fails here too, not only in the 5.1 lane. The modules
-- (lua/octonav/*.lua) are loaded afresh into an environment whose standard functions answer as 5.1's:
-- _VERSION "Lua 5.1"; collectgarbage refuses "isrunning", "generational" and "incremental" (its option
-- names are 5.1's); load takes a function only (loadstring takes the string); pairs ignores __pairs.
-- octonav.core is the real module.
local core = require "octonav.core"
local compat = require "octonav.compat"

local GC51 = { stop = true, restart = true, collect = true, count = true, step = true, setpause = true,
               setstepmul = true }

-- a fresh 5.1-like environment; env.calls lists the collector options the library asked for
local function lua51()
  local env = {}
  for k, v in pairs(_G) do env[k] = v end
  env._G, env._VERSION, env.jit = env, "Lua 5.1", nil
  env.calls = {}
  env.collectgarbage = function(opt, ...)
    opt = opt or "collect"
    if not GC51[opt] then error("bad argument #1 to 'collectgarbage' (invalid option '" .. opt .. "')", 2) end
    env.calls[#env.calls + 1] = opt
    return collectgarbage(opt, ...)
  end
  env.load = function(chunk, name)
    if type(chunk) ~= "function" then error("bad argument #1 to 'load' (function expected, got " .. type(chunk) .. ")", 2) end
    return load(chunk, name)
  end
  env.loadstring = rawget(_G, "loadstring") or function(s, name) return load(s, name) end
  env.setfenv = rawget(_G, "setfenv") or function(f, e) -- (5.2+: a loaded chunk's _ENV is its first upvalue)
    if debug.getupvalue(f, 1) == "_ENV" then debug.setupvalue(f, 1, e) end
    return f
  end
  env.pairs = function(t) return next, t, nil end
  local loaded = { ["octonav.core"] = core }
  env.require = function(name)
    if loaded[name] == nil then
      local path = "lua/" .. name:gsub("%.", "/") .. ".lua"
      local chunk = assert(compat.loadfile(path, "t", env))
      loaded[name] = chunk(name) or true
    end
    return loaded[name]
  end
  env.package = setmetatable({ loaded = loaded }, { __index = package })
  return env
end

describe("library paths with Lua 5.1's standard functions (on " .. _VERSION .. ")", function()
  after_each(function() collectgarbage("restart") end)

  it("a budget with gc runs the collector without collectgarbage('isrunning'), and gives it back", function()
    local env = lua51()
    local budget = env.require("octonav.navbudget").new { gc = true }
    for _ = 1, 3 do
      local junk = {}
      for i = 1, 2000 do junk[i] = { i } end
      budget:frame()
      assert.equal(2000, #junk)
    end
    -- 5.1 cannot tell whether the collector runs: taken as running, stopped at each frame, restarted
    assert.same({ "stop", "count", "stop", "count", "step" }, { env.calls[1], env.calls[2], env.calls[3],
      env.calls[4], env.calls[5] })
    -- and stopped again after each step (5.1's and LuaJIT's step restarts a stopped collector)
    local steps = 0
    for i, opt in ipairs(env.calls) do
      if opt == "step" then
        steps = steps + 1
        assert.equal("stop", env.calls[i + 1])
      end
    end
    assert.equal(2, steps)
    assert.is_true(budget.gc_was_running)
    budget:release_gc()
    assert.equal("restart", env.calls[#env.calls])
  end)

  it("compat.load takes a string, a chunk name and an environment", function()
    local c51 = lua51().require("octonav.compat")
    assert.equal(3, c51.load("return 1 + 2", "=sum")())
    local f = assert(c51.load("return x * 2", "=twice", "t", { x = 21 }))
    assert.equal(42, f())
    local pieces, i = { "return ", "'joined'" }, 0
    assert.equal("joined", c51.load(function() i = i + 1 return pieces[i] end)())
    local _, err = c51.load("return +", "=bad")
    assert.matches("^bad:1:", err)
    assert.same({ nil, "attempt to load a binary chunk (mode is 't')" }, { c51.load("\27Lua", "=b", "t") })
  end)

  it("compat.gc_isrunning answers nil where the Lua cannot tell, the collector's state elsewhere", function()
    assert.is_nil(lua51().require("octonav.compat").gc_isrunning())
    if _VERSION == "Lua 5.1" and not rawget(_G, "jit") then
      assert.is_nil(compat.gc_isrunning())
    else
      assert.equal(collectgarbage("isrunning"), compat.gc_isrunning())
    end
  end)
end)
