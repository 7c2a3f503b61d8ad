--- Nav pack files (docs/world.md, "Pack directory"): the manifest, tile files, tile graph files, hole
-- trees.
--
-- Writers take plain tables and write text with numbers as %.17g (exact round trips) and a last line
-- "crc32 XXXXXXXX" (zlib's CRC-32 of every byte before that line). Readers check the checksum, then
-- parse each line with string patterns only: nothing read from a pack is ever given to load, loadstring
-- or dofile. A missing or corrupt file gives nil, "PATH: reason" or nil, "PATH:LINE: reason".
--
--   manifest = { scale, depth, origin = {x,y,z}, tiles = {nx,ny,nz}, radius,
--                agents = { { name, radius }, ... }, agents_listed,
--                holes = { { name, kind, min, max, scale, depth, origin, tiles = {tx,ty,tz},
--                            doors = { { inside = {..}, outside = {..}, box = { min, max } or nil } } } } }
-- Agents (several clearance radii from one bake): `agent NAME RADIUS` lines, one per agent in order,
-- written when the bake config listed `agents`; the first agent's radius is the `radius` line's. A
-- manifest without agent lines has one agent "default" of its radius (agents_listed false). The first
-- agent's files are the pack's own (tiles/, holes/), every other agent's are under agents/NAME/ with
-- the same layout (M.agent_dir): a one-agent pack is what it was before agents existed.
-- A door line holds its box (the doorway a closed door blocks) after its two points when it has one.
-- Tile graph files (tiles/I_J_K.graph) hold a tile's portal graph as octonav.core.route.build encodes
-- it (an "ONTG" blob with its own version and CRC-32, checked by the C decoder); its tag is the tile
-- blob's identity (M.graph_tag), so a graph left from another bake of the tile is told apart.
local compat = require "octonav.compat"
local core = require "octonav.core"
local onetree = require "octonav.onetree" -- version 3: the one-tree pack (its layout and bake)

local M = {}

M.VERSION = 2 -- 1: graph.txt (the Lua connect blocks); 2: a graph file per tile
M.KINDS = { under_terrain = true, over_terrain = true }

-- ---- CRC-32 (zlib's) ----------------------------------------------------------------------------

--- CRC-32 of a string (zlib's), as an integer 0..2^32-1: the core's, as for tile files.
M.crc32 = core.crc32

-- ---- files ---------------------------------------------------------------------------------------

--- Create a directory and its parents. Returns true or nil, err.
function M.mkdir(path)
  if type(path) ~= "string" or path == "" then error("pack.mkdir: path must be a non-empty string", 2) end
  return core.mkdir(path)
end

--- Whole file as a string, or nil, "PATH: reason". Only a regular file is read (a FIFO, a device or a
-- directory is refused at once, without blocking), and one over max bytes (optional) is refused
-- before it is read.
function M.read_file(path, max)
  local s, err = core.read_file(path, max)
  if not s then return nil, (err:gsub(": cannot read: ", ": ", 1)) end
  return s
end

--- Write a file atomically: a uniquely named temporary beside it (two writers never share one), synced,
-- then renamed over path. Returns true or nil, "PATH: cannot write: REASON" (the OS's reason).
function M.write_file(path, data)
  return core.write_file(path, data)
end

M.DEFAULT_AGENT = "default"
M.MAX_AGENTS = 16

--- Is s an agent name (an identifier: a letter or '_', then letters, digits or '_'; at most 64)?
function M.is_agent_name(s) return type(s) == "string" and #s <= 64 and s:match("^[%a_][%w_]*$") ~= nil end

--- The directory holding agent n's files (tiles/, holes/): the pack's own for the first agent,
-- DIR/agents/NAME for the others.
function M.agent_dir(dir, n, name)
  if n == 1 then return dir end
  return dir .. "/agents/" .. name
end

function M.tile_name(i, j, k) return ("tiles/%d_%d_%d.tile"):format(i, j, k) end
function M.tile_path(dir, i, j, k) return dir .. "/" .. M.tile_name(i, j, k) end
function M.hole_path(dir, name) return dir .. "/holes/" .. name .. ".tree" end
function M.manifest_path(dir) return dir .. "/manifest.txt" end
function M.graph_name(i, j, k) return ("tiles/%d_%d_%d.graph"):format(i, j, k) end
function M.graph_path(dir, i, j, k) return dir .. "/" .. M.graph_name(i, j, k) end

-- Tile file: "ONTF", u16 version 1, u16 i, j, k, u32 CRC-32 of those 12 bytes, then the tile blob
-- (tree:encode_tile). The position makes a swapped or misnamed file an error instead of a wrong world;
-- the C streamer reads the same files (tilefile.c).
M.TILE_FILE_VERSION = 1
M.MAX_TILE_FILE = 16 + 16 + 2 * math.floor((134217728 - 1) / 7) -- the largest tile of depth 9, with the header
M.MAX_TEXT = 64 * 1048576 -- a manifest larger than this is refused unread
M.MAX_TILES = 1048576 -- tiles in a world or hole grid (a 206-byte manifest must not cost gigabytes)
-- The numbers a tree takes (octonav.h's ON_MIN_SCALE, ON_MAX_SCALE, ON_MAX_COORD; tree.new refuses
-- others): a manifest's scales, coordinates (origins, hole bounds, doors) and radii are held to them, so
-- that a pack that loads has no coordinate a float loop over its leaves would get stuck on.
M.MIN_SCALE, M.MAX_SCALE, M.MAX_COORD = 1e-6, 1e6, 1e12
M.MAX_DOORS = 4096 -- doors of one hole: the planner takes at most 4096 start or goal points
local TILE_HEAD = "<c4 I2 I2 I2 I2"
M.TILE_FILE_HEAD = 16 -- bytes before the blob: the 12 above and their CRC-32

--- The bytes of tile (i, j, k)'s file holding blob.
function M.tile_file(i, j, k, blob)
  local head = compat.pack(TILE_HEAD, "ONTF", M.TILE_FILE_VERSION, i, j, k)
  return head .. compat.pack("<I4", M.crc32(head)) .. blob
end

--- The blob in tile (i, j, k)'s file bytes (path names it in errors), or nil, "PATH: reason".
function M.tile_blob(path, bytes, i, j, k)
  if bytes:sub(1, 4) == "ONTL" then
    return nil, path .. ": a bare tile blob without its position (a pack from before tile file version 1): bake it again"
  end
  if #bytes < 16 or bytes:sub(1, 4) ~= "ONTF" then return nil, path .. ": not a tile file (bad header)" end
  local _, version, fi, fj, fk = compat.unpack_bytes(TILE_HEAD, bytes)
  if version ~= M.TILE_FILE_VERSION then
    return nil, ("%s: unsupported tile file version %d (this build reads %d)"):format(path, version, M.TILE_FILE_VERSION)
  end
  if compat.unpack_bytes("<I4", bytes, 13) ~= M.crc32(bytes:sub(1, 12)) then
    return nil, path .. ": corrupt tile file (header checksum mismatch)"
  end
  if fi ~= i or fj ~= j or fk ~= k then
    return nil, ("%s: holds tile %d_%d_%d, not %d_%d_%d (a swapped or misnamed file)"):format(path, fi, fj, fk, i, j, k)
  end
  return bytes:sub(17)
end

--- Writes tile (i, j, k)'s file (the blob behind its header).
function M.write_tile(dir, i, j, k, blob)
  return M.write_file(M.tile_path(dir, i, j, k), M.tile_file(i, j, k, blob))
end

--- A blob's identity: the CRC-32 of its bytes but the last four. Tile and graph blobs end with the
-- CRC-32 of what precedes it, and the CRC-32 of such a whole blob is the same constant for every
-- blob (the CRC's residue), so the last four bytes are left out.
function M.blob_id(blob) return M.crc32(blob:sub(1, -5)) end

--- The tag a tile's graph carries: the identity of the tile's blob (what the graph was built from).
M.graph_tag = M.blob_id

M.MAX_GRAPH_FILE = 64 * 1048576 -- a tile graph file larger than this is refused unread

--- Writes tile (i, j, k)'s graph file (a route.build blob).
function M.write_graph(dir, i, j, k, blob)
  return M.write_file(M.graph_path(dir, i, j, k), blob)
end

--- Reads tile (i, j, k)'s graph blob (decoded and checked by the caller's route functions), or nil,
-- "PATH: reason".
function M.read_graph(dir, i, j, k)
  return M.read_file(M.graph_path(dir, i, j, k), M.MAX_GRAPH_FILE)
end

--- Reads tile (i, j, k)'s blob, checked to be that tile's. Returns the blob or nil, "PATH: reason".
function M.read_tile(dir, i, j, k)
  local path = M.tile_path(dir, i, j, k)
  local bytes, err = M.read_file(path, M.MAX_TILE_FILE)
  if not bytes then return nil, err end
  return M.tile_blob(path, bytes, i, j, k)
end

-- ---- text: numbers, lines, checksum -------------------------------------------------------------

local function num(v)
  if compat.isinteger(v) then return ("%d"):format(v) end
  local s = ("%.17g"):format(v)
  return s
end
M.num = num

local function pt(p) return num(p[1]) .. " " .. num(p[2]) .. " " .. num(p[3]) end

-- text + "crc32 XXXXXXXX\n"
local function seal(lines)
  lines[#lines + 1] = ""
  local body = table.concat(lines, "\n")
  return body .. ("crc32 %08x\n"):format(M.crc32(body))
end

-- Splits a checked text into lines. Returns lines or nil, err.
local function unseal(path, text)
  if #text == 0 then return nil, path .. ": empty file" end
  local body, hex = text:match("^(.-)crc32 (%x%x%x%x%x%x%x%x)\n$")
  if not body or (body ~= "" and body:sub(-1) ~= "\n") then
    return nil, path .. ": missing or malformed last line 'crc32 XXXXXXXX'"
  end
  if tonumber(hex, 16) ~= M.crc32(body) then return nil, path .. ": checksum mismatch (corrupt file)" end
  local lines = {}
  for line in body:gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
  return lines
end

-- A number token as %.17g writes it (digits, '.', 'e', signs: no hex, no inf/nan): the value, or nil.
local function tonum(tok)
  if tok:find("[^%d%.e%+%-]") then return nil end
  local v = tonumber(tok)
  if v == nil or v ~= v or v == math.huge or v == -math.huge then return nil end
  return v
end

local function toint(tok)
  if not tok or not tok:match("^%-?%d+$") or #tok > 18 then return nil end
  return compat.tointeger(tonumber(tok))
end

-- Tokens of a line of single-space-separated fields (no leading, trailing or doubled spaces), or nil.
local function split(line)
  if line:find("  ", 1, true) or line:byte(1) == 32 or line:byte(-1) == 32 then return nil end
  local t = {}
  for tok in line:gmatch("[^ ]+") do t[#t + 1] = tok end
  return t
end

local function is_name(s) return type(s) == "string" and s:match("^[%w_%-]+$") ~= nil and #s <= 200 end
M.is_name = is_name

-- Line parser: the fields of `spec` ("n" number, "i" integer, "s" name) after the key, one space
-- apart. One pattern match per line (patterns cached per key and spec); the slow path only explains.
local line_patterns = {}
local function fields(line, key, spec)
  local id = key .. " " .. spec
  local pat = line_patterns[id]
  if not pat then
    pat = "^" .. key:gsub("%p", "%%%0") .. (" (%S+)"):rep(#spec) .. "$"
    line_patterns[id] = pat
  end
  local caps = { line:match(pat) }
  if #caps ~= #spec then
    local tok = split(line)
    if not tok then return nil, "malformed line (fields are separated by single spaces)" end
    return nil, ("expected %d fields after '%s', got %d"):format(#spec, key, #tok - 1)
  end
  for p = 1, #spec do
    local c, tok = spec:byte(p), caps[p]
    local v
    if c == 110 then v = tonum(tok)       -- n
    elseif c == 105 then v = toint(tok)   -- i
    else v = is_name(tok) and tok or nil end
    if v == nil then
      return nil, ("field %d of '%s': bad %s '%s'"):format(p, key,
        c == 110 and "number" or c == 105 and "integer" or "name", tok:sub(1, 40))
    end
    caps[p] = v
  end
  return caps
end

-- ---- manifest ------------------------------------------------------------------------------------

--- Text of a manifest (see the module comment).
function M.manifest_text(m)
  local L = {
    "octonav-pack " .. (m.one_tree and onetree.VERSION or M.VERSION),
    "scale " .. num(m.scale),
    "depth " .. num(m.depth),
    "origin " .. pt(m.origin),
    "tiles " .. pt(m.tiles),
    "radius " .. num(m.radius),
  }
  if m.agents_listed or m.one_tree then
    for _, a in ipairs(m.agents) do L[#L + 1] = ("agent %s %s"):format(a.name, num(a.radius)) end
  end
  for _, h in ipairs(m.holes or {}) do
    L[#L + 1] = ("hole %s %s %s %s %s %d %s %s"):format(h.name, h.kind, pt(h.min), pt(h.max), num(h.scale),
      h.depth, pt(h.origin), pt(h.tiles))
  end
  for _, h in ipairs(m.holes or {}) do
    for j, d in ipairs(h.doors) do
      local box = d.box and (" %s %s"):format(pt(d.box.min), pt(d.box.max)) or ""
      L[#L + 1] = ("door %s %d %s %s%s"):format(h.name, j, pt(d.inside), pt(d.outside), box)
    end
  end
  return seal(L)
end

function M.write_manifest(dir, m)
  return M.write_file(M.manifest_path(dir), M.manifest_text(m))
end

--- Parse manifest text (path only names it in errors). Returns manifest or nil, err.
function M.parse_manifest(path, text)
  local lines, err = unseal(path, text)
  if not lines then return nil, err end
  local m = { holes = {} }
  local hole_index, agent_index, agents = {}, {}, {}
  local function bad(n, why) return nil, ("%s:%d: %s"):format(path, n, why) end
  local MAXC = M.MAX_COORD
  -- nil when f[i .. j] are all coordinates (|v| <= MAX_COORD), else the reason naming `what`
  local function coords(f, i, j, what)
    for a = i, j do
      if not (f[a] >= -MAXC and f[a] <= MAXC) then return ("%s must be within +-%g"):format(what, MAXC) end
    end
  end
  local function scale_bad(v, what)
    if not (v >= M.MIN_SCALE and v <= M.MAX_SCALE) then
      return ("%s must be in [%g, %g]"):format(what, M.MIN_SCALE, M.MAX_SCALE)
    end
  end
  local v = lines[1] and lines[1]:match("^octonav%-pack (%d+)$")
  if v and v ~= tostring(M.VERSION) and v ~= tostring(onetree.VERSION) then
    return bad(1, ("a pack of version %s%s; this build reads versions %d and %d: bake it again"):format(v,
      v == "1" and " (one graph.txt for the whole world)" or "", M.VERSION, onetree.VERSION))
  end
  if not v then return bad(1, "expected 'octonav-pack " .. M.VERSION .. "' or '" .. onetree.VERSION .. "'") end
  m.one_tree = v == tostring(onetree.VERSION)
  local single = { scale = "n", depth = "i", origin = "nnn", tiles = "iii", radius = "n" }
  for n = 2, #lines do
    local line = lines[n]
    local key = line:match("^(%S+)")
    if not key then return bad(n, "malformed line") end
    if single[key] then
      if m[key] ~= nil then return bad(n, "duplicate '" .. key .. "'") end
      local f, ferr = fields(line, key, single[key])
      if not f then return bad(n, ferr) end
      if key == "scale" then
        if not (f[1] > 0) then return bad(n, "scale must be > 0") end
        local why = scale_bad(f[1], "scale")
        if why then return bad(n, why) end
        m.scale = f[1]
      elseif key == "depth" then
        if f[1] < 1 or f[1] > 9 then return bad(n, "depth must be 1..9") end
        m.depth = f[1]
      elseif key == "radius" then
        if not (f[1] >= 0) then return bad(n, "radius must be >= 0") end
        if not (f[1] <= MAXC) then return bad(n, ("radius must be at most %g"):format(MAXC)) end
        m.radius = f[1]
      elseif key == "tiles" then
        for a = 1, 3 do
          if f[a] < 1 or f[a] > 4096 then return bad(n, "tiles must be 1..4096 per axis") end
        end
        if f[1] * f[2] * f[3] > M.MAX_TILES then
          return bad(n, ("%d x %d x %d tiles, more than %d"):format(f[1], f[2], f[3], M.MAX_TILES))
        end
        m.tiles = f
      else
        local why = coords(f, 1, 3, "origin")
        if why then return bad(n, why) end
        m.origin = f
      end
    elseif key == "agent" then
      local f, ferr = fields(line, key, "sn")
      if not f then return bad(n, ferr) end
      if not M.is_agent_name(f[1]) then return bad(n, "agent name '" .. f[1] .. "' is not an identifier") end
      if agent_index[f[1]] then return bad(n, "duplicate agent '" .. f[1] .. "'") end
      if not (f[2] >= 0) then return bad(n, "agent radius must be >= 0") end
      if not (f[2] <= MAXC) then return bad(n, ("agent radius must be at most %g"):format(MAXC)) end
      if #agents >= M.MAX_AGENTS then return bad(n, ("more than %d agents"):format(M.MAX_AGENTS)) end
      agents[#agents + 1] = { name = f[1], radius = f[2] }
      agent_index[f[1]] = #agents
    elseif key == "hole" then
      local f, ferr = fields(line, key, "ssnnnnnnninnniii")
      if not f then return bad(n, ferr) end
      local kind = f[2]
      if not M.KINDS[kind] then return bad(n, "unknown hole kind '" .. kind .. "'") end
      if hole_index[f[1]] then return bad(n, "duplicate hole '" .. f[1] .. "'") end
      local h = { name = f[1], kind = kind, min = { f[3], f[4], f[5] }, max = { f[6], f[7], f[8] }, scale = f[9],
        depth = f[10], origin = { f[11], f[12], f[13] }, tiles = { f[14], f[15], f[16] }, doors = {} }
      if not (h.scale > 0) then return bad(n, "hole scale must be > 0") end
      local why = scale_bad(h.scale, "hole scale") or coords(f, 3, 8, "hole bounds") or coords(f, 11, 13, "hole origin")
      if why then return bad(n, why) end
      if h.depth < 1 or h.depth > 9 then return bad(n, "hole depth must be 1..9") end
      for a = 1, 3 do
        if not (h.min[a] < h.max[a]) then return bad(n, "hole min must be below max") end
        if h.tiles[a] < 1 or h.tiles[a] > 4096 then return bad(n, "hole tiles must be 1..4096 per axis") end
      end
      if h.tiles[1] * h.tiles[2] * h.tiles[3] > M.MAX_TILES then
        return bad(n, ("hole %d x %d x %d tiles, more than %d"):format(h.tiles[1], h.tiles[2], h.tiles[3], M.MAX_TILES))
      end
      m.holes[#m.holes + 1] = h
      hole_index[h.name] = #m.holes
    elseif key == "door" then
      local boxed = select(2, line:gsub(" ", "")) == 14 -- a door with its box: 6 more numbers
      local f, ferr = fields(line, key, boxed and "sinnnnnnnnnnnn" or "sinnnnnn")
      if not f then return bad(n, ferr) end
      local hi = hole_index[f[1]]
      if not hi then return bad(n, "door of an unknown hole '" .. f[1] .. "'") end
      local h = m.holes[hi]
      if f[2] ~= #h.doors + 1 then return bad(n, ("door index %d out of order (expected %d)"):format(f[2], #h.doors + 1)) end
      if f[2] > M.MAX_DOORS then return bad(n, ("hole '%s' has more than %d doors"):format(f[1], M.MAX_DOORS)) end
      local why = coords(f, 3, #f, "door points")
      if why then return bad(n, why) end
      h.doors[f[2]] = { inside = { f[3], f[4], f[5] }, outside = { f[6], f[7], f[8] } }
      if boxed then
        local box = { min = { f[9], f[10], f[11] }, max = { f[12], f[13], f[14] } }
        for a = 1, 3 do
          if not (box.min[a] <= box.max[a]) then return bad(n, "door box min must not be above max") end
        end
        h.doors[f[2]].box = box
      end
    else
      return bad(n, "unknown line '" .. key:sub(1, 40) .. "'")
    end
  end
  for _, key in ipairs { "scale", "depth", "origin", "tiles", "radius" } do
    if m[key] == nil then return nil, ("%s: missing '%s' line"):format(path, key) end
  end
  if m.one_tree then -- (octonav.onetree: every agent listed, the radius line the smallest of theirs)
    if #agents == 0 then return nil, ("%s: a one-tree pack (version %d) without agent lines"):format(path, onetree.VERSION) end
    if onetree.tree_radius(agents) ~= m.radius then
      return nil, ("%s: the 'radius' line is not the smallest agent radius (the one tree's)"):format(path)
    end
    m.agents, m.agents_listed = agents, true
  elseif #agents > 0 then
    if agents[1].radius ~= m.radius then
      return nil, ("%s: the first agent's radius is not the 'radius' line's"):format(path)
    end
    m.agents, m.agents_listed = agents, true
  else
    m.agents, m.agents_listed = { { name = M.DEFAULT_AGENT, radius = m.radius } }, false
  end
  return m
end

function M.read_manifest(dir)
  local path = M.manifest_path(dir)
  local text, err = M.read_file(path, M.MAX_TEXT)
  if not text then return nil, err end
  return M.parse_manifest(path, text)
end

return M
