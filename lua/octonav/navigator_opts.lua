--- octonav.navigator_opts: a navigator's options (octonav.navigator.new's opts, documented at the top of
-- navigator.lua): their names, their checks and defaults, and the table that holds them.
-- The options a navigator reads while it runs live in one read-only table, `nav.cfg`, shared by the
-- navigators made with the same options, so that a navigator's own table keeps 64 fields at most (Lua
-- sizes a table's hash part to a power of two: with them inside, 75 fields took 128 slots, 3,199 bytes
-- an idle navigator; apart, 1,663).
local navbudget = require "octonav.navbudget"
require("octonav.compat").frame_module() -- (LuaJIT: run interpreted; compat.lua)
local util = require "octonav.util"

local M = {}

local type, huge = type, math.huge
local is_int, raise = util.is_count, util.raise

local NAMES = {
  checks_per_frame = true, query_budget = true, arrive_distance = true, max_nodes = true,
  exit_candidates = true, prefetch_distance = true, search = true, streamer = true, agent = true, plan_budget = true,
  radius = true,
  replan = true, wait_timeout = true, budget = true, lead_distance = true, recheck = true,
}
M.NAMES = NAMES

--- option(opts, name, default, ok, what) -> opts[name], or default when nil; raises naming the option.
function M.option(opts, name, default, ok, what)
  local v = opts[name]
  if v == nil then return default end
  if not ok(v) then raise(("octonav.navigator.new: option '%s' must be %s"):format(name, what)) end
  return v
end
local option = M.option

-- One table for the navigators made with the same options: weak values, so a table goes with its last
-- navigator; keyed by the values (a search table by its identity: the cfg holding it keeps it alive, so
-- its address names no other table while the entry lives).
local KEYS = { "checks_per_frame", "query_budget", "arrive_distance", "max_nodes", "exit_candidates",
  "plan_budget", "prefetch_distance", "search_opts", "replan", "wait_timeout", "recheck", "lead_distance" }
local shared = setmetatable({}, { __mode = "v" })
local function share(cfg)
  local parts = {}
  for i, k in ipairs(KEYS) do
    local v = cfg[k]
    parts[i] = type(v) == "number" and ("%.17g"):format(v) or tostring(v)
  end
  local key = table.concat(parts, "|")
  local got = shared[key]
  if got then return got end
  shared[key] = cfg
  return cfg
end

--- config(opts, world, search_radius, lead_leaves) -> budget, cfg: the options checked, defaults
-- filled (lead_distance under a budget with `ms`: lead_leaves leaves of the world's scale).
function M.config(opts, world, search_radius, lead_leaves)
  local budget = option(opts, "budget", navbudget.unlimited, navbudget.is_budget, "an octonav.navigator.budget")
  local cfg = {
    checks_per_frame = option(opts, "checks_per_frame", 8, function(v) return is_int(v, 1) end, "an integer >= 1"),
    query_budget = option(opts, "query_budget", 200, function(v) return is_int(v, 1) end, "an integer >= 1"),
    arrive_distance = option(opts, "arrive_distance", 0.5,
      function(v) return type(v) == "number" and v >= 0 and v < huge end, "a number >= 0"),
    -- (a search at a radius splits free cells near walls down to leaves: 4x the nodes by default, which a
    -- 160-unit walk across the dungeon at radius 0.5 needs)
    max_nodes = option(opts, "max_nodes", search_radius > 0 and 262144 or 65536, function(v) return is_int(v, 2) end,
      "an integer >= 2"),
    exit_candidates = option(opts, "exit_candidates", 3, function(v) return is_int(v, 1) end, "an integer >= 1"),
    plan_budget = option(opts, "plan_budget", 1024, function(v) return is_int(v, 1) end, "an integer >= 1"),
    prefetch_distance = option(opts, "prefetch_distance", world.tile_size or 16,
      function(v) return type(v) == "number" and v >= 0 end, "a number >= 0"),
    search_opts = option(opts, "search", nil, function(v) return type(v) == "table" end, "a table"),
    replan = option(opts, "replan", true, function(v) return type(v) == "boolean" end, "a boolean"),
    wait_timeout = option(opts, "wait_timeout", 600, function(v) return is_int(v, 1) end, "an integer >= 1"),
    recheck = option(opts, "recheck", 0.5,
      function(v) return type(v) == "number" and v >= 0 and v < 1 end, "a number >= 0 and < 1"),
    lead_distance = option(opts, "lead_distance", 0,
      function(v) return type(v) == "number" and v >= 0 and v < huge end, "a finite number >= 0"),
  }
  local sc = opts.lead_distance == nil and budget.ms and not world.plain and world.scale
  if type(sc) == "number" then cfg.lead_distance = lead_leaves * sc end -- (lead_distance's default)
  return budget, share(cfg)
end

return M
