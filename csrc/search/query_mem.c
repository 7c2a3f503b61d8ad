/*
 * query_mem.c -- what a query holds between searches (on_query_bytes): the bench's memory split and
 * q:bytes() read it; its node pool grown ahead of a search's need (on_query_grow_ahead), and cut back when
 * its caller chooses (on_query_hold_trim, on_query_trim).
 */
#include "query.h"

size_t on_query_bytes(const on_query *q)
{
    if (!q) return 0;
    const on_graph *g = &q->g;
    size_t b = sizeof *q + on_pool_bytes(&q->pool) + (q->lcache ? sizeof *q->lcache : 0);
    b += g->nbcap * (sizeof *g->nb + sizeof *g->nbix + 1) + g->rcap * (sizeof *g->rnb + 1);
    b += (q->path.cap + q->alt.cap) * 3 * sizeof(double);
    b += q->corrcap * sizeof *q->corr + q->facescap * sizeof *q->faces + q->clearcap + q->flogcap;
    b += (q->touched.cap + q->ptiles.cap) * 2 * sizeof(uint32_t);
    return b;
}

size_t on_query_room(const on_query *q, size_t *nodes)
{
    if (nodes) *nodes = q ? q->pool.nnodes : 0;
    return q ? on_pool_room(&q->pool) : 0;
}

on_status on_query_grow_ahead(on_query *q, size_t room)
{
    if (!q) return ON_FAILURE | ON_INVALID;
    return on_pool_grow_ahead(&q->pool, room) == 0 ? ON_SUCCESS : ON_FAILURE | ON_NO_MEMORY;
}

void on_query_hold_trim(on_query *q, int hold)
{
    if (q) on_pool_hold_trim(&q->pool, hold);
}

size_t on_query_trim(on_query *q)
{
    int emptied = 0;
    size_t b = q ? on_pool_trim(&q->pool, &emptied) : 0;
    if (emptied) { /* (its search's nodes are gone) */
        q->state = ON_FAILURE | ON_INVALID;
        q->found = q->best = -1;
    }
    return b;
}
