-- bench/onetree.lua -- one tree for every agent size (issue 33): a world's memory and walks with a tree per
-- agent (pack version 2) against one tree with a graph per radius (version 3, bake config one_tree).
--
--   LUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="build/?.so;;" lua5.4 bench/onetree.lua dungeon|terrain [PAIRS] [leaves]
--
-- Bakes the world of ../shared/data/worlds (dungeon: its defaults; terrain: NX, NZ, NY, DEPTH, SCALE, SEED
-- from the environment, defaults 4 x 1 x 4 tiles of depth 6, 1 m leaves, seed 11) for radius 0 alone,
-- then for the agents 0, r1, r2 (dungeon: 0.5 and 1; terrain: 1 and 2) as a tree per agent and as one
-- tree, into temporary directories. Prints world:stats().bytes of each (the memory loaded), then walks
-- PAIRS (default 20) random pairs (a fixed LCG, points outside holes with room for the largest radius)
-- with a navigator of each radius on both packs: arrivals and the one tree's length / the tree per agent's;
-- then each agent's world graph bytes on the one tree and the routes' costs (world:plan at radius 0, r1, r2:
-- %.17g, to compare builds).
-- Each pair whose ratio is over 1 % is searched again by q:find on the two trees (the one tree at radius
-- r; the tree baked for r at none), unsmoothed and smoothed, with that agent's holes' insides blocked
-- in its tree and not (world.load's block_holes): the searches' expansions and lengths say whether the
-- two trees' free space or the searches over it differ. With `leaves`, every leaf of the grid is
-- compared (`leaves-border`: but the border's ceil(r / scale) leaves, which the one tree counted as
-- blocked before world.load set tree:border_free): usable at r on the one tree (tree:visible_radius(c,
-- c, r) at its centre) against free on the tree baked for r; the leaves that differ are counted inside
-- the holes' bounds and outside. (The pairs' ends are drawn with the border blocked: the same pairs.)
local octonav = require "octonav"
local bake = require "octonav.bake"

