/*
 * lua_walk.c -- core.walker(): walking navigators updated by one C call a frame (issue 31, goal 1), as
 * Detour's crowd updates its agents. lua/octonav/navgroup.lua (budget:update) holds here the
 * navigators that walk a smoothed path on a tree and need nothing else of their update: a slot each
 * (csrc/crowd/walk.h: the smoother's path and state, the tree revision seen, the next step's prefetch
 * point), and each frame w:walk updates them all and lists the navigators that need Lua.
 *
 *   w:attach(k, nav, tree, path, i, fail_j, fail_pos, fail_d, checks_per_frame, recheck, rev, pf, pf_d,
 *            end_d)
 *       slot k holds nav (any value: w:walk compares navs[k] with it), walking `path` (an array of
 *       points, its points copied; attached again with the same table, only the points past those held
 *       are read) on `tree` from target waypoint i (1 <= i <= #path) with the smoother's state fail_j
 *       (integer or nil), fail_pos (point or nil), fail_d, its options checks_per_frame and recheck; rev
 *       (integer or nil): the update needs Lua once tree:revision() is not rev; pf (point or nil), pf_d:
 *       once the agent is within pf_d of pf (the next step's search is due); end_d: with the path's
 *       last point as its target, the agent heads for it while farther than end_d from it (then Lua:
 *       arrival, the next leg). The path table, the tree
 *       and nav are referenced by the walker (a path or tree Lua drops while held stays alive; a tree
 *       closed meanwhile hands the slot back to Lua).
 *   w:take(k) -> nav, i, fail_j, fail_x, fail_y, fail_z, fail_d, checks, updates: the slot's state
 *       (fail_* nil when none; checks: lines of sight spent here, updates: updates made here, since
 *       attached), and the slot is free again; nothing when the slot holds no navigator. (The slot
 *       keeps its copy of the path and a reference to the path table: the same table attached again
 *       copies only its new points.)
 *   w:walk(navs, positions, statuses, waypoints, ret, checks, deadline, clock, flush) -> nret, used, walked
 *       every held slot k <= #navs whose navs[k] is its navigator is updated at positions[k] as the Lua
 *       smoother would (statuses[k] = "moving", waypoints[k] = its path's point table), spending at
 *       most `checks` lines of sight in all (each at most its checks_per_frame), none once `clock`
 *       ("wall": core.clock, "thread": core.thread_clock, nil: no deadline) reads `deadline` or more
 *       (they then step on as a refused update does); the turn to check starts after the last slot
 *       refused one. ret[1..nret] lists, in index order, k for each navigator that needs Lua this frame:
 *       those not held, those whose update is not a plain step (the tree's revision changed, the
 *       prefetch point is near, the path's last point is within end_d: the leg ends, the position is not
 *       a point, the tree is closed; flush: all), which stay held for Lua to take; and -k for a slot
 *       whose navigator is not navs[k] any more (k may exceed #navs). used: checks spent, walked: slots
 *       updated here.
 *   w:park(k, nav, status, answer, since, wid)
 *       slot k holds nav parked: a navigator waiting to start its plan, whose answer (status, answer)
 *       does not change until Lua updates it (navgroup.lua takes it back first); since: the frame it
 *       waits since (a number), wid: its world's number (an integer in [1, 1024]).
 *   w:take(k) on a parked slot -> nav (and the slot is free again).
 *   w:walk(..., flush, open) -> nret, used, walked, oldest, oldest_since: a parked slot k whose
 *       navs[k] is its navigator gets its answer (statuses[k], waypoints[k]) and is not listed in ret,
 *       unless open[wid] is true (a plan may start in its world: k + 2^31 is listed, the slot stays
 *       parked) or flush (k is listed, the slot stays parked for Lua to take); oldest: of the parked
 *       slots answered, the one with the least since (the lowest k among equals; nil when none), and
 *       its since.
 *   w:size() -> slots walking, slots parked.
 *   w:stream(k, streamer, agent, rel)
 *       after w:attach(k, ...): slot k's navigator is streamed (issue 31, goal 1 streamed): each update
 *       made here first moves its streamer agent `agent` (an integer id, s:add_agent's, or nil: an agent
 *       the navigator does not move) of the core streamer `streamer` (octonav.core's, on the slot's
 *       tree) to the position, as navlocks.lua's move_agent does; rel (integer or nil): the update
 *       needs Lua once the smoother's target waypoint would pass rel (the next step's locks are
 *       released: navlocks.lua's release_passed). A streamer closed, or no more the tree's, or an
 *       agent it does not know hands the slot back to Lua (which raises or moves it). The streamer is
 *       referenced by the walker while the slot holds the navigator.
 */
