/*
 * boxes.c -- building a tile's box set (see boxes.h) and finding the box that holds a point.
 *
 * Build: the tile's free cells are painted into a bitmap (one bit a leaf, rows along x); then, block
 * by block, the lowest free bit not yet taken starts a box that grows along x (the run of free bits),
 * then along y and z while every row it would take is free under the run's mask; its bits are
 * cleared. Faces: a box's +k face touches the boxes that start on that plane in its own block (or,
 * on the block's far face, in the next block), so candidates come from buckets by (block, plane).
 */
#include "boxes.h"
#include "nodepool.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

void on_boxset_free(on_boxset *s)
{
    if (!s) return;
    free(s->box);
    free(s->adj_off);
    free(s->adj);
    free(s->block_off);
    for (int f = 0; f < 6; f++) {
        free(s->face[f]);
        free(s->face_off[f]);
    }
    free(s);
}

/* ---- the bitmap ------------------------------------------------------------------------------- */

typedef on_boxbits occ;

static inline uint64_t *occ_row(const occ *o, int y, int z) { return o->w + ((size_t)z * (size_t)o->n + (size_t)y) * (size_t)o->nw; }

static inline uint64_t bits(int lo, int hi) /* bits lo .. hi-1 of a word, 0 <= lo < hi <= 64 */
{
    uint64_t m = hi - lo == 64 ? ~(uint64_t)0 : (((uint64_t)1 << (hi - lo)) - 1);
    return m << lo;
}

static int paint_free(void *ud, on_cell c, int blocked)
{
    if (blocked) return 0;
    const occ *o = ud;
    int x = (int)on_code_x(c.code), y = (int)on_code_y(c.code), z = (int)on_code_z(c.code);
    int s = 1 << on_code_layer(c.code);
    if (s < 64) { /* one word a row (a cell is aligned to its size): its mask found once */
        uint64_t m = bits(x % 64, x % 64 + s);
        for (int zz = z; zz < z + s; zz++) {
            uint64_t *r = occ_row(o, y, zz) + x / 64;
            for (int yy = 0; yy < s; yy++) r[(size_t)yy * (size_t)o->nw] |= m;
        }
        return 0;
    }
    for (int zz = z; zz < z + s; zz++) /* whole words */
        for (int yy = y; yy < y + s; yy++) {
            uint64_t *r = occ_row(o, yy, zz) + x / 64;
            for (int wi = 0; wi < s / 64; wi++) r[wi] = ~(uint64_t)0;
        }
    return 0;
}

/* ---- the build -------------------------------------------------------------------------------- */

/* Greedy boxes of one block, appended to s->box: the block starts at (x0, y0, z0) in bitmap o, and
 * org is added to the bitmap's coordinates (0 for a tile's bitmap, the block's corner for a block's
 * own); blk (when not NULL) gets each one's block index b. */
static int block_boxes(on_boxset *s, const occ *o, int x0, int y0, int z0, const int org[3], uint32_t b, size_t *cap,
                       uint32_t **blk, size_t *blkcap)
{
    int B = s->bsize, wi = x0 / 64, sh = x0 % 64;
    uint64_t bmask = bits(sh, sh + B);
    /* word wi of row (y, z) is W[z * zs + y * ys] (rows of one word in a block's own bitmap: the
     * loops over y below run over consecutive words) */
    uint64_t *W = o->w + wi;
    size_t ys = (size_t)o->nw, zs = (size_t)o->n * (size_t)o->nw;
    for (int z = z0; z < z0 + B; z++)
        for (int y = y0; y < y0 + B; y++) {
            uint64_t *r = W + (size_t)z * zs + (size_t)y * ys, word;
            while ((word = *r & bmask) != 0) {
                /* the run of free bits from the lowest, then as many rows along y, then layers
                 * along z, as are free under its mask */
                int lo = __builtin_ctzll(word);
                uint64_t inv = ~(word >> lo);
                int run = inv ? __builtin_ctzll(inv) : 64 - lo;
                uint64_t m = bits(lo, lo + run);
                int y1 = y + 1, z1 = z + 1;
                while (y1 < y0 + B && (r[(size_t)(y1 - y) * ys] & m) == m) y1++;
                size_t ny = (size_t)(y1 - y);
                for (; z1 < z0 + B; z1++) { /* every row of the layer, no early exit (vectorises) */
                    const uint64_t *q = r + (size_t)(z1 - z) * zs;
                    uint64_t acc = m;
                    if (ys == 1)
                        for (size_t j = 0; j < ny; j++) acc &= q[j];
                    else
                        for (size_t j = 0; j < ny; j++) acc &= q[j * ys];
                    if (acc != m) break;
                }
                for (int zz = z; zz < z1; zz++) {
                    uint64_t *q = r + (size_t)(zz - z) * zs;
                    if (ys == 1)
                        for (size_t j = 0; j < ny; j++) q[j] &= ~m;
                    else
                        for (size_t j = 0; j < ny; j++) q[j * ys] &= ~m;
                }
                if (on_grow((void **)&s->box, cap, s->nbox + 1, sizeof *s->box) ||
                    (blk && on_grow((void **)blk, blkcap, s->nbox + 1, sizeof **blk)))
                    return -1;
                on_box *bb = &s->box[s->nbox];
                bb->mn[0] = (uint16_t)(org[0] + wi * 64 + lo);
                bb->mx[0] = (uint16_t)(org[0] + wi * 64 + lo + run);
                bb->mn[1] = (uint16_t)(org[1] + y);
                bb->mx[1] = (uint16_t)(org[1] + y1);
                bb->mn[2] = (uint16_t)(org[2] + z);
                bb->mx[2] = (uint16_t)(org[2] + z1);
                if (blk) (*blk)[s->nbox] = b;
                s->nbox++;
            }
        }
    return 0;
}

