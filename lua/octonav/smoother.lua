--- octonav.smoother: incremental path smoothing by line of sight, with a per-frame budget of checks
-- (the seed's "smooth while moving", 平滑路径的方法).
--
--   local s = octonav.smoother.new(tree, path, { checks_per_frame = 8 })
--   each frame: local wp = s:update(agent_position)   -- head straight for wp (2nd value: checks spent)
--   s:waypoint(), s:remaining(), s:arrived(), s:checks(), s:length(position), s:extend(points)
--   local short, spent = octonav.smoother.smooth(tree, path [, max_checks])
--   octonav.smoother.adopt(tree, path, opts), s:extend_adopt(points): as new and extend, the points
--   kept as they are (not copied: the caller must not change them afterwards)
--
-- `tree` is anything with a `visible(self, a, b)` method (an octonav.tree; a spec may wrap one to
-- count calls). `path` is an array of world points {x, y, z} whose consecutive segments are visible
-- (a query result); it is copied (adopt: its array is, its points are not).
--
-- Strategy (per frame, `update`): the smoother keeps a target waypoint i; the agent heads straight for
-- it, and the segment from the agent to it is always visible (either it is the next waypoint of the
-- input path and the agent stands on the previous segment, or a check proved it). Each frame scans
-- forward from the waypoint after the target: while `tree:visible(position, path[i + 1])` holds, the
-- target moves on to i + 1 and the scan continues; the first failed check ends the frame's scan
-- (visibility along a path already pulled tight by the query is nearly monotone, so waypoints past a
-- hidden one are rarely visible, and checking them would spend the budget on long rays that fail). The
-- next frame scans again from the waypoint after the target, because the agent has moved. A check that
-- failed is not repeated while the agent stands at exactly the same position. At most
-- `checks_per_frame` checks per call, never more; typically one per frame (the failing one).
--
-- Option `recheck` (a number in [0, 1), default 0): with r > 0 a check that failed toward waypoint j
-- is not repeated until the agent is within r times the distance it had to its target at the failure
-- (0: after any move, as above); and an agent standing exactly on its target steps on to the next
-- waypoint without a check (the input's promise: that segment is visible). On a path pulled taut by
-- the query (98 % of the per-frame checks fail on the seed's world: a corner comes into view near the
-- waypoint, if at all) r = 0.5 spends about log2(d / step) checks on a segment of length d instead of
-- d / step; a cut it finds comes at most that much later, so the walk is never longer than the path.
--
-- Arrival: an update whose position is within `arrive_distance` (option, world units, default 1e-6:
-- an agent stepping toward its waypoint lands on it exactly) of the last waypoint while heading for
-- it has arrived: s:arrived() is true and s:remaining() is 0 until an update from farther away or an
-- extend (the smoother used alone reports the end of its path; before, remaining() stayed 1 for ever).
--
-- `smooth` (whole path at once) is the same greedy forward scan from each kept point: from anchor A it
-- extends to the farthest waypoint reached by consecutive successful checks, keeps that one as the
-- next anchor, and so on. The result is valid (every segment is either an input segment or a checked
-- one) and, by the triangle inequality, never longer than the input. With `max_checks`, once the
-- budget is spent the rest of the path is kept as it is.
local M = {}

local Smoother = {}
Smoother.__index = Smoother

local compat = require "octonav.compat"
compat.frame_module() -- (LuaJIT: run interpreted; compat.lua)
local util = require "octonav.util"

local type, floor = type, math.floor

local DEFAULTS = { checks_per_frame = 8, arrive_distance = 1e-6, recheck = 0 }

local is_point, copy_point, dist = util.is_point, util.copy, util.dist

local function check_point(p, fname, what, level)
  if not is_point(p) then
    error(("%s: %s must be a point {x, y, z} of finite numbers, got %s"):format(fname, what, type(p)), level + 1)
  end
end

local function check_tree(tree, fname)
  local tt = type(tree)
  if (tt ~= "table" and tt ~= "userdata") or type(tree.visible) ~= "function" then
    error(fname .. ": tree must have a visible(a, b) method (an octonav.tree), got " .. tt, 3)
  end
end

-- The path checked, in a new array; its points copied unless `keep` (adopt: a navigator's paths are
-- query results it never changes, and copying each of their points was most of a plan's garbage).
local function check_path(path, fname, keep)
  if type(path) ~= "table" then error(fname .. ": path must be an array of points, got " .. type(path), 3) end
  local n = #path
  if n < 1 then error(fname .. ": path must have at least one point", 3) end
  local out = compat.move(path, 1, n, 1, {})
  for i = 1, n do
    local p = path[i]
    if not is_point(p) then check_point(p, fname, "path[" .. i .. "]", 3) end
    if not keep then out[i] = copy_point(p) end
  end
  return out
end

local is_count = util.is_count

local function new(fname, tree, path, opts, keep)
  check_tree(tree, fname)
  local pts = check_path(path, fname, keep)
  if opts ~= nil and type(opts) ~= "table" then error(fname .. ": opts must be a table", 2) end
  opts = opts or DEFAULTS
  for k in pairs(opts) do
    if DEFAULTS[k] == nil then error(fname .. ": unknown option '" .. tostring(k) .. "'", 2) end
  end
  local budget = opts.checks_per_frame
  if budget == nil then budget = DEFAULTS.checks_per_frame end
  if not is_count(budget, 1) then error(fname .. ": checks_per_frame must be an integer >= 1", 2) end
  local arrive = opts.arrive_distance
  if arrive == nil then
    arrive = DEFAULTS.arrive_distance
  elseif type(arrive) ~= "number" or not (arrive >= 0 and arrive < math.huge) then
    error(fname .. ": arrive_distance must be a finite number >= 0", 2)
  end
  local recheck = opts.recheck
  if recheck == nil then
    recheck = 0
  elseif type(recheck) ~= "number" or not (recheck >= 0 and recheck < 1) then
    error(fname .. ": recheck must be a number >= 0 and < 1", 2)
  end
  return setmetatable({
    tree = tree,
    path = pts,
    i = #pts >= 2 and 2 or 1, -- the target waypoint
    budget = floor(budget),
    total = 0,
    fail_j = nil,             -- the last failed check: waypoint index and the position it came from
    fail_pos = nil,
    fail_d = 0,               -- (recheck > 0) the distance to the target below which it is checked again
    recheck = recheck,
    arrive = arrive,
    at_end = false,           -- the last update's position had arrived (see the top of this file)
  }, Smoother)
end

--- octonav.smoother.new(tree, path, opts) -> smoother.
-- opts: { checks_per_frame = 8 (an integer >= 1: line-of-sight checks an update may spend),
--         arrive_distance = 1e-6 (world units: arrival at the last waypoint, see the top of this file) }.
function M.new(tree, path, opts) return new("octonav.smoother.new", tree, path, opts, false) end

--- octonav.smoother.adopt(tree, path, opts) -> smoother: as new, but path's points are kept, not
-- copied (its array is): the caller promises not to change them while the smoother lives.
function M.adopt(tree, path, opts) return new("octonav.smoother.adopt", tree, path, opts, true) end

--- s:update(position [, max_checks]) -> the waypoint to head for now, and the checks this call spent.
-- Spends at most checks_per_frame checks (or max_checks, an integer >= 0, when that is smaller: a
-- caller sharing one frame budget between several smoothers). The returned point belongs to the
-- smoother: read it, do not modify it.
-- The update, its arguments checked (a point; an integer >= 0 or nil): Smoother:update's, and the
-- navigator's (navigator.lua: a frame's update checks its position once).
local function advance(self, position, max_checks)
  local budget = self.budget
  if max_checks ~= nil and max_checks < budget then budget = floor(max_checks) end
  local path, n, i = self.path, #self.path, self.i
  local used, tree = 0, self.tree
  local recheck = self.recheck
  if recheck > 0 then
    -- standing on the target: on to the next waypoint without a check (the input's promise)
    local w = path[i]
    while i < n and w[1] == position[1] and w[2] == position[2] and w[3] == position[3] do
      i = i + 1
      w = path[i]
    end
  end
  while i < n and used < budget do
    local j = i + 1
    local fp = self.fail_pos
    if self.fail_j == j then
      if fp[1] == position[1] and fp[2] == position[2] and fp[3] == position[3] then
        break -- the same check from the same place failed already
      end
      if recheck > 0 and dist(position, path[i]) > self.fail_d then break end -- (not near enough yet)
    end
    used = used + 1
    if tree:visible(position, path[j]) then
      i = j
    else
      local fp2 = self.fail_pos -- reused: a frame's update allocates nothing
      if fp2 then
        fp2[1], fp2[2], fp2[3] = position[1], position[2], position[3]
      else
        self.fail_pos = copy_point(position)
      end
      self.fail_j = j
      if recheck > 0 then self.fail_d = recheck * dist(position, path[i]) end
      break
    end
  end
  if i < n and used >= budget then
    -- no check left: from a point of the path the next one is visible (the input's promise), so an
    -- agent standing on its target steps on to the next for free instead of stalling there until a
    -- frame grants it a check (a budget shared by 1,000 navigators refuses most of them)
    local w = path[i]
    if w[1] == position[1] and w[2] == position[2] and w[3] == position[3] then i = i + 1 end
  end
  self.i = i
  self.total = self.total + used
  local wp = path[i]
  self.at_end = i == n and dist(position, wp) <= self.arrive
  return wp, used
end
M._advance = advance -- (internal: the navigator's; names with "_" are not the API)

function Smoother:update(position, max_checks)
  if not is_point(position) then check_point(position, "smoother:update", "position", 2) end
  if max_checks ~= nil and not is_count(max_checks, 0) then
    error("smoother:update: max_checks must be an integer >= 0", 2)
  end
  return advance(self, position, max_checks)
end

--- s:waypoint() -> the current target waypoint (read only).
function Smoother:waypoint() return self.path[self.i] end

--- s:remaining() -> waypoints left to visit, the current target included (1: heading for the last;
-- 0: arrived there, s:arrived()).
function Smoother:remaining() return #self.path - self.i + (self.at_end and 0 or 1) end

--- s:arrived() -> true when the last update's position was within arrive_distance of the last
-- waypoint (the end of the path, extensions included).
function Smoother:arrived() return self.at_end end

--- s:checks() -> line-of-sight checks spent since new().
function Smoother:checks() return self.total end

--- s:length(position) -> the length still to walk from position along the remaining waypoints.
function Smoother:length(position)
  check_point(position, "smoother:length", "position", 2)
  local path = self.path
  local len, prev = 0, position
  for k = self.i, #path do
    len = len + dist(prev, path[k])
    prev = path[k]
  end
  return len
end

--- s:extend(points): appends points to the path (the next leg of a multi-segment route on the same
-- tree). points[1] must continue the path: it is skipped when equal to the current last point, else
-- the segment from the last point to it must be visible (the caller's promise, as for the input).
local function extend(self, points, fname, keep)
  local pts = check_path(points, fname, keep)
  local path = self.path
  local last = path[#path]
  local first = 1
  local p = pts[1]
  if p[1] == last[1] and p[2] == last[2] and p[3] == last[3] then first = 2 end
  for k = first, #pts do path[#path + 1] = pts[k] end
  if #path > self.i then self.at_end = false end -- (more to walk: arrival is the new end's)
  return self
end

function Smoother:extend(points) return extend(self, points, "smoother:extend", false) end

--- s:extend_adopt(points): as extend, points kept as they are (the promise of adopt).
function Smoother:extend_adopt(points) return extend(self, points, "smoother:extend_adopt", true) end

--- octonav.smoother.smooth(tree, path [, max_checks]) -> smoothed path (new array), checks spent.
-- Greedy forward string pulling (see the top of this file); max_checks (integer >= 0, default no
-- limit) bounds the checks: when it runs out the rest of the path is kept unchanged.
function M.smooth(tree, path, max_checks)
  local fname = "octonav.smoother.smooth"
  check_tree(tree, fname)
  local pts = check_path(path, fname, false)
  if max_checks ~= nil and not is_count(max_checks, 0) then
    error(fname .. ": max_checks must be an integer >= 0 or nil", 2)
  end
  local n = #pts
  if n <= 2 then return pts, 0 end
  local out = { pts[1] }
  local anchor, reach, k, spent = 1, 2, 3, 0 -- reach: the farthest waypoint known visible from anchor
  while k <= n do
    if max_checks and spent >= max_checks then break end
    spent = spent + 1
    if tree:visible(pts[anchor], pts[k]) then
      reach, k = k, k + 1
    else
      out[#out + 1] = pts[reach]
      anchor = reach
      reach, k = anchor + 1, anchor + 2
    end
  end
  for m = reach, n do out[#out + 1] = pts[m] end
  return out, spent
end

return M