#include "lua_util.h"
#include "octonav_stream.h"
#include "walk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WALKER_MT "octonav.walker"
#define WALK_WORLDS 1024 /* parked slots' world numbers: 1 .. this */
#define OPEN_BIT ((lua_Integer)1 << 31) /* ret's mark of a parked slot whose world may start a plan */

int on_lua_walk_open(lua_State *L); /* (luaopen_octonav_core's, lua_core.c) */

/* A held slot's streamer (w:stream): its handle (alive: referenced by user value 2), NULL: none. */
typedef struct walk_strm {
    on_lhandle *h;
    uint32_t agent;       /* its agent id (0-based, the core's), when has_agent */
    int has_agent;
    int has_rel;          /* the update needs Lua once the target waypoint would pass rel */
    uint32_t rel;
} walk_strm;

typedef struct walker {
    on_walk_slot *slots;  /* [1..cap] used (slot 0 unused) */
    on_lhandle **trees;   /* each held slot's tree handle (alive: referenced by the user value) */
    walk_strm *strm;      /* [1..cap]: each held slot's streamer (w:stream) */
    unsigned char *flags; /* w:walk's per-index marks */
    size_t cap, nflags, held;
    size_t parked;        /* of the held, those parked (w:park) */
    size_t cursor;        /* the slot whose turn to check comes first */
} walker;

typedef struct lwalker {
    on_lhandle h;
} lwalker;

static void walker_destroy(on_lhandle *h)
{
    walker *w = h->p;
    if (!w) return;
    for (size_t k = 1; k <= w->cap; k++) free(w->slots[k].pts);
    free(w->slots);
    free(w->trees);
    free(w->strm);
    free(w->flags);
    free(w);
    h->p = NULL;
}

static void walker_describe(lua_State *L, on_lhandle *h)
{
    lua_pushfstring(L, "octonav.walker: %I navigators held", (lua_Integer)((walker *)h->p)->held);
}

static const on_lclass walker_class = {WALKER_MT, "walker is walking", walker_destroy, walker_describe};

/* core.walker() */
static int l_new(lua_State *L)
{
    on_lhandle *h = on_lua_newhandle(L, &walker_class, sizeof(lwalker), 2);
    lua_createtable(L, 0, 0); /* refs: [3k-2] nav, [3k-1] path, [3k] tree */
    lua_setiuservalue(L, -2, 1);
    lua_createtable(L, 0, 0); /* [k]: slot k's streamer (w:stream) */
    lua_setiuservalue(L, -2, 2);
    walker *w = calloc(1, sizeof *w);
    if (!w) return luaL_error(L, "octonav.core.walker: out of memory");
    h->p = w;
    return 1;
}

/* Room for slots 1..k. */
static int grow(walker *w, size_t k)
{
    if (k <= w->cap) return 1;
    size_t cap = w->cap ? w->cap : 64;
    while (cap < k) cap *= 2;
    on_walk_slot *s = realloc(w->slots, (cap + 1) * sizeof *s);
    if (!s) return 0;
    w->slots = s;
    memset(s + w->cap + 1, 0, (cap - w->cap) * sizeof *s);
    on_lhandle **t = realloc(w->trees, (cap + 1) * sizeof *t);
    if (!t) return 0;
    w->trees = t;
    memset(t + w->cap + 1, 0, (cap - w->cap) * sizeof *t);
    walk_strm *m = realloc(w->strm, (cap + 1) * sizeof *m);
    if (!m) return 0;
    w->strm = m;
    memset(m + w->cap + 1, 0, (cap - w->cap) * sizeof *m);
    w->cap = cap;
    return 1;
}

static lua_Integer check_slot(lua_State *L, int idx)
{
    lua_Integer k = luaL_checkinteger(L, idx);
    if (k < 1 || k > (lua_Integer)1 << 30) luaL_argerror(L, idx, "slot must be an integer in [1, 2^30]");
    return k;
}

/* Slot k's three references (the values at stack indexes a, b, c) into the user value's table at
 * refs: 3k - 2, 3k - 1, 3k. Called last: a table grown here may collect, so no slot pointer is used
 * after it. */
