-- spec/155-stream_holes_rule_spec.lua -- the holes' rule of streamer:update() asks the C streamer
-- whether an agent is inside a hole's box (s.core:agents_in(min, max), csrc/stream/streamer.c) instead
-- of a Lua loop over every agent for every hole every update (issue 31, goal 1: on the seed's world
-- streamed, 1,000 agents and 2 holes, 0.13 -> 0.06-0.07 ms a quiet update).
-- Run: busted --lua=lua5.4 spec/155-stream_holes_rule_spec.lua
--
-- World: spec/support/bakedworld.lua, two tiles of 16 along x (depth 4, scale 1; box [0,32] x [0,16] x
-- [0,16]) and the hole "cave", box [4,12] x [2,10] x [4,12] (scale 0.5) in tile (0, 0, 0).
local streamer = require "octonav.streamer"
local files = dofile("spec/support/files.lua")
local bw = dofile("spec/support/bakedworld.lua")

local tmp = files.tracker(files.rm_rf)
local pack

describe("the holes' rule: an agent inside a hole's box, asked of the C streamer", function()
  setup(function()
    pack = tmp.dir()
    local ok, err = bw.call_bake(bw.config(pack))
    assert(ok, tostring(err))
  end)
  teardown(tmp.cleanup)

  it("s.core:agents_in(min, max): live agents only, bounds included", function()
    local s = assert(streamer.new(pack, { load_padding = 1, unload_padding = 2, workers = 0 }))
    local c = s.core
    local mn, mx = { 4, 2, 4 }, { 12, 10, 12 }
    assert.is_false(c:agents_in(mn, mx)) -- no agent yet
    local a = s:add_agent { 20, 8, 8 }
    assert.is_false(c:agents_in(mn, mx))
    s:move_agent(a, { 12, 10, 12 }) -- the box's max corner: inside
    assert.is_true(c:agents_in(mn, mx))
    s:move_agent(a, { 12.001, 10, 12 })
    assert.is_false(c:agents_in(mn, mx))
    s:move_agent(a, { 4, 2, 4 }) -- the min corner
    assert.is_true(c:agents_in(mn, mx))
    s:move_agent(a, { 4, 1.999, 4 })
    assert.is_false(c:agents_in(mn, mx))
    local b = s:add_agent { 8, 6, 8 }
    assert.is_true(c:agents_in(mn, mx))
    s:remove_agent(b) -- a removed agent is not inside anything
    assert.is_false(c:agents_in(mn, mx))
    assert.is_true(c:agents_in({ 0, 0, 0 }, { 4, 2, 4 })) -- (a: at the max corner of this one)
    assert.is_false(c:agents_in({ 5, 0, 0 }, { 4, 16, 16 })) -- an empty box (min above max)
    s:close()
  end)

  it("s.core:agents_in: bad arguments raise naming the argument", function()
    local s = assert(streamer.new(pack, { load_padding = 1, unload_padding = 2, workers = 0 }))
    assert.has_error(function() s.core:agents_in(nil, { 1, 1, 1 }) end)
    assert.has_error(function() s.core:agents_in({ 0, 0, 0 }, "max") end)
    local ok, err = pcall(s.core.agents_in, s.core, { 0, 0 }, { 1, 1, 1 })
    assert.is_false(ok)
    assert.matches("agents_in", tostring(err), 1, true)
    assert.matches("min", tostring(err), 1, true)
    s:close()
    assert.has_error(function() s.core:agents_in({ 0, 0, 0 }, { 1, 1, 1 }) end)
  end)

  it("s:agent_position(id): the position the C streamer holds (a copy), nil for no such agent", function()
    local s = assert(streamer.new(pack, { load_padding = 1, unload_padding = 2, workers = 0 }))
    local a = s:add_agent { 20, 8, 8 }
    assert.are.same({ 20, 8, 8 }, s:agent_position(a))
    local p = { 3.25, 6.5, 9.75 }
    s:move_agent(a, p)
    local q = s:agent_position(a)
    assert.are.same({ 3.25, 6.5, 9.75 }, q)
    q[1] = 99 -- a copy: the streamer's is unchanged
    assert.are.same({ 3.25, 6.5, 9.75 }, s:agent_position(a))
    assert.is_nil(s:agent_position(a + 1))
    assert.is_nil(s.core:agent_position(a + 1))
    assert.is_nil(s.core:agent_position(0))
    s:remove_agent(a)
    assert.is_nil(s:agent_position(a))
    assert.is_nil(s.core:agent_position(a))
    assert.has_error(function() s:move_agent(a, p) end)
    s:close()
    assert.has_error(function() s:agent_position(a) end, "streamer:agent_position: the streamer is closed")
    assert.has_error(function() s:move_agent(a, p) end, "streamer:move_agent: the streamer is closed")
  end)

  it("a hole loads when an agent enters its box and unloads once none is inside (unchanged rule)", function()
    local s = assert(streamer.new(pack, { load_padding = 1, unload_padding = 2, workers = 0 }))
    local a = s:add_agent { 24, 8, 8 } -- tile (1, 0, 0), outside the cave
    local ch = s:update(true)
    assert.are.same({}, ch.holes_loaded)
    assert.are.equal("unloaded", s:hole_state("cave"))
    s:move_agent(a, { 8, 6, 8 }) -- inside the cave's box
    ch = s:update(true)
    assert.are.same({ "cave" }, ch.holes_loaded)
    assert.are.equal("loaded", s:hole_state("cave"))
    local other = s:add_agent { 30, 8, 8 }
    s:move_agent(a, { 3, 6, 8 }) -- out of the box (x < 4), the other far away
    ch = s:update(true)
    assert.are.same({ "cave" }, ch.holes_unloaded)
    assert.are.equal("unloaded", s:hole_state("cave"))
    s:move_agent(other, { 12, 10, 12 }) -- the other at the box's max corner: needed again
    ch = s:update(true)
    assert.are.same({ "cave" }, ch.holes_loaded)
    s:remove_agent(other)
    ch = s:update(true)
    assert.are.same({ "cave" }, ch.holes_unloaded)
    s:close()
  end)
end)
