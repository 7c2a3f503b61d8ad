-- docs/reference.md has an entry for every public function, method and option (issue 32).
-- The public API is read at run time: each module table's functions, each class's methods through a
-- real object's metatable, and the option names each function accepts from the list its source checks
-- them against (the C bindings' `*_opts[]` arrays, the Lua modules' option tables). An entry is the
-- name in backquotes with its prefix, as the reference writes it (`octonav.tree.new`, `tree:add_box`);
-- options are backquoted names under the heading "#### Options: NAME". A missing entry fails naming it.
local octonav = require "octonav"
local odebug = require "octonav.debug"

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local REF = read("docs/reference.md")

local function documented(token) return REF:find("`" .. token, 1, true) ~= nil end

-- the text under "#### Options: NAME" up to the next heading
local function options_section(name)
  local head = "#### Options: " .. name .. "\n"
  local a = REF:find(head, 1, true)
  if not a then return nil end
  local b = REF:find("\n#", a + #head, true)
  return REF:sub(a + #head, b or #REF)
end

-- the strings of `static const char *const NAME[] = { ... }` in a C file
local function c_names(file, name)
  local src = read(file)
  local body = src:match("const char %*const " .. name .. "%[%]%s*=%s*(%b{})")
  assert(body, file .. ": no list " .. name)
  local out = {}
  for s in body:gmatch('"([^"]*)"') do out[#out + 1] = s end
  return out
end

-- the keys of a Lua table constructor `local NAME = { ... }` in a Lua file
local function lua_keys(file, name)
  local body = read(file):match("local " .. name .. "%s*=%s*(%b{})")
  assert(body, file .. ": no table " .. name)
  local out = {}
  for line in body:gmatch("[^\n]+") do
    line = line:gsub("%-%-.*$", "")
    for k in line:gmatch("([%a_][%w_]*)%s*=") do out[#out + 1] = k end
  end
  return out
end

-- `k ~= "name"` tests in a Lua function (the options a loop accepts beside a table's)
local function lua_ne_names(file, fn_head)
  local src = read(file)
  local a = assert(src:find(fn_head, 1, true), file .. ": no " .. fn_head)
  local b = src:find("\nend", a, true)
  local out = {}
  for k in src:sub(a, b):gmatch('k ~= "([%w_]+)"') do out[#out + 1] = k end
  return out
end

local function functions_of(t)
  local out = {}
  for k, v in pairs(t) do
    if type(v) == "function" and type(k) == "string" and not k:match("^_") then out[#out + 1] = k end
  end
  table.sort(out)
  return out
end

local function methods_of(obj)
  local mt = getmetatable(obj)
  local idx = type(mt) == "table" and mt.__index
  assert(type(idx) == "table", "no method table")
  return functions_of(idx)
end

-- a small baked world to take objects from
local dir = os.tmpname()
os.remove(dir)
assert(octonav.bake {
  range = { min = { 0, 0, 0 }, max = { 64, 32, 32 } }, depth = 5,
  geometry = { { box = { min = { 30, 0, 0 }, max = { 34, 32, 26 } } } },
  holes = { { name = "cave", min = { 40, 4, 8 }, max = { 56, 16, 24 }, scale = 0.5, kind = "under_terrain",
              doors = { { inside = { 43, 7, 16 }, outside = { 37, 7, 16 } } } } },
  output = dir, progress = function() end,
})

local missing, checked = {}, 0
local function need(token)
  checked = checked + 1
  if not documented(token) then missing[#missing + 1] = token end
end

describe("docs/reference.md", function()
  local world, objs
  setup(function()
    world = assert(octonav.world.load(dir))
    local tree = octonav.tree.new { depth = 5 }
    local q = octonav.query.new(tree)
    local path = assert(q:find({ 1, 1, 1 }, { 20, 2, 3 }))
    local graph = octonav.route.world(world.tree)
    objs = {
      ["tree:"] = tree, ["q:"] = q, ["path:"] = path, ["grid:"] = octonav.grid.new(4, 4, 4),
      ["ps:"] = octonav.pathserver.new(tree, { workers = 0 }),
      ["world:"] = world, ["nav:"] = octonav.navigator.new(world), ["budget:"] = octonav.navigator.budget {},
      ["s:"] = octonav.streamer.new(world, { load_padding = 8, unload_padding = 16 }),
      ["cs:"] = octonav.core.streamer.new(octonav.tree.new { depth = 4 }, dir, { load_padding = 8, unload_padding = 16 }),
      ["sm:"] = octonav.smoother.new(world.tree, { { 4, 8, 4 }, { 60, 8, 4 } }),
      ["graph:"] = graph, ["planner:"] = graph:planner(),
      ["job:"] = octonav.planner.start(world, { 4, 8, 4 }, { 60, 8, 4 }),
      ["rec:"] = require("octonav.crowd_record").new(octonav.crowd.new(octonav.tree.new { depth = 3 })),
      ["v:"] = require("octonav.view").new(),
    }
  end)
  teardown(function()
    objs["s:"]:close()
    objs["cs:"]:close()
    objs["nav:"]:close()
    objs["ps:"]:close()
    world:close()
    os.execute("rm -rf '" .. dir .. "'")
  end)

  before_each(function() missing = {} end)

  it("documents every module function", function()
    local modules = {
      ["octonav.tree."] = octonav.tree, ["octonav.grid."] = octonav.grid, ["octonav.query."] = octonav.query,
      ["octonav.pathserver."] = octonav.pathserver, ["octonav.route."] = octonav.route,
      ["octonav.movingai."] = octonav.movingai, ["octonav.world."] = octonav.world,
      ["octonav.planner."] = octonav.planner, ["octonav.navigator."] = octonav.navigator,
      ["octonav.smoother."] = octonav.smoother, ["octonav.streamer."] = octonav.streamer,
      ["octonav.bake."] = octonav.bake, ["octonav.core."] = octonav.core,
      ["octonav.core.debug."] = octonav.core.debug, ["octonav.core.streamer."] = octonav.core.streamer,
      ["odebug."] = odebug, ["octonav.crowd_record."] = require "octonav.crowd_record",
    }
    for prefix, t in pairs(modules) do
      for _, f in ipairs(functions_of(t)) do need(prefix .. f) end
    end
    for name in pairs(octonav.presets) do need("octonav.presets." .. name) end
    assert.are.same({}, missing)
  end)

  it("documents every method of every class", function()
    for prefix, obj in pairs(objs) do
      for _, m in ipairs(methods_of(obj)) do need(prefix .. m) end
    end
    assert.are.same({}, missing)
  end)

  it("documents every option", function()
    local sets = {
      ["octonav.tree.new"] = c_names("csrc/lua/lua_tree.c", "new_opts"),
      ["tree:add_heightfield"] = c_names("csrc/lua/lua_tree_edit.c", "hf_opts"),
      ["tree:export_obj"] = c_names("csrc/lua/lua_tree.c", "export_opts"),
      ["tree:random_free"] = c_names("csrc/lua/lua_points.c", "random_opts"),
      ["tree:set_areas"] = c_names("csrc/lua/lua_areas.c", "area_fields"),
      ["octonav.query.new"] = c_names("csrc/lua/lua_query.c", "new_opts"),
      ["q:find"] = c_names("csrc/lua/lua_query.c", "find_opts"),
      ["octonav.pathserver.new"] = c_names("csrc/lua/lua_pathserver.c", "new_opts"),
      ["ps:submit"] = c_names("csrc/lua/lua_pathserver.c", "find_opts"),
      ["octonav.streamer.new"] = c_names("csrc/lua/lua_streamer.c", "new_opts"),
      ["octonav.navigator.new"] = lua_keys("lua/octonav/navigator_opts.lua", "NAMES"),
      ["octonav.smoother.new"] = lua_keys("lua/octonav/smoother.lua", "DEFAULTS"),
      ["odebug.draw"] = lua_keys("lua/octonav/debug.lua", "DEFAULTS"),
      ["octonav.world.load"] = lua_ne_names("lua/octonav/world.lua", "function M.load("),
    }
    local budget = lua_ne_names("lua/octonav/navbudget.lua", "function M.new(")
    for k in pairs(require("octonav.navbudget").DEFAULTS) do budget[#budget + 1] = k end
    sets["octonav.navigator.budget"] = budget
    local routeb = read("csrc/lua/lua_route.c"):match('known%[%]%s*=%s*(%b{});%s*memset')
    sets["octonav.route.build"] = {}
    for s in routeb:gmatch('"([^"]*)"') do table.insert(sets["octonav.route.build"], s) end
    for fn, names in pairs(sets) do
      assert.is_true(#names > 0, fn .. ": no option names read")
      local text = options_section(fn)
      if not text then
        missing[#missing + 1] = "#### Options: " .. fn
      else
        for _, o in ipairs(names) do
          checked = checked + 1
          if not text:find("`" .. o .. "`", 1, true) then missing[#missing + 1] = fn .. " option " .. o end
        end
      end
    end
    assert.are.same({}, missing)
  end)

  it("documents every command of the command line", function()
    local cli = require "octonav.cli"
    local cmds = {}
    for c in cli.USAGE:gmatch("\n%s*octonav ([%w%-]+)") do cmds[c] = true end
    local n = 0
    for c in pairs(cmds) do n = n + 1; need("octonav " .. c) end
    assert.is_true(n >= 8, "commands read from the usage: " .. n)
    assert.are.same({}, missing)
  end)

  it("documents every function of the C API (octonav.h)", function()
    local n = 0
    local api = { read("csrc/octonav.h") } -- and the rooms' public headers it includes
    for h in api[1]:gmatch('#include "(octonav_%w+%.h)"') do
      local ls = assert(io.popen("ls csrc/*/" .. h))
      api[#api + 1] = read(ls:read("*l"))
      ls:close()
    end
    for name in table.concat(api, "\n"):gmatch("ON_API[^;{]-[%s%*](on_[%w_]+)%s*%(") do
      n = n + 1
      need(name)
    end
    assert.is_true(n >= 100, "C functions read from octonav.h: " .. n)
    assert.are.same({}, missing)
  end)

  it("names the debug draw one way only: require \"octonav.debug\", never octonav.debug.NAME", function()
    assert.is_nil(octonav.debug)
    local p = assert(io.popen("ls README.md docs/*.md"))
    for file in p:lines() do
      local at = read(file):find("octonav%.debug%.%a")
      assert.is_nil(at, file .. " names octonav.debug.<function>, which is nil")
    end
    p:close()
  end)

  it("a name absent from the reference is caught", function()
    assert.is_false(documented("tree:no_such_method_xyz"))
    assert.is_true(documented("tree:add_box"))
    assert.is_true(checked > 200, "entries checked: " .. checked)
  end)
end)
