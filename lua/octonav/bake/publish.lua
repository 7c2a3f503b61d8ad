--- octonav.bake.publish: a bake or a rebake is published whole or not at all (issue 30, item 6).
--
-- bake.run and bake.rebake do not write into the pack directory DIR: they write into a new directory
-- beside it, DIR.stage.ID, made first as a copy of DIR made of hard links (no bytes copied: every file
-- of the pack and whatever else DIR holds), into which the bake writes its files (each written file
-- replaces its link there: the file in DIR is untouched) and its manifest last. Once complete, the
-- stage and DIR are exchanged in one step (Linux: renameat2 RENAME_EXCHANGE; elsewhere two renames,
-- where a crash between them leaves no DIR rather than a mix) and the old pack, now at the stage's
-- name, is removed. So a pack holds one bake or the other, never a mix: a failure (a full disk)
-- removes the stage and leaves DIR as it was; a process killed half way leaves DIR as it was and the
-- stage behind (DIR.stage.ID: remove it). DIR must not be a mount point nor the working directory
-- (it is renamed), and its parent must be writable.
--
--   publish.stage(dir) -> stage | nil, err   DIR.stage.ID made, holding links to DIR's files
--   publish.commit(dir, stage) -> true | nil, err   the stage becomes DIR (the old DIR removed)
--   publish.discard(stage)                   removes a stage (after a failure)
local core = require "octonav.core"

local M = {}

local function unique()
  return ("%x%04x%04x"):format(os.time(), math.random(0, 0xffff), math.random(0, 0xffff))
end

--- A new stage beside dir holding hard links to every file under dir (none when dir is missing).
-- Returns its path or nil, err.
function M.stage(dir)
  local base = dir:gsub("(.)/+$", "%1")
  local stage = base .. ".stage." .. unique()
  local ok, err = core.mkdir(stage)
  if ok then ok, err = core.link_tree(base, stage) end
  if not ok then
    core.remove_tree(stage)
    return nil, err
  end
  return stage
end

function M.discard(stage)
  if stage then core.remove_tree(stage) end
end

--- Publishes stage (from M.stage, complete with its manifest) as the pack at dir. Returns true or
-- nil, err (dir as it was, the stage removed).
function M.commit(dir, stage)
  local ok, err = core.exchange_dirs(stage, (dir:gsub("(.)/+$", "%1")))
  if not ok then
    core.remove_tree(stage)
    return nil, err
  end
  core.remove_tree(stage) -- the old pack (a failure to remove it leaves it there: no harm to the pack)
  return true
end

return M
