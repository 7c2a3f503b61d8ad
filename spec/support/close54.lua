-- spec/support/close54.lua: tests of `<close>` (to-be-closed variables), which only Lua 5.4 has
-- (issue 34). it54(name, names, src): on 5.4, a test that runs the chunk src (Lua 5.4 source in a
-- string, so that older parsers never see it) with the table `names` in scope (the spec's locals it
-- needs; then the spec's own globals); on other versions the test is pending, reported as skipped
-- ("Lua 5.4 only").
-- Loaded as local it54 = dofile("spec/support/close54.lua")(it, pending, _ENV).
return function(it, pending, env)
  return function(name, names, src)
    if _VERSION ~= "Lua 5.4" then
      return pending(name .. " (Lua 5.4 only: " .. _VERSION .. " has no <close>)")
    end
    it(name, function()
      local chunk = assert(load(src, "=" .. name, "t", setmetatable(names, { __index = env or _G })))
      chunk()
    end)
  end
end