/* Face adjacency inside the tile as CSR; -1 on allocation failure. */
static int build_adjacency(on_boxset *s, const uint32_t *blk)
{
    int B = s->bsize, nb = s->nb;
    size_t nblk = (size_t)nb * nb * nb, nbuck = nblk * (size_t)B;
    uint32_t stride[3] = {1, (uint32_t)nb, (uint32_t)(nb * nb)};
    uint32_t *off = malloc((nbuck + 1) * sizeof *off), *ord = malloc((s->nbox + 1) * sizeof *ord);
    uint32_t *deg = calloc((size_t)s->nbox + 1, sizeof *deg);
    uint32_t *ea = NULL, *eb = NULL;
    size_t ne = 0, ecap = 0, ebcap = 0;
    int rc = -1;
    if (!off || !ord || !deg) goto done;
    for (int k = 0; k < 3; k++) {
        /* buckets: boxes by (block, mn[k] within the block) */
        memset(off, 0, (nbuck + 1) * sizeof *off);
        for (uint32_t i = 0; i < s->nbox; i++) off[(size_t)blk[i] * B + s->box[i].mn[k] % B + 1]++;
        for (size_t i = 0; i < nbuck; i++) off[i + 1] += off[i];
        for (uint32_t i = 0; i < s->nbox; i++) ord[off[(size_t)blk[i] * B + s->box[i].mn[k] % B]++] = i;
        for (size_t i = nbuck; i > 0; i--) off[i] = off[i - 1];
        off[0] = 0;
        for (uint32_t i = 0; i < s->nbox; i++) {
            const on_box *a = &s->box[i];
            int p = a->mx[k];
            if (p >= B * nb) continue; /* the tile's face */
            size_t bucket = p % B ? (size_t)blk[i] * B + (size_t)(p % B) : (size_t)(blk[i] + stride[k]) * B;
            for (uint32_t j = off[bucket]; j < off[bucket + 1]; j++) {
                uint32_t c = ord[j];
                if (!on_box_overlap2(a, &s->box[c], k)) continue;
                if (on_grow((void **)&ea, &ecap, ne + 1, sizeof *ea) || on_grow((void **)&eb, &ebcap, ne + 1, sizeof *eb))
                    goto done;
                ea[ne] = i;
                eb[ne++] = c;
                deg[i]++;
                deg[c]++;
            }
        }
    }
    s->adj_off = malloc(((size_t)s->nbox + 1) * sizeof *s->adj_off);
    s->adj = malloc((2 * ne + 1) * sizeof *s->adj);
    if (!s->adj_off || !s->adj) goto done;
    s->adj_off[0] = 0;
    for (uint32_t i = 0; i < s->nbox; i++) s->adj_off[i + 1] = s->adj_off[i] + deg[i];
    memset(deg, 0, (size_t)s->nbox * sizeof *deg);
    for (size_t e = 0; e < ne; e++) {
        s->adj[s->adj_off[ea[e]] + deg[ea[e]]++] = eb[e];
        s->adj[s->adj_off[eb[e]] + deg[eb[e]]++] = ea[e];
    }
    s->bytes += ((size_t)s->nbox + 1 + 2 * ne) * sizeof(uint32_t);
    rc = 0;
done:
    free(off);
    free(ord);
    free(deg);
    free(ea);
    free(eb);
    return rc;
}

