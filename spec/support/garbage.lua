-- spec/support/garbage.lua -- what a function allocates, counted with Lua's collector stopped
-- (collectgarbage("count"): bytes, deterministic), for the specs on a crowd's garbage (spec/44, 46).
local M = {}

-- A chain of n Lua calls (not tail calls), each with a few registers: run after a full collection,
-- it grows the thread's call records and stack back to that depth, so that what f() allocates does
-- not depend on how deep the calls before the collection went (a full collection frees half the
-- spare call records and shrinks the stack; with the collector stopped nothing shrinks them).
local function deep(n)
  if n == 0 then return 0 end
  local a, b, c, d = n, n + 1, n + 2, n + 3
  return deep(n - 1) + a + b + c + d
end

--- M.bytes(f) -> the bytes f() allocates (the collector stopped meanwhile), and what f returned.
function M.bytes(f)
  collectgarbage()
  collectgarbage("stop")
  deep(400)
  local h0 = collectgarbage("count")
  local r1, r2 = f()
  local bytes = (collectgarbage("count") - h0) * 1024
  collectgarbage("restart")
  return bytes, r1, r2
end

return M