static void keep_refs(lua_State *L, int refs, lua_Integer k, int a, int b, int c)
{
    const int at[3] = {a, b, c};
    for (int r = 0; r < 3; r++) {
        lua_pushvalue(L, at[r]);
        lua_rawseti(L, refs, 3 * k - 2 + r);
    }
}

/* w:attach(k, nav, tree, path, i, fail_j, fail_pos, fail_d, checks_per_frame, recheck, rev, pf, pf_d) */
static int l_attach(lua_State *L)
{
    luaL_checkudata(L, 1, WALKER_MT);
    lua_Integer k = check_slot(L, 2);
    luaL_checkany(L, 3);
    luaL_checkudata(L, 4, ON_TREE_MT);
    luaL_checktype(L, 5, LUA_TTABLE);
    lua_Integer n = (lua_Integer)lua_rawlen(L, 5);
    lua_Integer i = luaL_checkinteger(L, 6);
    if (n < 1 || n > (lua_Integer)1 << 30) luaL_argerror(L, 5, "path must have 1 .. 2^30 points");
    if (i < 1 || i > n) luaL_argerror(L, 6, "i must be an integer in [1, #path]");
    lua_Integer fail_j = 0;
    double fail_pos[3] = {0, 0, 0};
    if (!lua_isnil(L, 7)) {
        fail_j = luaL_checkinteger(L, 7);
        if (fail_j < 1 || fail_j > n) luaL_argerror(L, 7, "fail_j must be nil or an integer in [1, #path]");
        on_lua_checkpoint_arg(L, 8, 8, "fail_pos", fail_pos);
    }
    double fail_d = luaL_checknumber(L, 9);
    lua_Integer budget = luaL_checkinteger(L, 10);
    if (budget < 1 || budget > 1 << 30) luaL_argerror(L, 10, "checks_per_frame must be an integer in [1, 2^30]");
    double recheck = luaL_checknumber(L, 11);
    if (!(recheck >= 0 && recheck < 1)) luaL_argerror(L, 11, "recheck must be a number >= 0 and < 1");
    int check_rev = !lua_isnil(L, 12);
    uint64_t rev = check_rev ? (uint64_t)luaL_checkinteger(L, 12) : 0;
    int has_pf = !lua_isnil(L, 13);
    double pf[3] = {0, 0, 0}, pf_d = 0;
    if (has_pf) {
        on_lua_checkpoint_arg(L, 13, 13, "pf", pf);
        pf_d = luaL_checknumber(L, 14);
    }
    double end_d = luaL_checknumber(L, 15);
    lua_getiuservalue(L, 1, 1);
    int refs = lua_gettop(L);
    /* the path's points: those past the ones held when the same path table is attached again */
    lua_rawgeti(L, refs, 3 * k - 1);
    int same_path = lua_rawequal(L, -1, 5);
    lua_pop(L, 1);
    lwalker *u = (lwalker *)on_lua_checkidle(L, 1, &walker_class, "walker:attach");
    walker *w = u->h.p;
    if (!grow(w, (size_t)k)) return luaL_error(L, "walker:attach: out of memory");
    on_walk_slot *s = &w->slots[k];
    uint32_t from = same_path && s->n <= (uint32_t)n ? s->n : 0;
    if (!on_ok(on_walk_reserve(s, (uint32_t)n))) return luaL_error(L, "walker:attach: out of memory");
    /* (the points are read with rawgeti: no metamethod, no allocation runs while s is used) */
    for (lua_Integer j = from + 1; j <= n; j++) {
        double p[3];
        lua_rawgeti(L, 5, j);
        int ok = lua_type(L, -1) == LUA_TTABLE;
        for (int c = 0; ok && c < 3; c++) {
            lua_rawgeti(L, -1 - c, c + 1);
            int isnum;
            p[c] = lua_tonumberx(L, -1, &isnum);
            ok = isnum && isfinite(p[c]);
        }
        lua_settop(L, refs);
        if (!ok) {
            s->n = 0; /* (what was copied is not trusted) */
            return luaL_error(L, "walker:attach: path[%I] must be a point {x, y, z} of finite numbers", j);
        }
        memcpy(s->pts + 3 * (j - 1), p, sizeof p);
    }
    s->n = (uint32_t)n;
    s->st.i = (uint32_t)i;
    s->st.fail_j = (uint32_t)fail_j;
    memcpy(s->st.fail_pos, fail_pos, sizeof fail_pos);
    s->st.fail_d = fail_d;
    s->recheck = recheck;
    s->budget = (uint32_t)budget;
    s->has_pf = has_pf;
    memcpy(s->pf, pf, sizeof pf);
    s->pf_d = pf_d;
    s->end_d = end_d;
    s->check_rev = check_rev;
    s->rev = rev;
    if (!s->held) {
        s->checks = s->updates = 0;
        w->held++;
    }
    if (s->parked) w->parked--;
    s->held = 1;
    s->parked = 0;
    w->trees[k] = on_lua_testhandle(L, 4, &on_lua_tree_class);
    if (!w->trees[k]) w->trees[k] = lua_touserdata(L, 4); /* (closed: handed back at the first walk) */
    w->strm[k].h = NULL; /* (w:stream sets it; its reference, if any, dropped below) */
    lua_getiuservalue(L, 1, 2);
    lua_pushnil(L);
    lua_rawseti(L, -2, k);
    lua_pop(L, 1);
    keep_refs(L, refs, k, 3, 5, 4); /* (last: see keep_refs) */
    return 0;
}