/* The boxes touching each tile face, grouped by the face's blocks; -1 on allocation failure. */
static int build_faces(on_boxset *s)
{
    size_t ng = (size_t)s->nb * (size_t)s->nb;
    int n = s->bsize * s->nb;
    for (int f = 0; f < 6; f++) {
        int k = f >> 1, far = f & 1;
        s->face_off[f] = calloc(ng + 1, sizeof *s->face_off[f]);
        if (!s->face_off[f]) return -1;
        uint32_t *off = s->face_off[f], cnt = 0;
        for (uint32_t i = 0; i < s->nbox; i++) {
            const on_box *b = &s->box[i];
            if (far ? b->mx[k] == n : b->mn[k] == 0) {
                off[on_boxset_face_group(s, f, b) + 1]++;
                cnt++;
            }
        }
        for (size_t g = 0; g < ng; g++) off[g + 1] += off[g];
        s->face[f] = malloc(((size_t)cnt + 1) * sizeof *s->face[f]);
        if (!s->face[f]) return -1;
        for (uint32_t i = 0; i < s->nbox; i++) {
            const on_box *b = &s->box[i];
            if (far ? b->mx[k] == n : b->mn[k] == 0) s->face[f][off[on_boxset_face_group(s, f, b)]++] = i;
        }
        for (size_t g = ng; g > 0; g--) off[g] = off[g - 1];
        off[0] = 0;
        s->bytes += (ng + 1 + cnt) * sizeof(uint32_t);
    }
    return 0;
}

/* A new box set for a tile's contents (table and solid flag, tile depth) from the bitmap scratch o
 * (n x n rows, zeroed here). Reads no tree. */
/* The free leaves under stored node `code` (its blocked-children byte bf) painted into a tile's bitmap:
 * on_table_visit's cells, each stored child looked up once (the visit looks a node up again when it
 * goes down into it) with the home slots of a node's children asked for together (their misses
 * overlap), a node of leaves painting its four rows of two bits at once (as paint_node for a block). */
static void paint_tile_node(const on_table *tab, uint32_t code, uint8_t bf, occ *o)
{
    if (on_code_layer(code) == 1) {
        int x = (int)on_code_x(code), y = (int)on_code_y(code), z = (int)on_code_z(code);
        unsigned fr = ~(unsigned)bf & 0xffu; /* child i = dx | dy << 1 | dz << 2 */
        for (unsigned k = 0; k < 4; k++) {
            uint64_t two = (fr >> (2 * k)) & 3u;
            if (two) occ_row(o, y + (int)(k & 1u), z + (int)(k >> 1))[x / 64] |= two << (x % 64);
        }
        return;
    }
    if (tab->cap)
        for (unsigned i = 0; i < 8; i++)
            if (!(bf & (1u << i))) __builtin_prefetch(&tab->keys[on_table_home(on_code_child(code, i), tab->cap)]);
    for (unsigned i = 0; i < 8; i++) {
        if (bf & (1u << i)) continue;
        uint32_t child = on_code_child(code, i);
        int cb = on_table_get(tab, child);
        if (cb >= 0) paint_tile_node(tab, child, (uint8_t)cb, o);
        else paint_free(o, (on_cell){0, child}, 0);
    }
}

void on_boxbits_paint(const on_table *tab, uint8_t solid, int depth, on_boxbits *o)
{
    memset(o->w, 0, (size_t)o->n * (size_t)o->n * (size_t)o->nw * sizeof *o->w);
    uint32_t root = on_code_make(0, 0, 0, (uint32_t)depth);
    if (solid) return;
    int bf = on_table_get(tab, root);
    if (bf < 0) paint_free(o, (on_cell){0, root}, 0); /* (free whole) */
    else paint_tile_node(tab, root, (uint8_t)bf, o);
}

static on_status build_set(const on_table *tab, uint8_t solid, int depth, occ *o, on_boxset **out)
{
    on_boxbits_paint(tab, solid, depth, o);
    return on_boxset_from_bits(o, 0, out);
}

