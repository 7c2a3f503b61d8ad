-- spec/90-errors_spec.lua -- errors a user can act on (issue 32). Every error a public function raises
-- starts with that function's name ("world:plan: ...", "octonav.tree.new: ..."), names no line of the
-- library's files (no ".lua:NN:") and has one prefix (never "tree:add_box: add_box: ..."). The walk is
-- generated: every module function and every method of every class (read at run time, as spec/70 reads
-- them) called with wrong-typed arguments, then every method of closed objects; then files that are
-- not there, and the command line's error paths.
local octonav = require "octonav"
local cli = require "octonav.cli"

-- the name an error of `fn` (as the reference writes it: "tree:add_box", "octonav.tree.new") must start
-- with: the class part of a method as the library names its objects
local CLASS = {
  ["tree:"] = "tree:", ["q:"] = "query:", ["path:"] = "path:", ["grid:"] = "grid:", ["ps:"] = "pathserver:",
  ["world:"] = "world:", ["nav:"] = "navigator:", ["budget:"] = "budget:", ["s:"] = "streamer:",
  ["cs:"] = "streamer:", ["sm:"] = "smoother:", ["graph:"] = "graph:", ["planner:"] = "planner:",
}

-- nil when msg is an error message of function `name` as it should be, else what is wrong
local function fault(name, msg)
  if type(msg) ~= "string" then return "not a string: " .. tostring(msg) end
  if msg:find("%.lua:%d+:") then return "names a file and line" end
  if msg:sub(1, #name + 2) ~= name .. ": " then return "does not start with '" .. name .. ": '" end
  -- a second prefix: the name again, or a shorter form of it with its module or class ("route.build: ",
  -- "world:plan: "), or the command line's "octonav: " (a bare "start: " may be q:start's argument)
  local rest = msg:sub(#name + 3)
  local second = rest:match("^([%w_.:]+): ")
  if second and (second == name or second == "octonav" or (second:find("[.:]") and name:sub(-#second) == second)) then
    return "a doubled prefix"
  end
  return nil
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
  local idx = getmetatable(obj).__index
  if type(idx) == "function" then idx = octonav.world.World end -- (a closed world's: the world's methods)
  return functions_of(idx)
end

local function bake_small(dir)
  assert(octonav.bake {
    range = { min = { 0, 0, 0 }, max = { 64, 32, 32 } }, depth = 5,
    geometry = { { box = { min = { 30, 0, 0 }, max = { 34, 32, 26 } } } },
    holes = { { name = "cave", min = { 40, 4, 8 }, max = { 56, 16, 24 }, scale = 0.5, kind = "under_terrain",
                doors = { { inside = { 43, 7, 16 }, outside = { 37, 7, 16 } } } } },
    output = dir, progress = function() end,
  })
end

local dir = os.tmpname()
os.remove(dir)
bake_small(dir)

-- fresh objects of every class (prefix as the reference writes it -> object)
local function objects(world)
  local tree = octonav.tree.new { depth = 5 }
  local q = octonav.query.new(tree)
  local path = assert(q:find({ 1, 1, 1 }, { 20, 2, 3 }))
  local graph = octonav.route.world(world.tree)
  return {
    ["tree:"] = tree, ["q:"] = q, ["path:"] = path, ["grid:"] = octonav.grid.new(4, 4, 4),
    ["ps:"] = octonav.pathserver.new(tree, { workers = 0 }),
    ["nav:"] = octonav.navigator.new(world), ["budget:"] = octonav.navigator.budget {},
    ["s:"] = octonav.streamer.new(world, { load_padding = 8, unload_padding = 16 }),
    ["cs:"] = octonav.core.streamer.new(octonav.tree.new { depth = 4 }, dir, { load_padding = 8, unload_padding = 16 }),
    ["sm:"] = octonav.smoother.new(world.tree, { { 4, 8, 4 }, { 60, 8, 4 } }),
    ["graph:"] = graph, ["planner:"] = graph:planner(),
  }
end

-- the navigators' side of a budget (documented as the navigator's, not the game's: docs/reference.md)
local INTERNAL = { ["budget:take"] = true, ["budget:give"] = true, ["budget:wait"] = true, ["budget:spent"] = true,
  ["budget:step_size"] = true }

describe("errors of the API", function()
  local world, objs
  setup(function()
    world = assert(octonav.world.load(dir))
    objs = objects(world)
    objs["world:"] = world
  end)
  teardown(function()
    for _, k in ipairs { "s:", "cs:", "nav:", "ps:" } do objs[k]:close() end
    world:close()
  end)

  it("a method given wrong-typed arguments names itself and the argument", function()
    local bad, n = {}, 0
    for prefix, obj in pairs(objs) do
      for _, m in ipairs(methods_of(obj)) do
        local name = CLASS[prefix] .. m
        if m ~= "close" and not INTERNAL[prefix .. m] then
          for _, args in ipairs { { {}, {}, {}, {} }, { true, true, true, true } } do
            local ok, msg = pcall(obj[m], obj, table.unpack(args))
            if not ok then
              n = n + 1
              local f = fault(name, msg)
              if f then bad[#bad + 1] = prefix .. m .. ": " .. f .. ": " .. tostring(msg) end
            end
          end
        end
      end
    end
    assert.is_true(n > 100, "errors raised: " .. n)
    assert.are.same({}, bad)
  end)

  it("a module function given wrong-typed arguments names itself", function()
    local modules = {
      ["octonav.tree."] = octonav.tree, ["octonav.grid."] = octonav.grid, ["octonav.query."] = octonav.query,
      ["octonav.pathserver."] = octonav.pathserver, ["octonav.route."] = octonav.route,
      ["octonav.movingai."] = octonav.movingai, ["octonav.world."] = octonav.world,
      ["octonav.navigator."] = octonav.navigator, ["octonav.smoother."] = octonav.smoother,
      ["octonav.streamer."] = octonav.streamer, ["octonav.planner."] = octonav.planner,
      ["octonav.debug."] = require "octonav.debug", ["octonav.bake."] = octonav.bake,
    }
    -- the bake's stages check their config with one checker, whose errors name `octonav.bake` and the
    -- config field ("octonav.bake: config.range: required ...", as octonav.bake(config) itself)
    local STAGE = { check = true, grid = true, run = true, tile = true, hole = true, job = true, link = true }
    local bad, n = {}, 0
    for prefix, t in pairs(modules) do
      for _, f in ipairs(functions_of(t)) do
        for _, args in ipairs { { true, true, true, true }, { 1, 2, 3, 4 } } do
          local ok, msg = pcall(t[f], table.unpack(args))
          if not ok then
            n = n + 1
            local why = fault((prefix == "octonav.bake." and STAGE[f]) and "octonav.bake" or prefix .. f, msg)
            if why then bad[#bad + 1] = prefix .. f .. ": " .. why .. ": " .. tostring(msg) end
          end
        end
      end
    end
    -- the C module's own functions (with booleans only: numbers would be taken for file names)
    for prefix, t in pairs { ["octonav.core."] = octonav.core, ["octonav.core.debug."] = octonav.core.debug,
                             ["octonav.core.streamer."] = octonav.core.streamer } do
      for _, f in ipairs(functions_of(t)) do
        local ok, msg = pcall(t[f], true, true, true, true)
        if not ok then
          n = n + 1
          local why = fault(prefix .. f, msg)
          if why then bad[#bad + 1] = prefix .. f .. ": " .. why .. ": " .. tostring(msg) end
        end
      end
    end
    assert.is_true(n > 40, "errors raised: " .. n)
    assert.are.same({}, bad)
  end)

  it("option errors of the binding name the function and the option", function()
    local tree = octonav.tree.new { depth = 4 }
    local cases = {
      { function() octonav.tree.new { depth = {} } end, "octonav.tree.new: option 'depth': integer expected, got table" },
      { function() octonav.tree.new { scale = 0 / 0 } end, "octonav.tree.new: option 'scale': must be a finite number" },
      { function() octonav.query.new(tree, { max_nodes = {} }) end,
        "octonav.query.new: option 'max_nodes': integer expected, got table" },
      { function() octonav.query.new(tree):find({ 1, 1, 1 }, { 2, 2, 2 }, { smooth = 1 }) end,
        "query:find: option 'smooth' must be \"none\", \"greedy\" or \"binary\"" },
      { function() octonav.query.new(tree):find({ 1, 1, 1 }, { 2, 2, 2 }, { any_angle = 1 }) end,
        "query:find: option 'any_angle': boolean expected, got number" },
      { function() octonav.query.new(tree, { bogus = 1 }) end, "octonav.query.new: unknown option 'bogus'" },
      { function() tree:add_box({ 1, 1, 1 }, { "x", 2, 2 }) end,
        "tree:add_box: max: point {x, y, z} expected, element 1 is not a number" },
      { function() tree:boxes("x") end, "tree:boxes: argument #1: number expected, got string" },
      { function() tree.locate({}, { 1, 1, 1 }) end, "tree:locate: self: octonav.tree expected, got table" },
      { function() tree:landmarks_prepare(0) end, "tree:landmarks_prepare: n: must be an integer from 1 to 64" },
    }
    for _, c in ipairs(cases) do
      local ok, msg = pcall(c[1])
      assert.is_false(ok)
      -- (the position is the caller's: this file's line of the call)
      assert.are.equal(c[2], (msg:gsub("^spec/90%-errors_spec%.lua:%d+: ", "", 1)))
    end
    tree:close()
  end)

  it("a closed object's methods say so, named", function()
    local w = assert(octonav.world.load(dir))
    local o = objects(w)
    local nav = o["nav:"]
    w:close()
    o["world:"] = w
    local bad, n = {}, 0
    -- (the users of a tree first: a path server, a query hold theirs)
    for _, k in ipairs { "s:", "cs:", "ps:", "planner:", "graph:", "q:", "grid:", "tree:" } do o[k]:close() end
    for prefix, obj in pairs(o) do
      if prefix ~= "budget:" and prefix ~= "sm:" then
        for _, m in ipairs(methods_of(obj)) do
          local name = CLASS[prefix] .. m
          if m ~= "close" and not INTERNAL[prefix .. m] then
            local ok, msg = pcall(obj[m], obj, { 1, 1, 1 }, { 2, 2, 2 })
            if not ok then
              n = n + 1
              local f = fault(name, msg)
              if f then bad[#bad + 1] = prefix .. m .. ": " .. f .. ": " .. tostring(msg) end
            end
          end
        end
      end
    end
    assert.is_true(n > 80, "errors raised: " .. n)
    assert.are.same({}, bad)
    -- what each says, for one of each
    assert.are.same({ false, "world:plan: the world is closed (world:close())" },
      { pcall(w.plan, w, { 1, 1, 1 }, { 2, 2, 2 }) })
    assert.are.same({ false, "navigator:update: its world is closed (world:close())" },
      { pcall(nav.update, nav, { 4, 8, 4 }) })
    assert.are.same({ false, "octonav.navigator.new: world is closed (world:close())" },
      { pcall(octonav.navigator.new, w) })
    assert.are.same({ false, "tree:locate: attempt to use a closed octonav.tree" },
      { pcall(o["tree:"].locate, o["tree:"], { 1, 1, 1 }) })
    assert.are.equal("octonav.world (closed)", tostring(w))
    w:close() -- (again: nothing)
    nav:close()
  end)

  it("after world:close(), a navigator walking on it fails naming nav:update, not a line of the library", function()
    local w = assert(octonav.world.load(dir))
    local nav = octonav.navigator.new(w)
    nav:go { 60, 8, 4 }
    local st = nav:update { 4, 8, 4 }
    assert.is_truthy(st == "planning" or st == "moving")
    w:close()
    local ok, msg = pcall(nav.update, nav, { 4, 8, 4 })
    assert.is_false(ok)
    assert.are.equal("navigator:update: its world is closed (world:close())", msg)
    nav:close()
  end)

  it("errors raised from the library's Lua layers carry the user's line, not the library's", function()
    local w = assert(octonav.world.load(dir))
    local here = debug.getinfo(1, "S").short_src
    -- the C binding called from the streamer's Lua, and Lua checks one call deep inside the world
    local s = octonav.streamer.new(w, { load_padding = 8, unload_padding = 16 })
    local cases = {
      { function() s:add_agent { "x", 1, 1 } end, "streamer:add_agent: position: point {x, y, z} expected, element 1 is not a number" },
      { function() w:to_nav { 1, 2 } end, "world:to_nav: point: point {x, y, z} of finite numbers expected" },
      { function() w:set_door("nowhere", 1, false) end, "world:set_door: hole: unknown hole nowhere" },
      { function() w:door_box("nowhere", 1) end, "world:door_box: hole: unknown hole nowhere" },
    }
    for _, c in ipairs(cases) do
      local ok, msg = pcall(c[1])
      assert.is_false(ok)
      assert.is_nil(msg:find("octonav/", 1, true), msg)
      local file, rest = msg:match("^(.-):%d+: (.*)$")
      assert.are.equal(here, file, msg)
      assert.are.equal(c[2], rest)
    end
    s:close()
    w:close()
  end)

  it("files that are not there: nil and a reason naming the path, no library line", function()
    for _, c in ipairs {
      { octonav.tree.load, "/nonexistent/t.onav" }, { octonav.world.load, "/nonexistent/pack" },
      { octonav.movingai.load_map, "/nonexistent/m.3dmap" }, { octonav.grid.load_voxmap, "/nonexistent/m.3dmap" },
    } do
      local r, why = c[1](c[2])
      assert.is_nil(r)
      assert.is_truthy(why:find(c[2], 1, true), why)
      assert.is_nil(why:find("%.lua:%d+:"), why)
      assert.is_nil(why:find("^octonav: "), why)
    end
  end)
end)

describe("errors of the command line", function()
  local function run(argv)
    local out, err = {}, {}
    local so, se = cli.stdout, cli.stderr
    cli.stdout = { write = function(_, ...) for _, s in ipairs { ... } do out[#out + 1] = s end end }
    cli.stderr = { write = function(_, ...) for _, s in ipairs { ... } do err[#err + 1] = s end end }
    local ok, code = pcall(cli.run, argv)
    cli.stdout, cli.stderr = so, se
    assert(ok, code)
    return code, table.concat(out), table.concat(err)
  end

  local cfg = os.tmpname() .. ".lua"
  local f = assert(io.open(cfg, "w"))
  f:write('return { range = { min = { 0, 0, 0 }, max = { 64, 32, 32 } }, depth = 5, output = "/nonexistent/out" }\n')
  f:close()
  local file = os.tmpname()
  local badout = os.tmpname() .. ".lua" -- a config whose output lies under a file
  f = assert(io.open(badout, "w"))
  f:write(('return { range = { min = { 0, 0, 0 }, max = { 64, 32, 32 } }, depth = 5, output = %q }\n'):format(file .. "/out"))
  f:close()
  local empty = os.tmpname()
  os.remove(empty)
  assert(octonav.core.mkdir(empty))
  teardown(function()
    os.remove(cfg)
    os.remove(badout)
    os.remove(file)
    os.remove(empty)
  end)

  -- argv, exit code, the first line on stderr
  local cases = {
    { { "info", cfg }, 1, ("octonav: info: %s is a file, not a pack directory (a bake config? `octonav bake %s` "
      .. "writes the pack its `output` names)"):format(cfg, cfg) },
    { { "info", file }, 1, ("octonav: info: %s is a file, not a pack directory"):format(file) },
    { { "info", "/nonexistent/pack" }, 1, "octonav: info: /nonexistent/pack: no such pack directory" },
    { { "validate", empty }, 1,
      ("octonav: validate: %s holds no pack (no manifest.txt: `octonav bake CONFIG.lua` writes one)"):format(empty) },
    { { "path", dir, "4", "8", "4", "60", "8", "4", "--obj", "/nonexistent/dir/p.obj" }, 1,
      "octonav: path: /nonexistent/dir/p.obj: cannot write: no directory /nonexistent/dir" },
    { { "path", dir, "4", "8", "4", "60", "8", "4", "--obj", file .. "/p.obj" }, 1,
      ("octonav: path: %s/p.obj: cannot write: %s is not a directory"):format(file, file) },
    { { "path", "/nonexistent/pack", "4", "8", "4", "60", "8", "4" }, 1,
      "octonav: path: /nonexistent/pack: no such pack directory" },
    { { "bake", cfg, "--tile", "99,0,0" }, 1, "octonav: bake: --tile 99,0,0: tile index 99 out of range (0..1 on axis 1)" },
    { { "bake", cfg, "--tile", "x" }, 1, "octonav: bake: --tile x: I,J,K expected (tile indices from 0)" },
    { { "bake", cfg, "--job", "3/2" }, 1, "octonav: bake: --job 3/2: N/M expected (job N of M, 0 <= N < M)" },
    { { "bake", "/nonexistent/c.lua" }, 1, "octonav: bake: /nonexistent/c.lua: No such file or directory" },
    { { "bake", badout }, 1, ("octonav: bake: output %s/out: %s is not a directory"):format(file, file) },
    { { "view" }, 2, "octonav: view: an input (pack directory, tree file or .3dmap) expected" },
    { { "view", "/nonexistent/pack" }, 1, "octonav: view: /nonexistent/pack: cannot read: No such file or directory" },
    { { "view", dir, "-o", "/nonexistent/dir/v.html" }, 1,
      "octonav: view: /nonexistent/dir/v.html: cannot write: no directory /nonexistent/dir" },
  }

  it("says what is wrong in one line: octonav: COMMAND: what, before any work", function()
    for _, c in ipairs(cases) do
      local code, out, err = run(c[1])
      local cmd = table.concat(c[1], " ")
      assert.are.equal(c[2], code, cmd)
      assert.are.equal("", out, cmd) -- nothing done before the error (no route printed)
      assert.are.equal(c[3], err:match("^[^\n]*"), cmd)
      assert.is_nil(err:find("%.lua:%d+:"), cmd)
      assert.is_nil(err:find("octonav: octonav", 1, true), cmd)
    end
  end)

  it("prints a command's usage on bad usage as COMMAND --help prints it", function()
    for _, c in ipairs { { "view", { "view" } }, { "view", { "view", dir, "--bogus" } },
                         { "path", { "path", dir, "1" } }, { "bake", { "bake" } }, { "info", { "info" } } } do
      local _, help = run { c[1], "--help" }
      local code, out, err = run(c[2])
      assert.are.equal(2, code)
      assert.are.equal("", out)
      assert.are.equal(help, err:match("^[^\n]*\n(.*)$"), c[1])
    end
  end)
end)

-- (busted runs the blocks above after this file's chunk: the pack goes in the last block's teardown)
describe("the pack of these specs", function()
  teardown(function() os.execute("rm -rf '" .. dir .. "'") end)
  it("was baked", function() assert.is_truthy(io.open(dir .. "/manifest.txt", "rb")) end)
end)
