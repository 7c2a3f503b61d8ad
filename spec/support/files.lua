-- spec/support/files.lua: whole files and temporary paths for the specs.
-- Loaded with dofile("spec/support/files.lua"); returns { read, write, exists, tmpname, tmpdir,
-- rm_rf, tracker }.
local files = {}

-- The whole file, binary; raises when it cannot be opened.
function files.read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

-- Writes (replaces) the whole file, binary; raises when it cannot be opened.
function files.write(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

function files.exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- A fresh temporary name that does not exist (the file os.tmpname creates is removed), with
-- `suffix` appended when given.
function files.tmpname(suffix)
  local p = os.tmpname()
  os.remove(p)
  return p .. (suffix or "")
end

-- A fresh, empty temporary directory (made with octonav.core.mkdir, no shell).
function files.tmpdir()
  local p = files.tmpname()
  assert(require("octonav.core").mkdir(p))
  return p
end

-- Removes a file or a whole directory with the shell's rm -rf.
function files.rm_rf(path)
  os.execute("rm -rf '" .. path .. "'")
end

-- tracker(remove): remembers temporary paths; t.cleanup() calls remove(path) on each (default
-- os.remove), in the order they were made, and forgets them.
--   t.file(suffix): os.tmpname() (the file it creates is tracked); with a suffix, that name with the
--     suffix appended is returned (and tracked too)
--   t.dir(mkdir): a fresh name (files.tmpname()); created with octonav.core.mkdir when mkdir is true
--   t.add(path): tracks a path made otherwise; returns it
--   t.paths: the tracked paths
function files.tracker(remove)
  remove = remove or os.remove
  local t = { paths = {} }
  function t.add(p)
    t.paths[#t.paths + 1] = p
    return p
  end
  function t.file(suffix)
    local p = t.add(os.tmpname())
    if suffix then p = t.add(p .. suffix) end
    return p
  end
  function t.dir(mkdir)
    return t.add(mkdir and files.tmpdir() or files.tmpname())
  end
  function t.cleanup()
    for _, p in ipairs(t.paths) do remove(p) end
    t.paths = {}
  end
  return t
end

return files
