-- spec/support/heap.lua: the binary min-heap of the Dijkstra references written in Lua (spec/05, 06
-- and 07). A heap is a plain array of entries; an entry is a table whose [1] is its key.
-- Loaded with dofile("spec/support/heap.lua"); returns { push, pop }.

-- Adds entry e (a table, e[1] the key).
local function push(h, e)
  local i = #h + 1
  h[i] = e
  while i > 1 do
    local p = math.floor(i / 2)
    if h[p][1] <= h[i][1] then break end
    h[p], h[i] = h[i], h[p]
    i = p
  end
end

-- Removes and returns an entry with the least key (the heap must not be empty).
local function pop(h)
  local top = h[1]
  local last = table.remove(h)
  if #h > 0 then
    h[1] = last
    local i = 1
    while true do
      local l, r, m = 2 * i, 2 * i + 1, i
      if l <= #h and h[l][1] < h[m][1] then m = l end
      if r <= #h and h[r][1] < h[m][1] then m = r end
      if m == i then break end
      h[m], h[i] = h[i], h[m]
      i = m
    end
  end
  return top
end

return { push = push, pop = pop }
