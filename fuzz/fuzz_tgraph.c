/*
 * fuzz_tgraph.c -- libFuzzer target: one tile graph blob (on_tgraph_decode, portals.h). Properties: no
 * crash, no over-read (ASan), a reason for every refusal (each input also tried with its checksum
 * made valid, so that mutations reach the fields), every accepted blob re-encodes to the same
 * bytes, and an accepted graph given to the three tiles of a 3 x 1 x 1 world graph links the same
 * after a tile leaves and comes back (dormant links), and a route over it from the first tile to the
 * last (an empty tree: every portal point is free) runs to an answer and a result (tiles of depth up
 * to 5: bigger empty tiles make each run slow).
 */
#include "route.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(const uint8_t *data, size_t size);

/* The input as is, then (so that mutations reach past the checksum) with its last 4 bytes set to the
 * CRC-32 of the rest. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    one(data, size);
    if (size < 8) return 0;
    uint8_t *c = malloc(size);
    if (!c) abort();
    memcpy(c, data, size);
    uint32_t crc = on_crc32(0, c, size - 4);
    for (int i = 0; i < 4; i++) c[size - 4 + i] = (uint8_t)(crc >> (8 * i));
    one(c, size);
    free(c);
    return 0;
}

static void one(const uint8_t *data, size_t size)
{
    on_tgraph *g = NULL;
    on_status s = on_tgraph_decode(data, size, 0, &g);
    if (!on_ok(s)) {
        if (g || !(s & (ON_CORRUPT | ON_VERSION | ON_NO_MEMORY))) abort(); /* a failure without a reason */
        return;
    }
    size_t len = 0;
    on_tgraph_encode(g, NULL, 0, &len);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) abort();
    if (!on_ok(on_tgraph_encode(g, buf, len, &len))) abort();
    if (len != size || memcmp(buf, data, size) != 0) abort(); /* accepted but not canonical */
    free(buf);
    if (g->depth > 5) { /* the world part on small tiles only: an empty 512^3 tile's boxes cost a lot */
        on_tgraph_free(g);
        return;
    }
    /* the world graph: the graph on all three tiles, the middle one removed and added again */
    on_tree_params p;
    memset(&p, 0, sizeof p);
    p.tiles[0] = 3;
    p.tiles[1] = p.tiles[2] = 1;
    p.depth = g->depth;
    p.scale = 1;
    int depth = g->depth;
    on_wgraph *w = NULL;
    if (!on_ok(on_wgraph_create(&p, &w))) abort();
    for (uint32_t i = 0; i < 3; i++) {
        on_tgraph *h = g;
        if (i > 0 && !on_ok(on_tgraph_decode(data, size, depth, &h))) abort();
        if (!on_ok(on_wgraph_add_tile(w, i, h))) abort();
    }
    on_wgraph_stats st0, st1;
    on_wgraph_stats_get(w, &st0);
    if (st0.tiles != 3 || st0.faces != 0 || st0.unresolved != 0) abort();
    on_tgraph *h = NULL;
    if (!on_ok(on_wgraph_remove_tile(w, 1)) || !on_ok(on_tgraph_decode(data, size, depth, &h))) abort();
    if (!on_ok(on_wgraph_add_tile(w, 1, h))) abort();
    on_wgraph_stats_get(w, &st1);
    if (st1.links != st0.links || st1.dormant != 0 || st1.unresolved != 0) abort();
    /* a route from the first tile to the last over an empty tree */
    on_tree *t = NULL;
    on_route *r = NULL;
    if (!on_ok(on_tree_create(&p, &t)) || !on_ok(on_route_create(w, 256, &r))) abort();
    double n = (double)(1 << depth), a[3] = {0.5, 0.5, 0.5}, b[3] = {3 * n - 0.5, n - 0.5, n - 0.5};
    on_status rs = on_route_start(r, t, a, b);
    for (int i = 0; i < 1000 && on_in_progress(rs); i++) rs = on_route_step(r, 16, NULL);
    if (on_in_progress(rs)) abort();
    if (!on_ok(rs) && !(rs & (ON_UNREACHABLE | ON_OUT_OF_NODES | ON_LOADING))) abort();
    on_route_cross cr[64];
    size_t nc = 0;
    on_route_info info;
    on_status res = on_route_result(r, cr, 64, &nc, &info);
    if (on_ok(rs) && !on_ok(res) && res != (ON_FAILURE | ON_BUFFER_SMALL)) abort();
    on_route_destroy(r);
    on_tree_destroy(t);
    on_wgraph_destroy(w);
}
