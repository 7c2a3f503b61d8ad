/*
 * lua_route_probe.h -- probes of the route planner's calls for the frames' traces (lua_route_probe.c;
 * bench/frames.lua --trace): what a planner's last call did, and a thread's page faults.
 */
#ifndef OCTONAV_LUA_ROUTE_PROBE_H
#define OCTONAV_LUA_ROUTE_PROBE_H

#include "lua_util.h"
#include "route.h"

/* planner:last_call()'s values for planner r (lua_route.c's method): pushes 13 values, returns 13. */
int on_lua_push_route_calls(lua_State *L, const on_route *r);
/* route.thread_faults() */
int on_lua_thread_faults(lua_State *L);

#endif
