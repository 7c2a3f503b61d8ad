/*
 * test_boxes.c -- the box builder (boxes.c): a tile's free leaves merged into boxes joined by faces.
 * Hand-made tiles whose boxes, neighbour lists and face lists are known exactly (an open tile, a
 * solid one, a wall, a wall with a hole, an open tile of two blocks a side), points located in them,
 * and seeded random scenes where every free leaf must lie in exactly one box and no blocked leaf in
 * any, no box crosses a 64-leaf block, each neighbour pair shares a face of positive area and every
 * pair that does is listed, and the tree's prepared set (on_tree_prepare) equals a direct build. A
 * lazily built set (on_boxlazy), its blocks built in a scrambled order, equals the eager build block
 * for block: the same boxes in the same order, each box's neighbours (its block's list plus the
 * facing lists of the blocks beyond its block faces) the eager list's, the same boxes found at points.
 * The point where a search over boxes enters a box (graph_boxes.c's entry) on a shared face: the line
 * to the goal's crossing, mirrored when the goal lies on the near side, clamped onto the face.
 */
#include "octonav.h"
#include "boxes.h"
#include "graph.h"
#include "minitest.h"
#include "tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rs = 0x2545F4914F6CDD1Dull;
static double rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (double)(rs >> 11) / 9007199254740992.0;
}

static on_tree *new_tree(int nx, int nz, int depth)
{
    on_tree_params p = {{nx, 1, nz}, depth, 1.0, {0, 0, 0}, 0};
    on_tree *t = NULL;
    CHECK(on_ok(on_tree_create(&p, &t)));
    return t;
}

static void block(on_tree *t, double x0, double y0, double z0, double x1, double y1, double z1)
{
    double a[3] = {x0, y0, z0}, b[3] = {x1, y1, z1};
    CHECK(on_ok(on_tree_add_box(t, a, b)));
}

static on_boxset *build(const on_tree *t, uint32_t tile)
{
    on_boxset *s = NULL;
    CHECK(on_ok(on_boxset_build(&t->tiles[tile].table, t->tiles[tile].solid, t->p.depth, &s)));
    return s;
}