on_status on_boxset_from_bits(on_boxbits *o, int bsize, on_boxset **out)
{
    *out = NULL;
    on_boxset *s = calloc(1, sizeof *s);
    if (!s) return ON_FAILURE | ON_NO_MEMORY;
    s->bsize = o->n < 64 ? o->n : 64; /* (o->n: the tile's side, 1 << depth) */
    if (bsize > 0 && bsize < s->bsize) s->bsize = bsize;
    s->nb = o->n / s->bsize;
    size_t nblk = (size_t)s->nb * s->nb * s->nb, cap = 0, blkcap = 0;
    uint32_t *blk = NULL;
    int B = s->bsize;
    /* each block copied into a bitmap of its own (rows of one word, B bits from bit 0: its loops over
     * y and z run over consecutive words, and they vectorise), its greedy boxes made there: the same
     * boxes as over the tile's rows (no box crosses a block), in the same order */
    occ own = {malloc((size_t)B * (size_t)B * sizeof(uint64_t)), B, 1};
    s->block_off = malloc((nblk + 1) * sizeof *s->block_off);
    if (!s->block_off || !own.w) goto fail;
    uint64_t bmask = bits(0, B);
    for (int bz = 0; bz < s->nb; bz++)
        for (int by = 0; by < s->nb; by++)
            for (int bx = 0; bx < s->nb; bx++) {
                uint32_t b = (uint32_t)bx + (uint32_t)s->nb * ((uint32_t)by + (uint32_t)s->nb * (uint32_t)bz);
                int org[3] = {bx * B, by * B, bz * B}, sh = org[0] % 64;
                s->block_off[b] = s->nbox;
                uint64_t any = 0, all = bmask;
                for (int z = 0; z < B; z++) {
                    const uint64_t *src = occ_row(o, org[1], org[2] + z) + org[0] / 64;
                    uint64_t *dst = own.w + (size_t)z * (size_t)B;
                    for (int y = 0; y < B; y++) {
                        uint64_t w = src[(size_t)y * (size_t)o->nw] >> sh & bmask;
                        dst[y] = w;
                        any |= w;
                        all &= w;
                    }
                }
                if (!any) continue; /* (no free leaf) */
                if (all == bmask) { /* free whole: the greedy boxes are the block */
                    if (on_grow((void **)&s->box, &cap, s->nbox + 1, sizeof *s->box) ||
                        on_grow((void **)&blk, &blkcap, s->nbox + 1, sizeof *blk))
                        goto fail;
                    for (int k = 0; k < 3; k++) {
                        s->box[s->nbox].mn[k] = (uint16_t)org[k];
                        s->box[s->nbox].mx[k] = (uint16_t)(org[k] + B);
                    }
                    blk[s->nbox++] = b;
                    continue;
                }
                if (block_boxes(s, &own, 0, 0, 0, org, b, &cap, &blk, &blkcap)) goto fail;
            }
    s->block_off[nblk] = s->nbox;
    free(own.w);
    own.w = NULL;
    if (s->nbox) { /* trim to size */
        on_box *tight = realloc(s->box, (size_t)s->nbox * sizeof *tight);
        if (tight) s->box = tight;
    }
    s->bytes = sizeof *s + (size_t)s->nbox * sizeof(on_box) + (nblk + 1) * sizeof(uint32_t);
    if (build_adjacency(s, blk) || build_faces(s)) goto fail;
    free(blk);
    *out = s;
    return ON_SUCCESS;
fail:
    free(blk);
    free(own.w);
    on_boxset_free(s);
    return ON_FAILURE | ON_NO_MEMORY;
}

int on_boxbits_alloc(on_boxbits *o, int depth)
{
    o->n = 1 << depth;
    o->nw = o->n < 64 ? 1 : o->n / 64;
    o->w = malloc((size_t)o->n * (size_t)o->n * (size_t)o->nw * sizeof *o->w);
    return o->w ? 0 : -1;
}

void on_boxbits_free(on_boxbits *o)
{
    free(o->w);
    o->w = NULL;
}

on_status on_boxset_build_in(const on_table *tab, uint8_t solid, int depth, on_boxbits *o, on_boxset **out)
{
    return build_set(tab, solid, depth, o, out);
}