local which = arg[1] or "dungeon"
local PAIRS = tonumber(arg[2] or 20)
local LEAVES = arg[3] == "leaves" or arg[3] == "leaves-border"
local BORDER = arg[3] == "leaves-border" -- (leave the border's leaves out: world.load before border_free)
local WORLDS = "/work/shared/data/worlds/"

local function config(out, agents, one_tree)
  local cfg
  if which == "dungeon" then
    cfg = dofile(WORLDS .. "dungeon.lua")
    for _, g in ipairs(cfg.geometry) do
      if g.obj then g.obj = WORLDS .. g.obj end
    end
  else
    local env = { NX = "4", NZ = "4", NY = "1", DEPTH = "6", SCALE = "1", SEED = "11" }
    local getenv = os.getenv
    os.getenv = function(k) return getenv(k) or env[k] end -- luacheck: ignore 122
    cfg = dofile(WORLDS .. "terrain.lua")
    os.getenv = getenv -- luacheck: ignore 122
  end
  cfg.output, cfg.radius, cfg.agents, cfg.one_tree, cfg.progress = out, nil, agents, one_tree, function() end
  return cfg
end

local R = which == "dungeon" and { 0.5, 1 } or { 1, 2 }
local AGENTS = { { name = "point", radius = 0 }, { name = "a", radius = R[1] }, { name = "b", radius = R[2] } }
local tmp = os.tmpname()
os.remove(tmp)
local dirs = { single = tmp .. ".single", per = tmp .. ".per", one = tmp .. ".one" }
local t0 = os.clock()
assert(bake.run(config(dirs.single, { AGENTS[1] }, false)))
local t1 = os.clock()
assert(bake.run(config(dirs.per, AGENTS, false)))
local t2 = os.clock()
assert(bake.run(config(dirs.one, AGENTS, true)))
local t3 = os.clock()
local w0 = assert(octonav.world.load(dirs.single))
local wp = assert(octonav.world.load(dirs.per))
local w1 = assert(octonav.world.load(dirs.one))
local b0 = w0:stats().bytes
print(("%s: memory loaded (world:stats().bytes), bake CPU s"):format(which))
print(("  radius 0 alone        %9d  1.000x  %.2f s"):format(b0, t1 - t0))
for _, e in ipairs { { "tree per agent (3)", wp, t2 - t1 }, { "one tree (3)", w1, t3 - t2 } } do
  local st = e[2]:stats()
  print(("  %-20s %9d  %.3fx  %.2f s  (trees %d, graphs %d, holes %d)"):format(e[1], st.bytes, st.bytes / b0, e[3],
    st.tree_bytes, st.graph_bytes, st.hole_bytes))
end
-- each agent's world graph on the one tree (graph:stats(): the records its tiles share with the other agents'
-- graphs are counted by the first agent's, on_wgraph_share)
for _, a in ipairs(w1:stats().agents) do
  local gs = w1:agent(a.name).graph:stats()
  print(("    agent %-6s r %-4g graph bytes %7d  tiles %d  portals %d  links %d")
    :format(a.name, a.radius, a.graph_bytes, gs.tiles, gs.portals, gs.links))
end
-- the one tree with two agents (0 and r2): what one more radius costs
local two = tmp .. ".two"
assert(bake.run(config(two, { AGENTS[1], AGENTS[3] }, true)))
local w2 = assert(octonav.world.load(two))
print(("  one tree (0, %g)       %9d  %.3fx"):format(R[2], w2:stats().bytes, w2:stats().bytes / b0))
w2:close()

local function dist(a, b)
  local dx, dy, dz = a[1] - b[1], a[2] - b[2], a[3] - b[3]
  return math.sqrt(dx * dx + dy * dy + dz * dz)
end
local function walk(w, r, a, b)
  local nav = octonav.navigator.new(w, { radius = r, arrive_distance = 0 })
  nav:go(b)
  local pos, len, status, wp = { a[1], a[2], a[3] }, 0, nil, nil
  for _ = 1, 100000 do
    status, wp = nav:update(pos)
    if status == "arrived" or status == "failed" then break end
    if status == "moving" then
      local d = dist(pos, wp)
      local t = d > 0 and math.min(1, 0.5 / d) or 0
      local np = { pos[1] + (wp[1] - pos[1]) * t, pos[2] + (wp[2] - pos[2]) * t, pos[3] + (wp[3] - pos[3]) * t }
      len = len + dist(pos, np)
      pos = np
    end
  end
  nav:close()
  return status, len, wp
end
local lo, hi = w1.origin, {}
for a = 1, 3 do hi[a] = w1.origin[a] + w1.tiles[a] * w1.tile_size end
local seed = 7
local function rnd()
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
end
local pts = {}
while #pts < 2 * PAIRS do
  local p = { lo[1] + rnd() * (hi[1] - lo[1]), lo[2] + rnd() * (hi[2] - lo[2]), lo[3] + rnd() * (hi[3] - lo[3]) }
  if which == "dungeon" then p[2] = 1 + rnd() * 15 end -- (inside the dungeon's floors, not the air above)
  local bf = w1.tree.border_free -- (nil on builds before it: the bench runs on both, side by side)
  if bf then bf(w1.tree, false) end -- (the same pairs as before world.load set it)
  if w1:in_hole(p) == nil and w1.tree:visible_radius(p, p, R[2] + w1.scale) then pts[#pts + 1] = p end
  if bf then bf(w1.tree, true) end
end
-- a pair whose walks differ by over 1 %: q:find's expansions and lengths on the two trees
local function path_len(p)
  local s = 0
  for i = 2, #p do s = s + dist(p[i - 1], p[i]) end
  return s
end
local function searches(r, a, b)
  local name = r == R[1] and "a" or "b"
  for _, bh in ipairs { true, false } do
    local per = assert(octonav.world.load(dirs.per, { block_holes = bh }))
    local q1 = octonav.query.new(w1.tree, { max_nodes = 1000000 })
    local q2 = octonav.query.new(per:agent_tree(name), { max_nodes = 1000000 })
    local out = {}
    for _, o in ipairs { { smooth = "none" }, {} } do
      local p1, i1 = q1:find(a, b, { radius = r, smooth = o.smooth })
      local p2, i2 = q2:find(a, b, o)
      out[#out + 1] = ("%s %s / %s"):format(o.smooth or "smoothed",
        p1 and ("%.2f (%d exp)"):format(path_len(p1), i1.expansions) or i1.reason,
        p2 and ("%.2f (%d exp)"):format(path_len(p2), i2.expansions) or i2.reason)
    end
    print(("      q:find one tree / tree for r, holes' insides %s: %s"):format(bh and "blocked" or "open",
      table.concat(out, "; ")))
    q1:close()
    q2:close()
    per:close()
  end
end

print(("walks: %d pairs; one tree's length / tree per agent's (both arrived)"):format(PAIRS))
for _, r in ipairs(R) do
  local n1, n2, lo_r, hi_r, sum, n = 0, 0, math.huge, 0, 0, 0
  local c1, c2 = 0, 0
  for i = 1, #pts, 2 do
    local x = os.clock()
    local s1, l1 = walk(w1, r, pts[i], pts[i + 1])
    local y = os.clock()
    local s2, l2 = walk(wp, r, pts[i], pts[i + 1])
    c1, c2 = c1 + y - x, c2 + os.clock() - y
    if s1 == "arrived" then n1 = n1 + 1 end
    if s2 == "arrived" then n2 = n2 + 1 end
    if s1 == "arrived" and s2 == "arrived" and l2 > 0 then
      local q = l1 / l2
      lo_r, hi_r, sum, n = math.min(lo_r, q), math.max(hi_r, q), sum + q, n + 1
      if math.abs(q - 1) > 0.01 then
        print(("    pair %d: %.3f / %.3f = %.4f"):format(math.floor((i + 1) / 2), l1, l2, q))
        searches(r, pts[i], pts[i + 1])
      end
    end
  end
  print(("  radius %g: arrived one tree %d, tree per agent %d; ratio min %.4f mean %.4f max %.4f; walk CPU s %.2f / %.2f")
    :format(r, n1, n2, lo_r, n > 0 and sum / n or 0, hi_r, c1, c2))
end
-- the world graph's routes on the one tree (world:plan at each agent's radius): their costs, exactly, to compare
-- builds side by side (the same pairs)
print("routes: world:plan on the one tree, each pair's cost (17 digits) / steps, or the reason")
for _, r in ipairs { 0, R[1], R[2] } do
  local out, found = {}, 0
  for i = 1, #pts, 2 do
    local route, cost = w1:plan(pts[i], pts[i + 1], { radius = r }) -- (route, cost | nil, reason)
    if route then found = found + 1 end
    out[#out + 1] = route and ("%.17g/%d"):format(cost, #route) or tostring(cost)
  end
  print(("  radius %g: %d found: %s"):format(r, found, table.concat(out, " ")))
end
-- every leaf: usable at r on the one tree against free on the tree baked for r
if LEAVES then
  print(("leaves: usable at r on the one tree / free on the tree baked for r%s"):format(BORDER and
    " (the border left out)" or ""))
  local s, o = w1.scale, w1.origin
  local n = {}
  for a = 1, 3 do n[a] = math.floor(w1.tiles[a] * w1.tile_size / s + 0.5) end
  local function in_bounds(c)
    for _, h in ipairs(w1.holes) do
      if c[1] >= h.min[1] and c[1] <= h.max[1] and c[2] >= h.min[2] and c[2] <= h.max[2] and c[3] >= h.min[3]
        and c[3] <= h.max[3] then return true end
    end
    return false
  end
  for x, r in ipairs(R) do
    local pt = wp:agent_tree(x == 1 and "a" or "b")
    local B = BORDER and math.ceil(r / s) or 0
    local both, one_in, one_out, per_in, per_out = 0, 0, 0, 0, 0
    for i = B, n[1] - 1 - B do
      for j = B, n[2] - 1 - B do
        for k = B, n[3] - 1 - B do
          local c = { o[1] + (i + 0.5) * s, o[2] + (j + 0.5) * s, o[3] + (k + 0.5) * s }
          local u = w1.tree:visible_radius(c, c, r)
          local f = pt:locate(c) == "free"
          if u and f then both = both + 1
          elseif u then
            if in_bounds(c) then one_in = one_in + 1 else one_out = one_out + 1 end
          elseif f then
            if in_bounds(c) then per_in = per_in + 1 else per_out = per_out + 1 end
          end
        end
      end
    end
    print(("  radius %g: both %d; one tree only: %d in holes' bounds, %d outside; tree for r only: %d in, %d out")
      :format(r, both, one_in, one_out, per_in, per_out))
  end
end
w0:close()
wp:close()
w1:close()
for _, d in pairs(dirs) do os.execute("rm -rf '" .. d .. "'") end
os.execute("rm -rf '" .. two .. "'")
