/*
 * tgraph_coarse.c -- the coarse box set a large tile's graph weights are searched over (portals.c):
 * the tile's free space eroded to coarse leaves of F = 2^shift fine leaves a side, a coarse leaf free
 * only when every fine leaf under it is. Every coarse box is therefore free space of the tile, and a
 * path through coarse boxes is a free path: its length (in fine leaves: coarse length x F) is the
 * length of a real way between its ends, never below the straight line. On a 512^3 terrain tile F = 4
 * leaves 4,900 boxes of the fine set's 85,000 (the fine boxes are mostly the small ones along the
 * ground), so a search from each portal costs about a seventeenth of one over the fine boxes.
 * The free leaves under each coarse leaf are counted block by block of the fine set (its boxes never
 * cross a block, a block's coarse leaves are its own): the counts of one block (8 KB at most) stay in
 * the cache, where the whole tile's (4 MB for F = 2 on 512^3) missed it on most boxes (the set's time
 * 17 % of a tile's graph; the same set). Where the caller painted the fine leaves' bitmap (a graph built
 * from a tile's table, portals.c), on_tgraph_coarse_bits reads the same coarse leaves off it instead:
 * F x F rows and-ed word by word, each word's groups of F bits folded (16 M instructions for both sets
 * of a 512^3 tile, where counting them box by box took 142 M).
 */
#include "portals.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

on_status on_tgraph_coarse_set(const on_boxset *s, int depth, int shift, int bsize, on_boxset **out)
{
    *out = NULL;
    if (shift < 1 || shift > 3 || depth - shift < 1) return ON_FAILURE | ON_INVALID;
    int F = 1 << shift, n = 1 << depth;
    uint32_t full = (uint32_t)F * (uint32_t)F * (uint32_t)F;
    /* the fine set's blocks, one at a time (a set without its block index: the tile as one block) */
    int B = s->block_off && s->bsize >= F ? s->bsize : n, nb = n / B, L = B / F;
    uint16_t *cnt = malloc((size_t)L * (size_t)L * (size_t)L * sizeof *cnt); /* fine free leaves under each
                                                                          * coarse leaf of the block (<= 512) */
    on_boxbits o = {NULL, 0, 0};
    if (!cnt || on_boxbits_alloc(&o, depth - shift)) {
        free(cnt);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    memset(o.w, 0, (size_t)o.n * (size_t)o.n * (size_t)o.nw * sizeof *o.w);
    for (int bz = 0; bz < nb; bz++)
        for (int by = 0; by < nb; by++)
            for (int bx = 0; bx < nb; bx++) {
                uint32_t blk = (uint32_t)bx + (uint32_t)nb * ((uint32_t)by + (uint32_t)nb * (uint32_t)bz);
                uint32_t first = B == n ? 0 : s->block_off[blk], last = B == n ? s->nbox : s->block_off[blk + 1];
                if (first == last) continue; /* (no free leaf: no coarse leaf free) */
                int base[3] = {bx * L, by * L, bz * L};
                memset(cnt, 0, (size_t)L * (size_t)L * (size_t)L * sizeof *cnt);
                for (uint32_t b = first; b < last; b++) {
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
                            uint16_t *row = cnt + ((size_t)(cz - base[2]) * (size_t)L + (size_t)(cy - base[1])) * (size_t)L;
                            int yz = (y1 - y0) * (z1 - z0);
                            for (int cx = lo[0]; cx < hi[0]; cx++) {
                                int x0 = x->mn[0] > cx * F ? x->mn[0] : cx * F, x1 = x->mx[0] < (cx + 1) * F ? x->mx[0] : (cx + 1) * F;
                                row[cx - base[0]] = (uint16_t)(row[cx - base[0]] + (x1 - x0) * yz); /* (boxes are disjoint: at most F^3) */
                            }
                        }
                    }
                }
                for (int cz = 0; cz < L; cz++)
                    for (int cy = 0; cy < L; cy++) {
                        const uint16_t *row = cnt + ((size_t)cz * (size_t)L + (size_t)cy) * (size_t)L;
                        uint64_t *w = o.w + ((size_t)(base[2] + cz) * (size_t)o.n + (size_t)(base[1] + cy)) * (size_t)o.nw;
                        for (int cx = 0; cx < L; cx++)
                            if (row[cx] == full) w[(base[0] + cx) >> 6] |= (uint64_t)1 << ((base[0] + cx) & 63);
                    }
            }
    free(cnt);
    on_status st = on_boxset_from_bits(&o, bsize, out);
    on_boxbits_free(&o);
    return st;
}

/* The bits of a fine word's aligned groups of F = 2^shift bits (bits i F .. i F + F - 1 all set),
 * packed: bit i of the result (64 / F bits). */
static uint64_t word_groups(uint64_t w, int shift)
{
    for (int h = 1; h < 1 << shift; h <<= 1) w &= w >> h;
    switch (shift) { /* every F-th bit, gathered by halves */
    case 1:
        w &= 0x5555555555555555u;
        w = (w | w >> 1) & 0x3333333333333333u;
        w = (w | w >> 2) & 0x0F0F0F0F0F0F0F0Fu;
        w = (w | w >> 4) & 0x00FF00FF00FF00FFu;
        w = (w | w >> 8) & 0x0000FFFF0000FFFFu;
        return (w | w >> 16) & 0xFFFFFFFFu;
    case 2:
        w &= 0x1111111111111111u;
        w = (w | w >> 3) & 0x0303030303030303u;
        w = (w | w >> 6) & 0x000F000F000F000Fu;
        w = (w | w >> 12) & 0x000000FF000000FFu;
        return (w | w >> 24) & 0xFFFFu;
    default:
        w &= 0x0101010101010101u;
        w = (w | w >> 7) & 0x0003000300030003u;
        w = (w | w >> 14) & 0x0000000F0000000Fu;
        return (w | w >> 28) & 0xFFu;
    }
}

int on_tgraph_coarse_bits(const on_boxbits *fine, int shift, on_boxbits *out)
{
    out->w = NULL;
    int n = fine->n, F = 1 << shift, nw = fine->nw;
    if (shift < 1 || shift > 3 || n < 2 * F || n % F) return -1;
    out->n = n / F;
    out->nw = out->n < 64 ? 1 : out->n / 64;
    size_t words = (size_t)out->n * (size_t)out->n * (size_t)out->nw, ys = (size_t)nw, zs = (size_t)n * (size_t)nw;
    out->w = calloc(words, sizeof *out->w);
    if (!out->w) return -1;
    int per = 64 / F; /* coarse bits from one fine word */
    for (int cz = 0; cz < out->n; cz++)
        for (int cy = 0; cy < out->n; cy++) {
            const uint64_t *base = fine->w + (size_t)cz * F * zs + (size_t)cy * F * ys;
            uint64_t *dst = out->w + ((size_t)cz * (size_t)out->n + (size_t)cy) * (size_t)out->nw;
            for (int i = 0; i < nw; i++) {
                /* word i of the F x F fine rows under coarse row (cy, cz), and-ed */
                uint64_t a = ~(uint64_t)0;
                for (int z = 0; z < F; z++)
                    for (int y = 0; y < F; y++) a &= base[(size_t)z * zs + (size_t)y * ys + (size_t)i];
                if (!a) continue;
                uint64_t g = word_groups(a, shift);
                if (n < 64) g &= ((uint64_t)1 << (n / F)) - 1; /* (a short row's unused bits) */
                int cx = i * per;
                dst[cx / 64] |= g << (cx % 64);
            }
        }
    return 0;
}