on_status on_boxset_build(const on_table *tab, uint8_t solid, int depth, on_boxset **out)
{
    *out = NULL;
    occ o;
    if (on_boxbits_alloc(&o, depth)) return ON_FAILURE | ON_NO_MEMORY;
    on_status st = build_set(tab, solid, depth, &o, out);
    on_boxbits_free(&o);
    return st;
}

int64_t on_boxset_locate(const on_boxset *s, const double p[3])
{
    uint32_t in[8];
    return on_boxset_locate_all(s, p, in) > 0 ? (int64_t)in[0] : -1; /* the first in block order */
}

/* Closed box x holds point p. */
static inline int box_holds(const on_box *x, const double p[3])
{
    return p[0] >= x->mn[0] && p[0] <= x->mx[0] && p[1] >= x->mn[1] && p[1] <= x->mx[1] && p[2] >= x->mn[2] &&
           p[2] <= x->mx[2];
}

/* The blocks holding coordinate v along one axis: lo..hi (two where v is on a block boundary). */
static void block_span(const on_boxset *s, double v, int *lo, int *hi)
{
    int b = (int)(v / s->bsize);
    if (b >= s->nb) b = s->nb - 1;
    if (b < 0) b = 0;
    *lo = *hi = b;
    if (b > 0 && v == (double)(b * s->bsize)) *lo = b - 1;
}

/* Every box of s holding point p (closed boxes: a point on a shared face or corner is in each of
 * them, at most 8 as box interiors are disjoint); returns the count. */
int on_boxset_locate_all(const on_boxset *s, const double p[3], uint32_t out[8])
{
    int lo[3], hi[3], n = 0;
    for (int k = 0; k < 3; k++) block_span(s, p[k], &lo[k], &hi[k]);
    for (int bz = lo[2]; bz <= hi[2]; bz++)
        for (int by = lo[1]; by <= hi[1]; by++)
            for (int bx = lo[0]; bx <= hi[0]; bx++) {
                uint32_t b = (uint32_t)bx + (uint32_t)s->nb * ((uint32_t)by + (uint32_t)s->nb * (uint32_t)bz);
                for (uint32_t i = s->block_off[b]; i < s->block_off[b + 1] && n < 8; i++)
                    if (box_holds(&s->box[i], p)) out[n++] = i;
            }
    return n;
}

int on_boxset_locate_on_face(const on_boxset *s, const double p[3], uint32_t out[8])
{
    double side = (double)s->bsize * s->nb;
    int f = -1;
    for (int k = 0; k < 3 && f < 0; k++) {
        if (p[k] == 0) f = 2 * k;
        else if (p[k] == side) f = 2 * k + 1;
    }
    if (f < 0) return on_boxset_locate_all(s, p, out);
    int k = f >> 1, u = (k + 1) % 3, v = (k + 2) % 3, lo[2], hi[2], n = 0;
    block_span(s, p[u], &lo[0], &hi[0]);
    block_span(s, p[v], &lo[1], &hi[1]);
    for (int bv = lo[1]; bv <= hi[1]; bv++)
        for (int bu = lo[0]; bu <= hi[0]; bu++) {
            uint32_t g = (uint32_t)bu + (uint32_t)s->nb * (uint32_t)bv;
            for (uint32_t i = s->face_off[f][g]; i < s->face_off[f][g + 1] && n < 8; i++)
                if (box_holds(&s->box[s->face[f][i]], p)) out[n++] = s->face[f][i];
        }
    return n;
}

/* ---- the lazy set: one block at a time ---------------------------------------------------------- */

int on_boxlazy_init(on_boxlazy *z, int depth) { return on_boxlazy_init_blocks(z, depth, 6); }

/* A lazy set's box and face arrays are made with room for this many boxes (BOXLAZY_ROOM x 4 face
 * entries): in pages of their own (on_pages_*, nodepool.h), untouched until blocks fill them, so a set
 * that grows (its blocks built by later joins) is not copied to new pages in one block's build while it
 * stays below (a copy of a MB is ~250 page faults: ~3 ms on the seed's machine, issue 31), its room
 * is never resident, and a set freed gives its pages back (session 27: from glibc's heap, a freed
 * set's room stayed resident as a hole). Its block records too. */
#define BOXLAZY_ROOM 65536