/* w:park(k, nav, status, answer, since, wid) */
static int l_park(lua_State *L)
{
    luaL_checkudata(L, 1, WALKER_MT);
    lua_Integer k = check_slot(L, 2);
    luaL_checkany(L, 3);
    luaL_checkany(L, 4);
    double since = luaL_checknumber(L, 6);
    lua_Integer wid = luaL_checkinteger(L, 7);
    if (wid < 1 || wid > WALK_WORLDS) luaL_argerror(L, 7, "wid must be an integer in [1, 1024]");
    lua_settop(L, 7);
    lua_getiuservalue(L, 1, 1);
    int refs = lua_gettop(L);
    lwalker *u = (lwalker *)on_lua_checkidle(L, 1, &walker_class, "walker:park");
    walker *w = u->h.p;
    if (!grow(w, (size_t)k)) return luaL_error(L, "walker:park: out of memory");
    on_walk_slot *s = &w->slots[k];
    if (!s->held) w->held++;
    if (!s->parked) w->parked++;
    s->held = 1;
    s->parked = 1;
    s->since = since;
    s->wid = (uint32_t)wid;
    w->trees[k] = NULL;
    w->strm[k].h = NULL;
    /* the streamer a walking slot held (w:stream) not referenced any more: w:take of a parked slot drops
     * only its three references (before, the streamer stayed alive until the slot was attached again) */
    lua_getiuservalue(L, 1, 2);
    lua_pushnil(L);
    lua_rawseti(L, -2, k); /* (a nil stored: no allocation) */
    lua_pop(L, 1);
    keep_refs(L, refs, k, 3, 4, 5); /* (last: see keep_refs) */
    return 0;
}

/* w:take(k) */
static int l_take(lua_State *L)
{
    lwalker *u = (lwalker *)on_lua_checkidle(L, 1, &walker_class, "walker:take");
    lua_Integer k = check_slot(L, 2);
    walker *w = u->h.p;
    if ((size_t)k > w->cap || !w->slots[k].held) return 0;
    on_walk_slot s = w->slots[k];
    s.pts = NULL;
    w->slots[k].held = 0;
    w->slots[k].parked = 0;
    w->trees[k] = NULL;
    int had_strm = w->strm[k].h != NULL;
    w->strm[k].h = NULL;
    w->held--;
    if (s.parked) w->parked--;
    if (s.parked) { /* its nav; the answer's references dropped */
        lua_getiuservalue(L, 1, 1);
        int prefs = lua_gettop(L);
        lua_rawgeti(L, prefs, 3 * k - 2);
        for (int r = 2; r >= 0; r--) {
            lua_pushnil(L);
            lua_rawseti(L, prefs, 3 * k - r);
        }
        return 1;
    }
    /* (the slot keeps its points buffer for the next navigator; the copies below allocate nothing
     * that may run Lua before the slot is consistent) */
    lua_getiuservalue(L, 1, 1);
    int refs = lua_gettop(L);
    lua_rawgeti(L, refs, 3 * k - 2);
    lua_pushinteger(L, (lua_Integer)s.st.i);
    if (s.st.fail_j) {
        lua_pushinteger(L, (lua_Integer)s.st.fail_j);
        lua_pushnumber(L, s.st.fail_pos[0]);
        lua_pushnumber(L, s.st.fail_pos[1]);
        lua_pushnumber(L, s.st.fail_pos[2]);
    } else {
        lua_pushnil(L);
        lua_pushnil(L);
        lua_pushnil(L);
        lua_pushnil(L);
    }
    lua_pushnumber(L, s.st.fail_d);
    lua_pushinteger(L, (lua_Integer)s.checks);
    lua_pushinteger(L, (lua_Integer)s.updates);
    /* the navigator and the tree dropped; the path stays referenced (append-only: the smoother's
     * array; attached again, only its points past those copied are read) */
    lua_pushnil(L);
    lua_rawseti(L, refs, 3 * k - 2);
    lua_pushnil(L);
    lua_rawseti(L, refs, 3 * k);
    if (had_strm) {
        lua_getiuservalue(L, 1, 2);
        lua_pushnil(L);
        lua_rawseti(L, -2, k);
        lua_pop(L, 1);
    }
    return 9;
}

