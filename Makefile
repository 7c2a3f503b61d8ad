# octonav -- build, test, check, bench, demo.
#   make            the C module build/octonav/core.so (for use in the source tree, see .busted)
#   make test       luacheck (0 warnings, see .luacheckrc), C unit tests + busted specs; ends with
#                   "N passed, N failed, N skipped" (skipped: specs pending for absent data)
#   make check      the same under AddressSanitizer + UndefinedBehaviorSanitizer (with float-cast-overflow,
#                   which -fsanitize=undefined leaves out: a NaN or huge double cast to an integer aborts)
#   make check-tsan ThreadSanitizer over the C tests that start threads and the threaded specs
#   make bench      benchmarks over ../shared/data (skipped where absent); writes docs/benchmarks.md
#   make demo       bakes built-in scenes (a tree; a world with a cave) and walks an agent into the cave
#   make fuzz       each libFuzzer target (fuzz/, clang) for FUZZ_SECONDS (default 20) from fuzz/corpus
# Missing Debian packages (lua5.4 liblua5.4-dev lua-busted lua-check) are installed by tools/deps.sh.

# LUA: the Lua the module is built for and the specs run with (issue 34): lua5.4 (the default, into
# build/), or luajit, lua5.1, lua5.2, lua5.3, each into build/$(LUA) with its headers from pkg-config
# (csrc/lua_compat.h gives the binding the 5.4 API on each). `make install LUA=1` keeps its meaning
# (install the Lua module too: for 5.4). `make test LUA=luajit` runs the specs on the LuaJIT that
# tools/luajit.sh names (not Debian 12's luajit, which has LuaJIT bug 829: docs/lua-versions.md).
LUA      ?= lua5.4
LUA_NAME := $(if $(filter 1,$(LUA)),lua5.4,$(LUA))
BUSTED   ?= busted
LUACHECK ?= luacheck
CC       ?= cc
ifeq ($(LUA_NAME),lua5.4)
BUILD    ?= build
else
BUILD    ?= build/$(LUA_NAME)
endif
LUA_INC  ?= $(shell pkg-config --cflags $(LUA_NAME) 2>/dev/null || echo -I/usr/include/$(LUA_NAME))
# -O3: the same paths as -O2, byte for byte (bench/query -w, default and -P, 13 maps), 2 % fewer
# instructions a query (DC1 398,935 -> 390,798) and medians 0-17 % lower (README, "Queries in C").
# LuaRocks' builtin build uses its own CFLAGS (-O2): `luarocks make CFLAGS="-O3 -fPIC"` matches this.
OPT      ?= -O3
WARN      = -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wstrict-prototypes -Wmissing-prototypes \
            -Wvla -Wformat=2 -Wundef
CFLAGS   ?=
ALLCFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L $(OPT) -g -fPIC -fvisibility=hidden $(WARN) $(SANFLAGS) $(CFLAGS)
LDLIBS    = -lm -lpthread