int on_boxlazy_init_blocks(on_boxlazy *z, int depth, int bdepth)
{
    memset(z, 0, sizeof *z);
    if (bdepth < 3 || bdepth > 6 || depth < bdepth) return -1; /* (smaller tiles: build them whole) */
    if (depth - bdepth > 10) return -1; /* (on_boxlazy_order's 10 bits an axis: 2^30 blocks) */
    z->depth = depth;
    z->bdepth = bdepth;
    z->set.bsize = 1 << bdepth;
    z->set.nb = (1 << depth) >> bdepth;
    size_t nblk = (size_t)z->set.nb * z->set.nb * z->set.nb;
    z->blk = on_pages_realloc(NULL, nblk * sizeof *z->blk); /* (a block's record is written when it is built, read only after:
                                              * not calloc'd, which memsets reused heap memory: 1.3 MB
                                              * for a 512^3 tile of 16-leaf blocks, ~4 ms of page faults) */
    z->slot = on_pages_realloc(NULL, nblk * sizeof *z->slot);
    z->bits_built = calloc((nblk + 63) / 64, sizeof *z->bits_built);
    if (!z->blk || !z->slot || !z->bits_built || on_boxbits_alloc(&z->bits, bdepth) ||
        on_pages_grow((void **)&z->set.box, &z->boxcap, BOXLAZY_ROOM, sizeof *z->set.box) ||
        on_pages_grow((void **)&z->bface, &z->bfcap, 4 * (size_t)BOXLAZY_ROOM, sizeof *z->bface)) {
        on_boxlazy_free(z);
        return -1;
    }
    on_boxlazy_clear(z);
    return 0;
}

void on_boxlazy_free(on_boxlazy *z)
{
    on_pages_free(z->set.box);
    on_pages_free(z->blk);
    on_pages_free(z->slot);
    free(z->bits_built);
    on_pages_free(z->bface);
    on_boxbits_free(&z->bits);
    memset(z, 0, sizeof *z);
}

void on_boxlazy_clear(on_boxlazy *z)
{
    if (z->built) /* (nb^3 bits: 4 KB for a 512^3 tile of 16-leaf blocks) */
        memset(z->bits_built, 0, ((size_t)z->set.nb * z->set.nb * z->set.nb + 63) / 64 * sizeof *z->bits_built);
    z->set.nbox = 0;
    z->nbface = 0;
    z->built = 0;
    z->pn = 0;
}

/* Paint the free leaves of the cube `code` (a stored node, its blocked-children byte bf) into o,
 * shifted by -org. Each stored child is looked up once; a node of leaves (layer 1) paints its four
 * rows of two bits at once (the lazy sets' joins spend most of a block's build here). */
static void paint_node(const on_table *tab, uint32_t code, uint8_t bf, const int org[3], occ *o)
{
    if (on_code_layer(code) == 1) {
        int x = (int)on_code_x(code) - org[0], y = (int)on_code_y(code) - org[1], z = (int)on_code_z(code) - org[2];
        unsigned fr = ~(unsigned)bf & 0xffu; /* child i = dx | dy << 1 | dz << 2 */
        for (unsigned k = 0; k < 4; k++) {
            uint64_t two = (fr >> (2 * k)) & 3u;
            if (two) occ_row(o, y + (int)(k & 1u), z + (int)(k >> 1))[0] |= two << x;
        }
        return;
    }
    /* every child's home slot asked for first: the table is far bigger than the caches, and so the
     * lookups' misses overlap instead of coming one after another (the same lookups, the same answers) */
    if (tab->cap)
        for (unsigned i = 0; i < 8; i++)
            if (!(bf & (1u << i))) __builtin_prefetch(&tab->keys[on_table_home(on_code_child(code, i), tab->cap)]);
    for (unsigned i = 0; i < 8; i++) {
        if (bf & (1u << i)) continue;
        uint32_t child = on_code_child(code, i);
        int cb = on_table_get(tab, child);
        if (cb >= 0) {
            paint_node(tab, child, (uint8_t)cb, org, o);
            continue;
        }
        int x = (int)on_code_x(child) - org[0], y = (int)on_code_y(child) - org[1], zz = (int)on_code_z(child) - org[2];
        int sz = 1 << on_code_layer(child);
        uint64_t m = bits(x, x + sz);
        for (int k = zz; k < zz + sz; k++)
            for (int j = y; j < y + sz; j++) occ_row(o, j, k)[0] |= m;
    }
}

