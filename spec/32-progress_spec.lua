-- spec/32-progress_spec.lua -- octonav.progress: the time left of a job whose steps cost differently
local progress = require "octonav.progress"

-- a job like a bake: 20 tile steps of 0.1 s, then 20 graph steps of 2.4 s (50 s in all); the first
-- graph step also carries 3 s of set-up done before it reports
local function bake_like(report)
  local t = 0
  for i = 1, 20 do
    t = t + 0.1
    report(t, "tile " .. i)
  end
  for i = 1, 20 do
    t = t + 2.4 + (i == 1 and 3 or 0)
    report(t, "graph tile " .. i)
  end
  return t
end

describe("octonav.progress", function()
  it("estimates per phase from the median of its recent steps", function()
    local e = progress.estimator({ tile = 20, graph = 20 }, 0)
    local seen = {}
    bake_like(function(t, what)
      e:step(what:match("^%S+"), t)
      local left, whole = e:left()
      seen[#seen + 1] = { t = t, left = left, whole = whole }
    end)
    -- while the tiles run, the graph phase is not measured: the time left is a lower bound (the
    -- tiles' rest), never a claim that the job is nearly done
    for i = 1, 20 do
      assert.is_false(seen[i].whole)
      assert.is_true(math.abs(seen[i].left - (20 - i) * 0.1) < 1e-9)
    end
    -- from the second graph step on, the estimate is the truth within the set-up's share
    for i = 22, 40 do
      local truth = (40 - i) * 2.4
      assert.is_true(seen[i].whole)
      assert.is_true(math.abs(seen[i].left - truth) < 1e-9, ("step %d: %g s left, truth %g"):format(i, seen[i].left, truth))
    end
    -- the first graph step alone measures 5.4 s a step
    assert.is_true(math.abs(seen[21].left - 19 * 5.4) < 1e-9)
  end)

  it("follows a change of pace within a phase (recent steps only)", function()
    local e = progress.estimator({ [""] = 40 }, 0)
    local t = 0
    for _ = 1, 20 do t = t + 1; e:step("", t) end
    for _ = 1, 10 do t = t + 3; e:step("", t) end
    local left, whole = e:left()
    assert.is_true(whole)
    assert.are.equal(10 * 3, left) -- the mean of all steps would say 10 * 1.67
  end)

  it("shares the time of several steps reported at once", function()
    local e = progress.estimator({ tile = 10 }, 0)
    e:step("tile", 4, 4)
    assert.are.equal(6, (e:left()))
  end)

  it("draws '>Ns left' for a lower bound and the estimate once every phase ran", function()
    local now = 0
    local lines = {}
    local stream = { write = function(_, ...) lines[#lines + 1] = table.concat { ... } end, flush = function() end }
    local p = progress.new { total = 40, stream = stream, phases = { tile = 20, graph = 20 }, label = "steps",
      clock = function() return now end }
    local done = 0
    bake_like(function(t, what)
      now = t
      done = done + 1
      p:update(done, what)
      if done == 10 then assert.are.equal(">1s", p:left_text()) end
      if done == 30 then assert.are.equal("24s", p:left_text()) end
    end)
    p:finish()
    assert.matches("%d+/40 steps  >%d+s left  tile %d+", table.concat(lines, "\n"))
    assert.matches("30/40 steps  24s left  graph tile 10", table.concat(lines, "\n"))
    assert.matches("40 steps in 53s", lines[#lines])
  end)

  it("rejects bad options", function()
    assert.has_error(function() progress.new { phases = 3 } end,
      "progress.new: option 'phases' must be a table { name = steps }")
    assert.has_error(function() progress.new { phases = { tile = -1 } } end,
      "progress.new: option 'phases' must map names to integers >= 0")
    assert.has_error(function() progress.new { bogus = 1 } end, "progress.new: unknown option 'bogus'")
  end)
end)
