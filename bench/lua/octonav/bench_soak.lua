--- octonav.bench_soak: the streaming soak of issue 12 (`make bench-soak`; bench_world.soak and
-- bench_world.soak_report call it): 100 navigators over a streamed world of caves whose doors toggle,
-- under max_loaded. Benchmark code: never part of the installed library.
local U = require "octonav.bench_util"
local clock, dist, rm_rf, rng, tmpdir = U.clock, U.dist, U.rm_rf, U.rng, U.tmpdir

local M = {}

-- ---- the streaming soak (issue 12) ----------------------------------------------------------------

-- Does segment a-b enter the inside of box (touching a face is not entering)?
local function crosses(a, b, box)
  local t0, t1 = 0, 1
  for k = 1, 3 do
    local lo, hi, d = box.min[k] + 1e-6, box.max[k] - 1e-6, b[k] - a[k]
    if math.abs(d) < 1e-15 then
      if a[k] <= lo or a[k] >= hi then return false end
    else
      local u, v = (lo - a[k]) / d, (hi - a[k]) / d
      if u > v then u, v = v, u end
      t0, t1 = math.max(t0, u), math.min(t1, v)
      if t0 >= t1 then return false end
    end
  end
  return true
end

-- The soak's world: N x 1 x N tiles of 16 units over a ground slab, a cave (a hole, scale 0.5) in
-- every other tile, each with a doorway (and its door, with its box) in its -x and +x walls.
local function soak_config(n, dir)
  local geo = { { box = { min = { 0, 0, 0 }, max = { 16 * n, 1, 16 * n } } } }
  local holes = {}
  for ti = 0, n - 1 do
    for tk = 0, n - 1 do
      if (ti + tk) % 2 == 0 then
        local x, z = 16 * ti, 16 * tk
        local function b(a, c)
          geo[#geo + 1] = { box = { min = { x + a[1], a[2], z + a[3] }, max = { x + c[1], c[2], z + c[3] } } }
        end
        b({ 4, 1, 4 }, { 12, 3, 12 }); b({ 4, 9, 4 }, { 12, 10, 12 }); b({ 4, 2, 4 }, { 12, 10, 5 })
        b({ 4, 2, 11 }, { 12, 10, 12 })
        for _, wx in ipairs { 4, 11 } do
          b({ wx, 2, 4 }, { wx + 1, 10, 7 }); b({ wx, 2, 9 }, { wx + 1, 10, 12 })
          b({ wx, 2, 7 }, { wx + 1, 5, 9 }); b({ wx, 7, 7 }, { wx + 1, 10, 9 })
        end
        holes[#holes + 1] = { name = ("cave%d_%d"):format(ti, tk), min = { x + 4, 2, z + 4 },
          max = { x + 12, 10, z + 12 }, scale = 0.5, kind = "under_terrain", doors = {
            { inside = { x + 5.5, 6, z + 8 }, outside = { x + 3.5, 6, z + 8 },
              box = { min = { x + 4, 5, z + 7 }, max = { x + 5, 7, z + 9 } } },
            { inside = { x + 10.5, 6, z + 8 }, outside = { x + 12.5, 6, z + 8 },
              box = { min = { x + 11, 5, z + 7 }, max = { x + 12, 7, z + 9 } } } } }
      end
    end
  end
  return { range = { min = { 0, 0, 0 }, max = { 16 * n, 16, 16 * n } }, depth = 4, scale = 1, geometry = geo,
    holes = holes, output = dir, progress = function() end }
end

--- bench_world.soak(opts) -> counts: `navigators` (100) navigators bound to one streamer (max_loaded
-- = `max_loaded`, 12) walk to random goals (half of them in caves) on a `tiles` x 1 x `tiles` (6)
-- world for `frames` (2000) frames while `toggles` (1) random doors change state a frame (seed
-- `seed`). Counts: through_closed (agent steps entering a door's box while that door was closed;
-- committed = of them, agents already on that door's leg when it closed), silent (an agent planning
-- wait_timeout + 100 frames in a row without failing), rule_violations (after update(true): a locked
-- tile not loaded, more tiles loaded than max_loaded + the locked ones, the world graph's tiles not
-- the loaded tiles), arrived, failed (by reason), door_replans, door changes and their mean us;
-- respawned: agents moved to a new random start after failing start_blocked. opts.budget: the options of
-- one octonav.navigator.budget all the navigators share (nil: none).
function M.soak(opts)
  opts = opts or {}
  local bake = require "octonav.bake"
  local streamer = require "octonav.streamer"
  local navigator = require "octonav.navigator"
  local n, navs_n, frames = opts.tiles or 6, opts.navigators or 100, opts.frames or 2000
  local max_loaded, wait_timeout = opts.max_loaded or 12, opts.wait_timeout or 300
  local rand = rng(opts.seed or 1)
  local dir = tmpdir()
  local cfg = soak_config(n, dir)
  assert(bake(cfg))
  local s = assert(streamer.new(dir, { load_padding = 4, unload_padding = 12, workers = 1, max_loaded = max_loaded }))
  local w = s.world
  local doors = {}
  for hi, h in ipairs(cfg.holes) do
    for di, d in ipairs(h.doors) do
      w:door_box(hi, di, d.box)
      doors[#doors + 1] = { hole = hi, door = di, box = d.box }
    end
  end
  local function goal()
    if rand() < 0.5 then
      local h = cfg.holes[1 + math.floor(rand() * #cfg.holes)]
      return { h.min[1] + 4, 6, h.min[3] + 4 }
    end
    while true do
      local p = { 0.5 + rand() * (16 * n - 1), 1.5 + rand() * 6, 0.5 + rand() * (16 * n - 1) }
      local inside = false
      for _, h in ipairs(cfg.holes) do
        if p[1] >= h.min[1] - 1 and p[1] <= h.max[1] + 1 and p[3] >= h.min[3] - 1 and p[3] <= h.max[3] + 1 then inside = true end
      end
      if not inside then return p end
    end
  end
  local r = { through_closed = 0, committed = 0, silent = 0, rule_violations = 0, arrived = 0, failed = {},
    door_replans = 0, door_changes = 0, respawned = 0, door_us = 0, frames = frames, navigators = navs_n,
    max_loaded = max_loaded }
  local agents = {}
  local budget = opts.budget and navigator.budget(opts.budget) or nil
  for i = 1, navs_n do
    local p = goal()
    if p[2] == 6 then p = { p[1] - 6, 1.5, p[3] - 6 } end -- start outside the caves
    local nav = navigator.new(w, { streamer = s, wait_timeout = wait_timeout, budget = budget })
    nav:go(goal())
    agents[i] = { nav = nav, pos = p, planning = 0, committed = {} }
  end
  local t_door = 0
  for _ = 1, frames do
    for _ = 1, opts.toggles or 1 do
      local d = doors[1 + math.floor(rand() * #doors)]
      local open = not w.holes[d.hole].doors[d.door].open
      if not open then -- agents on this door's leg now go through (navigator.lua): counted apart
        for _, a in ipairs(agents) do
          local leg = a.nav.legs and a.nav.legs[a.nav.leg_i]
          a.committed[d] = leg and leg.kind == "door" and crosses(a.pos, leg.to, d.box) or nil
        end
      end
      local t0 = clock()
      w:set_door(d.hole, d.door, open)
      t_door = t_door + (clock() - t0)
      r.door_changes = r.door_changes + 1
    end
    s:update(true)
    if budget then budget:frame() end
    -- the loaded-set rules
    local st = s:stats()
    if st.loaded > max_loaded + st.locked or w.graph:stats().tiles ~= st.loaded then
      r.rule_violations = r.rule_violations + 1
    end
    for _, a in ipairs(agents) do
      local status, wp = a.nav:update(a.pos)
      if status == "moving" then
        local d = dist(a.pos, wp)
        local t = d > 0 and math.min(1, 0.5 / d) or 0
        local np = { a.pos[1] + (wp[1] - a.pos[1]) * t, a.pos[2] + (wp[2] - a.pos[2]) * t, a.pos[3] + (wp[3] - a.pos[3]) * t }
        for _, dd in ipairs(doors) do
          if not w.holes[dd.hole].doors[dd.door].open and crosses(a.pos, np, dd.box) then
            if a.committed[dd] then r.committed = r.committed + 1 else r.through_closed = r.through_closed + 1 end
          end
        end
        a.pos = np
      end
      a.planning = status == "planning" and a.planning + 1 or 0
      if a.planning == wait_timeout + 100 then r.silent = r.silent + 1 end
      if status == "arrived" or status == "failed" then
        if status == "arrived" then r.arrived = r.arrived + 1 else r.failed[wp] = (r.failed[wp] or 0) + 1 end
        a.committed = {}
        if wp == "start_blocked" then -- stopped on a blocked cell's face (see the report): start elsewhere
          repeat a.pos = goal() until a.pos[2] ~= 6
          r.respawned = r.respawned + 1
        end
        a.nav:go(goal())
      end
    end
  end
  for _, a in ipairs(agents) do
    r.door_replans = r.door_replans + a.nav:stats().door_replans
    a.nav:close()
  end
  r.door_us = t_door / math.max(1, r.door_changes) * 1e6
  s:close()
  rm_rf(dir)
  return r
end

--- bench_world.soak_report(opts) -> the soak's counts as one line of text.
function M.soak_report(opts)
  local t0 = clock()
  local r = M.soak(opts)
  local fl = {}
  for k, v in pairs(r.failed) do fl[#fl + 1] = ("%s %d"):format(k, v) end
  table.sort(fl)
  return ("soak: %d navigators, %d frames, max_loaded %d: %d door changes (%.1f us each), through a closed door %d" ..
    " (+%d already on its leg when it closed), silent stalls %d, loaded-set rule violations %d, arrived %d," ..
    " failed {%s}, respawned %d, door replans %d, %.1f s"):format(r.navigators, r.frames, r.max_loaded, r.door_changes, r.door_us,
    r.through_closed, r.committed, r.silent, r.rule_violations, r.arrived, table.concat(fl, ", "), r.respawned, r.door_replans,
    clock() - t0)
end

return M
