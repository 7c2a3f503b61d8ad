-- spec/107-crowd_threads_spec.lua -- the crowd's `threads` option (issue 33: csrc/crowd/workers.c,
-- crowd.c's frame phases): checked like every option, and the frames the same bit for bit on 1, 2
-- and 4 threads (two groups crossing head on, keeping right of each other).
local octonav = require "octonav"

local function raises(f, msg)
  local ok, err = pcall(f)
  assert.is_false(ok, "no error, expected: " .. msg)
  assert.truthy(tostring(err):find(msg, 1, true), ("expected %q in %q"):format(msg, tostring(err)))
end

-- 40 agents in two groups of 20 facing each other five leaves apart, each sent to the place of the
-- one facing it; every frame's positions and velocities, as strings of %a (exact) numbers
local function run(threads, frames)
  local tree = octonav.tree.new { depth = 5 }
  local c = octonav.crowd.new(tree, { max_agents = 40, threads = threads })
  local ids = {}
  for i = 0, 19 do
    local y, z = 4 + 6 * (i % 4), 4 + 6 * (math.floor(i / 4) % 5)
    local a = assert(c:add { pos = { 13.5, y, z }, radius = 1 })
    local b = assert(c:add { pos = { 18.5, y, z }, radius = 1 })
    c:set_path(a, { { 18.5, y, z } })
    c:set_path(b, { { 13.5, y, z } })
    ids[#ids + 1], ids[#ids + 2] = a, b
  end
  local out, t = {}, {}
  for _ = 1, frames do
    c:update(1 / 30)
    local s, n = c:states(t)
    local parts = {}
    for k = 1, 6 * n do parts[k] = ("%.17g"):format(s[k]) end
    out[#out + 1] = table.concat(parts, " ")
  end
  local moved = 0
  for _, id in ipairs(ids) do
    local x = c:position(id)
    if math.abs(x - 16) > 2 then moved = moved + 1 end
  end
  c:close()
  tree:close()
  return out, moved
end

describe("octonav.crowd threads", function()
  it("checks the option: an integer in 1 .. 64", function()
    local tree = octonav.tree.new { depth = 4 }
    raises(function() octonav.crowd.new(tree, { threads = 0 }) end,
      "octonav.crowd.new: threads must be a finite number in [1, 64]")
    raises(function() octonav.crowd.new(tree, { threads = 65 }) end,
      "octonav.crowd.new: threads must be a finite number in [1, 64]")
    raises(function() octonav.crowd.new(tree, { threads = 1.5 }) end, "option 'threads': integer expected, got number")
    raises(function() octonav.crowd.new(tree, { threads = {} }) end, "option 'threads': integer expected, got table")
    raises(function() octonav.crowd.new(tree, { thread = 2 }) end, "octonav.crowd.new: unknown option 'thread'")
    local c = octonav.crowd.new(tree, { threads = 64 })
    c:update(1 / 30) -- no agents: nothing to split
    c:close()
    tree:close()
  end)

  it("gives the same frames bit for bit on 1, 2 and 4 threads", function()
    local one, moved = run(1, 90)
    local two = run(2, 90)
    local four = run(4, 90)
    assert.is_true(moved >= 30, "agents moved: " .. moved)
    assert.are.equal(#one, #two)
    for f = 1, #one do
      assert.are.equal(one[f], two[f], "frame " .. f .. " on 2 threads")
      assert.are.equal(one[f], four[f], "frame " .. f .. " on 4 threads")
    end
  end)
end)
