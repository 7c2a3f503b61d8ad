-- tools/include_graph.lua -- the house's rules, checked from the sources' text (issue 32; `make lint` runs it):
--  1. every quoted #include names a file that exists (beside the includer, in a room of csrc/, or tests/);
--  2. a room never includes a higher room: csrc/ROOM/ may include the rooms LAYERS lists for it, and a C
--     test under tests/ROOM/ what that room may (plus tests/*.h and octonav.h);
--  3. no circle between files: a unit (x.c with its header x.h, or a lone header) calls another when it
--     uses (in a function body, an inline function, an initialiser or a macro) a name that the other
--     alone defines (a non-static function or variable of its .c file, an inline function of its header);
--     a loop of such calls is a circle,
--     reported with the names that tie each step (includes alone make none: the guards break their
--     loops, and rule 2 orders them);
--  4. no file of csrc/ or lua/ over MAX_LINES lines, but for the ALLOWED list below.
-- Usage: lua5.4 tools/include_graph.lua [-v] [--root DIR]   (DIR: the tree to read, default the
-- current directory; -v: every tie inside each circle). Prints one line a problem and exits 1, or one summary line and exits 0.

local MAX_LINES = 700

-- The rooms from the bottom up and what each may include (its own headers always). A room of csrc/ that
-- is not listed here fails the check: a new room takes its place in this table.
-- csrc/octonav.h, the public API whole (every room's octonav_ROOM.h), counts as room "api": above every
-- room but the binding; the C tests may include it too.
local LAYERS = {
  core = {},
  search = { "core" },
  world = { "core", "search" },
  stream = { "core", "search", "world" },
  crowd = { "core", "search", "world", "stream" },
  grid = { "core" },
  api = { "core", "search", "world", "stream", "crowd", "grid" },
  lua = { "core", "search", "world", "stream", "crowd", "grid", "api" },
}

-- Files over MAX_LINES while their owners split them (each entry removed when its split lands; one no longer
-- over is named in the summary line).
local ALLOWED = {
}

local root, verbose = ".", false
do
  local i = 1
  while i <= #arg do
    if arg[i] == "-v" then
      verbose = true
      i = i + 1
    elseif arg[i] == "--root" and arg[i + 1] then
      root = arg[i + 1]
      i = i + 2
    else
      io.stderr:write("usage: lua5.4 tools/include_graph.lua [-v] [--root DIR]\n")
      os.exit(2)
    end
  end
end

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- The files under root/dir whose names end in one of exts, as paths relative to root, sorted.
local function list(dir, pattern)
  local out = {}
  local p = assert(io.popen("cd " .. shell_quote(root) .. " 2>/dev/null && find " .. dir ..
    " -type f 2>/dev/null | LC_ALL=C sort"))
  for line in p:lines() do
    line = line:gsub("^%./", "")
    if line:match(pattern) then out[#out + 1] = line end
  end
  p:close()
  return out
end

local function read(path)
  local f = assert(io.open(root .. "/" .. path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

-- The text with comments, string and character literals blanked (newlines kept).
local function strip(s)
  local out, i, n = {}, 1, #s
  while i <= n do
    local c = s:sub(i, i)
    local two = s:sub(i, i + 1)
    if two == "/*" then
      local j = s:find("*/", i + 2, true) or n - 1
      out[#out + 1] = s:sub(i, j + 1):gsub("[^\n]", " ")
      i = j + 2
    elseif two == "//" then
      local j = s:find("\n", i, true) or n + 1
      i = j
    elseif c == '"' or c == "'" then
      local j = i + 1
      while j <= n do
        local d = s:sub(j, j)
        if d == "\\" then j = j + 2
        elseif d == c or d == "\n" then break
        else j = j + 1 end
      end
      out[#out + 1] = c .. c
      i = j + 1
    else
      out[#out + 1] = c
      i = i + 1
    end
  end
  return table.concat(out)
end

local KEYWORDS = {}
for w in ([[auto break case char const continue default do double else enum extern float for goto if inline int
  long register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
  _Atomic _Bool _Static_assert _Thread_local _Alignof _Noreturn _Generic bool]]):gmatch("%S+") do
  KEYWORDS[w] = true
end

-- One file read: includes (quoted names with their lines), names it defines (non-static functions and
-- variables of a .c file) and names it uses (in bodies, initialisers, macros).
local function scan(path)
  local text = read(path)
  local info = { includes = {}, defines = {}, uses = {}, lines = select(2, text:gsub("\n", "")) }
  local ln = 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    ln = ln + 1
    local inc = line:match('^%s*#%s*include%s*"([^"]+)"')
    if inc then info.includes[#info.includes + 1] = { name = inc, line = ln } end
  end
  local code = strip(text)
  -- preprocessor lines (with their continuations): a #define's body is a use; the rest is blanked
  code = code:gsub("\\\n", "  ")
  local body = {}
  for line in (code .. "\n"):gmatch("([^\n]*)\n") do
    local d = line:match("^%s*#%s*define%s+[%w_]+(.*)")
    if d then
      for id in d:gmatch("[%a_][%w_]*") do info.uses[id] = true end
      body[#body + 1] = ""
    elseif line:match("^%s*#") then
      body[#body + 1] = ""
    else
      body[#body + 1] = line
    end
  end
  code = table.concat(body, "\n")
  local is_c = path:match("%.c$") ~= nil
  -- walk the braces: depth 0 holds declarations; a declaration that ends in ")" before "{" is a function
  local depth, decl, i, n = 0, {}, 1, #code
  local function finish_decl(d)
    -- a declaration at depth 0 ended by ";" (its braces, if any, replaced by "{}")
    if not is_c or d:match("%f[%w_]typedef%f[^%w_]") or d:match("%f[%w_]extern%f[^%w_]")
      or d:match("%f[%w_]static%f[^%w_]") then return end
    local lhs = d:match("^(.-)=") or d
    if lhs:find("(", 1, true) and not d:find("=", 1, true) then return end -- a prototype
    lhs = lhs:gsub("%b[]", " "):gsub("%b{}", " ")
    local name
    for id in lhs:gmatch("[%a_][%w_]*") do if not KEYWORDS[id] then name = id end end
    if name and not d:match("^%s*struct%s+[%w_]+%s*{}%s*$") and not d:match("^%s*enum")
      and not d:match("^%s*union%s+[%w_]+%s*{}%s*$") then
      info.defines[name] = "variable"
    end
  end
  while i <= n do
    local c = code:sub(i, i)
    if depth == 0 then
      if c == "{" then
        local d = table.concat(decl)
        if d:match("%)%s*$") and not d:find("=", 1, true) then
          -- a function definition: its name is the identifier before the first "(" at depth 0
          local name = d:match("([%a_][%w_]*)%s*%(")
          -- (a .c file's non-static functions; a header's functions are its static inline ones)
          if name and (not is_c or not d:match("%f[%w_]static%f[^%w_]")) then info.defines[name] = "function" end
          decl = {}
          depth = 1
        else
          -- an initialiser or a struct / enum body: find its end, keep the declaration going
          local j, dd = i + 1, 1
          while j <= n and dd > 0 do
            local e = code:sub(j, j)
            if e == "{" then dd = dd + 1 elseif e == "}" then dd = dd - 1 end
            j = j + 1
          end
          local inner = code:sub(i + 1, j - 2)
          if d:find("=", 1, true) then
            for id in inner:gmatch("[%a_][%w_]*") do info.uses[id] = true end
          end
          decl[#decl + 1] = "{}"
          i = j - 1
        end
      elseif c == ";" then
        local d = table.concat(decl)
        local rhs = d:match("=(.*)")
        if rhs then for id in rhs:gmatch("[%a_][%w_]*") do info.uses[id] = true end end
        finish_decl(d)
        decl = {}
      else
        decl[#decl + 1] = c
      end
      i = i + 1
    else
      local a, b = code:find("^[%a_][%w_]*", i)
      if a then
        info.uses[code:sub(a, b)] = true
        i = b + 1
      else
        if c == "{" then depth = depth + 1 elseif c == "}" then depth = depth - 1 end
        i = i + 1
      end
    end
  end
  return info
end

local problems = {}
local function problem(s) problems[#problems + 1] = s end

-- the files
local sources = list("csrc", "%.[ch]$")
local tests = list("tests", "%.[ch]$")
local luas = list("lua", "%.lua$")
local files, room_of, by_name = {}, {}, {}
for _, path in ipairs(sources) do
  local room = path:match("^csrc/([^/]+)/[^/]+$") or (path == "csrc/octonav.h" and "api")
  if not room then
    problem(path .. ": a C file outside the rooms (csrc/ROOM/NAME; csrc/README.md)")
  elseif not LAYERS[room] then
    problem(path .. ": room " .. room .. " is not in tools/include_graph.lua's LAYERS (what it may include)")
  else
    room_of[path] = room
    local name = path:match("[^/]+$")
    if by_name[name] then
      problem(path .. ": the name " .. name .. " is also " .. by_name[name] .. " (names are unique across rooms)")
    else
      by_name[name] = path
    end
  end
  files[#files + 1] = path
end
local test_headers = {}
for _, path in ipairs(tests) do
  local room = path:match("^tests/([^/]+)/[^/]+$")
  if room then
    if not LAYERS[room] or room == "api" then problem(path .. ": tests/" .. room .. " mirrors no room of csrc/") end
    room_of[path] = room
  elseif path:match("^tests/[^/]+%.h$") then
    test_headers[path:match("[^/]+$")] = path
  else
    problem(path .. ": a C test outside the rooms (tests/ROOM/test_NAME.c)")
  end
  files[#files + 1] = path
end

local may = {}
for room, below in pairs(LAYERS) do
  may[room] = { [room] = true }
  for _, r in ipairs(below) do may[room][r] = true end
end

-- rules 1 and 2, and the include edges
local info, unit_of, units, unit_files = {}, {}, {}, {}
for _, path in ipairs(files) do
  info[path] = scan(path)
  local u = path:gsub("%.[ch]$", "") -- a unit: x.c with its header x.h (or a lone header)
  unit_of[path] = u
  if not unit_files[u] then
    unit_files[u] = {}
    units[#units + 1] = u
  end
  table.insert(unit_files[u], path)
end
local edges = {} -- edges[a][b] = { what tied them }
local function tie(a, b, why)
  if a == b then return end
  edges[a] = edges[a] or {}
  edges[a][b] = edges[a][b] or {}
  local t = edges[a][b]
  if not t[why] then
    t[why] = true
    t[#t + 1] = why
  end
end
for _, path in ipairs(files) do
  local dir = path:match("^(.*)/[^/]+$")
  for _, inc in ipairs(info[path].includes) do
    local base = inc.name:match("[^/]+$")
    local target
    if info[dir .. "/" .. inc.name] then target = dir .. "/" .. inc.name
    elseif not inc.name:find("/", 1, true) then target = by_name[base] or test_headers[base] end
    local where = path .. ":" .. inc.line
    if not target then
      problem(where .. ': #include "' .. inc.name .. '" names no file of a room (nor of tests/)')
    else
      local from, to = room_of[path], room_of[target]
      if from and to and not may[from][to] and not (to == "api" and path:match("^tests/")) then
        problem(where .. ": room " .. from .. ' includes "' .. inc.name .. '" of room ' .. to ..
          " (a higher room or a side one: " .. from .. " may include " ..
          table.concat(LAYERS[from], ", ") .. (next(LAYERS[from]) and ", " or "") .. from .. ")")
      end
    end
  end
end

-- rule 3: the names each .c file alone defines, the uses that reach them
local definer = {}
for _, path in ipairs(files) do
  for name in pairs(info[path].defines) do
    if definer[name] == nil then definer[name] = path else definer[name] = false end
  end
end
for _, path in ipairs(files) do
  local names = {}
  for name in pairs(info[path].uses) do
    local d = definer[name]
    if d and not info[path].defines[name] and unit_of[d] ~= unit_of[path] then names[#names + 1] = name end
  end
  table.sort(names)
  for _, name in ipairs(names) do tie(unit_of[path], unit_of[definer[name]], name) end
end

-- Tarjan's strongly connected components over the units
local index, low, onstack, stack, comps, counter = {}, {}, {}, {}, {}, 0
local function succ(u)
  local out = {}
  for v in pairs(edges[u] or {}) do out[#out + 1] = v end
  table.sort(out)
  return out
end
local function connect(u)
  counter = counter + 1
  index[u], low[u] = counter, counter
  stack[#stack + 1] = u
  onstack[u] = true
  for _, v in ipairs(succ(u)) do
    if not index[v] then
      connect(v)
      low[u] = math.min(low[u], low[v])
    elseif onstack[v] then
      low[u] = math.min(low[u], index[v])
    end
  end
  if low[u] == index[u] then
    local comp = {}
    repeat
      local w = table.remove(stack)
      onstack[w] = nil
      comp[#comp + 1] = w
    until w == u
    if #comp > 1 then
      table.sort(comp)
      comps[#comps + 1] = comp
    end
  end
end
for _, u in ipairs(units) do if not index[u] then connect(u) end end

local function unit_name(u)
  local fs = unit_files[u]
  if #fs == 1 then return fs[1] end
  return u .. ".[ch]"
end
local function ties(a, b)
  local t = edges[a][b]
  local shown = {}
  for k = 1, math.min(#t, 4) do shown[k] = t[k] end
  return table.concat(shown, ", ") .. (#t > 4 and (", and " .. (#t - 4) .. " more") or "")
end
table.sort(comps, function(a, b) return a[1] < b[1] end)
for _, comp in ipairs(comps) do
  -- one loop through the component's first unit (the shortest, breadth first)
  local inside = {}
  for _, u in ipairs(comp) do inside[u] = true end
  local start = comp[1]
  local prev, queue, head, found = { [start] = false }, { start }, 1, nil
  while head <= #queue and not found do
    local u = queue[head]
    head = head + 1
    for _, v in ipairs(succ(u)) do
      if v == start then
        found = u
        break
      end
      if inside[v] and prev[v] == nil then
        prev[v] = u
        queue[#queue + 1] = v
      end
    end
  end
  local path = { start }
  local u = found
  while u and u ~= start do
    table.insert(path, 2, u)
    u = prev[u]
  end
  path[#path + 1] = start
  local steps = { unit_name(start) }
  for k = 1, #path - 1 do
    steps[#steps + 1] = "-> " .. unit_name(path[k + 1]) .. " (" .. ties(path[k], path[k + 1]) .. ")"
  end
  local names = {}
  for k, v in ipairs(comp) do names[k] = unit_name(v) end
  local text = "circle of " .. #comp .. " units: " .. table.concat(names, " ") .. "\n  the loop: " ..
    table.concat(steps, "\n    ")
  if verbose then
    for _, a in ipairs(comp) do
      for _, b in ipairs(succ(a)) do
        if inside[b] then text = text .. "\n  tie: " .. unit_name(a) .. " -> " .. unit_name(b) .. " (" .. ties(a, b) .. ")" end
      end
    end
  end
  problem(text)
end

-- rule 4
local over, stale = 0, {}
local function cap(path, n)
  if n > MAX_LINES and not ALLOWED[path] then
    problem(path .. ": " .. n .. " lines (at most " .. MAX_LINES .. ": split it by concern)")
  end
  if n > MAX_LINES then over = over + 1 end
  if n <= MAX_LINES and ALLOWED[path] then stale[#stale + 1] = path end
end
for _, path in ipairs(sources) do cap(path, info[path].lines) end
for _, path in ipairs(luas) do cap(path, select(2, read(path):gsub("\n", ""))) end

if #problems > 0 then
  for _, p in ipairs(problems) do io.write("include_graph: ", p, "\n") end
  os.exit(1)
end
print(("include_graph: %d C files in %d units, no circle, no room includes a higher one, %d files over %d lines " ..
  "(allowed while they are split)%s"):format(#files, #units, over, MAX_LINES,
  #stale > 0 and ("; ALLOWED names files no longer over, remove them: " .. table.concat(stale, " ")) or ""))
