-- spec/29-repl_spec.lua -- what a REPL user meets: tostring of worlds, routes and navigators, <close>,
-- and errors that name the function called
local octonav = require "octonav"
local files = dofile("spec/support/files.lua")

-- 2 x 1 x 1 tiles of 16 units over a ground slab with a wall across tile 0 (a gap at z > 12)
local function config(dir)
  return {
    range = { min = { 0, 0, 0 }, max = { 32, 16, 16 } }, depth = 4, scale = 1,
    geometry = { { box = { min = { 0, 0, 0 }, max = { 32, 1, 16 } } }, { box = { min = { 8, 0, 0 }, max = { 9, 16, 12 } } } },
    output = dir,
  }
end

local it54 = dofile("spec/support/close54.lua")(it, pending, _ENV) -- <close> tests run on Lua 5.4 only

describe("REPL conveniences", function()
  local dir
  setup(function()
    dir = files.tmpname()
    assert(octonav.bake(config(dir)))
  end)
  teardown(function() files.rm_rf(dir) end)

  it54("a world closes at the end of a <close> block", { octonav = octonav, dir = function() return dir end }, [[ -- (dir: made in setup)
    local tree
    do
      local w <close> = assert(octonav.world.load(dir()))
      tree = w.tree
      assert.are.equal("free", (tree:locate { 20, 5, 8 }))
    end
    assert.has_error(function() tree:locate { 20, 5, 8 } end)
  ]])

  it("world:plan errors name world:plan; the planner's own name its function", function()
    local w = assert(octonav.world.load(dir))
    assert.has_error(function() w:plan({ 0 / 0, 1, 1 }, { 20, 5, 8 }) end,
      "world:plan: start must be a point {x, y, z} of finite numbers")
    assert.has_error(function() w:plan({ 2, 5, 8 }, "x") end, "world:plan: goal must be a point {x, y, z} of finite numbers")
    assert.has_error(function() octonav.planner.plan(w, { 2, 5, 8 }, {}) end,
      "octonav.planner.plan: goal must be a point {x, y, z} of finite numbers")
  end)

  it("a route prints its steps", function()
    local w = assert(octonav.world.load(dir))
    local route = assert(w:plan({ 2, 5, 8 }, { 20, 5, 8 }))
    assert.are.equal("octonav.route: 2 steps: tile 0 -> tile 1", tostring(route))
    local one = assert(w:plan({ 2, 5, 8 }, { 4, 5, 8 }))
    assert.are.equal("octonav.route: 1 step: tile 0", tostring(one))
    -- still a plain array of steps
    assert.are.equal(2, #route)
    assert.are.equal("tile", route[1].kind)
  end)

  it54("a navigator closes at the end of a <close> block", { octonav = octonav, dir = function() return dir end }, [[ -- (dir: made in setup)
    local w <close> = assert(octonav.world.load(dir()))
    local outer
    do
      local nav <close> = octonav.navigator.new(w)
      outer = nav
      nav:go { 20, 5, 8 }
      assert.are.equal("moving", nav:update({ 2, 5, 8 }, 100000))
    end
    assert.is_nil(next(outer.queries)) -- (closed: it holds no query)
    assert.are.equal("free", (w.tree:locate { 20, 5, 8 }))
  ]])

  it("a navigator prints its state", function()
    local w = assert(octonav.world.load(dir))
    do
      local nav = octonav.navigator.new(w)
      assert.are.equal("octonav.navigator: idle", tostring(nav))
      nav:go { 20, 5, 8 }
      assert.are.equal("octonav.navigator: planning, goal (20, 5, 8)", tostring(nav))
      local st = nav:update({ 2, 5, 8 }, 100000)
      assert.are.equal("moving", st)
      assert.matches("^octonav%.navigator: moving, step %d of %d searched, goal %(20, 5, 8%)$", tostring(nav))
      assert.is_nil(next(nav.queries)) -- (its search over, its query went back to the idle ones: spec/54)
      nav:go { 20, 0.5, 8 }
      assert.are.equal("failed", (nav:update({ 2, 5, 8 })))
      assert.are.equal("octonav.navigator: failed: goal_blocked, goal (20, 0.5, 8)", tostring(nav))
      nav:close()
    end
    -- closed: it holds no query, the world stays usable
    assert.are.equal("free", (w.tree:locate { 20, 5, 8 }))
  end)
end)
