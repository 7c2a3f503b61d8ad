-- luacheck configuration (`luacheck lua/ bin/ examples/ spec/ tools/` must report 0 warnings; `make test` runs it).
std = "lua54"
-- the project's lines run to 120 columns; the specs' long assertion messages are allowed further
max_line_length = 130
-- 581 ("not (x < y)" can be "x >= y"): the negated comparisons are deliberate, they are false for NaN
ignore = { "581" }

-- bin/octonav is a Lua script without the .lua suffix
files["bin/octonav"] = { std = "lua54" }

-- busted's globals (describe, it, assert.are.equal, ...) in the specs and their support files
files["spec/"] = { std = "+busted", max_line_length = false }

-- the LÖVE example (issue 34) runs on LÖVE's LuaJIT, whose callbacks are fields of the global `love`
files["examples/love/"] = { std = "luajit", globals = { "love" } }
