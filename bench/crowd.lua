--- bench/crowd.lua -- the crowd's scenarios (issue 33), checked from outside the crowd's code.
--
-- As a library (dofile("bench/crowd.lua"), what spec/86 does): M.run(name, opts) builds a scenario,
-- runs it and returns its report. As a script (make bench-crowd), the full scenarios and the table:
--   lua5.4 bench/crowd.lua [--quick]
--   lua5.4 bench/crowd.lua --seeds 1-20 [scenario ...]   every scenario (or those named) at each seed
-- A seed (o.seed) places the door's agents and goals, turns and tilts the sphere's spiral, moves the
-- tunnel's groups (a leaf across, 4 along) and turns the mixed circle and deals its radii; without one
-- each scenario has its layout of before (the door: seed 7).
-- Scenarios (fixed seeds, leaves of 1 unit, dt = 1/30 s):
--   sphere     agents on a sphere swap to their antipodes (all meet in the middle)
--   tunnel     two groups cross through a tunnel in a wall, one agent wide in its middle
--   door       a bottleneck: a group goes through a door in a wall (a 4 x 4 leaf opening)
--   mixed      radii 0.5 to 4 leaves in one crowd, swapping across a circle round a pillar
-- Each frame the checker reads every agent's position and velocity (crowd:states) and counts:
-- overlaps (centres closer than the sum of the radii less 1 % of the smaller), wall entries (an agent's
-- sphere reaching into a blocked leaf by more than 1 % of its radius: the leaves are read once from the
-- tree with tree:locate_status, never through the crowd's boundary), acceleration, turn and speed
-- limits exceeded (the same rules as octonav_crowd.h states them), arrivals within twice the frames of
-- an unobstructed walk (the search's path length at top speed, plus the time to reach top speed),
-- agents stuck (not arrived and moved less than one leaf over 300 frames) and for how long.
local octonav = require "octonav"

local M = {}

local DT = 1 / 30

-- a deterministic xorshift in [0, 1): the plain xorshift64 (13, 7, 17) from state = seed, in C so that
-- every Lua draws the same sequence (issue 34: 5.3's bit operators before)
local rng = octonav.core.xorshift64

-- the blocked leaves of a tree's first nx x ny x nz leaves, read once with locate_status
local function blocked_grid(tree, nx, ny, nz)
  local b = {}
  for z = 0, nz - 1 do
    for y = 0, ny - 1 do
      for x = 0, nx - 1 do
        if tree:locate_status { x + 0.5, y + 0.5, z + 0.5 } ~= "free" then b[x + nx * (y + ny * z)] = true end
      end
    end
  end
  return { b = b, nx = nx, ny = ny, nz = nz }
end

-- how far an agent at p of radius r reaches into blocked space (0: not at all): the largest r - distance
-- to a blocked leaf's box, leaves outside the grid counting as blocked
local function wall_depth(g, px, py, pz, r)
  local worst = 0
  for z = math.floor(pz - r), math.floor(pz + r) do
    for y = math.floor(py - r), math.floor(py + r) do
      for x = math.floor(px - r), math.floor(px + r) do
        local blocked = x < 0 or y < 0 or z < 0 or x >= g.nx or y >= g.ny or z >= g.nz or
          g.b[x + g.nx * (y + g.ny * z)]
        if blocked then
          local dx = px < x and x - px or px > x + 1 and px - x - 1 or 0
          local dy = py < y and y - py or py > y + 1 and py - y - 1 or 0
          local dz = pz < z and z - pz or pz > z + 1 and pz - z - 1 or 0
          local d = math.sqrt(dx * dx + dy * dy + dz * dz)
          if r - d > worst then worst = r - d end
        end
      end
    end
  end
  return worst
end

-- the checker: every frame's states against the rules
local function checker(crowd, agents, grid)
  local n = #agents
  local c = { overlaps = 0, walls = 0, accel = 0, turn = 0, speed = 0, frames = 0, arrived = 0,
    stuck_agents = 0, stuck_frames = 0, worst_overlap = 0, worst_wall = 0, fallbacks = 0 }
  local prev = crowd:states()
  local arrive_frame, still_since, anchor = {}, {}, {}
  for i = 1, n do anchor[i] = { prev[6 * i - 5], prev[6 * i - 4], prev[6 * i - 3] }; still_since[i] = 0 end
  local stuck_now = {}
  c.stuck_log = {}
  c.wall_log = {} -- the first 50 wall entries: frame, agent, depth, pos, vel
  local ids = crowd:ids()
  local st = {}
  local agent_t = {}
  function c.frame()
    c.frames = c.frames + 1
    local f = c.frames
    crowd:states(st)
    -- overlaps, through a hash of cells of the largest diameter
    local cell, buckets = 0, {}
    for i = 1, n do if agents[i].radius * 2 > cell then cell = agents[i].radius * 2 end end
    for i = 1, n do
      local x, y, z = st[6 * i - 5], st[6 * i - 4], st[6 * i - 3]
      local k = math.floor(x / cell) .. "," .. math.floor(y / cell) .. "," .. math.floor(z / cell)
      local bk = buckets[k]
      if not bk then bk = {}; buckets[k] = bk end
      bk[#bk + 1] = i
    end
    for i = 1, n do
      local x, y, z, ri = st[6 * i - 5], st[6 * i - 4], st[6 * i - 3], agents[i].radius
      local cx, cy, cz = math.floor(x / cell), math.floor(y / cell), math.floor(z / cell)
      for ox = -1, 1 do
        for oy = -1, 1 do
          for oz = -1, 1 do
            local bk = buckets[(cx + ox) .. "," .. (cy + oy) .. "," .. (cz + oz)]
            if bk then
              for _, j in ipairs(bk) do
                if j > i then
                  local rj = agents[j].radius
                  local d = math.sqrt((st[6 * j - 5] - x) ^ 2 + (st[6 * j - 4] - y) ^ 2 + (st[6 * j - 3] - z) ^ 2)
                  local gap = ri + rj - d
                  if gap > 0.01 * math.min(ri, rj) then c.overlaps = c.overlaps + 1 end
                  if gap > c.worst_overlap then c.worst_overlap = gap end
                end
              end
            end
          end
        end
      end
      local a = agents[i]
      local depth = wall_depth(grid, x, y, z, ri)
      if depth > 0.01 * ri then
        c.walls = c.walls + 1
        if #c.wall_log < 50 then
          c.wall_log[#c.wall_log + 1] = { frame = f, agent = i, depth = depth, pos = { x, y, z },
            vel = { st[6 * i - 2], st[6 * i - 1], st[6 * i] } }
        end
      end
      if depth > c.worst_wall then c.worst_wall = depth end
      -- limits, from the velocities of two frames
      local vx0, vy0, vz0 = prev[6 * i - 2], prev[6 * i - 1], prev[6 * i]
      local vx1, vy1, vz1 = st[6 * i - 2], st[6 * i - 1], st[6 * i]
      local dv = math.sqrt((vx1 - vx0) ^ 2 + (vy1 - vy0) ^ 2 + (vz1 - vz0) ^ 2)
      if dv > a.max_accel * DT * (1 + 1e-6) then c.accel = c.accel + 1 end
      local s0 = math.sqrt(vx0 * vx0 + vy0 * vy0 + vz0 * vz0)
      local s1 = math.sqrt(vx1 * vx1 + vy1 * vy1 + vz1 * vz1)
      if s1 > a.max_speed * (1 + 1e-9) then c.speed = c.speed + 1 end
      if s0 >= a.max_accel * DT and s1 > 1e-12 then
        local cs = (vx0 * vx1 + vy0 * vy1 + vz0 * vz1) / (s0 * s1)
        cs = math.max(-1, math.min(1, cs))
        if math.acos(cs) > a.max_turn_rate * DT * (1 + 1e-6) then c.turn = c.turn + 1 end
      end
      -- arrival and stuck
      if not arrive_frame[i] then
        crowd:agent(ids[i], agent_t)
        if agent_t.fallback then c.fallbacks = c.fallbacks + 1 end
        if agent_t.state == "arrived" then
          arrive_frame[i] = f
          c.arrived = c.arrived + 1
          if stuck_now[i] then stuck_now[i] = nil end
        else
          local an = anchor[i]
          if (x - an[1]) ^ 2 + (y - an[2]) ^ 2 + (z - an[3]) ^ 2 > 1 then
            anchor[i] = { x, y, z }
            still_since[i] = f
            stuck_now[i] = nil
          elseif f - still_since[i] >= 300 then
            if not stuck_now[i] then stuck_now[i] = true; c.stuck_agents = c.stuck_agents + 1 end
            c.stuck_frames = math.max(c.stuck_frames, f - still_since[i])
            c.stuck_log[i] = { since = still_since[i], frames = f - still_since[i] }
          end
        end
      end
    end
    prev, st = st, prev
  end
  c.arrive_frame = arrive_frame
  return c
end

-- the unobstructed walk of agent a from p to g: the search's path at top speed, plus reaching it
local function walk_frames(q, a, p, g)
  local _, info = q:find(p, g)
  local len = info and info.length or math.sqrt((g[1] - p[1]) ^ 2 + (g[2] - p[2]) ^ 2 + (g[3] - p[3]) ^ 2)
  return (len / a.max_speed + a.max_speed / a.max_accel) / DT
end

local function agent_spec(pos, r)
  return { pos = pos, radius = r, max_speed = 4, max_accel = 8, max_turn_rate = math.pi }
end

-- scenario builders: tree, crowd, agents (specs with their goals), grid dims
local builders = {}

function builders.sphere(o)
  local n, R, r = o.n or 24, o.R or 12, o.radius or 0.7
  local size = R * 2 + 8
  local depth = size <= 32 and 5 or size <= 64 and 6 or 7
  local tree = octonav.tree.new { depth = depth }
  local c0 = 2 ^ depth / 2
  local agents = {}
  local golden = math.pi * (3 - math.sqrt(5))
  -- a seed turns the spiral about y and tilts it about x by angles drawn from it (none: the plain spiral)
  local rnd = o.seed and rng(o.seed)
  local spin, tilt = rnd and 2 * math.pi * rnd() or 0, rnd and math.pi * (rnd() - 0.5) or 0
  local ct, stt = math.cos(tilt), math.sin(tilt)
  for i = 0, n - 1 do
    local y = 1 - 2 * (i + 0.5) / n
    local rr = math.sqrt(1 - y * y)
    local th = golden * i + spin
    local d = { math.cos(th) * rr, y, math.sin(th) * rr }
    d[2], d[3] = ct * d[2] - stt * d[3], stt * d[2] + ct * d[3]
    local a = agent_spec({ c0 + R * d[1], c0 + R * d[2], c0 + R * d[3] }, r)
    a.goal = { c0 - R * d[1], c0 - R * d[2], c0 - R * d[3] }
    agents[#agents + 1] = a
  end
  return tree, agents, { math.floor(2 ^ depth), math.floor(2 ^ depth), math.floor(2 ^ depth) }
end

-- a wall at x in [28, 36] of a 64 x 32 x 32 tree, with an opening (y, z in [lo, hi)) and a narrower
-- middle (x in [31, 33], y and z in [nlo, nhi))
local function wall_tree(lo, hi, nlo, nhi)
  local tree = octonav.tree.new { tiles = { 2, 1, 1 }, depth = 5 }
  local function solid_except(x0, x1, a, b)
    tree:add_box({ x0, 0, 0 }, { x1, a, 32 })
    tree:add_box({ x0, b, 0 }, { x1, 32, 32 })
    tree:add_box({ x0, a, 0 }, { x1, b, a })
    tree:add_box({ x0, a, b }, { x1, b, 32 })
  end
  solid_except(28, 31, lo, hi)
  solid_except(31, 33, nlo or lo, nhi or hi)
  solid_except(33, 36, lo, hi)
  return tree
end

function builders.tunnel(o)
  local per, r = o.n or 3, o.radius or 1
  -- 6 leaves wide (two agents of radius 1 abreast, with room), 3 in the middle (one agent: two need 4)
  local tree = wall_tree(13, 19, 14, 17)
  local agents = {}
  -- a seed moves each group's block by up to a leaf across the tunnel and 4 leaves along it
  local rnd = o.seed and rng(o.seed)
  local function j(w) return rnd and w * (2 * rnd() - 1) or 0 end
  local oy, oz, ox1, ox2 = j(1), j(1), j(4), j(4)
  for i = 1, per do
    local y, z = 11 + 3 * ((i - 1) % 4) + oy, 11 + 3 * (math.floor((i - 1) / 4) % 4) + oz
    -- goals 3 leaves apart (they were 1.5 apart once: closer than two radii, the last agents of a group
    -- could never reach theirs with the first ones arrived there)
    local a = agent_spec({ 6 + ox1, y, z }, r)
    a.goal = { 58 + ox2, y, z }
    agents[#agents + 1] = a
    local b = agent_spec({ 58 + ox2, y + 1.5, z + 1.5 }, r)
    b.goal = { 6 + ox1, y + 1.5, z + 1.5 }
    agents[#agents + 1] = b
  end
  return tree, agents, { 64, 32, 32 }
end

function builders.door(o)
  local n, r = o.n or 12, o.radius or 0.5
  local tree = wall_tree(12, 16)
  local agents = {}
  local rnd = rng(o.seed or 7)
  local k = 0
  while #agents < n and k < 100000 do
    k = k + 1
    local p = { 4 + rnd() * 20, 3 + rnd() * 26, 3 + rnd() * 26 }
    local ok = true
    for _, a in ipairs(agents) do
      if (a.pos[1] - p[1]) ^ 2 + (a.pos[2] - p[2]) ^ 2 + (a.pos[3] - p[3]) ^ 2 < (4 * r) ^ 2 then ok = false end
    end
    if ok then
      local a = agent_spec(p, r)
      a.goal = { 44 + rnd() * 16, 4 + rnd() * 24, 4 + rnd() * 24 }
      agents[#agents + 1] = a
    end
  end
  return tree, agents, { 64, 32, 32 }
end

function builders.mixed(o)
  local n, R = o.n or 12, o.R or 22
  local tree = octonav.tree.new { depth = 6 }
  tree:add_box({ 30, 0, 30 }, { 34, 64, 34 }) -- a pillar through the middle
  local agents = {}
  -- a seed turns the circle by an angle and deals the radii round it in an order drawn from it
  local rnd = o.seed and rng(o.seed)
  local turn = rnd and 2 * math.pi * rnd() or 0
  local order = {}
  for i = 0, n - 1 do order[i] = (i * 7) % n end
  if rnd then
    for i = n - 1, 1, -1 do
      local k = math.floor(rnd() * (i + 1))
      order[i], order[k] = order[k], order[i]
    end
  end
  for i = 0, n - 1 do
    local th = 2 * math.pi * i / n + turn
    local r = 0.5 + 3.5 * order[i] / (n - 1) -- radii 0.5 .. 4, shuffled round the circle
    local a = agent_spec({ 32 + R * math.cos(th), 32 + ((i % 3) - 1) * 6, 32 + R * math.sin(th) }, r)
    a.goal = { 32 - R * math.cos(th), 32 - ((i % 3) - 1) * 6, 32 - R * math.sin(th) }
    agents[#agents + 1] = a
  end
  return tree, agents, { 64, 64, 64 }
end

--- Run a scenario: name, { n =, frames =, ... } -> report
function M.run(name, o)
  o = o or {}
  local tree, agents, dims = builders[name](o)
  if o.only then agents = { agents[o.only] } end -- one agent of the scenario alone (its unobstructed walk)
  local copts = { max_agents = #agents, plan_budget = o.plan_budget or 20000 }
  for k, v in pairs(o.crowd or {}) do copts[k] = v end -- the crowd's options, for experiments
  local crowd = octonav.crowd.new(tree, copts)
  local q = octonav.query.new(tree)
  local ids, walk = {}, {}
  for i, a in ipairs(agents) do
    local spec = {}
    for k, v in pairs(a) do if k ~= "goal" then spec[k] = v end end
    ids[i] = assert(crowd:add(spec))
    walk[i] = walk_frames(q, a, a.pos, a.goal)
    crowd:set_goal(ids[i], a.goal[1], a.goal[2], a.goal[3])
  end
  local grid = blocked_grid(tree, dims[1], dims[2], dims[3])
  local chk = checker(crowd, agents, grid)
  local frames = o.frames or 1500
  local times = {}
  local clock = octonav.core.thread_clock or os.clock
  for f = 1, frames do
    local t0 = clock()
    crowd:update(DT)
    times[f] = clock() - t0
    chk.frame()
    if o.on_frame then o.on_frame(f, crowd, ids) end
    if o.until_arrived and chk.arrived == #agents then break end
  end
  local in_time = 0
  for i = 1, #agents do
    if chk.arrive_frame[i] and chk.arrive_frame[i] <= 2 * walk[i] then in_time = in_time + 1 end
  end
  table.sort(times)
  local function pct(p) return times[math.max(1, math.ceil(p * #times))] * 1000 end
  local stats = crowd:stats()
  crowd:close()
  q:close()
  return {
    name = name, agents = #agents, frames = chk.frames, overlaps = chk.overlaps, walls = chk.walls,
    accel = chk.accel, turn = chk.turn, speed = chk.speed, arrived = chk.arrived, in_time = in_time,
    stuck_agents = chk.stuck_agents, stuck_frames = chk.stuck_frames, worst_overlap = chk.worst_overlap,
    worst_wall = chk.worst_wall, fallbacks = stats.fallbacks, p50 = pct(0.5), p99 = pct(0.99),
    max = times[#times] * 1000, arrive_frame = chk.arrive_frame, walk = walk, stuck_log = chk.stuck_log,
    wall_log = chk.wall_log,
  }
end

function M.format(r)
  return ("%-8s %5d agents %6d frames  overlaps %d  wall entries %d  limits %d/%d/%d  arrived %d (%d in time)" ..
    "  stuck %d (%d frames)  frame p50 %.3f p99 %.3f max %.3f ms"):format(r.name, r.agents, r.frames, r.overlaps,
    r.walls, r.accel, r.turn, r.speed, r.arrived, r.in_time, r.stuck_agents, r.stuck_frames, r.p50, r.p99, r.max)
end

-- The agents of run r that did not arrive within twice their unobstructed walk: "i: arrival_frame of
-- twice_walk, ..." ("nil": never arrived), "" when all were in time.
function M.late(r)
  local s = {}
  for i = 1, r.agents do
    local f = r.arrive_frame[i]
    if not f or f > 2 * r.walk[i] then s[#s + 1] = ("%d: %s of %.0f"):format(i, tostring(f), 2 * r.walk[i]) end
  end
  return table.concat(s, ", ")
end

-- Every scenario at seeds s0..s1 (full size, until every agent arrived, at most 10,000 frames): one
-- line a run and a total a scenario, the late agents as M.late lists them.
local FULL = { sphere = { n = 100, R = 20 }, tunnel = { n = 4 }, door = { n = 40 }, mixed = { n = 12 } }
function M.seeds(names, s0, s1, out)
  out = out or print
  local totals = {}
  for _, name in ipairs(names) do
    local t = { agents = 0, arrived = 0, in_time = 0, walls = 0, overlaps = 0, limits = 0, stuck = 0, stuck_frames = 0 }
    for seed = s0, s1 do
      local o = { seed = seed, frames = 10000, until_arrived = true }
      for k, v in pairs(FULL[name]) do o[k] = v end
      local r = M.run(name, o)
      out(("%-6s seed %2d  arrived %3d/%3d  in time %3d  walls %d  overlaps %d  limits %d  stuck %d (%d frames)" ..
        "  frames %5d  late %s"):format(name, seed, r.arrived, r.agents, r.in_time, r.walls, r.overlaps,
        r.accel + r.turn + r.speed, r.stuck_agents, r.stuck_frames, r.frames, M.late(r)))
      t.agents, t.arrived, t.in_time = t.agents + r.agents, t.arrived + r.arrived, t.in_time + r.in_time
      t.walls, t.overlaps = t.walls + r.walls, t.overlaps + r.overlaps
      t.limits, t.stuck = t.limits + r.accel + r.turn + r.speed, t.stuck + r.stuck_agents
      t.stuck_frames = math.max(t.stuck_frames, r.stuck_frames)
    end
    out(("%-6s seeds %d-%d: %d agents, arrived %d, in time %d (%.1f %%), walls %d, overlaps %d, limits %d, " ..
      "stuck %d (longest %d frames)"):format(name, s0, s1, t.agents, t.arrived, t.in_time,
      100 * t.in_time / t.agents, t.walls, t.overlaps, t.limits, t.stuck, t.stuck_frames))
    totals[name] = t
  end
  return totals
end

if arg and arg[0] and arg[0]:match("crowd%.lua$") then
  if arg[1] == "--seeds" then
    -- lua5.4 bench/crowd.lua --seeds 1-20 [sphere|tunnel|door|mixed ...]
    local s0, s1 = (arg[2] or "1-20"):match("^(%d+)%-(%d+)$")
    local names = {}
    for i = 3, #arg do names[#names + 1] = arg[i] end
    if #names == 0 then names = { "sphere", "tunnel", "door", "mixed" } end
    M.seeds(names, tonumber(s0), tonumber(s1), function(l) print(l); io.stdout:flush() end)
    return
  end
  local quick = arg[1] == "--quick"
  local runs = {
    { "sphere", { n = quick and 24 or 100, R = quick and 12 or 20 } },
    { "tunnel", { n = quick and 3 or 4 } },
    { "door", { n = quick and 12 or 40 } },
    { "mixed", { n = 12 } },
  }
  for _, r in ipairs(runs) do
    r[2].frames = quick and 1500 or 10000
    local rep = M.run(r[1], r[2])
    print(M.format(rep) .. ("  worst overlap %.4f, worst wall %.4f, fallbacks %d"):format(rep.worst_overlap,
      rep.worst_wall, rep.fallbacks))
  end
else
  return M
end