# The sources live in rooms by layer, csrc/ROOM/ (docs/design.md, "Layout"; each room's README.md says
# what it owns and which rooms it may include): every room is picked up by the wildcards below, so a new
# room needs no edit here. Every room is on the include path (file names are unique across rooms), and
# csrc/lua/ (the binding) is the module's alone: libonav is every other room.
ROOMS    := $(sort $(patsubst %/,%,$(dir $(wildcard csrc/*/*.c csrc/*/*.h))))
ROOM_INC := -Icsrc $(ROOMS:%=-I%)
CORE_SRC := $(filter-out csrc/lua/%,$(wildcard csrc/*/*.c))
LUA_SRC  := $(wildcard csrc/lua/*.c)
HDR      := csrc/octonav.h $(wildcard csrc/*/*.h)
# the public C API: octonav.h and each room's public header (installed beside it)
API_HDR  := csrc/octonav.h $(wildcard csrc/*/octonav_*.h)
CORE_OBJ := $(CORE_SRC:csrc/%.c=$(BUILD)/obj/%.o)
LUA_OBJ  := $(LUA_SRC:csrc/%.c=$(BUILD)/obj/%.o)
# C tests: tests/ROOM/test_NAME.c (the room of what they test), built as $(BUILD)/tests/test_NAME; the
# shared test headers stay in tests/
TEST_SRC := $(wildcard tests/*/test_*.c)
TEST_HDR := $(wildcard tests/*.h)
TEST_BIN := $(addprefix $(BUILD)/tests/,$(basename $(notdir $(TEST_SRC))))
vpath test_%.c $(sort $(dir $(TEST_SRC)))
MODULE   := $(BUILD)/octonav/core.so

.PHONY: all deps test check check-tsan test-run bench bench-soak bench-pathserver bench-anchors bench-los bench-radius bench-bake bench-bake-graph bench-bake-stages bench-query bench-query-ir bench-stream bench-frames bench-plan demo clean ctest spec lint fuzz fuzz-build

# `make` (or `make all`) alone builds the module on every core, unless given -j: one after the other the
# 55 files took 22 s (gcc or clang, -O3 -g), two at a time 12 s. With other goals beside it (`make -j2 all
# ctest`, `make test`) the module is an ordinary prerequisite, so that no second make builds the same
# objects beside the first.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
ifeq ($(filter-out all,$(MAKECMDGOALS)),)
all: deps
	@$(MAKE) --no-print-directory $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(JOBS)) $(MODULE)
else
all: deps $(MODULE)
endif

deps:
	@bash tools/deps.sh

$(BUILD)/obj/%.o: csrc/%.c $(HDR)
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) $(ROOM_INC) $(LUA_INC) -c $< -o $@

# The search room reads no errno after its square roots (distances, refine's minimisers): without it
# each sqrt is the instruction alone, not a check and a libm call kept for a negative argument's errno
# (the same values: make bench-query-ir DC1 435,978 -> 429,422 instructions a query, paths byte-identical)
$(BUILD)/obj/search/%.o: ALLCFLAGS += -fno-math-errno

$(BUILD)/tests $(BUILD)/octonav:
	@mkdir -p $@

$(BUILD)/libonav.a: $(CORE_OBJ)
	ar rcs $@ $^

$(MODULE): $(CORE_OBJ) $(LUA_OBJ) | $(BUILD)/octonav
	$(CC) -shared $(SANFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: %.c $(BUILD)/libonav.a $(TEST_HDR) | $(BUILD)/tests
	$(CC) $(ALLCFLAGS) -Itests $(ROOM_INC) -o $@ $< $(BUILD)/libonav.a $(LDLIBS)

ctest: $(TEST_BIN)

# lint fails on any warning (the Lua sources, the script, the examples and the specs), and on a break of
# the house's rules (tools/include_graph.lua: an include circle, a room including a higher one, a file
# over 700 lines)
lint: deps
	@$(LUACHECK) --formatter plain lua/ bin/ examples/ spec/ tools/ bench/lua/ && echo "luacheck: 0 warnings"
	@$(LUA) tools/include_graph.lua

test: all ctest lint
	@LUA=$(LUA_NAME) bash tools/runtests.sh $(BUILD)

check:
	@bash tools/deps.sh
	$(MAKE) --no-print-directory BUILD=build/san OPT=-O1 \
	  SANFLAGS="-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  build/san/octonav/core.so ctest
	@SANITIZE=1 bash tools/runtests.sh build/san

# ThreadSanitizer over the code that runs threads: the C tests that start the path server's or the
# streamer's workers or a crowd's (the only threads the library makes: pathserver.c, streamer.c,
# crowd/workers.c, for a crowd created with `.threads = ` N or a pool made alone; a test that starts threads itself is
# picked up too), the streaming specs, the path server spec and the specs
# that run a path server among other things (35, 56). The other C tests run one thread, where TSan
# has nothing to report (and they took 6 of its 9 minutes in CI: test_route alone 3).
TSAN_TESTS := $(sort $(basename $(notdir $(shell grep -l 'on_pathserver_\|on_streamer_\|on_workers_create\|pthread_create\|thrd_create\|\.threads = ' $(TEST_SRC)))))
check-tsan:
	$(if $(TSAN_TESTS),,$(error check-tsan: no C test starts a thread (TSAN_TESTS is empty)))
	@bash tools/deps.sh
	$(MAKE) --no-print-directory BUILD=build/tsan OPT=-O1 SANFLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
	  build/tsan/octonav/core.so $(TSAN_TESTS:%=build/tsan/tests/%)
	@CTESTS="$(TSAN_TESTS)" TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" SANITIZE=thread bash tools/runtests.sh build/tsan \
	  spec/13-streamer_spec.lua spec/14-world_streaming_spec.lua spec/18-pathserver_spec.lua spec/38-graph_streaming_spec.lua spec/39-streamer_los_spec.lua spec/42-route_joins_spec.lua \
	  spec/35-abuse_spec.lua spec/56-landmarks_spec.lua spec/107-crowd_threads_spec.lua

# MemorySanitizer (clang): the C tests, for reads of uninitialized memory (the kind of 4fa60c2: a
# stack value taken for a cached answer, which ASan cannot see). C tests only: MSan needs every
# library in the process instrumented, and the Lua interpreter is not. Skipped without clang.
.PHONY: check-msan
check-msan:
	@if ! command -v clang >/dev/null 2>&1; then echo "check-msan: skipped (clang absent)"; exit 0; fi; \
	$(MAKE) --no-print-directory BUILD=build/msan CC=clang OPT=-O1 \
	  SANFLAGS="-fsanitize=memory -fsanitize-memory-track-origins -fno-omit-frame-pointer" ctest && \
	MSAN_OPTIONS=halt_on_error=1 bash tools/runtests.sh build/msan --ctest-only

bench: all
	@$(LUA) bin/octonav bench-all
	@$(LUA) bin/octonav bench-world
	@$(MAKE) --no-print-directory bench-soak
	@$(MAKE) --no-print-directory bench-pathserver
	@$(MAKE) --no-print-directory bench-qmem
	@$(MAKE) --no-print-directory bench-query
	@$(MAKE) --no-print-directory bench-query-ir
	@$(MAKE) --no-print-directory bench-obstacles
	@$(MAKE) --no-print-directory bench-jitter
	@if [ -n "$(BENCH_FRAMES)" ]; then $(MAKE) --no-print-directory bench-frames; \
	else echo "bench: the seed's world's frames skipped (minutes: make bench BENCH_FRAMES=1, or make bench-frames)"; fi
	@if [ -f /usr/include/openvdb/openvdb.h ] && [ -f /usr/include/octomap/octomap.h ]; then \
	  $(MAKE) --no-print-directory bench-anchors; \
	else echo "bench-anchors: skipped (install libopenvdb-dev and liboctomap-dev)"; fi

# C benchmark programs (bench/): never part of the library or its tests
$(BUILD)/bench:
	@mkdir -p $@

$(BUILD)/bench/pathserver: bench/pathserver.c bench/scen.h $(BUILD)/libonav.a | $(BUILD)/bench
	$(CC) $(ALLCFLAGS) $(ROOM_INC) -o $@ $< $(BUILD)/libonav.a $(LDLIBS)

$(BUILD)/bench/los: bench/los.c bench/scen.h $(BUILD)/libonav.a | $(BUILD)/bench
	$(CC) $(ALLCFLAGS) $(ROOM_INC) -o $@ $< $(BUILD)/libonav.a $(LDLIBS)

$(BUILD)/bench/qmem: bench/qmem.c bench/scen.h $(BUILD)/libonav.a | $(BUILD)/bench
	$(CC) $(ALLCFLAGS) $(ROOM_INC) -o $@ $< $(BUILD)/libonav.a $(LDLIBS)

$(BUILD)/bench/query: bench/query.c bench/scen.h $(BUILD)/libonav.a | $(BUILD)/bench
	$(CC) $(ALLCFLAGS) $(ROOM_INC) -o $@ $< $(BUILD)/libonav.a $(LDLIBS)

$(BUILD)/bench/obstacles: bench/obstacles.c $(BUILD)/libonav.a | $(BUILD)/bench
	$(CC) $(ALLCFLAGS) $(ROOM_INC) -o $@ $< $(BUILD)/libonav.a $(LDLIBS)

$(BUILD)/bench/bake: bench/bake.c $(BUILD)/libonav.a | $(BUILD)/bench
	$(CC) $(ALLCFLAGS) $(ROOM_INC) -o $@ $< $(BUILD)/libonav.a $(LDLIBS)

$(BUILD)/bench/bake_graph: bench/bake_graph.c $(BUILD)/libonav.a | $(BUILD)/bench
	$(CC) $(ALLCFLAGS) $(ROOM_INC) -o $@ $< $(BUILD)/libonav.a $(LDLIBS)

# bake throughput: the 4096^2 heightfield at 1 m leaves and the four meshes (CPU s, nodes/s, triangles/s)
bench-bake: $(BUILD)/bench/bake
	@$(BUILD)/bench/bake

# the bake's tile graphs alone, from a baked pack (bench/bake_graph.c): each tile's graph built again,
# timed (thread CPU) and compared byte for byte with the pack's; BAKE_PACK=DIR (e.g. a bake of the seed's
# world), BAKE_TILES="FIRST COUNT" for a part of it
BAKE_PACK ?=
bench-bake-graph: $(BUILD)/bench/bake_graph
	@if [ -z "$(BAKE_PACK)" ] || [ ! -f "$(BAKE_PACK)/manifest.txt" ]; then echo "bench-bake-graph: BAKE_PACK=DIR (a baked pack) not given, skipped"; exit 0; fi; \
	  $(BUILD)/bench/bake_graph $(BAKE_PACK) $(or $(BAKE_TILES),0 100000)

# the bake's tile stage step by step (bench/bake_stages.lua: selection, insertion, encoding, graph; thread
# CPU a tile and the totals), opt-in: the seed's world (terrain.lua NX=8 NZ=8 NY=1 DEPTH=9 SCALE=1, SEED
# BAKE_SEED, default 11), about 50 s; BAKE_TILES="FIRST COUNT" for a part of it
BAKE_SEED ?= 11
bench-bake-stages: all
	@d=../shared/data; if [ ! -f $$d/worlds/terrain.lua ]; then echo "bench-bake-stages: $$d/worlds/terrain.lua absent, skipped"; exit 0; fi; \
	  NX=8 NZ=8 NY=1 DEPTH=9 SCALE=1 SEED=$(BAKE_SEED) LUA_PATH="$$PWD/lua/?.lua;$$PWD/lua/?/init.lua;;" \
	  LUA_CPATH="$$PWD/$(BUILD)/?.so;;" $(LUA) bench/bake_stages.lua $$d/worlds/terrain.lua $(BAKE_TILES)

# path server throughput: 1,000 scenario queries a map, 2 workers against one thread
bench-pathserver: $(BUILD)/bench/pathserver
	@$(BUILD)/bench/pathserver

# the streaming soak of issue 12: 100 navigators, doors toggling, max_loaded (counts of agents through a
# closed door, silent stalls and loaded-set rule violations: each must be 0)
bench-soak: all
	@LUA_PATH="$$PWD/lua/?.lua;$$PWD/lua/?/init.lua;$$PWD/bench/lua/?.lua;;" LUA_CPATH="$$PWD/$(BUILD)/?.so;;" \
	  $(LUA) -e 'print(require("octonav.bench_world").soak_report())'

$(BUILD)/bench/crowd: bench/crowd.c $(BUILD)/libonav.a | $(BUILD)/bench
	$(CC) $(ALLCFLAGS) -Icsrc $(ROOM_INC) -o $@ $< $(BUILD)/libonav.a $(LDLIBS)

$(BUILD)/bench/cores: bench/cores.c | $(BUILD)/bench
	$(CC) $(ALLCFLAGS) -o $@ $< -lpthread

$(BUILD)/bench/jitter: bench/jitter.c | $(BUILD)/bench
	$(CC) $(ALLCFLAGS) -o $@ $< -lpthread

# the host's stalls of a thread that computes (bench/jitter.c): a fixed 0.5 ms piece of work timed three
# ways in turns (alone, paced like a 60 fps frame, beside a second thread spinning), SECONDS (10) each:
# thread CPU p50 / p99.9 / max and the pieces 0.5 and 2 ms over the median: the floor under the frame
# tails measured here (docs/frame-budget.md); COLD=S: then 64 MB read again after S seconds idle
.PHONY: bench-jitter
bench-jitter: $(BUILD)/bench/jitter
	@$(BUILD)/bench/jitter $(or $(SECONDS),10) 0.5 $(or $(COLD),0)

# the crowd's two threads against one at 1,000 agents, paced 0, 2 and 8 ms like a game, at normal
# priority, beside the host's own ceiling (bench/crowd_scaling.sh; ROUNDS=5)
.PHONY: bench-crowd-scaling
bench-crowd-scaling: $(BUILD)/bench/crowd $(BUILD)/bench/cores
	@bash bench/crowd_scaling.sh $(BUILD) $(or $(ROUNDS),5)

# the crowd (issue 33): frame time of 100, 1,000, 5,000 agents (bench/crowd.c), then the scenarios at
# full size and 10,000 frames, checked from outside the crowd (bench/crowd.lua); tables for
# docs/benchmarks.md ("Crowd")
.PHONY: bench-crowd
bench-crowd: all $(BUILD)/bench/crowd
	@$(BUILD)/bench/crowd
	@LUA_PATH="$$PWD/lua/?.lua;$$PWD/lua/?/init.lua;;" LUA_CPATH="$$PWD/$(BUILD)/?.so;;" $(LUA) bench/crowd.lua

# streaming frames (bench/stream_frames.lua): caller's p50 / p99 / max us of the update() frames that
# load tiles, one agent, 600 frames, fastest of 5 passes, 2 then 0 workers, on terrain.lua 16x2x16 and
# dungeon.lua baked into a temporary directory (each skipped where ../shared/data lacks it)
bench-stream: all
	@d=../shared/data; tmp=$$(mktemp -d) || exit 1; trap 'rm -rf "$$tmp"' EXIT; \
	if [ -f $$d/worlds/terrain.lua ]; then NX=16 NZ=16 NY=2 OUT=$$tmp/terrain_16x2x16 \
	  $(LUA) bin/octonav bake $$d/worlds/terrain.lua >/dev/null || exit 1; \
	else echo "bench-stream: $$d/worlds/terrain.lua absent, skipped"; fi; \
	if [ -f $$d/worlds/dungeon.lua ] && [ -f $$d/meshes/dungeon.obj ]; then OUT=$$tmp/dungeon \
	  $(LUA) bin/octonav bake $$d/worlds/dungeon.lua >/dev/null || exit 1; \
	else echo "bench-stream: $$d/worlds/dungeon.lua or meshes/dungeon.obj absent, skipped"; fi; \
	for p in terrain_16x2x16 dungeon; do [ -d $$tmp/$$p ] || continue; for w in 2 0; do \
	  (cd $$tmp && LUA_PATH="$$OLDPWD/lua/?.lua;$$OLDPWD/lua/?/init.lua;;" LUA_CPATH="$$OLDPWD/$(BUILD)/?.so;;" \
	  $(LUA) $$OLDPWD/bench/stream_frames.lua $$p $$w) || exit 1; done; done

# the seed's world (4096 x 512 x 4096 leaves of 1 m: terrain.lua NX=8 NZ=8 NY=1 DEPTH=9 SCALE=1, SEED
# FRAMES_SEED, default 11), opt-in (its bake takes 4-6 minutes of CPU, kept in FRAMES_PACK): frames of
# 100 navigators with ms = 2 and of 1,000 with ms = 4 on the pack as loaded (bench/frames.lua), FRAMES_N
# frames (3000) each: without a shared budget (the throughput to keep), a loop of nav:update sharing
# the budget (before), and budget:update (--group, after); then 100 streamed, loop and group. Each
# prints the frame-time histogram, p50 / p99 / p99.9 / max, arrivals a second and the memory split;
# last, the picture of 600 frames' flights (group) seen from above, $(BUILD)/bench-frames.png
FRAMES_SEED ?= 11
FRAMES_PACK ?= build/seedworld_$(FRAMES_SEED)
FRAMES_N ?= 3000
# make bench-plan: world:plan on the seed's world as loaded (issue 31's goal 2: p99 <= 1 ms over 200 random
# pairs, each its first call; bench/plan.lua), the pack baked as bench-frames bakes it
bench-plan: all
	@d=../shared/data; if [ ! -f $$d/worlds/terrain.lua ]; then echo "bench-plan: $$d/worlds/terrain.lua absent, skipped"; exit 0; fi; \
	if [ ! -f $(FRAMES_PACK)/manifest.txt ]; then echo "bench-plan: baking the seed's world into $(FRAMES_PACK)"; \
	  NX=8 NZ=8 NY=1 DEPTH=9 SCALE=1 SEED=$(FRAMES_SEED) OUT=$(FRAMES_PACK) $(LUA) bin/octonav bake $$d/worlds/terrain.lua >/dev/null || exit 1; fi; \
	OCTONAV_BUILD=$(BUILD) $(LUA) bench/plan.lua $(FRAMES_PACK)

bench-frames: all
	@d=../shared/data; if [ ! -f $$d/worlds/terrain.lua ]; then echo "bench-frames: $$d/worlds/terrain.lua absent, skipped"; exit 0; fi; \
	if [ ! -f $(FRAMES_PACK)/manifest.txt ]; then echo "bench-frames: baking the seed's world into $(FRAMES_PACK)"; \
	  NX=8 NZ=8 NY=1 DEPTH=9 SCALE=1 SEED=$(FRAMES_SEED) OUT=$(FRAMES_PACK) $(LUA) bin/octonav bake $$d/worlds/terrain.lua >/dev/null || exit 1; fi; \
	for a in "100 2" "1000 4"; do set -- $$a; for m in --nobudget "" --group; do \
	  OCTONAV_BUILD=$(BUILD) $(LUA) bench/frames.lua $(FRAMES_PACK) --agents $$1 --ms $$2 --frames $(FRAMES_N) $$m || exit 1; done; done; \
	for m in "" --group; do OCTONAV_BUILD=$(BUILD) $(LUA) bench/frames.lua $(FRAMES_PACK) --agents 100 --ms 2 --frames $(FRAMES_N) --stream $$m || exit 1; done; \
	OCTONAV_BUILD=$(BUILD) $(LUA) bench/frames.lua $(FRAMES_PACK) --agents 100 --ms 2 --frames 600 --group --png $(BUILD)/bench-frames.png | tail -n 1

# queries in C (issue 15): median / p99 us, quality, expansions, neighbours, line-of-sight checks;
# bench-query-ir: instructions per query on DC1, Complex and A1 (callgrind, deterministic)
bench-query: $(BUILD)/bench/query
	@$(BUILD)/bench/query
	@$(BUILD)/bench/query -P

bench-query-ir: $(BUILD)/bench/query
	@sh bench/query_ir.sh $(BUILD)/bench/query DC1 Complex A1

# resident bytes per query object with 100 queries (query memory grows with the search)
bench-qmem: $(BUILD)/bench/qmem
	@$(BUILD)/bench/qmem

# temporary obstacles: microseconds per add and remove on a 64^3 and a 512^3 tile
bench-obstacles: $(BUILD)/bench/obstacles
	@$(BUILD)/bench/obstacles

# octonav's line of sight alone (for profiling: see bench/los.c)
bench-los: $(BUILD)/bench/los
	@$(BUILD)/bench/los

# one tree for every agent size (issue 33): paths for radius R on one tree against a tree baked for R alone
$(BUILD)/bench/radius: bench/radius.c bench/scen.h $(BUILD)/libonav.a | $(BUILD)/bench
	$(CC) $(ALLCFLAGS) $(ROOM_INC) -o $@ $< $(BUILD)/libonav.a $(LDLIBS) -lm

bench-radius: $(BUILD)/bench/radius
	@$(BUILD)/bench/radius

# octonav against OpenVDB and OctoMap (needs libopenvdb-dev and liboctomap-dev; not a dependency)
CXX ?= c++
$(BUILD)/bench/anchors: bench/anchors.cpp bench/scen.h $(BUILD)/libonav.a | $(BUILD)/bench
	$(CXX) -std=c++17 -O2 -DNDEBUG -g -Wall -Wextra $(ROOM_INC) -o $@ $< $(BUILD)/libonav.a -lopenvdb -ltbb -loctomap -loctomath \
	  $(LDLIBS)

bench-anchors: $(BUILD)/bench/anchors
	@$(BUILD)/bench/anchors

demo: all
	@$(LUA) examples/demo.lua
	@echo
	@$(LUA) examples/world_demo.lua

# make test-love (issue 34): the LÖVE example (examples/love, docs/love.md) run headless under xvfb-run
# for the scripted frames of examples/love/check.lua, on the module built for LÖVE's LuaJIT
# (build/luajit): every agent arrives at every click and the frames' octonav work (thread CPU) holds
# the budget + 0.5 ms at p99.9 (at most 1 frame in 1,000 over it); one line of counts, the screenshot in build/love/check.png, exit code 1 on a
# failure. Skipped with a message where love or xvfb-run is absent, or where the Makefile cannot build
# the module for LuaJIT (before issue 34's compat layer); as root, OCTONAV_INSTALL_LOVE=1
# installs Debian's love and xvfb first (CI).
.PHONY: test-love
test-love:
	@if [ "$(OCTONAV_INSTALL_LOVE)" = 1 ] && [ "$$(id -u)" = 0 ] && \
	  ! { command -v love && command -v xvfb-run; } > /dev/null 2>&1; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q love xvfb > /dev/null; fi
	@if ! command -v love >/dev/null 2>&1 || ! command -v xvfb-run >/dev/null 2>&1; then \
	  echo "test-love: skipped (love or xvfb-run absent: apt-get install love xvfb)"; exit 0; fi; \
	if ! $(MAKE) -n --no-print-directory LUA=luajit build/luajit/octonav/core.so >/dev/null 2>&1; then \
	  echo "test-love: skipped (this tree has no LuaJIT build of the module: make LUA=luajit)"; exit 0; fi; \
	$(MAKE) --no-print-directory LUA=luajit build/luajit/octonav/core.so >/dev/null || exit 1; \
	mkdir -p build/love; \
	OCTONAV_LOVE_BUILD=$(CURDIR)/build/luajit OCTONAV_LOVE_SHOT=$(CURDIR)/build/love/check.png \
	  timeout -k 10 300 xvfb-run -a -s "-screen 0 1280x800x24" love examples/love --script check

# make bench-luajit (issue 34): LuaJIT against Lua 5.4 side by side in one run (bench/luajit.sh): the
# DC1 queries of `bin/octonav bench`, the navigators' frames of bench/frames.lua on a small terrain
# world, the flat point calls of bench/flat.lua; fastest of PASSES (3) passes, the ratio LuaJIT / 5.4.
.PHONY: bench-luajit
bench-luajit: all
	@$(MAKE) --no-print-directory LUA=luajit build/luajit/octonav/core.so >/dev/null
	@bash bench/luajit.sh

# Opt-in: a one-node Slurm (munge, slurmctld -D, slurmd -D under a temporary directory) bakes a small world
# as an array job of `--job N/M` tasks and an afterok `--link` job, and the pack is compared byte for byte
# with a one-process bake (tools/slurm_bake.sh, docs/slurm.md). Skips with a message without Debian's
# slurm-wlm and munge; as root, OCTONAV_INSTALL_SLURM=1 installs them first.
.PHONY: test-slurm
test-slurm: all
	@if [ "$(OCTONAV_INSTALL_SLURM)" = 1 ] && [ "$$(id -u)" = 0 ] && \
	  ! { command -v slurmctld && command -v munged; } > /dev/null 2>&1; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge > /dev/null; fi
	@bash tools/slurm_bake.sh

# libFuzzer targets (fuzz/README.md): the core built with clang and -fsanitize=fuzzer-no-link plus
# ASan+UBSan in build/fuzz, one binary per target; fuzz/run.sh runs each for FUZZ_SECONDS.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 20
FUZZ_TARGETS ?= tile tree obj voxmap map2d manifest tgraph
FUZZ_SAN      = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS   = -std=c11 -D_POSIX_C_SOURCE=200809L -O1 -g -Wall -Wextra -Werror $(ROOM_INC) $(FUZZ_SAN) -fsanitize=fuzzer
FUZZ_BIN      = $(FUZZ_TARGETS:%=build/fuzz/bin/fuzz_%)

fuzz: fuzz-build
	@bash fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-build:
	@$(MAKE) --no-print-directory BUILD=build/fuzz CC=$(FUZZ_CC) OPT=-O1 \
	  SANFLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" build/fuzz/libonav.a
	@$(MAKE) --no-print-directory $(FUZZ_BIN)

build/fuzz/bin/fuzz_%: fuzz/fuzz_%.c build/fuzz/libonav.a $(HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< build/fuzz/libonav.a $(LDLIBS)

build/fuzz/bin/fuzz_manifest: fuzz/fuzz_pack.c build/fuzz/libonav.a $(HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(LUA_INC) \
	  -DOCTONAV_LUA_DIR='"$(CURDIR)/lua"' -o $@ $< build/fuzz/libonav.a -llua5.4 $(LDLIBS)

clean:
	rm -rf build

# ---- installing (issue 32) -------------------------------------------------------------------------
# make install PREFIX=DIR [DESTDIR=...] [LUA=1]: the C library (static libonav.a and shared libonav.so,
# from the core objects alone: no Lua in them), octonav.h and lib/pkgconfig/octonav.pc; with LUA=1 also
# the Lua module (octonav.core and the lua/octonav files, under lib/lua/5.4 and share/lua/5.4) and
# bin/octonav (a launcher that sets those paths). make uninstall PREFIX=DIR [LUA=1] removes them.
# make check-install: installs into a temporary prefix, builds examples/c/path.c there with
# `pkg-config --cflags --libs octonav` and compares its output with examples/c/path.expected.
.PHONY: install uninstall check-install doc test-docs
PREFIX      ?= /usr/local
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
LUA_VERSION ?= 5.4
LUA_LMOD    ?= $(PREFIX)/share/lua/$(LUA_VERSION)
LUA_CMOD    ?= $(LIBDIR)/lua/$(LUA_VERSION)
PC_VERSION  ?= 0.0.0-scm
LUA_FILES   := $(wildcard lua/octonav/*.lua lua/octonav/bake/*.lua)

$(BUILD)/libonav.so: $(CORE_OBJ)
	$(CC) -shared $(SANFLAGS) -Wl,-soname,libonav.so -o $@ $^ $(LDLIBS)

install: $(BUILD)/libonav.a $(BUILD)/libonav.so octonav.pc.in $(if $(LUA),$(MODULE))
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)
	install -m 644 $(BUILD)/libonav.a $(DESTDIR)$(LIBDIR)/libonav.a
	install -m 755 $(BUILD)/libonav.so $(DESTDIR)$(LIBDIR)/libonav.so
	install -m 644 $(API_HDR) $(DESTDIR)$(INCLUDEDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@VERSION@|$(PC_VERSION)|' octonav.pc.in >$(DESTDIR)$(LIBDIR)/pkgconfig/octonav.pc
ifneq ($(LUA),)
	install -d $(DESTDIR)$(LUA_CMOD)/octonav $(DESTDIR)$(LUA_LMOD)/octonav/bake $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(MODULE) $(DESTDIR)$(LUA_CMOD)/octonav/core.so
	for f in $(LUA_FILES); do install -m 644 $$f $(DESTDIR)$(LUA_LMOD)/$${f#lua/} || exit 1; done
	{ echo '#!/usr/bin/env lua5.4'; \
	  echo '-- octonav command line, installed by make install LUA=1 (the source tree has bin/octonav)'; \
	  echo 'package.path = "$(LUA_LMOD)/?.lua;$(LUA_LMOD)/?/init.lua;" .. package.path'; \
	  echo 'package.cpath = "$(LUA_CMOD)/?.so;" .. package.cpath'; \
	  echo 'local cli = require "octonav.cli"'; \
	  echo 'cli.root = "."'; \
	  echo 'os.exit(cli.run(arg))'; } >$(DESTDIR)$(PREFIX)/bin/octonav
	chmod 755 $(DESTDIR)$(PREFIX)/bin/octonav
endif

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libonav.a $(DESTDIR)$(LIBDIR)/libonav.so $(addprefix $(DESTDIR)$(INCLUDEDIR)/,$(notdir $(API_HDR))) \
	  $(DESTDIR)$(LIBDIR)/pkgconfig/octonav.pc
ifneq ($(LUA),)
	rm -f $(DESTDIR)$(LUA_CMOD)/octonav/core.so $(DESTDIR)$(PREFIX)/bin/octonav \
	  $(LUA_FILES:lua/%=$(DESTDIR)$(LUA_LMOD)/%)
	-rmdir $(DESTDIR)$(LUA_CMOD)/octonav $(DESTDIR)$(LUA_LMOD)/octonav/bake $(DESTDIR)$(LUA_LMOD)/octonav 2>/dev/null
endif

check-install:
	@tmp=$$(mktemp -d) || exit 1; trap 'rm -rf "$$tmp"' EXIT; \
	$(MAKE) --no-print-directory -s install PREFIX=$$tmp/prefix LUA=1 >/dev/null || exit 1; \
	export PKG_CONFIG_PATH=$$tmp/prefix/lib/pkgconfig; \
	$(CC) -std=c11 -Wall -Wextra -Werror -o $$tmp/path examples/c/path.c $$(pkg-config --cflags --libs octonav) || exit 1; \
	LD_LIBRARY_PATH=$$tmp/prefix/lib $$tmp/path >$$tmp/out || exit 1; \
	diff -u examples/c/path.expected $$tmp/out || { echo "check-install: examples/c/path printed other text"; exit 1; }; \
	$(CC) -std=c11 -static -o $$tmp/path_static examples/c/path.c $$(pkg-config --static --cflags --libs octonav) 2>/dev/null \
	  && { $$tmp/path_static | diff -q examples/c/path.expected - >/dev/null || { echo "check-install: the static build differs"; exit 1; }; }; \
	$$tmp/prefix/bin/octonav --help >/dev/null || { echo "check-install: the installed bin/octonav failed"; exit 1; }; \
	$(MAKE) --no-print-directory -s uninstall PREFIX=$$tmp/prefix LUA=1 || exit 1; \
	left=$$(find $$tmp/prefix -type f); [ -z "$$left" ] || { echo "check-install: uninstall left $$left"; exit 1; }; \
	echo "check-install: installed, examples/c/path built with pkg-config and run, uninstalled"

# `luarocks make --lua-version=5.4` (octonav-scm-1.rockspec, type make, install pass only): the module is
# compiled in a temporary directory that is removed afterwards, so no object file is left in the tree;
# then it and the Lua files go where LuaRocks says (ROCK_LIBDIR, ROCK_LUADIR; bin/octonav by LuaRocks).
.PHONY: rock-install
rock-install:
	@test -n "$(ROCK_LIBDIR)" && test -n "$(ROCK_LUADIR)" || { echo "rock-install: run by luarocks make"; exit 1; }
	@tmp=$$(mktemp -d) || exit 1; trap 'rm -rf "$$tmp"' EXIT; \
	$(MAKE) --no-print-directory -j$(JOBS) BUILD=$$tmp $$tmp/octonav/core.so || exit 1; \
	install -d $(ROCK_LIBDIR)/octonav $(ROCK_LUADIR)/octonav/bake || exit 1; \
	install -m 755 $$tmp/octonav/core.so $(ROCK_LIBDIR)/octonav/core.so || exit 1; \
	for f in $(LUA_FILES); do install -m 644 $$f $(ROCK_LUADIR)/$${f#lua/} || exit 1; done

# make check-rocks (issue 34; CI runs it): `luarocks make` of the rockspec (lua >= 5.1) with Debian's
# default LuaRocks (Lua 5.1) and with --lua-version=5.4, each into a temporary tree; then, from a
# temporary directory outside the source tree with that tree's `luarocks path`, the module is required
# and a path found, and the installed bin/octonav prints its version. Fails if the builds leave any file
# in the source tree (git status --ignored before and after). Skipped with a message where luarocks, or
# one of the Lua versions, is absent.
.PHONY: check-rocks
check-rocks:
	@if ! command -v luarocks >/dev/null 2>&1; then echo "check-rocks: skipped (luarocks absent: apt-get install luarocks)"; exit 0; fi; \
	tmp=$$(mktemp -d) || exit 1; trap 'rm -rf "$$tmp"' EXIT; \
	git status --porcelain --ignored >$$tmp/before 2>/dev/null; \
	for v in 5.1 5.4; do \
	  if ! command -v lua$$v >/dev/null 2>&1 || [ ! -f /usr/include/lua$$v/lua.h ]; then \
	    echo "check-rocks: Lua $$v skipped (lua$$v or its headers absent)"; continue; fi; \
	  luarocks --lua-version=$$v --tree=$$tmp/tree$$v make octonav-scm-1.rockspec >$$tmp/log 2>&1 || \
	    { tail -30 $$tmp/log; echo "check-rocks: luarocks make for Lua $$v failed"; exit 1; }; \
	  mkdir -p $$tmp/run && (cd $$tmp/run && eval "$$(luarocks --lua-version=$$v --tree=$$tmp/tree$$v path)" && \
	    lua$$v $(CURDIR)/tools/rock_smoke.lua && \
	    $$tmp/tree$$v/bin/octonav --version >/dev/null) || { echo "check-rocks: the Lua $$v rock failed"; exit 1; }; \
	done; \
	git status --porcelain --ignored >$$tmp/after 2>/dev/null; \
	diff $$tmp/before $$tmp/after >/dev/null || { diff $$tmp/before $$tmp/after; echo "check-rocks: luarocks make left files in the tree"; exit 1; }

# make doc: HTML of the Lua modules' comments with ldoc (Debian: lua-ldoc; config.ld) into build/doc,
# skipped with a message where ldoc is absent. The full reference is docs/reference.md.
# make test-docs: the reference's missing-entry spec and the documentation's doctests alone.
doc:
	@if command -v ldoc >/dev/null 2>&1; then \
	  ldoc -q . 2>&1 | grep -v 'contains no items' >&2; test -f build/doc/index.html && \
	  echo "doc: build/doc/index.html (every function, option and the C API: docs/reference.md)"; \
	else echo "doc: skipped (ldoc absent: apt-get install lua-ldoc); the reference is docs/reference.md"; fi

test-docs: all
	@$(BUSTED) --lua=$(LUA) spec/70-reference_spec.lua spec/71-doctest_spec.lua
