-- spec/support/stream_wait.lua -- waits for a streamer's worker (specs 143 and 148).
local core = require "octonav.core"

local M = {}

--- decoded(s, n, seconds) -> the tiles decoded: waits until the worker of streamer s has decoded n
-- tiles and reads nothing, or `seconds` have passed; the decoded results wait in the streamer for the
-- next update to install them.
function M.decoded(s, n, seconds)
  local t0 = core.clock()
  while core.clock() - t0 < seconds do
    local st = s.core:stats()
    if st.decoded >= n and st.reading == 0 then return st.decoded end
  end
  return s.core:stats().decoded
end

return M
