--- Progress reporting for long jobs (the bake).
--
--   local p = progress.new{ callback = fn, total = n, label = "tiles", phases = { tile = n, graph = n } }
--   p:update(done, what)    -- calls fn(done, total, what), or redraws the bar
--   p:finish()              -- ends the bar's line
--
-- With a callback, every update calls it. Without one, a one-line bar with the count done and the
-- time left is drawn on stderr when stderr is a terminal (checked once, with `test -t 2`), redrawn at
-- most 10 times a second; otherwise nothing is shown.
--
-- The time left (progress.estimator): the steps of a long job are not alike (a bake's tiles take
-- milliseconds, its link step's graph tiles seconds), so the steps are grouped in phases, named by the
-- first word of `what` ("tile 0,0,0" -> "tile"). A phase's seconds per step is the median of its last
-- steps (recent work; one slow step, e.g. the link's set-up before its first report, does not
-- skew it); the time left is the sum over phases of the steps left times that. A phase that has not
-- run a step yet has no measure: the time left is then a lower bound and shown as ">Ns".
local compat = require "octonav.compat"
local M = {}

local clock = os.clock
do
  local ok, core = pcall(require, "octonav.core")
  if ok and type(core) == "table" and core.clock then clock = core.clock end
end

local WINDOW = 9 -- steps of a phase its rate is the median of

local Estimator = {}
Estimator.__index = Estimator

--- progress.estimator(phases, t0): phases maps a phase name to its number of steps (steps of other
-- names are counted in a phase "" of unknown size); t0: the start time.
function M.estimator(phases, t0)
  local self = setmetatable({ phases = {}, last = t0 or 0 }, Estimator)
  for name, steps in pairs(phases or {}) do self.phases[name] = { steps = steps, done = 0, recent = {} } end
  return self
end

--- `count` steps (default 1) of phase `name` ended at time `now` (sharing the time since the last).
function Estimator:step(name, now, count)
  count = count or 1
  local ph = self.phases[name]
  if not ph then
    ph = { steps = 0, done = 0, recent = {} }
    self.phases[name] = ph
  end
  local each = (now - self.last) / count
  local r = ph.recent
  for _ = 1, count do
    ph.done = ph.done + 1
    r[#r + 1] = each
    if #r > WINDOW then table.remove(r, 1) end
  end
  self.last = now
end

-- The lower median: of two steps, the faster (a phase's first step may carry set-up work).
local function median(xs)
  local s = {}
  for i = 1, #xs do s[i] = xs[i] end
  table.sort(s)
  return s[math.floor((#s + 1) / 2)]
end

--- Seconds left, and whether that is an estimate of the whole (true) or a lower bound (false: a
-- phase with steps left has not run any yet).
function Estimator:left()
  local left, whole = 0, true
  for _, ph in pairs(self.phases) do
    local rest = ph.steps - ph.done
    if rest > 0 then
      if #ph.recent == 0 then whole = false else left = left + rest * median(ph.recent) end
    end
  end
  return left, whole
end

local tty_cached
--- True when stderr is a terminal (OCTONAV_PROGRESS=0 turns the bar off, =1 forces it).
function M.stderr_is_tty()
  if tty_cached == nil then
    local force = os.getenv("OCTONAV_PROGRESS")
    if force == "0" then tty_cached = false
    elseif force == "1" then tty_cached = true
    else tty_cached = require("octonav.core").isatty(2) end
  end
  return tty_cached
end

local Progress = {}
Progress.__index = Progress

local KNOWN = { callback = true, total = true, label = true, stream = true, phases = true, clock = true }

--- New reporter. opts: callback (function(done, total, what), default none), total (integer >= 0,
-- default 0), label (string shown after the count, default "done"), stream (default io.stderr),
-- phases ({ [first word of what] = steps }, default: all steps alike), clock (function() -> seconds,
-- default octonav.core.clock; for tests).
function M.new(opts)
  opts = opts or {}
  if type(opts) ~= "table" then error("progress.new: options table expected", 2) end
  for k in pairs(opts) do
    if not KNOWN[k] then error(("progress.new: unknown option '%s'"):format(tostring(k)), 2) end
  end
  if opts.callback ~= nil and type(opts.callback) ~= "function" then
    error("progress.new: option 'callback' must be a function", 2)
  end
  local total = opts.total or 0
  if not compat.isinteger(total) or total < 0 then error("progress.new: option 'total' must be an integer >= 0", 2) end
  if opts.phases ~= nil and type(opts.phases) ~= "table" then
    error("progress.new: option 'phases' must be a table { name = steps }", 2)
  end
  for name, steps in pairs(opts.phases or {}) do
    if type(name) ~= "string" or not compat.isinteger(steps) or steps < 0 then
      error("progress.new: option 'phases' must map names to integers >= 0", 2)
    end
  end
  if opts.clock ~= nil and type(opts.clock) ~= "function" then error("progress.new: option 'clock' must be a function", 2) end
  local now = opts.clock or clock
  local self = setmetatable({
    callback = opts.callback, total = total, label = opts.label or "done", clock = now,
    stream = opts.stream or io.stderr, t0 = now(), last = -1, drawn = false, phased = opts.phases ~= nil,
  }, Progress)
  self.est = M.estimator(opts.phases or { [""] = total }, self.t0)
  self.bar = not self.callback and (opts.stream ~= nil or M.stderr_is_tty())
  return self
end

--- Change the total (for jobs that learn it late).
function Progress:set_total(total)
  self.total = total
  if not self.phased then self.est.phases[""].steps = total end
end

local function fmt_time(s)
  if s ~= s or s == math.huge then return "?" end
  if s < 60 then return ("%ds"):format(math.floor(s + 0.5)) end
  if s < 3600 then return ("%dm%02ds"):format(math.floor(s / 60), math.floor(s % 60)) end
  return ("%dh%02dm"):format(math.floor(s / 3600), math.floor(s % 3600 / 60))
end
M.fmt_time = fmt_time

--- The time left as the bar shows it: "12s", ">3s" (a lower bound), "?" (nothing measured yet).
function Progress:left_text()
  local left, whole = self.est:left()
  if whole then return fmt_time(left) end
  if left <= 0 then return "?" end
  return ">" .. fmt_time(left)
end

function Progress:update(done, what)
  local now = self.clock()
  -- every step the caller reports, one at a time, is a step of its phase
  local steps = done - (self.seen or 0)
  self.seen = done
  local phase = self.phased and (what and tostring(what):match("^(%S+)") or "") or ""
  if steps > 0 then self.est:step(phase, now, steps) end
  if self.callback then
    self.callback(done, self.total, what)
    return
  end
  if not self.bar then return end
  if done < self.total and now - self.last < 0.1 then return end
  self.last = now
  local total = math.max(self.total, 1)
  local frac = math.min(done / total, 1)
  local width = 30
  local fill = math.floor(frac * width + 0.5)
  local line = ("\r[%s%s] %d/%d %s  %s left  %s"):format(("#"):rep(fill), ("."):rep(width - fill), done, self.total,
    self.label, self:left_text(), what and tostring(what):sub(1, 30) or "")
  self.stream:write(line, "\27[K")
  self.stream:flush()
  self.drawn = true
end

function Progress:finish()
  if self.bar and self.drawn then
    self.stream:write(("\r%d %s in %s\27[K\n"):format(self.total, self.label, fmt_time(self.clock() - self.t0)))
    self.stream:flush()
  end
end

return M
