/*
 * tgraph.c -- a tile's portal graph as a value (see portals.h): its summary, its bytes, its memory, the
 * point of a portal, the portal square size of a depth. What the build (portals.c), the codec
 * (tgraph_codec.c) and the world graph (wgraph.c) share, below them all.
 */
#include "portals.h"

#include <stdlib.h>

void on_tgraph_get_info(const on_tgraph *g, on_tgraph_info *out)
{
    *out = (on_tgraph_info){.depth = g->depth, .bound = g->bound, .wshift = g->wshift, .tag = g->tag,
                            .crc = g->crc, .portals = g->nportal, .edges = g->nedge, .components = g->ncomp,
                            .rects = g->nrect, .bytes = g->bytes};
}

void on_tgraph_free(on_tgraph *g)
{
    if (!g) return;
    free(g->portal);
    free(g->rect);
    free(g->comp_first);
    free(g->comp_w);
    free(g->w);
    free(g);
}

void on_tgraph_count_bytes(on_tgraph *g)
{
    g->bytes = sizeof *g + (size_t)g->nportal * sizeof(on_portal) + (size_t)g->nrect * sizeof(on_prect) +
               2 * ((size_t)g->ncomp + 1) * sizeof(uint32_t) + (size_t)g->npair * sizeof(uint16_t);
}

int on_tgraph_bound(int depth, int bound)
{
    int n = 1 << depth, s;
    if (bound <= 0) {
        s = n <= 64 ? n : n / 4 > 64 ? n / 4 : 64;
    } else {
        s = 1;
        while (s * 2 <= bound) s *= 2;
    }
    return s > n ? n : s;
}

void on_portal_point(const on_tgraph *g, uint32_t p, double out[3])
{
    const on_portal *q = &g->portal[p];
    const on_prect *r = &g->rect[q->rect];
    int k = q->face >> 1, u = (k + 1) % 3, v = (k + 2) % 3;
    out[k] = (q->face & 1) ? (double)(1 << g->depth) : 0.0;
    out[u] = 0.5 * ((double)r->mn[0] + (double)r->mx[0]);
    out[v] = 0.5 * ((double)r->mn[1] + (double)r->mx[1]);
}

int on_tgraph_portal_point(const on_tgraph *g, uint32_t p, double out[3])
{
    on_portal_point(g, p, out);
    return g->portal[p].face;
}
