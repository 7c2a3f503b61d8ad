--- octonav.bench_util: the helpers the world benchmark (bench_world.lua) and the streaming soak
-- (bench_soak.lua) share: option checks, a seeded generator, percentiles, temporary directories, a config
-- loader and one navigator walked from a to b. Benchmark code: never part of the installed library.
local compat = require "octonav.compat"
local core = require "octonav.core"


local function check_opts(fname, opts, known, also)
  for k in pairs(opts) do
    if not known[k] and not (also and also[k]) then
      error(("octonav.bench_world.%s: unknown option '%s'"):format(fname, tostring(k)), 3)
    end
  end
end

local clock = core.clock

--- A seeded PRNG (xorshift64*): the same samples on every run and machine.
-- (core.xorshift: 64-bit unsigned arithmetic in C, the same sequence on every Lua version)
local function rng(seed) return core.xorshift(seed) end

--- The linear congruential generator the frame benchmarks draw their pairs with (bench/frames.lua,
-- plan.lua, navcost.lua: the same pairs for the same seed as they always drew).
local function lcg(seed)
  local st = seed * 2654435761 % 4294967296
  return function()
    st = (st * 1664525 + 1013904223) % 4294967296
    return st / 4294967296
  end
end

--- A random free point of a loaded world outside its holes, drawn with rnd(); raises after 100,000 tries.
local function free_point(world, rnd, what)
  local org, n, T = world.origin, world.tiles, world.tile_size
  for _ = 1, 100000 do
    local p = { org[1] + rnd() * n[1] * T, org[2] + rnd() * n[2] * T, org[3] + rnd() * n[3] * T }
    if world.tree:locate(p) == "free" and world:in_hole(p) == nil then return p end
  end
  error("no free point" .. (what and " in " .. what or ""), 2)
end

local function pct(xs, p)
  if #xs == 0 then return 0 end
  local c = {}
  for i, v in ipairs(xs) do c[i] = v end
  table.sort(c)
  return c[math.max(1, math.min(#c, math.ceil(#c * p)))]
end

local function dist(a, b)
  local dx, dy, dz = a[1] - b[1], a[2] - b[2], a[3] - b[3]
  return math.sqrt(dx * dx + dy * dy + dz * dz)
end

local function exists(p)
  local f = io.open(p, "rb")
  if f then f:close() return true end
  return false
end

local function rss_bytes()
  local f = io.open("/proc/self/statm", "r")
  if not f then return 0 end
  local _, res = f:read("*n", "*n")
  f:close()
  return (res or 0) * 4096
end

local function tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(core.mkdir(d))
  return d
end

local function sh_quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function rm_rf(d) os.execute("rm -rf " .. sh_quote(d)) end

local function dir_bytes(d, pattern)
  local p = io.popen("find " .. sh_quote(d) .. " -type f -name " .. sh_quote(pattern) ..
    " -printf '%s\\n' 2>/dev/null")
  local n = 0
  for line in p:lines() do n = n + (tonumber(line) or 0) end
  p:close()
  return n
end

-- Runs a config file with os.getenv answering from `vars` first; relative obj paths resolved
-- against the file's directory (as `bin/octonav bake` does).
local function load_config(path, vars)
  local genv = setmetatable({}, { __index = _G })
  local function getenv(k)
    local v = vars[k]
    if v ~= nil then return tostring(v) end
    return os.getenv(k)
  end
  genv.os = setmetatable({ getenv = getenv }, { __index = os })
  local chunk = assert(compat.loadfile(path, "t", genv))
  local cfg = chunk()
  local base = path:match("^(.*)/[^/]*$") or "."
  for _, e in ipairs(cfg.geometry or {}) do
    if type(e.obj) == "string" and e.obj:sub(1, 1) ~= "/" then e.obj = base .. "/" .. e.obj end
  end
  cfg.progress = function() end
  return cfg
end


-- Walks one navigator from a to b; returns status, walked length, frames.
local function walk(nav_mod, world, a, b, speed, max_frames, nav_opts, budget)
  local nav = nav_mod.new(world, nav_opts)
  nav:go(b)
  local pos, walked, status, wp = { a[1], a[2], a[3] }, 0, nil, nil
  local frames = 0
  for f = 1, max_frames do
    frames = f
    if budget then budget:frame() end
    status, wp = nav:update(pos)
    if status == "arrived" or status == "failed" then break end
    if status == "moving" and wp then
      local d = dist(pos, wp)
      if d > 0 then
        local t = math.min(1, speed / d)
        local np = { pos[1] + (wp[1] - pos[1]) * t, pos[2] + (wp[2] - pos[2]) * t, pos[3] + (wp[3] - pos[3]) * t }
        walked = walked + dist(pos, np)
        pos = np
      end
    end
  end
  local reason = status == "failed" and wp or nil
  nav:close()
  return status, walked, frames, reason
end

return {
  check_opts = check_opts,
  clock = clock,
  rng = rng,
  lcg = lcg,
  free_point = free_point,
  pct = pct,
  dist = dist,
  exists = exists,
  rss_bytes = rss_bytes,
  tmpdir = tmpdir,
  sh_quote = sh_quote,
  rm_rf = rm_rf,
  dir_bytes = dir_bytes,
  load_config = load_config,
  walk = walk,
}