/* w:stream(k, streamer, agent, rel) */
static int l_stream(lua_State *L)
{
    luaL_checkudata(L, 1, WALKER_MT);
    lua_Integer k = check_slot(L, 2);
    /* (the core streamer's userdata starts with its on_lhandle: lua_streamer.c's lstreamer) */
    on_lhandle *sh = luaL_checkudata(L, 3, "octonav.streamer");
    int has_agent = !lua_isnoneornil(L, 4);
    lua_Integer agent = has_agent ? luaL_checkinteger(L, 4) : 1;
    if (agent < 1 || agent > 0xffffffffLL) luaL_argerror(L, 4, "agent must be nil or an integer in [1, 2^32 - 1]");
    int has_rel = !lua_isnoneornil(L, 5);
    lua_Integer rel = has_rel ? luaL_checkinteger(L, 5) : 1;
    if (rel < 1 || rel > (lua_Integer)1 << 30) luaL_argerror(L, 5, "rel must be nil or an integer in [1, 2^30]");
    lua_settop(L, 5);
    lua_getiuservalue(L, 1, 2);
    int srefs = lua_gettop(L);
    lwalker *u = (lwalker *)on_lua_checkidle(L, 1, &walker_class, "walker:stream");
    walker *w = u->h.p;
    if ((size_t)k > w->cap || !w->slots[k].held || w->slots[k].parked)
        return luaL_argerror(L, 2, "slot must hold a walking navigator (w:attach)");
    walk_strm *m = &w->strm[k];
    m->h = sh;
    m->has_agent = has_agent;
    m->agent = (uint32_t)(agent - 1);
    m->has_rel = has_rel;
    m->rel = (uint32_t)rel;
    lua_pushvalue(L, 3);
    lua_rawseti(L, srefs, k); /* (last: a table grown here may collect) */
    return 0;
}

/* w:size() */
static int l_size(lua_State *L)
{
    lwalker *u = (lwalker *)on_lua_checkhandle(L, 1, &walker_class);
    const walker *w = u->h.p;
    lua_pushinteger(L, (lua_Integer)(w->held - w->parked));
    lua_pushinteger(L, (lua_Integer)w->parked);
    return 2;
}

