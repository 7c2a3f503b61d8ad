-- spec/support/lua_versions.lua: busted's helper (.busted), run before the specs on every Lua version
-- (issue 34): where the Lua is 5.1 or LuaJIT, os.execute answers as 5.2+ does (true | nil, "exit" |
-- "signal", code) instead of the raw wait status, so that the specs' shell commands read the same on
-- each version. Nothing changes on 5.2+.
if _VERSION == "Lua 5.1" then
  local execute = os.execute
  local floor = math.floor
  os.execute = function(cmd) -- luacheck: ignore 122 (a global's field, on purpose)
    local st = execute(cmd)
    if cmd == nil then return st ~= 0 end
    if type(st) ~= "number" then return st end -- (a LuaJIT built with 5.2 compatibility)
    if st == 0 then return true, "exit", 0 end
    if st % 256 ~= 0 then return nil, "signal", st % 256 end
    return nil, "exit", floor(st / 256)
  end
end
