-- spec/177-library_jit_spec.lua -- on LuaJIT the library's Lua that runs each frame is interpreted by
-- default (issue 31 goal 1 on LuaJIT: compiled, 1,000 streamed navigators gave 150 arrivals and 186
-- frames over 4.5 ms in 1,000 frames, its traces recorded and flushed inside the frames; interpreted,
-- 692 and 7: docs/benchmarks.md, session 32); octonav.library_jit(true) compiles it again. LuaJIT's
-- trace events (jit.attach) tell what its compiler does: a hot loop calling util.dist (a frame module's
-- function) completes no trace by default (each recording aborts at the call: compilation disabled for
-- that function), and one once library_jit(true). Elsewhere library_jit answers false and changes
-- nothing. Fails before the change (no octonav.library_jit; and the loop was compiled).
-- Run: busted --lua=luajit spec/177-library_jit_spec.lua
local octonav = require "octonav"
local util = require "octonav.util"

local JIT = rawget(_G, "jit")

-- The traces LuaJIT completes that start in `f` while it runs (its compiler's "start" and "stop"
-- events, after a flush; a trace of busted's own, run meanwhile, is not counted).
local function traces_completed(f)
  local n, mine = 0, {}
  local function on_trace(what, tr, func)
    if what == "start" then mine[tr] = func == f
    elseif what == "stop" and mine[tr] then n = n + 1 end
  end
  JIT.flush()
  JIT.attach(on_trace, "trace")
  local ok, err = pcall(f)
  JIT.attach(on_trace)
  assert(ok, err)
  return n
end

local function hot()
  local a, b, s = { 0, 0, 0 }, { 1, 2, 2 }, 0
  for i = 1, 20000 do
    b[1] = i % 7
    s = s + util.dist(a, b)
  end
  return s
end

describe("octonav.library_jit", function()
  after_each(function() octonav.library_jit(false) end)

  it("rejects what is not a boolean, naming the function and the argument", function()
    local ok, err = pcall(octonav.library_jit, 1)
    assert.is_false(ok)
    assert.matches("octonav.library_jit: on: a boolean or nil expected %(got number%)", err)
    ok, err = pcall(octonav.library_jit, "yes")
    assert.is_false(ok)
    assert.matches("%(got string%)", err)
  end)

  it("answers false elsewhere than LuaJIT, whatever it is asked", function()
    if JIT then
      pending("LuaJIT: see the next tests")
      return
    end
    assert.is_false(octonav.library_jit())
    assert.is_false(octonav.library_jit(true))
    assert.is_false(octonav.library_jit())
  end)

  it("keeps the frame modules interpreted by default on LuaJIT, compiled after library_jit(true)", function()
    if not (JIT and JIT.attach and JIT.status()) then
      pending("LuaJIT with its compiler on only")
      return
    end
    assert.is_false(octonav.library_jit())
    assert.equal(0, traces_completed(hot))
    assert.is_false(octonav.library_jit(true))
    assert.is_true(octonav.library_jit())
    assert.is_true(traces_completed(hot) > 0)
    assert.is_true(octonav.library_jit(false))
    assert.equal(0, traces_completed(hot))
  end)
end)
