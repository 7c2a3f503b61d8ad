-- spec/34-hostile_files_spec.lua -- files that are not what they claim (issue 13, "Hangs and exhaustion
-- from tiny hostile files" and "Integrity"): a FIFO or /dev/zero where a tile or hole tree belongs, a
-- manifest or .3dmap whose header asks for gigabytes, swapped and old-format tile files, overlapping
-- saves, and save errors that say why. Each case here hung, exhausted memory, raised, or silently
-- loaded a wrong world before the fix (the FIFO cases hang: busted never returns).
-- FIFOs and the second process need a shell (os.execute): under a sanitizer runtime, where child
-- processes do not start, those cases are pending.
local LUA = os.getenv("OCTONAV_LUA") or "lua5.4" -- the Lua under test (tools/runtests.sh)
local octonav = require "octonav"
local core = require "octonav.core"
local bake = require "octonav.bake"
local world = require "octonav.world"
local pack = require "octonav.pack"
local movingai = require "octonav.movingai"
local streamer = require "octonav.streamer"

local files = dofile("spec/support/files.lua")
local tmp = files.tracker(files.rm_rf)
local readfile, writefile = files.read, files.write

local function box(mn, mx) return { box = { min = mn, max = mx } } end

-- 2 x 1 x 1 tiles of 8 units (depth 3) with a ground slab, and a hole with one door.
local function config(dir)
  return {
    range = { min = { 0, 0, 0 }, max = { 16, 8, 8 } }, depth = 3, scale = 1,
    geometry = { box({ 0, 0, 0 }, { 16, 1, 8 }), box({ 10, 1, 2 }, { 11, 5, 6 }) },
    holes = { { name = "cave", min = { 2, 1, 2 }, max = { 6, 5, 6 }, scale = 0.5, kind = "under_terrain",
      doors = { { inside = { 4, 2, 4 }, outside = { 7, 2, 4 } } } } },
    output = dir,
    progress = function() end,
  }
end

-- A baked pack in a fresh directory.
local function fresh_pack()
  local dir = tmp.dir()
  assert(bake(config(dir)))
  return dir
end

-- mkfifo through the shell; false where no child process can start.
local function mkfifo(path)
  os.remove(path)
  return os.execute("mkfifo '" .. path .. "' 2>/dev/null") == true
end

local function contains(s, part)
  assert.is_string(s)
  assert.truthy(s:find(part, 1, true), ("%q does not contain %q"):format(s, part))
end

describe("hostile files", function()
  teardown(function() tmp.cleanup() end)

  describe("what is not a regular file is refused at once", function()
    it("a FIFO as a tile file: world.load returns nil, reason", function()
      local dir = fresh_pack()
      local path = pack.tile_path(dir, 1, 0, 0)
      if not mkfifo(path) then pending("no shell to make a FIFO") return end
      local w, err = world.load(dir)
      assert.is_nil(w)
      assert.are.equal(path .. ": not a regular file (a FIFO)", err)
    end)

    it("a FIFO as a tile file under a streamer with a worker: the tile fails, close returns", function()
      local dir = fresh_pack()
      if not mkfifo(pack.tile_path(dir, 0, 0, 0)) then pending("no shell to make a FIFO") return end
      local s = assert(streamer.new(dir, { load_padding = 100, unload_padding = 200, workers = 1 }))
      s:add_agent { 4, 4, 4 }
      local ch = s:update(true)
      assert.are.equal(1, #ch.failed)
      assert.are.same({ 0, 0, 0 }, ch.failed[1].tile)
      assert.are.equal("missing or unreadable tile file", ch.failed[1].reason)
      assert.is_true(s:is_loaded { 1, 0, 0 })
      s:close()
    end)

    it("a FIFO as a hole tree: the streamer's update returns with the hole failed", function()
      local dir = fresh_pack()
      local path = pack.hole_path(dir, "cave")
      if not mkfifo(path) then pending("no shell to make a FIFO") return end
      local s = assert(streamer.new(dir, { load_padding = 2, unload_padding = 4, workers = 0 }))
      s:add_agent { 4, 2, 4 }
      local ch = s:update(true)
      assert.are.equal(1, #ch.holes_failed)
      assert.are.equal(path .. ": cannot read: not a regular file (a FIFO)", ch.holes_failed[1].reason)
      s:close()
    end)

    it("a tile symlinked to /dev/zero and a directory as a tile are refused unread", function()
      local dir = fresh_pack()
      local path = pack.tile_path(dir, 0, 0, 0)
      os.remove(path)
      if not os.execute("ln -s /dev/zero '" .. path .. "' 2>/dev/null") then pending("no shell") return end
      local w, err = world.load(dir)
      assert.is_nil(w)
      assert.are.equal(path .. ": not a regular file (a character device)", err)
      os.remove(path)
      assert(core.mkdir(path))
      w, err = world.load(dir)
      assert.is_nil(w)
      assert.are.equal(path .. ": not a regular file (a directory)", err)
      local t
      t, err = octonav.tree.load(dir)
      assert.is_nil(t)
      assert.are.equal(dir .. ": cannot read: not a regular file (a directory)", err)
    end)
  end)

  describe("the Lua readers (movingai.load_scen, checker.voxel_map) refuse what is not a regular file", function()
    -- Each reader runs in a child lua5.4 under `timeout`: before the fix io.open blocked on the FIFO
    -- (no writer) and read /dev/zero without end, so a regression fails here instead of hanging.
    local function read_in_child(module, fn, path)
      local script = ("package.path = 'lua/?.lua;lua/?/init.lua;' .. package.path; package.cpath = %q; "
        .. "local r, err = require(%q)[%q](%q); io.write(tostring(r == nil), '|', tostring(err))")
        :format(package.cpath, module, fn, path)
      local p = io.popen(("timeout 20 " .. LUA .. " -e %q 2>&1; echo \"|rc=$?\""):format(script))
      local out = p and p:read("*a") or ""
      if p then p:close() end
      return out
    end

    local readers = {
      { "octonav.movingai", "load_scen", ".3dscen" },
      { "octonav.checker", "voxel_map", ".3dmap" },
    }
    for _, r in ipairs(readers) do
      local module, fn, suffix = r[1], r[2], r[3]
      it(("%s.%s: a FIFO and a symlink to /dev/zero are nil, reason at once"):format(module, fn), function()
        local path = tmp.file(suffix)
        if not mkfifo(path) then pending("no shell to make a FIFO") return end
        local out = read_in_child(module, fn, path)
        if out == "" then pending("no child process") return end
        assert.are.equal("true|" .. path .. ": cannot read: not a regular file (a FIFO)|rc=0\n", out)
        os.remove(path)
        assert(os.execute("ln -s /dev/zero '" .. path .. "'"))
        out = read_in_child(module, fn, path)
        assert.are.equal("true|" .. path .. ": cannot read: not a regular file (a character device)|rc=0\n", out)
        -- and in this process too (it would block here before the fix)
        local v, err = require(module)[fn](path)
        assert.is_nil(v)
        assert.are.equal(path .. ": cannot read: not a regular file (a character device)", err)
        os.remove(path)
        v, err = require(module)[fn](path)
        assert.is_nil(v)
        assert.are.equal(path .. ": cannot read: No such file or directory", err)
      end)
    end

    it("files over the readers' caps are refused unread", function()
      local checker = require "octonav.checker"
      local path = tmp.file(".3dscen")
      local text = "version 1\nx.3dmap\n0 0 0 1 1 1 1.73205081 1\n"
      writefile(path, text)
      local saved = movingai.MAX_SCEN_FILE
      movingai.MAX_SCEN_FILE = 16
      local sc, err = movingai.load_scen(path)
      movingai.MAX_SCEN_FILE = saved
      assert.is_nil(sc)
      assert.are.equal(("%s: %d bytes, more than a well-formed file can hold (16)"):format(path, #text), err)
      assert.are.equal(1, #assert(movingai.load_scen(path)))
      saved = checker.MAX_MAP_FILE
      checker.MAX_MAP_FILE = 8
      writefile(path, "voxel 2 2 2\n1 1 1\n")
      local m
      m, err = checker.voxel_map(path)
      checker.MAX_MAP_FILE = saved
      assert.is_nil(m)
      assert.are.equal(path .. ": 18 bytes, more than a well-formed file can hold (8)", err)
      m = assert(checker.voxel_map(path))
      assert.is_true(m:blocked(1, 1, 1))
      assert.is_false(m:blocked(0, 1, 1))
    end)
  end)

  describe("header counts are checked before anything is allocated", function()
    it("the 206-byte manifest with tiles 512 512 64 is refused (it took 3.2 GB and 30 s)", function()
      local dir = fresh_pack()
      local m = assert(pack.read_manifest(dir))
      m.tiles = { 512, 512, 64 }
      m.holes = {}
      local text = pack.manifest_text(m)
      writefile(pack.manifest_path(dir), text)
      local w, err = world.load(dir, { tiles = false })
      assert.is_nil(w)
      assert.are.equal(pack.manifest_path(dir) .. ":5: 512 x 512 x 64 tiles, more than 1048576", err)
      -- the most a manifest may ask for still loads without tiles
      m.tiles = { 1024, 1, 1024 }
      writefile(pack.manifest_path(dir), pack.manifest_text(m))
      w = assert(world.load(dir, { tiles = false }))
      assert.are.equal(1024 * 1024, w.grid.count)
      w:close()
    end)

    it("too many tiles for a tree is nil, reason (it raised), also from bin/octonav info", function()
      local dir = fresh_pack()
      local m = assert(pack.read_manifest(dir))
      m.tiles = { 4096, 4096, 4096 }
      writefile(pack.manifest_path(dir), pack.manifest_text(m))
      local w, err = world.load(dir)
      assert.is_nil(w)
      contains(err, "4096 x 4096 x 4096 tiles, more than 1048576")
      local p = io.popen(LUA .. " bin/octonav info '" .. dir .. "' 2>&1")
      local out = p and p:read("*a")
      if not out or out == "" then pending("no shell") return end
      p:close()
      contains(out, "4096 x 4096 x 4096 tiles, more than 1048576")
      assert.falsy(out:find("traceback", 1, true), out)
    end)

    it("a 25-byte .3dmap asking for 65535^3 voxels is nil, reason (it ran past 60 s at 590 MB)", function()
      local path = tmp.file(".3dmap")
      writefile(path, "voxel 65535 65535 65535\n")
      local t, err = movingai.load_map(path)
      assert.is_nil(t)
      assert.are.equal("map 65535 x 65535 x 65535 needs 2097152 tiles at depth 9 (at most 1048576): use a larger depth",
        err)
      -- a thin map: 128 x 128 tiles whose space beyond z = 1 is outside the map: blocked by the
      -- map's bounds, which cost no node (a blocked margin box would have split 4.36e9 leaf squares)
      writefile(path, "voxel 65535 65535 1\n")
      t = assert(movingai.load_map(path))
      assert.are.equal(0, t:stats().nodes)
      assert.are.equal("free", t:locate { 60000.5, 30000.5, 0.5 })
      assert.are.equal("blocked", t:locate { 60000.5, 30000.5, 1.5 })
      assert.are.equal("blocked", t:locate { 65535.5, 10.5, 0.5 })
      assert.is_true(t:visible({ 10.5, 10.5, 0.5 }, { 60000.5, 20000.5, 0.5 }))
      assert.is_false(t:visible({ 10.5, 10.5, 0.5 }, { 10.5, 10.5, 1.5 }))
      t:close()
    end)

    it("a map too wide for the depth is nil, reason (it raised)", function()
      local path = tmp.file(".3dmap")
      writefile(path, "voxel 9000 4 4\n1 1 1\n")
      local t, err = movingai.load_map(path, { depth = 1 })
      assert.is_nil(t)
      assert.are.equal("map too wide for depth 1: 9000 voxels along x need 4500 tiles (at most 4096)", err)
      t = assert(movingai.load_map(path, { depth = 3 }))
      assert.are.equal("blocked", t:locate { 1.5, 1.5, 1.5 })
      t:close()
    end)

    it("the largest benchmark map's shape still loads at depth 9", function()
      local path = tmp.file(".3dmap")
      writefile(path, "voxel 896 390 255\n895 389 254\n")
      local t = assert(movingai.load_map(path))
      assert.are.equal("blocked", t:locate { 895.5, 389.5, 254.5 })
      assert.are.equal("blocked", t:locate { 900, 10, 10 }) -- beyond the map
      assert.are.equal("free", t:locate { 10.5, 10.5, 10.5 })
      t:close()
    end)
  end)

  describe("tile files record their position", function()
    it("swapped tile files are refused by world.load and by the streamer", function()
      local dir = fresh_pack()
      local a, b = pack.tile_path(dir, 0, 0, 0), pack.tile_path(dir, 1, 0, 0)
      local ba, bb = readfile(a), readfile(b)
      assert.are_not.equal(ba:sub(17), bb:sub(17))
      writefile(a, bb)
      writefile(b, ba)
      local w, err = world.load(dir)
      assert.is_nil(w)
      assert.are.equal(a .. ": holds tile 1_0_0, not 0_0_0 (a swapped or misnamed file)", err)
      local s = assert(streamer.new(dir, { load_padding = 100, unload_padding = 200, workers = 0 }))
      s:add_agent { 4, 4, 4 }
      local ch = s:update(true)
      assert.are.equal(2, #ch.failed)
      contains(ch.failed[1].reason, "tile file of another tile")
      s:close()
    end)

    it("a tile file from before the header (a bare blob) gives a clear error", function()
      local dir = fresh_pack()
      local path = pack.tile_path(dir, 1, 0, 0)
      local blob = assert(pack.read_tile(dir, 1, 0, 0))
      writefile(path, blob)
      local w, err = world.load(dir)
      assert.is_nil(w)
      assert.are.equal(path .. ": a bare tile blob without its position (a pack from before tile file version 1): bake it again",
        err)
      writefile(path, pack.tile_file(1, 0, 0, blob))
      w = assert(world.load(dir))
      w:close()
    end)

    it("damaged headers: version, checksum, magic", function()
      local blob = octonav.tree.new { tiles = { 1, 1, 1 }, depth = 2 }:encode_tile(0, 0, 0)
      local good = pack.tile_file(3, 4, 5, blob)
      assert.are.equal(16 + #blob, #good)
      assert.are.equal(blob, pack.tile_blob("f", good, 3, 4, 5))
      local function bad(bytes, want)
        local b, err = pack.tile_blob("f", bytes, 3, 4, 5)
        assert.is_nil(b)
        assert.are.equal(want, err)
      end
      bad(good:sub(1, 4) .. "\2" .. good:sub(6), "f: unsupported tile file version 2 (this build reads 1)")
      bad(good:sub(1, 6) .. "\4" .. good:sub(8), "f: corrupt tile file (header checksum mismatch)")
      bad("ONTX" .. good:sub(5), "f: not a tile file (bad header)")
      bad(good:sub(1, 15), "f: not a tile file (bad header)")
    end)
  end)

  describe("saves", function()
    it("save errors carry the OS's reason", function()
      local t = octonav.tree.new { tiles = { 1, 1, 1 }, depth = 2 }
      local ok, err = t:save("/dev/full")
      assert.is_nil(ok)
      assert.are.equal("/dev/full: cannot write: No space left on device", err)
      ok, err = t:save("/nonexistent-dir/x.octn")
      assert.is_nil(ok)
      assert.are.equal("/nonexistent-dir/x.octn: cannot write: No such file or directory", err)
      ok, err = pack.write_file("/dev/full", "data")
      assert.is_nil(ok)
      assert.are.equal("/dev/full: cannot write: No space left on device", err)
      ok, err = pack.write_file("/nonexistent-dir/manifest.txt", "data")
      assert.is_nil(ok)
      assert.are.equal("/nonexistent-dir/manifest.txt: cannot write: No such file or directory", err)
      local dir = tmp.dir(true)
      ok, err = pack.write_file(dir, "data")
      assert.is_nil(ok)
      assert.are.equal(dir .. ": cannot write: not a regular file (a directory)", err)
    end)

    it("a save on a read-only filesystem says so (EROFS), as tree:save and pack.write_file", function()
      -- a read-only tmpfs mounted over a fresh directory in a private user and mount namespace
      -- (unshare -rm: no privilege needed where user namespaces are allowed); the saves run in that
      -- child, the mount goes with it
      local dir = tmp.dir(true)
      local script = ("package.path = 'lua/?.lua;lua/?/init.lua;' .. package.path; package.cpath = %q; "
        .. "local octonav = require 'octonav'; local pack = require 'octonav.pack'; local d = %q; "
        .. "local t = octonav.tree.new { tiles = { 1, 1, 1 }, depth = 2 }; "
        .. "print('RESULT', select(2, t:save(d .. '/x.octn'))); "
        .. "print('RESULT', select(2, pack.write_file(d .. '/manifest.txt', 'data')))"):format(package.cpath, dir)
      local p = io.popen(("unshare -rm sh -c 'mount -t tmpfs -o ro none \"$1\" && exec " .. LUA .. " -e \"$2\"' sh '%s' %q 2>&1")
        :format(dir, script))
      local out = p and p:read("*a") or ""
      if p then p:close() end
      if not out:find("RESULT", 1, true) then
        pending("no read-only filesystem to be had here (unshare -rm and mount): " .. out:sub(1, 200))
        return
      end
      assert.are.equal(("RESULT\t%s/x.octn: cannot write: Read-only file system\n"
        .. "RESULT\t%s/manifest.txt: cannot write: Read-only file system\n"):format(dir, dir), out)
    end)

    it("two processes writing one pack file over and over never publish a mix", function()
      local dir = tmp.dir(true)
      local path = dir .. "/shared.txt"
      local A, B = ("a"):rep(300000) .. "\n", ("b"):rep(200000) .. "\n"
      assert(pack.write_file(path, A))
      -- each writer is a script file run as `lua5.4 WRITER PATH LETTER COUNT`; it exits 0 after 40
      -- writes, and its exit code is kept beside the pack (a writer that fails at once would leave the
      -- reader nothing to race: until 2026-11-26 the writers ran with `lua5.4 -e`, which took PATH for a
      -- script name, and failed at their first line)
      local base = dir .. "/../" .. dir:match("[^/]*$")
      local writer, done, rca, rcb = base .. ".writer.lua", base .. ".done", base .. ".a.rc", base .. ".b.rc"
      for _, f in ipairs { writer, done, rca, rcb } do tmp.add(f) end
      writefile(writer, "package.path = 'lua/?.lua;lua/?/init.lua;' .. package.path\n"
        .. "package.cpath = (os.getenv('OCTONAV_BUILD') or 'build') .. '/?.so;' .. package.cpath\n"
        .. "local pack = require 'octonav.pack'\n"
        .. "local data = arg[2]:rep(tonumber(arg[3])) .. '\\n'\n"
        .. "for _ = 1, 40 do assert(pack.write_file(arg[1], data)) end\n")
      local one = LUA .. " '%s' '%s' %s %d; echo $? > '%s'"
      local started = os.execute(("( (%s) & (%s) & wait; touch '%s') >/dev/null 2>&1 &"):format(
        one:format(writer, path, "a", 300000, rca), one:format(writer, path, "b", 200000, rcb), done))
      if not started then pending("no shell") return end
      local reads, wrong, t0 = 0, 0, os.time()
      repeat
        local s = readfile(path)
        reads = reads + 1
        if s ~= A and s ~= B then wrong = wrong + 1 end
      until files.exists(done) or os.time() - t0 > 600
      assert.is_true(files.exists(done), ("writers not done after %d s and %d reads"):format(os.time() - t0, reads))
      assert.are.same({ "0\n", "0\n" }, { readfile(rca), readfile(rcb) })
      assert.is_true(reads > 1)
      assert.are.equal(0, wrong)
      local s = readfile(path)
      assert.is_true(s == A or s == B)
      -- no temporary left behind
      local ls = io.popen("ls -A '" .. dir .. "'"):read("*a")
      assert.are.equal("shared.txt\n", ls)
    end)
  end)
end)
