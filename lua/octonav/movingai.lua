--- Moving AI benchmark files: 3D voxel maps (.3dmap), their scenarios (.3dscen) and 2D maps (.map).
-- Format: ../shared/data/voxel/SOURCES.md. A voxel (x, y, z) is the box [x, x+1] x [y, y+1] x [z, z+1]
-- in nav space (scale 1, origin 0); scenario endpoints are voxel centres. Files are read whole by the
-- core's regular-file reader (core.read_file): a FIFO or a device is refused at once, never blocks.
local compat = require "octonav.compat"
local core = require "octonav.core"

local raise = require("octonav.util").raise -- (errors at the user's call)

local M = {}

--- The largest .3dscen read (the benchmark's largest is 424 KB): a bigger file is refused unread.
M.MAX_SCEN_FILE = 64 * 1048576

-- The lines of a whole file's text, as file:lines() gives them ("\n" ends a line; a last line without
-- one still counts, an empty text has none).
local function lines(text)
  if text ~= "" and text:sub(-1) ~= "\n" then text = text .. "\n" end
  return text:gmatch("(.-)\n")
end

local function check_opts(fname, opts, known)
  if opts == nil then return {} end
  if type(opts) ~= "table" then
    raise(("%s: options table expected, got %s"):format(fname, type(opts)))
  end
  for k in pairs(opts) do
    if not known[k] then raise(("%s: unknown option '%s'"):format(fname, tostring(k))) end
  end
  return opts
end

--- Load a .3dmap as a tree. opts.depth (default 9): the tile depth (tiles of 2^depth voxels).
-- Returns tree, info ({ dims = {W, H, D}, voxels = n }) or nil, err.
function M.load_map(path, opts)
  if type(path) ~= "string" then raise("octonav.movingai.load_map: path must be a string") end
  opts = check_opts("octonav.movingai.load_map", opts, { depth = true })
  local depth = opts.depth or 9
  if not compat.isinteger(depth) or depth < 1 or depth > 9 then
    raise("octonav.movingai.load_map: option 'depth' must be an integer 1..9")
  end
  local tree, dims, count = core.tree.from_voxmap(path, depth)
  if not tree then return nil, dims end
  return tree, { dims = dims, voxels = count }
end

--- Load a .3dmap as a dense grid (the A* baseline). Returns grid or nil, err.
function M.load_grid(path)
  if type(path) ~= "string" then raise("octonav.movingai.load_grid: path must be a string") end
  if path:match("%.3dmap$") then return core.grid.load_voxmap(path) end
  return core.grid.load_map2d(path)
end

--- Parse a .3dscen. Returns an array of { start = {x,y,z}, goal = {x,y,z}, optimal = n, cells = {..} }
-- (start and goal at voxel centres; `cells` holds the integer voxels) and the map name, or nil, err.
function M.load_scen(path)
  if type(path) ~= "string" then raise("octonav.movingai.load_scen: path must be a string") end
  local text, err = core.read_file(path, M.MAX_SCEN_FILE)
  if not text then return nil, err end
  local out, mapname, lineno = {}, nil, 0
  for line in lines(text) do
    lineno = lineno + 1
    line = line:gsub("\r$", "")
    if lineno == 1 then
      if not line:match("^version%s+1%s*$") then
        return nil, ("%s:1: expected 'version 1'"):format(path)
      end
    elseif lineno == 2 then
      mapname = line
    elseif line:match("%S") then
      local sx, sy, sz, gx, gy, gz, opt = line:match(
        "^%s*(%d+)%s+(%d+)%s+(%d+)%s+(%d+)%s+(%d+)%s+(%d+)%s+([%d%.eE+-]+)")
      local optimal = tonumber(opt)
      if not optimal then
        return nil, ("%s:%d: malformed scenario line"):format(path, lineno)
      end
      sx, sy, sz, gx, gy, gz = tonumber(sx), tonumber(sy), tonumber(sz), tonumber(gx), tonumber(gy), tonumber(gz)
      out[#out + 1] = {
        start = { sx + 0.5, sy + 0.5, sz + 0.5 },
        goal = { gx + 0.5, gy + 0.5, gz + 0.5 },
        start_cell = { sx, sy, sz },
        goal_cell = { gx, gy, gz },
        optimal = optimal,
      }
    end
  end
  if lineno < 2 then return nil, ("%s: too short"):format(path) end
  return out, mapname
end

return M
