-- spec/100-crowd_view_spec.lua -- the crowd seen (issue 33): what the crowd exposes for drawing
-- (crowd:path), octonav.debug.draw of a crowd (agents as spheres at their radius, velocities,
-- neighbours, goals, paths), the recorder (octonav.crowd_record) and the viewer's playback.
local octonav = require "octonav"
local compat = require "octonav.compat"

-- f raises an error whose message holds msg
local function raises(f, msg)
  local ok, err = pcall(f)
  assert.is_false(ok, "no error, expected: " .. msg)
  assert.truthy(tostring(err):find(msg, 1, true), ("expected %q in %q"):format(msg, tostring(err)))
end

describe("crowd:path (what debug draw reads)", function()
  it("gives the path an agent follows and the leg it is on", function()
    local tree = octonav.tree.new { depth = 5 }
    local crowd = octonav.crowd.new(tree, { max_agents = 8 })
    local a = assert(crowd:add { pos = { 4, 4, 4 }, radius = 1 })
    local t, n, seg = crowd:path(a)
    assert.are.same({ {}, 0, 1 }, { t, n, seg })
    crowd:set_path(a, { { 4, 4, 4 }, { 12, 4, 4 }, { 12, 12, 4 } })
    t, n, seg = crowd:path(a)
    assert.are.same({ { { 4, 4, 4 }, { 12, 4, 4 }, { 12, 12, 4 } }, 3, 1 }, { t, n, seg })
    -- a table given is filled again
    local mine = { "old" }
    local t2 = crowd:path(a, mine)
    assert.are.equal(mine, t2)
    assert.are.same({ 12, 12, 4 }, t2[3])
    -- the leg advances past the corner
    for _ = 1, 120 do crowd:update(1 / 30) end
    assert.are.same({ 3, 2 }, { select(2, crowd:path(a)) })
    -- a searched path ends at the goal
    crowd:set_goal(a, 28, 28, 28)
    for _ = 1, 3 do crowd:update(1 / 30) end
    t, n = crowd:path(a)
    assert.is_true(n >= 2)
    assert.are.same({ 28, 28, 28 }, t[n])
    raises(function() crowd:path(99) end, "path: no agent 99")
    raises(function() crowd:path(a, 3) end, "path: argument #2: table expected, got number")
    crowd:close()
  end)
end)