/* Is box i of s exactly [x0,x1) x [y0,y1) x [z0,z1)? */
static int box_is(const on_boxset *s, uint32_t i, int x0, int x1, int y0, int y1, int z0, int z1)
{
    const on_box *b = &s->box[i];
    return b->mn[0] == x0 && b->mx[0] == x1 && b->mn[1] == y0 && b->mx[1] == y1 && b->mn[2] == z0 && b->mx[2] == z1;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Are box i's neighbours exactly want[0 .. n) (in any order)? */
static int neighbours_are(const on_boxset *s, uint32_t i, const uint32_t *want, uint32_t n)
{
    uint32_t got[64];
    uint32_t k = s->adj_off[i + 1] - s->adj_off[i];
    if (k != n || k > 64) return 0;
    memcpy(got, s->adj + s->adj_off[i], k * sizeof *got);
    qsort(got, k, sizeof *got, cmp_u32);
    for (uint32_t e = 0; e < k; e++)
        if (got[e] != want[e]) return 0;
    return 1;
}

/* Are the boxes on tile face f exactly want[0 .. n) (in any order)? */
static int face_is(const on_boxset *s, int f, const uint32_t *want, uint32_t n)
{
    size_t ng = (size_t)s->nb * (size_t)s->nb;
    uint32_t k = s->face_off[f][ng];
    uint32_t got[64];
    if (k != n || k > 64) return 0;
    memcpy(got, s->face[f], k * sizeof *got);
    qsort(got, k, sizeof *got, cmp_u32);
    for (uint32_t e = 0; e < k; e++)
        if (got[e] != want[e]) return 0;
    return 1;
}

static void test_open_and_solid(void)
{
    on_tree *t = new_tree(1, 1, 3);
    on_boxset *s = build(t, 0);
    CHECK_EQ_INT(s->nbox, 1);
    CHECK(box_is(s, 0, 0, 8, 0, 8, 0, 8));
    CHECK_EQ_INT(s->bsize, 8);
    CHECK_EQ_INT(s->nb, 1);
    CHECK(neighbours_are(s, 0, NULL, 0));
    static const uint32_t only0[] = {0};
    for (int f = 0; f < 6; f++) CHECK(face_is(s, f, only0, 1));
    double in[3] = {3.5, 8, 0}, out[3] = {8.5, 1, 1};
    CHECK_EQ_INT(on_boxset_locate(s, in), 0); /* closed boxes: the tile's far face is in */
    CHECK_EQ_INT(on_boxset_locate(s, out), -1);
    on_boxset_free(s);
    /* wholly blocked: no boxes, no face entries */
    block(t, 0, 0, 0, 8, 8, 8);
    CHECK(t->tiles[0].solid);
    s = build(t, 0);
    CHECK_EQ_INT(s->nbox, 0);
    for (int f = 0; f < 6; f++) CHECK(face_is(s, f, NULL, 0));
    CHECK_EQ_INT(on_boxset_locate(s, in), -1);
    on_boxset_free(s);
    on_tree_destroy(t);
}

/* A wall across x = 4 splits the tile into two boxes that do not touch. */
static void test_wall(void)
{
    on_tree *t = new_tree(1, 1, 3);
    block(t, 4, 0, 0, 5, 8, 8);
    on_boxset *s = build(t, 0);
    CHECK_EQ_INT(s->nbox, 2);
    CHECK(box_is(s, 0, 0, 4, 0, 8, 0, 8));
    CHECK(box_is(s, 1, 5, 8, 0, 8, 0, 8));
    CHECK(neighbours_are(s, 0, NULL, 0));
    CHECK(neighbours_are(s, 1, NULL, 0));
    static const uint32_t b0[] = {0}, b1[] = {1}, both[] = {0, 1};
    CHECK(face_is(s, 0, b0, 1));
    CHECK(face_is(s, 1, b1, 1));
    for (int f = 2; f < 6; f++) CHECK(face_is(s, f, both, 2));
    double wall[3] = {4.5, 3, 3}, left[3] = {4, 3, 3}, right[3] = {5, 3, 3};
    CHECK_EQ_INT(on_boxset_locate(s, wall), -1);
    CHECK_EQ_INT(on_boxset_locate(s, left), 0);
    CHECK_EQ_INT(on_boxset_locate(s, right), 1);
    on_boxset_free(s);
    on_tree_destroy(t);
}

/* The same wall with a 2 x 2 hole at its y = 0, z = 0 corner. The builder takes the lowest free leaf
 * in z, y, x order, grows its run along x, then along y, then along z: five boxes. */
static void test_wall_with_hole(void)
{
    on_tree *t = new_tree(1, 1, 3);
    block(t, 4, 2, 0, 5, 8, 8);
    block(t, 4, 0, 2, 5, 2, 8);
    for (int z = 0; z < 8; z++)
        for (int y = 0; y < 8; y++)
            for (int x = 0; x < 8; x++)
                CHECK_EQ_INT(on_tree_leaf_free(t, x, y, z, NULL), x != 4 || (y < 2 && z < 2));
    on_boxset *s = build(t, 0);
    CHECK_EQ_INT(s->nbox, 5);
    CHECK(box_is(s, 0, 0, 8, 0, 2, 0, 2)); /* through the hole */
    CHECK(box_is(s, 1, 0, 4, 2, 8, 0, 8));
    CHECK(box_is(s, 2, 5, 8, 2, 8, 0, 8));
    CHECK(box_is(s, 3, 0, 4, 0, 2, 2, 8));
    CHECK(box_is(s, 4, 5, 8, 0, 2, 2, 8));
    static const uint32_t n0[] = {1, 2, 3, 4}, n1[] = {0, 3}, n2[] = {0, 4}, n3[] = {0, 1}, n4[] = {0, 2};
    CHECK(neighbours_are(s, 0, n0, 4));
    CHECK(neighbours_are(s, 1, n1, 2));
    CHECK(neighbours_are(s, 2, n2, 2));
    CHECK(neighbours_are(s, 3, n3, 2));
    CHECK(neighbours_are(s, 4, n4, 2));
    static const uint32_t fmx[] = {0, 1, 3}, fpx[] = {0, 2, 4}, fmy[] = {0, 3, 4}, fpy[] = {1, 2}, fmz[] = {0, 1, 2},
                          fpz[] = {1, 2, 3, 4};
    CHECK(face_is(s, 0, fmx, 3));
    CHECK(face_is(s, 1, fpx, 3));
    CHECK(face_is(s, 2, fmy, 3));
    CHECK(face_is(s, 3, fpy, 2));
    CHECK(face_is(s, 4, fmz, 3));
    CHECK(face_is(s, 5, fpz, 4));
    double hole[3] = {4.5, 1, 1}, wall[3] = {4.5, 5, 5}, upper[3] = {6, 5, 1}, back[3] = {1, 1, 6};
    CHECK_EQ_INT(on_boxset_locate(s, hole), 0);
    CHECK_EQ_INT(on_boxset_locate(s, wall), -1);
    CHECK_EQ_INT(on_boxset_locate(s, upper), 2);
    CHECK_EQ_INT(on_boxset_locate(s, back), 3);
    on_boxset_free(s);
    on_tree_destroy(t);
}

/* An open tile of 128 leaves: boxes never cross a 64-leaf block, so it is the 8 blocks, each joined
 * to the 3 it shares a face with; each tile face holds 4 boxes, one per face block. */
static void test_blocks(void)
{
    on_tree *t = new_tree(1, 1, 7);
    on_boxset *s = build(t, 0);
    CHECK_EQ_INT(s->bsize, 64);
    CHECK_EQ_INT(s->nb, 2);
    CHECK_EQ_INT(s->nbox, 8);
    for (uint32_t b = 0; b < 8; b++) {
        int x = (int)(b & 1) * 64, y = (int)(b >> 1 & 1) * 64, z = (int)(b >> 2) * 64;
        CHECK_EQ_INT(s->block_off[b], b);
        CHECK(box_is(s, b, x, x + 64, y, y + 64, z, z + 64));
        uint32_t want[3] = {b ^ 1u, b ^ 2u, b ^ 4u};
        qsort(want, 3, sizeof *want, cmp_u32);
        CHECK(neighbours_are(s, b, want, 3));
    }
    CHECK_EQ_INT(s->block_off[8], 8);
    for (int f = 0; f < 6; f++) {
        int k = f >> 1, bit = 1 << k;
        uint32_t want[4], n = 0;
        for (uint32_t b = 0; b < 8; b++)
            if (((b & (uint32_t)bit) != 0) == (f & 1)) want[n++] = b;
        CHECK(face_is(s, f, want, n));
        /* one box per face group, in the group it lies in */
        for (uint32_t g = 0; g < 4; g++) {
            CHECK_EQ_INT(s->face_off[f][g + 1] - s->face_off[f][g], 1);
            CHECK_EQ_INT(on_boxset_face_group(s, f, &s->box[s->face[f][s->face_off[f][g]]]), g);
        }
    }
    double corner[3] = {64, 64, 64}, far[3] = {100, 10, 70};
    CHECK(on_boxset_locate(s, corner) >= 0);
    CHECK_EQ_INT(on_boxset_locate(s, far), 5);
    on_boxset_free(s);
    on_tree_destroy(t);
}

/* Do boxes a and c share a face of positive area? */
static int share_face(const on_box *a, const on_box *c)
{
    for (int k = 0; k < 3; k++)
        if ((a->mx[k] == c->mn[k] || c->mx[k] == a->mn[k]) && on_box_overlap2(a, c, k)) return 1;
    return 0;
}

static int lists(const on_boxset *s, uint32_t i, uint32_t j)
{
    for (uint32_t e = s->adj_off[i]; e < s->adj_off[i + 1]; e++)
        if (s->adj[e] == j) return 1;
    return 0;
}

/* Every property of tile `tile`'s box set s that can be checked against the leaves. Returns the
 * number of problems found (each also counted as a failed check). */
static int check_set(const on_tree *t, uint32_t tile, const on_boxset *s)
{
    int n = t->n, bad = 0, ijk[3];
    on_tile_coords(t, tile, ijk);
    uint8_t *cover = calloc((size_t)n * n * n, 1);
    CHECK(cover != NULL);
    if (!cover) return 1;
    for (uint32_t i = 0; i < s->nbox; i++) {
        const on_box *b = &s->box[i];
        for (int k = 0; k < 3; k++) {
            bad += !(b->mn[k] < b->mx[k] && b->mx[k] <= n);
            bad += b->mn[k] / s->bsize != (b->mx[k] - 1) / s->bsize; /* inside one block */
        }
        uint32_t blk = (uint32_t)(b->mn[0] / s->bsize) +
                       (uint32_t)s->nb * ((uint32_t)(b->mn[1] / s->bsize) + (uint32_t)s->nb * (uint32_t)(b->mn[2] / s->bsize));
        bad += !(s->block_off[blk] <= i && i < s->block_off[blk + 1]);
        for (int z = b->mn[2]; z < b->mx[2]; z++)
            for (int y = b->mn[1]; y < b->mx[1]; y++)
                for (int x = b->mn[0]; x < b->mx[0]; x++)
                    if (cover[((size_t)z * n + y) * n + x] < 255) cover[((size_t)z * n + y) * n + x]++;
    }
    /* every free leaf in exactly one box, every blocked one in none (so boxes are free) */
    for (int z = 0; z < n; z++)
        for (int y = 0; y < n; y++)
            for (int x = 0; x < n; x++) {
                int fr = on_tree_leaf_free(t, (int64_t)ijk[0] * n + x, (int64_t)ijk[1] * n + y, (int64_t)ijk[2] * n + z,
                                           NULL);
                bad += cover[((size_t)z * n + y) * n + x] != fr;
            }
    free(cover);
    /* neighbour lists: symmetric, no self, no repeats, exactly the pairs sharing a face */
    for (uint32_t i = 0; i < s->nbox; i++) {
        for (uint32_t e = s->adj_off[i]; e < s->adj_off[i + 1]; e++) {
            uint32_t j = s->adj[e];
            bad += j >= s->nbox || j == i;
            if (j >= s->nbox) continue;
            bad += !share_face(&s->box[i], &s->box[j]) || !lists(s, j, i);
            for (uint32_t e2 = e + 1; e2 < s->adj_off[i + 1]; e2++) bad += s->adj[e2] == j;
        }
        for (uint32_t j = i + 1; j < s->nbox; j++)
            if (share_face(&s->box[i], &s->box[j])) bad += !lists(s, i, j);
    }
    /* face lists: exactly the boxes on each tile face, each in its group */
    size_t ng = (size_t)s->nb * (size_t)s->nb;
    for (int f = 0; f < 6; f++) {
        int k = f >> 1;
        uint32_t on_face = 0;
        for (uint32_t i = 0; i < s->nbox; i++) on_face += (f & 1) ? s->box[i].mx[k] == n : s->box[i].mn[k] == 0;
        bad += s->face_off[f][ng] != on_face;
        for (uint32_t g = 0; g < ng; g++)
            for (uint32_t e = s->face_off[f][g]; e < s->face_off[f][g + 1]; e++) {
                const on_box *b = &s->box[s->face[f][e]];
                bad += !((f & 1) ? b->mx[k] == n : b->mn[k] == 0) || on_boxset_face_group(s, f, b) != g;
            }
    }
    /* the centre of every box locates a box holding it */
    for (uint32_t i = 0; i < s->nbox; i++) {
        double c[3];
        for (int k = 0; k < 3; k++) c[k] = 0.5 * (s->box[i].mn[k] + s->box[i].mx[k]);
        int64_t at = on_boxset_locate(s, c);
        bad += at < 0;
        if (at >= 0)
            for (int k = 0; k < 3; k++) bad += c[k] < s->box[at].mn[k] || c[k] > s->box[at].mx[k];
    }
    CHECK_EQ_INT(bad, 0);
    return bad;
}

static int same_sets(const on_boxset *a, const on_boxset *b)
{
    if (a->nbox != b->nbox || a->nb != b->nb || a->bsize != b->bsize) return 0;
    if (memcmp(a->box, b->box, a->nbox * sizeof *a->box) != 0) return 0;
    if (memcmp(a->adj_off, b->adj_off, (a->nbox + 1) * sizeof *a->adj_off) != 0) return 0;
    return memcmp(a->adj, b->adj, a->adj_off[a->nbox] * sizeof *a->adj) == 0;
}

/* Seeded random scenes: boxes of random sizes (some thin, some tile-crossing) over 2 x 1 x 2 tiles. */
static void test_random(int depth, int scenes, int nblocks)
{
    size_t boxes = 0, tiles = 0;
    for (int sc = 0; sc < scenes; sc++) {
        on_tree *t = new_tree(2, 2, depth);
        double w = 2.0 * t->n, h = t->n;
        for (int i = 0; i < nblocks; i++) {
            double x = rnd() * w, y = rnd() * h, z = rnd() * w;
            double sx = rnd() < 0.3 ? 0.2 : rnd() * w / 4, sy = rnd() * h / 3, sz = rnd() * w / 4;
            block(t, x, y, z, x + sx, y + sy, z + sz);
        }
        CHECK(on_ok(on_tree_prepare(t, -1, NULL)));
        for (uint32_t ti = 0; ti < t->ntiles; ti++) {
            on_boxset *s = build(t, ti);
            if (!s) continue;
            check_set(t, ti, s);
            const on_boxset *p = on_tile_boxes(t, ti);
            CHECK(p != NULL && same_sets(s, p));
            boxes += s->nbox;
            tiles++;
            on_boxset_free(s);
        }
        on_tree_destroy(t);
    }
    printf("boxes: depth %d, %zu random tiles, %zu boxes\n", depth, tiles, boxes);
}

/* Lazy set z (every block built) against eager set s: per block the same boxes in order; each box's
 * neighbours the same set; located points the same boxes. Returns the blocks compared. */
static uint32_t check_lazy(const on_boxset *s, const on_boxlazy *z, uint32_t stride)
{
    uint32_t nb = (uint32_t)s->nb, nblk = nb * nb * nb;
    uint32_t *map = malloc(((size_t)s->nbox + 1) * sizeof *map); /* eager index -> lazy index */
    CHECK(map != NULL);
    CHECK_EQ_INT(z->built, nblk);
    CHECK_EQ_INT(z->set.nbox, s->nbox);
    CHECK(z->set.adj_off == NULL && z->set.adj == NULL); /* no adjacency kept: on_box_touch (boxes.h) */
    for (uint32_t b = 0; b < nblk; b++) {
        uint32_t e0 = s->block_off[b], n = s->block_off[b + 1] - e0;
        CHECK_EQ_INT(on_boxlazy_rec(z, b)->n, n);
        if (on_boxlazy_rec(z, b)->n != n) continue;
        CHECK(memcmp(&s->box[e0], &z->set.box[on_boxlazy_rec(z, b)->first], n * sizeof *s->box) == 0);
        for (uint32_t i = 0; i < n; i++) map[e0 + i] = on_boxlazy_rec(z, b)->first + i;
    }
    uint32_t want[512], got[512];
    for (uint32_t i = 0; i < s->nbox; i += stride) {
        uint32_t na = 0, nl = 0, li = map[i];
        for (uint32_t e = s->adj_off[i]; e < s->adj_off[i + 1] && na < 512; e++) want[na++] = map[s->adj[e]];
        const on_box *x = &z->set.box[li];
        const on_boxblock *own = on_boxlazy_rec(z, on_boxlazy_block_of(z, li)); /* inside its block: on_box_touch */
        for (uint32_t c = own->first; c < own->first + own->n && nl < 512; c++)
            if (c != li && on_box_touch(x, &z->set.box[c])) got[nl++] = c;
        for (int k = 0; k < 3; k++)
            for (int dir = 0; dir < 2; dir++) {
                int edge = dir ? x->mx[k] : x->mn[k], c[3] = {x->mn[0] / 64, x->mn[1] / 64, x->mn[2] / 64};
                if (edge % 64 || edge == 0 || edge == 64 * s->nb) continue;
                c[k] = dir ? edge / 64 : edge / 64 - 1;
                const on_boxblock *kb = on_boxlazy_rec(z, (uint32_t)c[0] + nb * ((uint32_t)c[1] + nb * (uint32_t)c[2]));
                int f = 2 * k + !dir;
                for (uint32_t j = kb->fo[f]; j < kb->fo[f + 1] && nl < 512; j++)
                    if (on_box_overlap2(x, &z->set.box[z->bface[j]], k)) got[nl++] = z->bface[j];
            }
        qsort(want, na, sizeof *want, cmp_u32);
        qsort(got, nl, sizeof *got, cmp_u32);
        CHECK_EQ_INT(nl, na);
        CHECK(nl == na && memcmp(want, got, na * sizeof *want) == 0);
    }
    for (int i = 0; i < 200; i++) { /* points on leaf corners (often on several boxes) */
        double p[3];
        for (int k = 0; k < 3; k++) p[k] = floor(rnd() * (64.0 * s->nb + 1));
        uint32_t a[8], l[8];
        int na = on_boxset_locate_all(s, p, a), nl = on_boxlazy_locate_all((on_boxlazy *)z, p, 0, l);
        for (int j = 0; j < na; j++) a[j] = map[a[j]];
        qsort(a, (size_t)na, sizeof *a, cmp_u32);
        qsort(l, (size_t)nl, sizeof *l, cmp_u32);
        CHECK_EQ_INT(nl, na);
        CHECK(nl == na && memcmp(a, l, (size_t)na * sizeof *a) == 0);
    }
    free(map);
    return nblk;
}

/* Random scenes of depth-7 tiles (8 blocks) built lazily, in a scrambled block order, against the
 * eager build; a block built twice is built once; a block asked for first gives its own boxes only. */
static void test_lazy(int depth, int scenes, int nblocks)
{
    uint32_t blocks = 0, boxes = 0;
    { /* an open tile, then its first 64-cube blocked: whole blocks from a free or blocked ancestor */
        on_tree *t = new_tree(1, 1, depth);
        on_boxlazy z;
        CHECK_EQ_INT(on_boxlazy_init(&z, depth), 0);
        for (int pass = 0; pass < 2; pass++) {
            if (pass) block(t, 0, 0, 0, 64, 64, 64);
            on_boxlazy_clear(&z);
            z.tab = &t->tiles[0].table;
            z.solid = t->tiles[0].solid;
            uint32_t nblk = (uint32_t)(z.set.nb * z.set.nb * z.set.nb);
            for (uint32_t b = 0; b < nblk; b++) CHECK(on_ok(on_boxlazy_block(&z, b)));
            CHECK_EQ_INT(z.set.nbox, nblk - (uint32_t)pass);
            CHECK_EQ_INT(on_boxlazy_rec(&z, 0)->n, pass ? 0 : 1);
            const on_box *x = &z.set.box[on_boxlazy_rec(&z, 1)->first]; /* block (1, 0, 0): one 64-cube */
            CHECK(x->mn[0] == 64 && x->mx[0] == 128 && x->mn[1] == 0 && x->mx[1] == 64 && x->mn[2] == 0 && x->mx[2] == 64);
            CHECK_EQ_INT(on_boxlazy_rec(&z, 1)->n, 1); /* one box a block: no neighbours inside blocks */
            CHECK_EQ_INT(on_boxlazy_rec(&z, 1)->fo[1] - on_boxlazy_rec(&z, 1)->fo[0], 1); /* it touches its block's 6 faces */
            CHECK_EQ_INT(on_boxlazy_rec(&z, 1)->fo[6] - on_boxlazy_rec(&z, 1)->fo[0], 6);
        }
        on_boxlazy_free(&z);
        on_tree_destroy(t);
    }
    for (int sc = 0; sc < scenes; sc++) {
        on_tree *t = new_tree(1, 1, depth);
        double w = t->n;
        for (int i = 0; i < nblocks; i++) {
            double x = rnd() * w, y = rnd() * w, z = rnd() * w;
            double sx = rnd() < 0.3 ? 0.2 : rnd() * w / 4, sy = rnd() * w / 3, sz = rnd() * w / 4;
            block(t, x, y, z, x + sx, y + sy, z + sz);
        }
        on_boxset *s = build(t, 0);
        on_boxlazy z;
        CHECK_EQ_INT(on_boxlazy_init(&z, depth), 0);
        z.tab = &t->tiles[0].table;
        z.solid = t->tiles[0].solid;
        uint32_t nblk = (uint32_t)(z.set.nb * z.set.nb * z.set.nb), last = nblk - 1;
        CHECK(on_ok(on_boxlazy_block(&z, last)));
        CHECK_EQ_INT(z.set.nbox, s->block_off[last + 1] - s->block_off[last]);
        CHECK(on_ok(on_boxlazy_block(&z, last))); /* built: nothing more */
        CHECK_EQ_INT(z.built, 1);
        for (uint32_t i = 0; i < nblk; i++) CHECK(on_ok(on_boxlazy_block(&z, (i * 5u + 3u) % nblk)));
        blocks += check_lazy(s, &z, 1);
        boxes += z.set.nbox;
        on_boxlazy_clear(&z);
        CHECK_EQ_INT(z.built, 0);
        CHECK_EQ_INT(z.set.nbox, 0);
        on_boxlazy_free(&z);
        on_boxset_free(s);
        on_tree_destroy(t);
    }
    printf("boxes: lazy sets of depth %d, %u blocks, %u boxes equal to the eager builds\n", depth, blocks, boxes);
}

/* Is p (x, y, z) within 1e-12 of (x, y, z)? */
static int near3(const double p[3], double x, double y, double z)
{
    return fabs(p[0] - x) < 1e-12 && fabs(p[1] - y) < 1e-12 && fabs(p[2] - z) < 1e-12;
}

/* The entry point over boxes: u = [0,10]^3 and v = [10,20] x [0,10] x [2,6] share the face x = 10,
 * y in [0,10], z in [2,6]; the same from the other side (v to u), and across a y face. */
static void test_entry(void)
{
    const double umn[3] = {0, 0, 0}, umx[3] = {10, 10, 10}, vmn[3] = {10, 0, 2}, vmx[3] = {20, 10, 6};
    void (*entry)(const double *, const double *, const double *, const double *, const double *, const double *,
                  double *) = on_graph_boxes_ops.entry;
    double q[3];
    /* the goal beyond the face: where the segment crosses it (x = 10 halfway) */
    const double a[3] = {2, 1, 3}, far[3] = {18, 7, 5};
    entry(a, umn, umx, vmn, vmx, far, q);
    CHECK(near3(q, 10, 4, 4));
    /* beyond the face's edge along z: clamped onto it */
    const double high[3] = {18, 7, 11};
    entry(a, umn, umx, vmn, vmx, high, q);
    CHECK(near3(q, 10, 4, 6));
    /* the goal on the near side, 4 from the plane where `a` is 8: the mirrored goal (14, 7, 5) is
     * crossed two thirds of the way (the entry before: a's nearest face point, (10, 1, 3)) */
    const double back[3] = {6, 7, 5};
    entry(a, umn, umx, vmn, vmx, back, q);
    CHECK(near3(q, 10, 5, 3 + 4.0 / 3.0));
    /* both on the plane: the point `a` itself, clamped (no crossing) */
    const double on1[3] = {10, 1, 9}, on2[3] = {10, 8, 9};
    entry(on1, umn, umx, vmn, vmx, on2, q);
    CHECK(near3(q, 10, 1, 6));
    /* v to u, the goal beyond x = 10 on u's side */
    const double b[3] = {16, 9, 4}, g[3] = {4, 3, 4};
    entry(b, vmn, vmx, umn, umx, g, q);
    CHECK(near3(q, 10, 6, 4));
    /* a y face: u below, w = [0,4] x [10,12] x [0,10] above; the goal below too, 2 under the plane where
     * `a` is 9: crossed at 9/11 of the way to the mirror image (x 2 -> 2 + 9/11 * 1 = 2.818..., inside) */
    const double wmn[3] = {0, 10, 0}, wmx[3] = {4, 12, 10}, c[3] = {3, 8, 3};
    entry(a, umn, umx, wmn, wmx, c, q);
    CHECK(near3(q, 2 + 9.0 / 11.0, 10, 3));
}

TEST_MAIN("boxes", {
    test_entry();
    test_open_and_solid();
    test_wall();
    test_wall_with_hole();
    test_blocks();
    test_random(5, 20, 40);
    test_random(7, 2, 60);
    test_lazy(7, 4, 80);
    test_lazy(8, 1, 300);
})