/* Paint block b's free leaves into the block's own bitmap (rows of one word, B bits used): the node
 * covering the block found from the tile's node down (a free or blocked ancestor fills or leaves it
 * whole), then its cubes. Returns 1 when the block is one free cube (o left as it was: its greedy
 * boxes are that one cube), -1 when it is blocked whole (o all zeros), 0 otherwise. The way down
 * reuses the layers it shares with the last block's (z->pcode, pval: a search builds neighbouring
 * blocks one after another, whose ancestors are the same nodes; the same values, not looked up again). */
static int paint_block(on_boxlazy *z, const int org[3], occ *o)
{
    int B = z->set.bsize;
    size_t bytes = (size_t)B * (size_t)B * sizeof *o->w;
    int top = z->depth, bot = z->bdepth;
    if (z->solid) {
        memset(o->w, 0, bytes);
        return -1;
    }
    if (z->ptab != z->tab) {
        z->ptab = z->tab;
        z->pn = 0;
    }
    uint32_t path[16]; /* the nodes from the tile's (layer top) to the block's (layer bot) */
    path[top] = on_code_make(0, 0, 0, (uint32_t)top);
    for (int l = top; l > bot; l--) {
        uint32_t h = 1u << (l - 1);
        path[l - 1] = on_code_child(path[l], ((uint32_t)org[0] & h ? 1u : 0u) | ((uint32_t)org[1] & h ? 2u : 0u) |
                                                 ((uint32_t)org[2] & h ? 4u : 0u));
    }
    int keep = 0; /* layers from the top the last way shares */
    while (keep < z->pn && top - keep >= bot && z->pcode[top - keep] == path[top - keep]) keep++;
    if (z->tab->cap) /* the other layers' home slots at once (as paint_node's children) */
        for (int l = top - keep; l >= bot; l--) __builtin_prefetch(&z->tab->keys[on_table_home(path[l], z->tab->cap)]);
    int bf = -1;
    for (int l = top; l >= bot; l--) {
        if (top - l < keep) {
            bf = z->pval[l];
        } else {
            bf = on_table_get(z->tab, path[l]);
            z->pcode[l] = path[l];
            z->pval[l] = (int16_t)bf;
            if (top - l + 1 > z->pn) z->pn = top - l + 1;
        }
        if (bf < 0) return 1; /* a free leaf holding the block (o not painted: the caller makes its one box) */
        if (l > bot) {
            uint32_t h = 1u << (l - 1);
            unsigned i = ((uint32_t)org[0] & h ? 1u : 0u) | ((uint32_t)org[1] & h ? 2u : 0u) | ((uint32_t)org[2] & h ? 4u : 0u);
            if ((uint8_t)bf & (1u << i)) { /* blocked whole */
                memset(o->w, 0, bytes);
                return -1;
            }
        }
    }
    memset(o->w, 0, bytes);
    paint_node(z->tab, path[bot], (uint8_t)bf, org, o);
    return 0;
}

