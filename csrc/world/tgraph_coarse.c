/*
 * tgraph_coarse.c -- the coarse box set a large tile's graph weights are searched over (portals.c):
 * the tile's free space eroded to coarse leaves of F = 2^shift fine leaves a side, a coarse leaf free
 * only when every fine leaf under it is. Every coarse box is therefore free space of the tile, and a
 * path through coarse boxes is a free path: its length (in fine leaves: coarse length x F) is the
 * length of a real way between its ends, never below the straight line. On a 512^3 terrain tile F = 4
 * leaves 4,900 boxes of the fine set's 85,000 (the fine boxes are mostly the small ones along the
 * ground), so a search from each portal costs about a seventeenth of one over the fine boxes.
 */
#include "portals.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

on_status on_tgraph_coarse_set(const on_boxset *s, int depth, int shift, int bsize, on_boxset **out)
{
    *out = NULL;
    if (shift < 1 || shift > 3 || depth - shift < 1) return ON_FAILURE | ON_INVALID;
    int F = 1 << shift, C = 1 << (depth - shift);
    uint32_t full = (uint32_t)F * (uint32_t)F * (uint32_t)F;
    size_t ncell = (size_t)C * (size_t)C * (size_t)C;
    uint16_t *cnt = calloc(ncell, sizeof *cnt); /* fine free leaves under each coarse leaf (<= 512) */
    on_boxbits o = {NULL, 0, 0};
    if (!cnt || on_boxbits_alloc(&o, depth - shift)) {
        free(cnt);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    for (uint32_t b = 0; b < s->nbox; b++) {
        const on_box *x = &s->box[b];
        int lo[3], hi[3];
        for (int k = 0; k < 3; k++) {
            lo[k] = x->mn[k] >> shift;
            hi[k] = (x->mx[k] + F - 1) >> shift;
        }
        for (int cz = lo[2]; cz < hi[2]; cz++) {
            int z0 = x->mn[2] > cz * F ? x->mn[2] : cz * F, z1 = x->mx[2] < (cz + 1) * F ? x->mx[2] : (cz + 1) * F;
            for (int cy = lo[1]; cy < hi[1]; cy++) {
                int y0 = x->mn[1] > cy * F ? x->mn[1] : cy * F, y1 = x->mx[1] < (cy + 1) * F ? x->mx[1] : (cy + 1) * F;
                uint16_t *row = cnt + ((size_t)cz * (size_t)C + (size_t)cy) * (size_t)C;
                int yz = (y1 - y0) * (z1 - z0);
                for (int cx = lo[0]; cx < hi[0]; cx++) {
                    int x0 = x->mn[0] > cx * F ? x->mn[0] : cx * F, x1 = x->mx[0] < (cx + 1) * F ? x->mx[0] : (cx + 1) * F;
                    row[cx] = (uint16_t)(row[cx] + (x1 - x0) * yz); /* (boxes are disjoint: at most F^3) */
                }
            }
        }
    }
    memset(o.w, 0, (size_t)o.n * (size_t)o.n * (size_t)o.nw * sizeof *o.w);
    for (int cz = 0; cz < C; cz++)
        for (int cy = 0; cy < C; cy++) {
            const uint16_t *row = cnt + ((size_t)cz * (size_t)C + (size_t)cy) * (size_t)C;
            uint64_t *w = o.w + ((size_t)cz * (size_t)o.n + (size_t)cy) * (size_t)o.nw;
            for (int cx = 0; cx < C; cx++)
                if (row[cx] == full) w[cx >> 6] |= (uint64_t)1 << (cx & 63);
        }
    free(cnt);
    on_status st = on_boxset_from_bits(&o, bsize, out);
    on_boxbits_free(&o);
    return st;
}
