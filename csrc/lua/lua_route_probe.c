/*
 * lua_route_probe.c -- probes of single calls for the frames' traces (bench/frames.lua --trace), on
 * `octonav.core.route` (lua_route.c registers them):
 *
 *   planner:last_call() -> units, blocks, sets, joins, restarts, expanded, nodes, join_ms, expand_ms, loop_ms,
 *       unit_max_ms, setup_ms, remakes: what the planner's last start or step did (route.h's on_route_calls): join work units
 *       spent, lazy blocks built, tile box sets made, endpoint searches run and those begun again, portals
 *       expanded, the search's nodes after it, the monotonic clock's ms in the joins and in the expansion;
 *       with a time limit, the joins' ms in their searches' loops (the rest is their set-up, the corridors
 *       pulled, the nodes pushed), the longest gap between two reads of the clock there, the ms in the
 *       searches' set-up (arrays reserved, targets mapped, the point's blocks built) and the remakes of the
 *       per-box arrays there
 *   route.thread_faults() -> minor, major: the calling thread's page faults so far (getrusage's
 *       RUSAGE_THREAD), or nil where there is none (read around single calls: /proc/thread-self/stat
 *       costs a file read a call)
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* RUSAGE_THREAD */
#endif
#include "lua_route_probe.h"

#include <sys/resource.h>

int on_lua_push_route_calls(lua_State *L, const on_route *r)
{
    on_route_calls c;
    on_route_last_call(r, &c);
    const size_t v[] = {c.units, c.blocks, c.sets, c.joins, c.restarts, c.expanded, c.nodes};
    for (int i = 0; i < 7; i++) lua_pushinteger(L, (lua_Integer)v[i]);
    const double ms[] = {c.join_s, c.expand_s, c.loop_s, c.unit_max, c.setup_s};
    for (int i = 0; i < 5; i++) lua_pushnumber(L, ms[i] * 1e3);
    lua_pushinteger(L, (lua_Integer)c.remakes);
    return 13;
}

int on_lua_thread_faults(lua_State *L)
{
#ifdef RUSAGE_THREAD
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) == 0) {
        lua_pushinteger(L, (lua_Integer)ru.ru_minflt);
        lua_pushinteger(L, (lua_Integer)ru.ru_majflt);
        return 2;
    }
#endif
    lua_pushnil(L);
    return 1;
}