static double read_clock(int kind)
{
    struct timespec ts;
    clock_gettime(kind == 2 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* positions[k] as a point of finite numbers (rawgeti: no metamethod runs); 0 when it is not one. */
static int read_point(lua_State *L, int t, lua_Integer k, double p[3])
{
    int ok = lua_rawgeti(L, t, k) == LUA_TTABLE;
    for (int c = 0; ok && c < 3; c++) {
        lua_rawgeti(L, -1, c + 1);
        int isnum;
        p[c] = lua_tonumberx(L, -1, &isnum);
        ok = isnum && isfinite(p[c]);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return ok;
}

enum { MARK_NONE = 0, MARK_LUA = 1, MARK_GONE = 2, MARK_OPEN = 3 };

static const double *pt_of(const on_walk_slot *s, uint32_t i) { return s->pts + 3 * (size_t)(i - 1); }

/* The walk of one held slot k at its position: 1 walked (the answer to write), 0 needs Lua. */
static int walk_slot(walker *w, size_t k, const double pos[3], int flush, uint32_t *checks, int clock,
                     double deadline, int *late, int *refused)
{
    on_walk_slot *s = &w->slots[k];
    on_lhandle *th = w->trees[k];
    if (flush || !th->p || th->closing) return 0;
    const on_tree *t = th->p;
    if (s->check_rev && on_tree_revision(t) != s->rev) return 0;
    if (s->has_pf && on_walk_dist(pos, s->pf) <= s->pf_d) return 0;
    uint32_t max = 0;
    if (*checks > 0 && !*late && on_walk_wants_check(s, pos)) {
        if (clock && read_clock(clock) >= deadline) *late = 1;
        else max = *checks;
    }
    if (!max && on_walk_wants_check(s, pos) && !*refused) {
        *refused = 1;
        w->cursor = k; /* its turn to check comes first next frame */
    }
    on_walk_state st;
    uint32_t used = on_walk_advance(s, t, pos, max, &st);
    /* the leg's last point: heading for it while farther than end_d (else Lua's: arrival, the next
     * leg, the wait for the next step's path) */
    if (st.i >= s->n && !(on_walk_dist(pos, pt_of(s, s->n)) > s->end_d)) return 0;
    const walk_strm *m = &w->strm[k];
    if (m->h) {
        /* streamed: a step passed releases its locks (Lua's); else the agent moves (nav:update's first
         * act: Lua's order does not matter, nothing below reads the agents) */
        if (m->has_rel && st.i > m->rel) return 0;
        on_streamer *sp = m->h->p;
        if (!sp || m->h->closing || on_tree_streamer(t) != sp) return 0;
        if (m->has_agent && !on_ok(on_streamer_move_agent(sp, m->agent, pos))) return 0;
    }
    s->st = st;
    s->checks += used;
    s->updates++;
    *checks -= used;
    return 1;
}

/* w:walk's loop, in on_lua_pinned (rule (b) of lua_util.h): it writes answers into Lua tables while it
 * holds the walker's slots, and a write may run a finalizer or fail for memory; pinned, the walker
 * refuses changes (attach, take, walk raise) and defers a close until the loop ends, and an error in
 * the loop (out of memory; a finalizer's error on Lua 5.1 and LuaJIT) unpins it before it is raised
 * again, so the walker is usable after it (it stayed "in use" for good before). */
typedef struct walk_ctx {
    walker *w;
    size_t n, top;
    uint32_t checks;
    int clock, flush;
    double deadline;
    const unsigned char *open; /* [wid]: a plan may start in that world (parked slots listed) */
} walk_ctx;

static int walk_body(lua_State *L, void *p)
{
    walk_ctx *x = p;
    walker *w = x->w;
    const int refs = 11;
    size_t n = x->n;
    uint32_t checks = x->checks;
    const uint32_t checks0 = checks;
    int late = 0, refused = 0;
    lua_Integer walked = 0;
    int have_oldest = 0;
    size_t oldest = 0;
    double oldest_since = 0;
    size_t start = w->cursor >= 1 && w->cursor <= n ? w->cursor : 1;
    for (size_t c = 0; c < n; c++) {
        size_t k = (start - 1 + c) % n + 1;
        if (k > w->cap || !w->slots[k].held) {
            w->flags[k] = MARK_LUA;
            continue;
        }
        lua_rawgeti(L, 2, (lua_Integer)k);
        lua_rawgeti(L, refs, 3 * (lua_Integer)k - 2);
        int same = lua_rawequal(L, -1, -2);
        lua_pop(L, 2);
        if (!same) {
            w->flags[k] = MARK_GONE;
            continue;
        }
        on_walk_slot *ps = &w->slots[k];
        if (ps->parked) {
            if (x->flush) {
                w->flags[k] = MARK_LUA;
                continue;
            }
            if (x->open[ps->wid]) w->flags[k] = MARK_OPEN;
            if (!have_oldest || ps->since < oldest_since || (ps->since == oldest_since && k < oldest)) {
                have_oldest = 1;
                oldest = k;
                oldest_since = ps->since;
            }
            /* the answer (these may allocate, so collect: ps is not used after them) */
            lua_rawgeti(L, refs, 3 * (lua_Integer)k - 1);
            lua_rawseti(L, 4, (lua_Integer)k);
            lua_rawgeti(L, refs, 3 * (lua_Integer)k);
            lua_rawseti(L, 5, (lua_Integer)k);
            continue;
        }
        double pos[3];
        if (!read_point(L, 3, (lua_Integer)k, pos) ||
            !walk_slot(w, k, pos, x->flush, &checks, x->clock, x->deadline, &late, &refused)) {
            w->flags[k] = MARK_LUA;
            continue;
        }
        walked++;
        /* the answer (these may allocate, so collect: nothing above is used after them) */
        lua_pushliteral(L, "moving");
        lua_rawseti(L, 4, (lua_Integer)k);
        lua_rawgeti(L, refs, 3 * (lua_Integer)k - 1);
        lua_rawgeti(L, -1, (lua_Integer)w->slots[k].st.i);
        lua_rawseti(L, 5, (lua_Integer)k);
        lua_pop(L, 1);
    }
    for (size_t k = n + 1; k <= w->cap; k++)
        if (w->slots[k].held) w->flags[k] = MARK_GONE;
    if (!refused) w->cursor = start; /* (every check asked for was granted: the same start) */
    lua_Integer nret = 0;
    for (size_t k = 1; k <= x->top; k++) {
        unsigned char f = w->flags[k];
        if (f == MARK_NONE) continue;
        lua_pushinteger(L, f == MARK_GONE ? -(lua_Integer)k : f == MARK_OPEN ? (lua_Integer)k + OPEN_BIT : (lua_Integer)k);
        lua_rawseti(L, 6, ++nret);
    }
    lua_pushinteger(L, nret);
    lua_pushinteger(L, (lua_Integer)(checks0 - checks));
    lua_pushinteger(L, walked);
    if (!have_oldest) return 3;
    lua_pushinteger(L, (lua_Integer)oldest);
    lua_pushnumber(L, oldest_since);
    return 5;
}

/* w:walk(navs, positions, statuses, waypoints, ret, checks, deadline, clock, flush) */
static int l_walk(lua_State *L)
{
    luaL_checkudata(L, 1, WALKER_MT);
    for (int a = 2; a <= 6; a++) luaL_checktype(L, a, LUA_TTABLE);
    lua_Integer checks_in = luaL_checkinteger(L, 7);
    if (checks_in < 0) luaL_argerror(L, 7, "checks must be an integer >= 0");
    double deadline = luaL_optnumber(L, 8, 0);
    static const char *const clocks[] = {"none", "wall", "thread", NULL};
    int clock = lua_isnoneornil(L, 9) ? 0 : luaL_checkoption(L, 9, NULL, clocks);
    if (lua_isnoneornil(L, 8)) clock = 0;
    int flush = lua_toboolean(L, 10);
    if (!lua_isnoneornil(L, 11)) luaL_checktype(L, 11, LUA_TTABLE);
    /* open[wid] read once: the loop reads no Lua table for it */
    unsigned char open[WALK_WORLDS + 1];
    memset(open, 0, sizeof open);
    if (lua_istable(L, 11)) {
        for (lua_Integer id = 1; id <= WALK_WORLDS; id++) {
            int t = lua_rawgeti(L, 11, id);
            open[id] = (unsigned char)lua_toboolean(L, -1);
            lua_pop(L, 1);
            if (t == LUA_TNIL) break;
        }
    }
    lua_settop(L, 10);
    lua_getiuservalue(L, 1, 1); /* (index 11: the refs, walk_body's) */
    lwalker *u = (lwalker *)on_lua_checkidle(L, 1, &walker_class, "walker:walk");
    walker *w = u->h.p;
    size_t n = (size_t)lua_rawlen(L, 2);
    size_t top = n > w->cap ? n : w->cap;
    if (top + 1 > w->nflags) {
        unsigned char *f = realloc(w->flags, top + 1);
        if (!f) return luaL_error(L, "walker:walk: out of memory");
        w->flags = f;
        w->nflags = top + 1;
    }
    memset(w->flags, MARK_NONE, top + 1);
    walk_ctx x = {w, n, top, checks_in > UINT32_MAX ? UINT32_MAX : (uint32_t)checks_in, clock, flush, deadline, open};
    on_lhandle *h = &u->h;
    return on_lua_pinned(L, &h, 1, walk_body, &x);
}

int on_lua_walk_open(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"attach", l_attach}, {"park", l_park}, {"take", l_take}, {"walk", l_walk}, {"size", l_size},
        {"stream", l_stream}, {NULL, NULL}};
    on_lua_newclass(L, &walker_class, methods);
    lua_pushcfunction(L, l_new);
    return 1;
}