-- a drawer that keeps every call: { method, args... }
local function recorder(with_sphere)
  local calls = {}
  local d = { calls = calls }
  for _, m in ipairs { "box", "line", "point", "quad", "sphere" } do
    if m ~= "sphere" or with_sphere then
      d[m] = function(_, ...) calls[#calls + 1] = { m, ... } end
    end
  end
  return d
end

local function only(calls, m, kind)
  local out = {}
  for _, c in ipairs(calls) do
    if c[1] == m and c[#c] == kind then out[#out + 1] = c end
  end
  return out
end

-- a small crowd: a (radius 1) sent along a path, b (0.5) beside it and idle, c (2) far off and idle
local function small_crowd()
  local tree = octonav.tree.new { depth = 5 }
  local crowd = octonav.crowd.new(tree, { max_agents = 8 })
  local a = assert(crowd:add { pos = { 4, 4, 4 }, radius = 1 })
  local b = assert(crowd:add { pos = { 7, 4, 4 }, radius = 0.5 })
  local c = assert(crowd:add { pos = { 20, 20, 20 }, radius = 2 })
  crowd:set_path(a, { { 4, 4, 4 }, { 4, 12, 4 }, { 12, 12, 12 } })
  return crowd, a, b, c
end

local f32 = function(v) return (compat.unpack_bytes("<f", compat.pack("<f", v))) end

describe("octonav.debug.draw of a crowd", function()
  local ddraw = require "octonav.debug"

  it("draws each agent as a sphere at its radius, its goal and the rest of its path", function()
    local crowd = small_crowd()
    local d = ddraw.draw(crowd, recorder(true))
    assert.are.same({
      { "sphere", { 4, 4, 4 }, 1, "agent" },
      { "line", { 4, 4, 4 }, { 4, 12, 4 }, "agent_path" },
      { "line", { 4, 12, 4 }, { 12, 12, 12 }, "agent_path" },
      { "point", { 12, 12, 12 }, "goal" },
      { "sphere", { 7, 4, 4 }, 0.5, "agent" },
      { "sphere", { 20, 20, 20 }, 2, "agent" },
    }, d.calls) -- at rest: no velocity lines; b and c idle: no goal, no path
    -- a drawer without sphere gets the ball's bounding box
    d = ddraw.draw(crowd, recorder(false), { paths = false, goals = false })
    assert.are.same({
      { "box", { 3, 3, 3 }, { 5, 5, 5 }, "agent" },
      { "box", { 6.5, 3.5, 3.5 }, { 7.5, 4.5, 4.5 }, "agent" },
      { "box", { 18, 18, 18 }, { 22, 22, 22 }, "agent" },
    }, d.calls)
    crowd:close()
  end)

  it("draws velocities where the agents will be velocity_scale seconds on, and neighbours on request", function()
    local crowd, a, b = small_crowd()
    for _ = 1, 5 do crowd:update(1 / 30) end
    local st, n = crowd:states()
    assert.are.equal(3, n)
    local d = ddraw.draw(crowd, recorder(true), { velocity_scale = 0.5, neighbours = true, paths = false,
      goals = false })
    local spheres, vel = only(d.calls, "sphere", "agent"), only(d.calls, "line", "velocity")
    assert.are.equal(3, #spheres)
    for i = 1, 3 do
      local p = { st[6 * i - 5], st[6 * i - 4], st[6 * i - 3] }
      assert.are.same(p, spheres[i][2])
      assert.are.equal(({ 1, 0.5, 2 })[i], spheres[i][3])
    end
    -- a moves (and b, pushed aside, may): one line per moving agent, exactly from its centre
    local moving = 0
    for i = 1, 3 do
      if st[6 * i - 2] ~= 0 or st[6 * i - 1] ~= 0 or st[6 * i] ~= 0 then
        moving = moving + 1
        local l = vel[moving]
        assert.are.same({ { st[6 * i - 5], st[6 * i - 4], st[6 * i - 3] },
          { st[6 * i - 5] + st[6 * i - 2] * 0.5, st[6 * i - 4] + st[6 * i - 1] * 0.5, st[6 * i - 3] + st[6 * i] * 0.5 } },
          { l[2], l[3] })
      end
    end
    assert.is_true(moving >= 1)
    assert.are.equal(moving, #vel)
    -- a and b avoid each other (c is far): one line between them, drawn once
    assert.are.same({ b }, (crowd:neighbours(a)))
    local nb = only(d.calls, "line", "neighbour")
    assert.are.same({ { "line", { st[1], st[2], st[3] }, { st[7], st[8], st[9] }, "neighbour" } }, nb)
    -- neighbours are opt-in
    assert.are.same({}, only(ddraw.draw(crowd, recorder(true)).calls, "line", "neighbour"))
    crowd:close()
  end)

  it("checks its crowd options", function()
    local crowd = small_crowd()
    raises(function() ddraw.draw(crowd, recorder(true), { velocity_scale = 0 }) end,
      "octonav.debug.draw: option 'velocity_scale' must be a finite number > 0")
    raises(function() ddraw.draw(crowd, recorder(true), { neighbours = "yes" }) end,
      "octonav.debug.draw: option 'neighbours' must be a boolean")
    raises(function() ddraw.draw(crowd, recorder(true), { agent = true }) end,
      "octonav.debug.draw: unknown option 'agent'")
    crowd:close()
  end)
end)

describe("octonav.crowd_record", function()
  local record = require "octonav.crowd_record"
  local core = require "octonav.core"
  local tmp = {}
  after_each(function()
    for _, p in ipairs(tmp) do os.remove(p) end
    tmp = {}
  end)
  local function tmpname()
    local p = os.tmpname()
    tmp[#tmp + 1] = p
    return p
  end

  it("records every N-th frame as float32 and round-trips its file bit for bit", function()
    local crowd, a, b = small_crowd()
    local rec = record.new(crowd, { every = 3, dt = 0.05 })
    local want = {} -- what each stored frame must hold: the crowd's state as float32
    for f = 0, 10 do
      if f == 4 then crowd:remove(b) end
      local st, n = crowd:states()
      local ids = crowd:ids()
      local stored = rec:capture()
      assert.are.equal(f % 3 == 0, stored)
      if stored then
        local data = {}
        for i = 1, n do
          for k = 1, 6 do data[#data + 1] = f32(st[6 * (i - 1) + k]) end
          data[#data + 1] = f32(crowd:agent(ids[i]).radius)
        end
        want[#want + 1] = { frame = f, n = n, ids = ids, data = data }
      end
      crowd:update(0.05)
    end
    assert.are.equal(4, rec:frames())
    for i = 1, 4 do assert.are.same(want[i], rec:frame(i)) end
    assert.are.same({ 3, 3, 2, 2 }, { want[1].n, want[2].n, want[3].n, want[4].n })
    assert.are.equal(a, rec:frame(4).ids[1])
    -- the file: header, 4 frames (8 bytes each and 32 an agent), the CRC
    local bytes = rec:bytes()
    assert.are.equal(32 + 4 * 8 + 10 * 32 + 4, #bytes)
    assert.are.equal("OCTOCRWD", bytes:sub(1, 8))
    local path = tmpname()
    assert.is_true(rec:write(path))
    assert.are.equal(bytes, core.read_file(path))
    local again = assert(record.read(path))
    assert.are.equal(bytes, again:bytes())
    for i = 1, 4 do assert.are.same(want[i], again:frame(i)) end
    assert.are.same({ 0.05, 3 }, { again.dt, again.every })
    assert.are.equal("octonav.crowd_record: 4 frames, every 3, dt 0.05", tostring(again))
    raises(function() again:capture() end, "capture: this recording was read from a file: it records no crowd")
    raises(function() again:frame(5) end, "frame: i must be an integer in [1, 4]")
    crowd:close()
  end)

  it("refuses a damaged, cut, foreign or newer file with nil, reason", function()
    local crowd = small_crowd()
    local rec = record.new(crowd)
    for _ = 1, 3 do
      rec:capture()
      crowd:update(1 / 30)
    end
    local good = rec:bytes()
    local function with_crc(body) return body .. compat.pack("<I4", core.crc32(body)) end
    local body = good:sub(1, -5)
    local cases = {
      { good:sub(1, 60) .. string.char((good:byte(61) + 1) % 256) .. good:sub(62), "its CRC does not match: the file is damaged" },
      { good:sub(1, -9), "its CRC does not match: the file is damaged" },
      { "PK\3\4" .. good:sub(5), "no OCTOCRWD header" },
      { "OCTOCRWD", "cut short in its header" },
      { with_crc(body:sub(1, 8) .. compat.pack("<I4", 2) .. body:sub(13)), "version 2, this reads 1" },
      { with_crc(body .. "xy"), "2 bytes after its last frame" },
      { with_crc(body:sub(1, -33)), "cut short at frame 3 of 3" },
      { with_crc(body:sub(1, 28) .. compat.pack("<I4", 4) .. body:sub(33)), "cut short at frame 4 of 4" },
    }
    for i, c in ipairs(cases) do
      local path = tmpname()
      assert.is_true(core.write_file(path, c[1]))
      assert.are.same({ nil, path .. ": not a crowd recording (" .. c[2] .. ")" }, { record.read(path) }, "case " .. i)
    end
    local r, err = record.read("/nonexistent-octonav/r.ocrowd")
    assert.is_nil(r)
    assert.truthy(err:find("No such file or directory", 1, true))
    raises(function() record.new({}) end, "octonav.crowd_record.new: crowd must be an octonav.crowd")
    raises(function() record.new(crowd, { every = 0 }) end,
      "octonav.crowd_record.new: option 'every' must be an integer in [1, 4294967295]")
    raises(function() record.new(crowd, { dt = 2 }) end, "octonav.crowd_record.new: option 'dt' must be a number in (0, 1]")
    raises(function() record.new(crowd, { step = 2 }) end, "octonav.crowd_record.new: unknown option 'step'")
    crowd:close()
  end)
end)

describe("the viewer plays a crowd recording", function()
  local view = require "octonav.view"
  local record = require "octonav.crowd_record"

  local chromium
  for _, name in ipairs { "chromium", "chromium-browser" } do
    local h = io.popen("command -v " .. name .. " 2>/dev/null")
    local p = h:read("*l")
    h:close()
    if p and p ~= "" then chromium = p; break end
  end

  -- two agents crossing a box of 32 (a wall between them open above), recorded every 2 frames
  local function run()
    local tree = octonav.tree.new { depth = 5 }
    tree:add_box({ 14, 0, 0 }, { 16, 12, 32 })
    local crowd = octonav.crowd.new(tree, { max_agents = 8 })
    local a = assert(crowd:add { pos = { 4, 4, 16 }, radius = 1.5 })
    local b = assert(crowd:add { pos = { 28, 4, 16 }, radius = 1 })
    crowd:set_goal(a, 28, 6, 10)
    crowd:set_goal(b, 4, 6, 22)
    local rec = record.new(crowd, { every = 2 })
    for _ = 1, 240 do
      rec:capture()
      crowd:update(1 / 30)
    end
    return tree, crowd, rec
  end

  it("embeds the recording and its frames (no browser needed)", function()
    local tree, crowd, rec = run()
    local page = view.new():add(tree):add(rec, { velocity_scale = 0.5 })
    assert.are.equal("octonav.view: 3 quads, 0 boxes, 0 lines, 0 points, a crowd recording of 120 frames",
      tostring(page))
    local html = page:html { frame = 7 }
    assert.truthy(html:find('"frames":[[0,0,2],[2,2,2],[4,4,2],', 1, true))
    assert.truthy(html:find('"vscale":0.5}', 1, true))
    assert.truthy(html:find('"frame":7}', 1, true))
    assert.truthy(html:find(view._base64(select(1, rec:frame_bytes(1))):sub(1, 40), 1, true))
    raises(function() page:add(rec) end, "view:add: a page plays one crowd recording")
    raises(function() view.new():add(rec, { scale = 1 }) end,
      "view:add: unknown option 'scale' for a crowd recording")
    raises(function() page:html { frame = 0 } end, "view:html: option 'frame' must be an integer >= 1")
    crowd:close()
  end)

  it("shows the agents where the recording has them at a given frame (headless Chromium)", function()
    if not chromium then return pending("chromium is not installed: the viewer is not rendered") end
    local _, crowd, rec = run()
    local K = 60 -- the recording's 60th frame: crowd frame 118, the agents past the wall's top
    local f, first = rec:frame(K), rec:frame(1)
    assert.are.equal(118, f.frame)
    local pa, pb = { f.data[1], f.data[2], f.data[3] }, { f.data[8], f.data[9], f.data[10] }
    local a0 = { first.data[1], first.data[2], first.data[3] }
    -- far from where a started
    assert.is_true(math.sqrt((pa[1] - a0[1]) ^ 2 + (pa[2] - a0[2]) ^ 2 + (pa[3] - a0[3]) ^ 2) > 6)
    local file = os.tmpname() .. ".html"
    local page = view.new():add(rec)
    page:sphere({ 16, 24, 16 }, 2, "agent") -- a drawer's sphere (debug.draw of a crowd), above the run
    assert.is_true(page:write(file, { frame = K, probes = { { "a", pa }, { "b", pb }, { "a0", a0 },
      { "static", { 16, 24, 16 } }, { "beside", { 16, 24, 22 } } } }))
    local h = io.popen(("env -u LD_PRELOAD timeout 120 %s --headless --no-sandbox --use-angle=swiftshader " ..
      "--enable-unsafe-swiftshader --window-size=800,600 --dump-dom 'file://%s#test' 2>/dev/null"):format(chromium, file))
    local out = h:read("*a")
    h:close()
    os.remove(file)
    local json = out:match('<pre id="result">(.-)</pre>')
    assert.is_string(json, "the page wrote no result")
    assert.truthy(json:find('"frame":118', 1, true), json)
    local function agentish(name)
      local px = json:match('"' .. name .. '":{"x":%-?%d+,"y":%-?%d+,"px":%[([%d,]+)%]')
      assert.is_string(px, "no probe " .. name)
      local v = {}
      for n in px:gmatch("%d+") do v[#v + 1] = tonumber(n) end
      local c, n = view.colors.agent, 0
      for i = 1, 100, 4 do
        if math.abs(v[i] - c[1] * 255) <= 12 and math.abs(v[i + 1] - c[2] * 255) <= 12
          and math.abs(v[i + 2] - c[3] * 255) <= 12 then n = n + 1 end
      end
      return n
    end
    -- the balls' middles are the agent colour (lit from the eye); where a was at the start, nothing
    assert.is_true(agentish("a") >= 20, json)
    assert.is_true(agentish("b") >= 20, json)
    assert.are.equal(0, agentish("a0"))
    assert.is_true(agentish("static") >= 20, json)
    assert.are.equal(0, agentish("beside"))
    crowd:close()
  end)
end)

describe("octonav view RECORDING", function()
  local record = require "octonav.crowd_record"
  local LUA = os.getenv("OCTONAV_LUA") or "lua5.4"
  local dir
  before_each(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. dir))
  end)
  after_each(function() os.execute("rm -rf '" .. dir .. "'") end)

  local function slurp(p)
    local f = assert(io.open(p, "rb"))
    local s = f:read("*a")
    f:close()
    return s
  end
  local function octonav_cli(args)
    local _, _, code = os.execute(("cd %s && timeout 60 %s %s/bin/octonav %s >out 2>err"):format(dir, LUA,
      os.getenv("PWD"), args))
    return code, slurp(dir .. "/out"), slurp(dir .. "/err")
  end

  it("writes a page playing it, alone or over its tree, and refuses a damaged one", function()
    local tree = octonav.tree.new { depth = 5 }
    tree:add_box({ 14, 0, 0 }, { 16, 12, 32 })
    assert(tree:save(dir .. "/t.oct"))
    local crowd = octonav.crowd.new(tree, { max_agents = 4 })
    assert(crowd:add { pos = { 4, 4, 16 }, radius = 1 })
    local rec = record.new(crowd)
    for _ = 1, 5 do
      rec:capture()
      crowd:update(1 / 30)
    end
    assert.is_true(rec:write(dir .. "/run.ocrowd"))
    crowd:close()
    local code, o, e = octonav_cli("view run.ocrowd -o p.html --frame 3")
    assert.are.same({ 0, "p.html: octonav.view: 0 quads, 0 boxes, 0 lines, 0 points, a crowd recording of 5 frames\n", "" },
      { code, o, e })
    local html = slurp(dir .. "/p.html")
    assert.truthy(html:find('"frames":[[0,0,1],[1,1,1],[2,2,1],[3,3,1],[4,4,1]]', 1, true))
    assert.truthy(html:find('"frame":3}', 1, true))
    code, o, e = octonav_cli("view t.oct --crowd run.ocrowd -o q.html")
    assert.are.same({ 0, "" }, { code, e })
    assert.truthy(o:find("^q%.html: octonav%.view: %d+ quads, 0 boxes, 0 lines, 0 points, a crowd recording of 5 frames\n$"), o)
    code, o, e = octonav_cli("view run.ocrowd --png x.png")
    assert.are.same({ 2, "", "octonav: view: run.ocrowd is a crowd recording: only -o and --frame go with it\n" },
      { code, o, e })
    code, o, e = octonav_cli("view t.oct --frame 2")
    assert.are.same({ 2, "", "octonav: view: --frame goes with a crowd recording\n" }, { code, o, e })
    local bytes = slurp(dir .. "/run.ocrowd")
    local f = assert(io.open(dir .. "/bad.ocrowd", "wb"))
    f:write(bytes:sub(1, -2))
    f:close()
    code, o, e = octonav_cli("view bad.ocrowd")
    assert.are.same({ 1, "", "octonav: view: bad.ocrowd: not a crowd recording (its CRC does not match: the file is damaged)\n" },
      { code, o, e })
    code, o, e = octonav_cli("view t.oct --crowd bad.ocrowd -o q.html")
    assert.are.same({ 1, "", "octonav: view: bad.ocrowd: not a crowd recording (its CRC does not match: the file is damaged)\n" },
      { code, o, e })
  end)
end)

describe("octonav.core.debug.base64", function()
  it("encodes as RFC 4648 does, every length and byte", function()
    local b64 = octonav.core.debug.base64
    -- RFC 4648's test vectors
    for _, v in ipairs { { "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" }, { "foob", "Zm9vYg==" },
      { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" } } do
      assert.are.equal(v[2], b64(v[1]))
    end
    -- every byte value, decoded again by hand
    local all = {}
    for i = 0, 255 do all[#all + 1] = string.char(i) end
    local s = table.concat(all)
    local enc = b64(s)
    assert.are.equal(344, #enc)
    local abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    local bits, out = {}, {}
    for c in enc:gmatch("[^=]") do
      local v = abc:find(c, 1, true) - 1
      for k = 5, 0, -1 do bits[#bits + 1] = math.floor(v / 2 ^ k) % 2 end
    end
    for i = 1, #bits - 7, 8 do
      local v = 0
      for k = 0, 7 do v = v * 2 + bits[i + k] end
      out[#out + 1] = string.char(v)
    end
    assert.are.equal(s, table.concat(out))
    assert.has_error(function() b64({}) end)
  end)
end)

describe("octonav.crowd_record with many agents", function()
  local record = require "octonav.crowd_record"
  it("stores every agent of a frame (packed 25 at a time) with its own radius as agents come and go", function()
    local tree = octonav.tree.new { depth = 6 }
    local crowd = octonav.crowd.new(tree, { max_agents = 200 })
    local rec = record.new(crowd)
    for round = 1, 4 do
      local ids = {}
      for i = 0, 59 do
        ids[#ids + 1] = assert(crowd:add { pos = { 4 + (i % 8) * 7, 8 + round * 10, 4 + math.floor(i / 8) * 7 },
          radius = 0.5 + 0.01 * i + 0.25 * round })
      end
      assert.is_true(rec:capture())
      local f = rec:frame(rec:frames())
      assert.are.equal(60, f.n)
      assert.are.same((crowd:ids()), f.ids) -- in the crowd's slot order
      local at = {}
      for k, id in ipairs(f.ids) do at[id] = k - 1 end
      for i = 0, 59 do
        local k = at[ids[i + 1]]
        assert.are.same({ f32(4 + (i % 8) * 7), f32(8 + round * 10), f32(4 + math.floor(i / 8) * 7), 0, 0, 0,
          f32(0.5 + 0.01 * i + 0.25 * round) }, { compat.unpack(f.data, 7 * k + 1, 7 * k + 7) })
      end
      for _, id in ipairs(ids) do crowd:remove(id) end
    end
    assert.is_true(rec.known <= 60) -- the removed agents' radii were forgotten
    crowd:close()
  end)
end)
