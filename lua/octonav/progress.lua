--- Progress reporting for long jobs (the bake).
--
--   local p = progress.new{ callback = fn, total = n, label = "tiles" }
--   p:update(done, what)    -- calls fn(done, total, what), or redraws the bar
--   p:finish()              -- ends the bar's line
--
-- With a callback, every update calls it. Without one, a one-line bar with the count done and the
-- time left is drawn on stderr when stderr is a terminal (checked once, with `test -t 2`), redrawn at
-- most 10 times a second; otherwise nothing is shown.
local M = {}

local clock = os.clock
do
  local ok, core = pcall(require, "octonav.core")
  if ok and type(core) == "table" and core.clock then clock = core.clock end
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

local KNOWN = { callback = true, total = true, label = true, stream = true }

--- New reporter. opts: callback (function(done, total, what), default none), total (integer >= 0,
-- default 0), label (string shown after the count, default "done"), stream (default io.stderr).
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
  if math.type(total) ~= "integer" or total < 0 then error("progress.new: option 'total' must be an integer >= 0", 2) end
  local self = setmetatable({
    callback = opts.callback, total = total, label = opts.label or "done",
    stream = opts.stream or io.stderr, t0 = clock(), last = -1, drawn = false,
  }, Progress)
  self.bar = not self.callback and (opts.stream ~= nil or M.stderr_is_tty())
  return self
end

--- Change the total (for jobs that learn it late).
function Progress:set_total(total)
  self.total = total
end

local function fmt_time(s)
  if s ~= s or s == math.huge then return "?" end
  if s < 60 then return ("%ds"):format(math.floor(s + 0.5)) end
  if s < 3600 then return ("%dm%02ds"):format(s // 60, math.floor(s % 60)) end
  return ("%dh%02dm"):format(s // 3600, math.floor(s % 3600 / 60))
end

function Progress:update(done, what)
  if self.callback then
    self.callback(done, self.total, what)
    return
  end
  if not self.bar then return end
  local now = clock()
  if done < self.total and now - self.last < 0.1 then return end
  self.last = now
  local total = math.max(self.total, 1)
  local frac = math.min(done / total, 1)
  local width = 30
  local fill = math.floor(frac * width + 0.5)
  local elapsed = now - self.t0
  local left = done > 0 and elapsed * (self.total - done) / done or math.huge
  local line = ("\r[%s%s] %d/%d %s  %s left  %s"):format(("#"):rep(fill), ("."):rep(width - fill), done, self.total,
    self.label, fmt_time(left), what and tostring(what):sub(1, 30) or "")
  self.stream:write(line, "\27[K")
  self.stream:flush()
  self.drawn = true
end

function Progress:finish()
  if self.bar and self.drawn then
    self.stream:write(("\r%d %s in %s\27[K\n"):format(self.total, self.label, fmt_time(clock() - self.t0)))
    self.stream:flush()
  end
end

return M
