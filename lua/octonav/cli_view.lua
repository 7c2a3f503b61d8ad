--- `octonav view`: nav data as a page to open in a browser, or a PNG for terminals and CI.
--   octonav view PACK_OR_TREE_OR_3DMAP [--path x y z x y z [x y z ...]] [-o FILE.html]
--                [--png FILE.png [--slice x|y|z=VALUE]] [--free] [--corridor] [--visited]
--                [--crowd RECORDING [--frame N]]
--   octonav view RECORDING [-o FILE.html] [--frame N]
-- A crowd recording (octonav.crowd_record's file) is played by the page over a timeline: alone, or
-- with --crowd over the tree or world it was recorded in; --frame N opens it paused at its N-th frame.
-- A pack directory is opened as a world (its tree, holes, doors, connect points); a .3dmap as a
-- Moving AI map; anything else as a tree file. --path searches leg by leg between the points given
-- and draws the path; in a pack each leg is routed as `octonav path` does (world:plan, the tile steps
-- searched on the world tree, the hole steps on their hole's tree: a path into a cave) and the route
-- is drawn too.
-- --corridor draws each leg's search corridor (the cells or boxes its path was built through) and
-- --visited the cells its search expanded (q:corridor(), q:visited(): see octonav.debug).
-- run(args, io) returns the exit code (0 done, 1 failed, 2 bad usage); io has out(...) and err(...).
local core = require "octonav.core"
local view = require "octonav.view"
local image = require "octonav.image"
local planner = require "octonav.planner"
local record = require "octonav.crowd_record"

local M = {}

M.USAGE = "octonav view PACK_OR_TREE_OR_3DMAP [--path x y z x y z ...] [-o FILE.html] " ..
  "[--png FILE.png [--slice x|y|z=VALUE]] [--free] [--corridor] [--visited] [--crowd RECORDING [--frame N]]; " ..
  "octonav view RECORDING [-o FILE.html] [--frame N]"

-- Paths are checked with core.read_file (a stat before any open, so a FIFO never blocks us), not
-- io.open: opening a FIFO with no writer (or, to write, with no reader) blocks forever.
-- read_file(path, 1) fails for a regular file over 1 byte too; only these reasons mean it is absent.
local function absent(e) return e:find("No such file or directory", 1, true) or e:find("Not a directory", 1, true) end

-- Does path exist (of whatever kind)?
function M.exists(path)
  local s, e = core.read_file(path, 1)
  return s ~= nil or not absent(e)
end

-- A file to read: true, or nil, reason (missing, unreadable, or not a regular file: a FIFO, a device).
function M.readable(path)
  local s, e = core.read_file(path, 1)
  if s or (e:find("more than a well-formed file can hold", 1, true) and not e:find("cannot read", 1, true)) then
    return true
  end
  return nil, (e:gsub(": cannot read: ", ": ", 1)) -- io.open's form: "PATH: No such file or directory"
end

-- A path that io.open(path, "wb") will not block on: true, or nil, reason when it exists and is neither
-- a regular file nor a character device (/dev/null, /dev/stdout): a FIFO, a directory, a socket.
-- A path that does not exist yet must be in a directory that does (checked before any work is done).
function M.writable(path)
  local _, e = core.read_file(path, 1)
  if e and e:find("not a regular file", 1, true) and not e:find("(a character device)", 1, true) then
    return nil, (e:gsub(": cannot read: ", ": cannot write: ", 1))
  end
  if e and absent(e) then
    local dir = path:match("^(.*)/[^/]*$") or "."
    if dir == "" then dir = "/" end
    local _, de = core.read_file(dir, 1)
    if de and absent(de) then return nil, ("%s: cannot write: no directory %s"):format(path, dir) end
    if not (de and de:find("(a directory)", 1, true)) then
      return nil, ("%s: cannot write: %s is not a directory"):format(path, dir)
    end
  end
  return true
end

-- A pack directory: one holding a manifest.txt (of any kind: world.load says what is wrong with it).
local function is_dir(path) return M.exists(path .. "/manifest.txt") end

-- flags: -o FILE, --png FILE, --slice A=V, --path then numbers up to the next flag, --free, --corridor,
-- --visited
local function parse(args)
  local o = { points = {} }
  local i = 1
  while i <= #args do
    local a = args[i]
    if a == "-o" or a == "--png" or a == "--slice" or a == "--crowd" or a == "--frame" then
      if args[i + 1] == nil then return nil, "missing value for " .. a end
      o[a == "-o" and "html" or a:sub(3)] = args[i + 1]
      i = i + 2
    elseif a == "--free" or a == "--corridor" or a == "--visited" then
      o[a:sub(3)] = true
      i = i + 1
    elseif a == "--path" then
      i = i + 1
      while args[i] ~= nil and not tostring(args[i]):match("^%-%-?%a") do
        local v = tonumber(args[i])
        if not v then return nil, ("--path: coordinate '%s' is not a number"):format(tostring(args[i])) end
        o.points[#o.points + 1] = v
        i = i + 1
      end
      if #o.points % 3 ~= 0 or #o.points < 6 then return nil, "--path: at least two points of x y z expected" end
    elseif tostring(a):match("^%-") then
      return nil, "unknown flag " .. tostring(a)
    else
      if a == "" then return nil, "the input is an empty path" end
      if o.input then return nil, "one input expected, got '" .. o.input .. "' and '" .. tostring(a) .. "'" end
      o.input = a
      i = i + 1
    end
  end
  if not o.input then return nil, "an input (pack directory, tree file or .3dmap) expected" end
  if o.slice and not o.slice:match("^[xyz]=[-+%d.eE]+$") then return nil, "--slice: AXIS=VALUE expected (e.g. y=12)" end
  if o.slice and not o.png then return nil, "--slice goes with --png" end
  if o.frame then
    local f = tonumber(o.frame)
    if not f or f < 1 or f ~= math.floor(f) or f > 2 ^ 31 then return nil, "--frame: a frame number >= 1 expected" end
    o.frame = math.floor(f)
  end
  if o.crowd and o.png and not o.html then return nil, "--crowd goes with a page (-o FILE.html), not --png alone" end
  return o
end

-- Is path a crowd recording (its first bytes OCTOCRWD)? Only a regular file is opened.
local function is_recording(path)
  if not M.readable(path) then return false end
  local f = io.open(path, "rb")
  if not f then return false end
  local head = f:read(#record.MAGIC)
  f:close()
  return head == record.MAGIC
end

local function load(input)
  if is_recording(input) then
    local rec, err = record.read(input)
    if not rec then return nil, err end
    return { rec = rec }
  end
  if is_dir(input) then
    local world = require "octonav.world"
    local w, err = world.load(input)
    if not w then return nil, err end
    return { tree = w.tree, world = w }
  end
  if input:match("%.3dmap$") then
    local movingai = require "octonav.movingai"
    local ok, t, err = pcall(movingai.load_map, input)
    if not ok then return nil, tostring(t) end
    if not t then return nil, err end
    return { tree = t }
  end
  local t, err = core.tree.load(input)
  if not t then return nil, err end
  return { tree = t }
end

-- One search from a to b on tree (drawn into page with o.corridor / o.visited): points or nil, reason.
local function search(tree, a, b, page, o)
  local q = core.query.new(tree, { max_nodes = 1048576 })
  local pts, info = q:find(a, b)
  if pts and page and (o.corridor or o.visited) then
    page:add(q, { corridor = o.corridor == true, visited = o.visited == true })
  end
  q:close()
  if not pts then return nil, type(info) == "table" and (info.reason or info.status) or info end
  return pts
end

--- The path from a to b in d (a loaded input: { tree, world }): for a world, routed as `octonav path`
-- does (world:plan, then consecutive tile steps searched as one leg on the world tree and each hole
-- step on its hole's tree: a path into a cave, whose inside the world tree blocks); for a tree or a
-- map, one search. Returns the points (and for a world its route) or nil, reason.
function M.find_leg(d, a, b, page, o)
  o = o or {}
  local w = d.world
  if not w then return search(d.tree, a, b, page, o) end
  local route, reason = w:plan(a, b)
  if not route then return nil, reason end
  local legs = planner.legs_of_route(route)
  local pts = {}
  for n, leg in ipairs(legs) do
    local tree = w.tree
    if leg.kind == "hole" then tree = w.holes[leg.hole] and w.holes[leg.hole].tree end
    if not tree then return nil, ("leg %d: no tree for hole %s"):format(n, tostring(leg.hole)) end
    local part, why = search(tree, leg.enter, leg.exit, page, o)
    if not part then return nil, ("leg %d (%s): %s"):format(n, leg.kind, tostring(why)) end
    for _, p in ipairs(part) do
      local q = pts[#pts]
      if not (q and q[1] == p[1] and q[2] == p[2] and q[3] == p[3]) then pts[#pts + 1] = p end
    end
  end
  return pts, nil, route
end
local find_leg = M.find_leg

function M.run(args, io_)
  local o, perr = parse(args or {})
  if not o then
    if io_.usage then return io_.usage("view: " .. perr) end -- (the CLI's usage of view, as view --help)
    io_.err("view: " .. perr)
    io_.err("usage: " .. M.USAGE)
    return 2
  end
  for _, out in ipairs { o.png or false, o.html or (not o.png and "octonav-view.html") or false } do
    local ok, werr = true, nil
    if out then ok, werr = M.writable(out) end
    if not ok then
      io_.err("view: " .. werr)
      return 1
    end
  end
  local d, lerr = load(o.input)
  if not d then
    io_.err("view: " .. (io_.lib_msg and io_.lib_msg(lerr) or tostring(lerr)))
    return 1
  end
  if d.rec and (#o.points > 0 or o.png or o.free or o.corridor or o.visited or o.crowd) then
    io_.err("view: " .. o.input .. " is a crowd recording: only -o and --frame go with it")
    return 2
  end
  if o.frame and not (d.rec or o.crowd) then
    io_.err("view: --frame goes with a crowd recording")
    return 2
  end
  local crowd_rec
  if o.crowd then
    local why
    crowd_rec, why = record.read(o.crowd)
    if not crowd_rec then
      io_.err("view: " .. tostring(why))
      return 1
    end
  end
  -- the page (when one is written) takes each leg's search as it is found
  local page = (o.html or not o.png) and view.new { title = "octonav: " .. o.input } or nil
  local path, route
  if #o.points > 0 then
    path = {}
    for k = 1, math.floor(#o.points / 3) - 1 do
      local a = { o.points[3 * k - 2], o.points[3 * k - 1], o.points[3 * k] }
      local b = { o.points[3 * k + 1], o.points[3 * k + 2], o.points[3 * k + 3] }
      local leg, reason, r = find_leg(d, a, b, page, o)
      if not leg then
        io_.err(("view: no %s from (%g, %g, %g) to (%g, %g, %g): %s"):format(d.world and "route" or "path", a[1], a[2],
          a[3], b[1], b[2], b[3], tostring(reason)))
        return 1
      end
      for n = (k == 1) and 1 or 2, #leg do path[#path + 1] = leg[n] end
      if r then
        route = route or {}
        for _, step in ipairs(r) do route[#route + 1] = step end
      end
    end
  end
  if o.png then
    local img
    if o.slice then
      local axis, at = o.slice:match("^([xyz])=(.+)$")
      img = image.slice(d.tree, { axis = axis, at = tonumber(at) })
    else
      img = image.top(d.tree)
    end
    if path then img:path(path) end
    local ok, werr = core.write_file(o.png, img:png()) -- beside and renamed, as the page
    if not ok then
      io_.err("view: " .. tostring(werr))
      return 1
    end
    io_.out(("%s: %dx%d"):format(o.png, img.w, img.h))
  end
  if page then
    if d.rec then page:add(d.rec)
    else page:add(d.world or d.tree, { cells = o.free and "both" or "blocked" }) end
    if path then page:add(path) end
    if route then page:add(route) end
    if crowd_rec then page:add(crowd_rec) end
    local file = o.html or "octonav-view.html"
    local ok, werr = page:write(file, { frame = o.frame })
    if not ok then
      io_.err("view: " .. tostring(werr))
      return 1
    end
    io_.out(("%s: %s"):format(file, tostring(page)))
  end
  return 0
end

return M
