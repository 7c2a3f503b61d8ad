-- spec/60-binding_metamethods_spec.lua -- issue 30, item 1: a table argument whose metamethods close or
-- change the objects a binding call uses (csrc/lua/lua_util.h, "THE RULE", (a)). Generated: for every
-- binding function of spec/support/binding_calls.lua, every table (or function) argument is replaced
-- by a proxy that behaves like the sample value (recursively: the tables inside it are proxies too) but
-- runs an action on its first __index / __len / call: close one of the objects the call uses, or change it.
-- Since a call reads all its arguments before it takes any object, the outcome must be exactly that of
-- the action done first and the call made with the plain arguments, on a fresh fixture: the same error
-- message or the same results. Before the fix, 62 of these cases read freed memory (ASan: use after
-- free) or a NULL object. Run it under ASan: see tools/runtests.sh (SANITIZE=1) with build/san.
local compat = require "octonav.compat" -- Lua 5.1 .. 5.4 (issue 34)
local calls = dofile("spec/support/binding_calls.lua")

-- A proxy of v calling act() on every read: tables by __index / __len (fields proxied in turn),
-- functions wrapped; anything else as it is.
local function proxy(v, act)
  if type(v) == "function" then
    return function(...)
      act()
      return v(...)
    end
  end
  if type(v) ~= "table" then return v end
  return setmetatable({}, {
    __index = function(_, k)
      act()
      return proxy(v[k], act)
    end,
    __len = function()
      act()
      return #v
    end,
  })
end

local cases, hostile_args = 0, 0

describe("binding: argument metamethods that close or change the objects (generated)", function()
  for _, c in ipairs(calls.calls) do
    local probe = calls.fixture()
    local sample = c.args(probe)
    calls.close_all(probe)
    for ai, v in ipairs(sample) do
      if (type(v) == "table" or type(v) == "function") and not (c.out and c.out[ai]) then
        hostile_args = hostile_args + 1
        for _, obj in ipairs(c.uses) do
          for _, what in ipairs { "close", "edit" } do
            cases = cases + 1
            it(("%s, argument %d, %s %s"):format(c.name, ai, what, obj), function()
              local function action(o)
                if what == "close" then
                  pcall(o[obj].close, o[obj])
                else
                  pcall(calls.edits[obj], o)
                end
              end
              -- the reference: the action first, then the call with plain arguments
              local ref = calls.fixture()
              local ref_args = c.args(ref)
              for _, k in ipairs(c.uses) do local _ = ref[k] end
              action(ref)
              local want = calls.outcome(pcall(c.run, ref, compat.unpack(ref_args, 1, #sample)))
              calls.close_all(ref)
              -- the same with the action run by the argument's metamethods during the call
              local o = calls.fixture()
              local args = c.args(o)
              for _, k in ipairs(c.uses) do local _ = o[k] end
              local ran = 0
              args[ai] = proxy(args[ai], function()
                ran = ran + 1
                if ran == 1 then action(o) end -- (once: the reference acts once too)
              end)
              local got = calls.outcome(pcall(c.run, o, compat.unpack(args, 1, #sample)))
              calls.close_all(o)
              assert.is_true(ran > 0, "the argument was never read")
              assert.are.equal(want, got)
            end)
          end
        end
      end
    end
  end

  it("lists every method of every binding class", function()
    local o = calls.fixture()
    local listed = {}
    for _, c in ipairs(calls.calls) do listed[c.name] = true end
    local missing = {}
    for k, prefix in pairs { t = "t", q = "q", ps = "ps", s = "s", w = "w", p = "p", g = "g" } do
      for name in pairs(getmetatable(o[k]).__index) do
        if name ~= "close" and not listed[prefix .. ":" .. name] then missing[#missing + 1] = prefix .. ":" .. name end
      end
    end
    calls.close_all(o)
    table.sort(missing)
    assert.are.same({}, missing)
  end)

  it("covers every binding function with a table or function argument", function()
    -- (counted when the cases above were made: printed for the log)
    print(("\n60-binding_metamethods: %d calls, %d hostile arguments, %d cases"):format(#calls.calls, hostile_args, cases))
    assert.is_true(hostile_args >= 40, "only " .. hostile_args .. " hostile arguments")
  end)
end)
