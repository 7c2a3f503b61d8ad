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

-- io.popen(cmd):close() answers as 5.2+ does (true | nil, "exit" | "signal", code) too: 5.1 and LuaJIT
-- answer true whatever the command's exit status. The command runs in a subshell that writes its status
-- to a temporary file, read back by close (128 + n from the shell is signal n, as 5.2+ reports it).
if _VERSION == "Lua 5.1" then
  local popen, tmpname, remove, open = io.popen, os.tmpname, os.remove, io.open
  io.popen = function(cmd, mode) -- luacheck: ignore 122 (a global's field, on purpose)
    local status = tmpname()
    local f, err = popen("(" .. cmd .. "\n); echo $? > '" .. status .. "'", mode)
    if not f then
      remove(status)
      return f, err
    end
    local proxy = {}
    function proxy.close()
      local ok, cerr = f:close()
      local s = open(status, "r")
      local code = s and tonumber(s:read("*l") or "")
      if s then s:close() end
      remove(status)
      if not code then return ok, cerr end
      if code == 0 then return true, "exit", 0 end
      if code > 128 then return nil, "signal", code - 128 end
      return nil, "exit", code
    end
    return setmetatable(proxy, { __index = function(_, k)
      local v = f[k]
      if type(v) ~= "function" then return v end
      return function(_, ...) return v(f, ...) end
    end })
  end
end