on_status on_boxlazy_block(on_boxlazy *z, uint32_t b)
{
    if (on_boxlazy_built(z, b)) return ON_SUCCESS;
    on_boxblock *k = &z->blk[z->built]; /* (the records in the order built: z->slot) */
    on_boxset *s = &z->set;
    uint32_t nb = (uint32_t)s->nb, first = s->nbox;
    int B = s->bsize;
    int org[3] = {(int)(b % nb) * B, (int)(b / nb % nb) * B, (int)(b / (nb * nb)) * B};
    int kind = paint_block(z, org, &z->bits);
    if (kind == 1) { /* one free cube: one box */
        if (on_pages_grow((void **)&s->box, &z->boxcap, (size_t)s->nbox + 1, sizeof *s->box)) return ON_FAILURE | ON_NO_MEMORY;
        on_box *bb = &s->box[s->nbox];
        for (int a = 0; a < 3; a++) {
            bb->mn[a] = (uint16_t)org[a];
            bb->mx[a] = (uint16_t)(org[a] + B);
        }
        s->nbox++;
    } else if (kind == 0 && (on_pages_grow((void **)&s->box, &z->boxcap, (size_t)s->nbox + (size_t)B * B * B, sizeof *s->box) ||
                             block_boxes(s, &z->bits, 0, 0, 0, org, b, &z->boxcap, NULL, NULL))) { /* (room for the block's
                             * most boxes first: block_boxes's on_grow never reallocs an on_pages array) */
        s->nbox = first; /* the block stays unbuilt */
        return ON_FAILURE | ON_NO_MEMORY;
    }
    /* its face lists: each box counted on the faces it touches, then listed in one pass (per face in
     * box order, as six passes would list them) */
    uint32_t n = s->nbox - first, cnt[6] = {0};
    if (on_pages_grow((void **)&z->bface, &z->bfcap, z->nbface + 6 * (size_t)n + 1, sizeof *z->bface)) {
        s->nbox = first;
        return ON_FAILURE | ON_NO_MEMORY;
    }
    for (uint32_t i = first; i < s->nbox; i++)
        for (int ax = 0; ax < 3; ax++) {
            cnt[2 * ax] += s->box[i].mn[ax] == org[ax];
            cnt[2 * ax + 1] += s->box[i].mx[ax] == org[ax] + B;
        }
    uint32_t at[6];
    k->fo[0] = (uint32_t)z->nbface;
    for (int f = 0; f < 6; f++) {
        at[f] = k->fo[f];
        k->fo[f + 1] = k->fo[f] + cnt[f];
    }
    for (uint32_t i = first; i < s->nbox; i++)
        for (int ax = 0; ax < 3; ax++) {
            if (s->box[i].mn[ax] == org[ax]) z->bface[at[2 * ax]++] = i;
            if (s->box[i].mx[ax] == org[ax] + B) z->bface[at[2 * ax + 1]++] = i;
        }
    z->nbface = k->fo[6];
    k->first = first;
    k->n = n;
    z->slot[on_boxlazy_order(z, b)] = z->built++;
    z->bits_built[b >> 6] |= (uint64_t)1 << (b & 63);
    s->bytes = sizeof *z + (size_t)s->nbox * (sizeof(on_box) + sizeof(uint32_t)) + z->nbface * sizeof(uint32_t) +
               (size_t)s->nb * s->nb * s->nb * (sizeof *z->blk + sizeof *z->slot) + (size_t)s->nb * s->nb * s->nb / 8;
    return ON_SUCCESS;
}

int on_boxlazy_blocks_at(const on_boxlazy *z, const double p[3], uint32_t out[8])
{
    int lo[3], hi[3], n = 0;
    for (int k = 0; k < 3; k++) block_span(&z->set, p[k], &lo[k], &hi[k]);
    for (int bz = lo[2]; bz <= hi[2]; bz++)
        for (int by = lo[1]; by <= hi[1]; by++)
            for (int bx = lo[0]; bx <= hi[0]; bx++)
                out[n++] = (uint32_t)bx + (uint32_t)z->set.nb * ((uint32_t)by + (uint32_t)z->set.nb * (uint32_t)bz);
    return n;
}

void on_boxlazy_locate_in(const on_boxlazy *z, uint32_t b, const double p[3], uint32_t out[8], int *n)
{
    if (!on_boxlazy_built(z, b)) return;
    const on_boxblock *k = on_boxlazy_rec(z, b);
    int B = z->set.bsize;
    int org[3] = {(int)(b % (uint32_t)z->set.nb) * B, (int)(b / (uint32_t)z->set.nb % (uint32_t)z->set.nb) * B,
                  (int)(b / (uint32_t)(z->set.nb * z->set.nb)) * B};
    for (int f = 0; f < 6; f++) /* a point on the block's face: only the boxes touching it */
        if (p[f >> 1] == (double)(org[f >> 1] + (f & 1 ? B : 0))) {
            for (uint32_t i = k->fo[f]; i < k->fo[f + 1] && *n < 8; i++)
                if (box_holds(&z->set.box[z->bface[i]], p)) out[(*n)++] = z->bface[i];
            return;
        }
    for (uint32_t i = k->first; i < k->first + k->n && *n < 8; i++)
        if (box_holds(&z->set.box[i], p)) out[(*n)++] = i;
}

int on_boxlazy_locate_all(on_boxlazy *z, const double p[3], int build, uint32_t out[8])
{
    uint32_t blocks[8];
    int nblk = on_boxlazy_blocks_at(z, p, blocks), n = 0;
    for (int i = 0; i < nblk; i++) {
        if (build && on_failed(on_boxlazy_block(z, blocks[i]))) return -1;
        on_boxlazy_locate_in(z, blocks[i], p, out, &n);
    }
    return n;
}
