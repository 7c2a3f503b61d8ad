/*
 * test_portals.c -- a tile's portal graph (portals.c) on hand-made and random tiles: components and
 * portals against a flood fill of the leaves, the portal size bound, exact weights on an open tile,
 * a closed room whose only exit is on the far side (its local search joins no near portal), a pocket
 * in solid never joined, weights never below the straight line and close to the 26-connected cell
 * distance, the matrices closed under the triangle inequality, bit-exact round trips, every truncation and bit
 * flip of a blob refused (run under ASan by make check: each attempt reads an exactly sized copy).
 */
#include "octonav.h"
#include "portals.h"
#include "graph_test.h"
#include "minitest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rs = 0x9E3779B97F4A7C15ull;
static double rnd(void) { return gt_rnd(&rs); }
static on_tree *new_tree(int nx, int depth) { return gt_tree(nx, 1, 1, depth); }
#define box gt_box
#define dist gt_dist

static on_boxset *boxes_of(const on_tree *t, uint32_t tile)
{
    on_boxset *s = NULL;
    on_boxset_build(&t->tiles[tile].table, t->tiles[tile].solid, t->p.depth, &s);
    return s;
}


/* The weight of edge a-b, or 0 when none (another component, or a == b). */
static uint32_t edge_w(const on_tgraph *g, uint32_t a, uint32_t b)
{
    if (a == b || g->portal[a].comp != g->portal[b].comp) return 0;
    return on_tgraph_weight(g, a, b);
}

/* Weights per leaf. */
static double unit(const on_tgraph *g) { return ldexp(1.0, g->wshift); }

/* The local search from p to every portal of g (reach.h, the portal points as targets). */
static on_status reach_portals(on_reach *r, const on_boxset *s, const on_tgraph *g, const double p[3], double *cost,
                               uint32_t *reached)
{
    double *pts = malloc((3 * (size_t)g->nportal + 3) * sizeof *pts);
    for (uint32_t i = 0; i < g->nportal; i++) on_portal_point(g, i, pts + 3 * (size_t)i);
    on_status st = on_reach_points(r, s, pts, g->nportal, p, cost, reached);
    free(pts);
    return st;
}

/* ---- an open tile: one portal per face, exact weights ----------------------------------------- */
static void test_open_tile(void)
{
    on_tree *t = new_tree(1, 4);
    on_tgraph *g = NULL;
    CHECK(on_ok(on_tgraph_build_tile(t, 0, NULL, &g)));
    CHECK_EQ_INT(g->bound, 16);
    CHECK_EQ_INT(g->ncomp, 1);
    CHECK_EQ_INT(g->nportal, 6);
    CHECK_EQ_INT(g->nedge, 15);
    CHECK_EQ_INT(g->wshift, 4);
    for (uint32_t p = 0; p < 6; p++) {
        CHECK_EQ_INT(g->portal[p].face, p);
        const on_prect *r = &g->rect[g->portal[p].rect];
        CHECK_EQ_INT(g->portal[p].nrect, 1);
        CHECK(r->mn[0] == 0 && r->mx[0] == 16 && r->mn[1] == 0 && r->mx[1] == 16);
    }
    /* one box: every weight is the straight line, rounded up to 1/16 */
    CHECK_EQ_INT(edge_w(g, 0, 1), 256);
    CHECK_EQ_INT(edge_w(g, 0, 2), (long long)ceil(16 * sqrt(128.0)));
    CHECK_EQ_INT(edge_w(g, 3, 5), (long long)ceil(16 * sqrt(128.0)));
    on_tgraph_free(g);
    /* a smaller bound: 4 x 4 portals of 4 x 4 leaves per face */
    on_tgraph_opts o = {.bound = 4, .tag = 77};
    CHECK(on_ok(on_tgraph_build_tile(t, 0, &o, &g)));
    CHECK_EQ_INT(g->nportal, 6 * 16);
    CHECK_EQ_INT(g->tag, 77);
    on_tgraph_free(g);
    /* a solid tile: nothing */
    box(t, -1, -1, -1, 17, 17, 17);
    CHECK(on_ok(on_tgraph_build_tile(t, 0, NULL, &g)));
    CHECK_EQ_INT(g->nportal, 0);
    CHECK_EQ_INT(g->ncomp, 0);
    on_tgraph_free(g);
    on_tree_destroy(t);
}

/* ---- a closed room whose only exit is on the far side; a pocket in solid ------------------------ */
static void test_room(void)
{
    on_tree *t = new_tree(1, 4);
    gt_closed_room(t); /* its hole on +x at y, z in [3,5), the corridor on to the +x face */
    gt_shell(t, 10, 10, 10, 12, 12, 12); /* a pocket [10,12)^3 inside a solid shell [9,13)^3 */
    on_boxset *s = boxes_of(t, 0);
    on_tgraph *g = NULL;
    CHECK(on_ok(on_tgraph_build(s, 4, NULL, &g)));
    CHECK_EQ_INT(g->ncomp, 2); /* outside, room + corridor (the pocket has no portal: not kept) */
    /* the room's only portal: the corridor's end on +x */
    int64_t exit_p = -1;
    uint32_t nroom = 0;
    double start[3] = {1.5, 4, 4}, pocket[3] = {11, 11, 11};
    on_reach r;
    memset(&r, 0, sizeof r);
    double *cost = malloc(g->nportal * sizeof *cost);
    uint32_t reached = 0;
    CHECK(on_ok(reach_portals(&r, s, g, start, cost, &reached)));
    CHECK_EQ_INT(reached, 1);
    for (uint32_t p = 0; p < g->nportal; p++) {
        const on_portal *q = &g->portal[p];
        const on_prect *x = &g->rect[q->rect];
        if (q->face == 1 && q->nrect == 1 && x->mn[0] == 3 && x->mn[1] == 3 && x->mx[0] == 5 && x->mx[1] == 5)
            exit_p = p;
        if (cost[p] < HUGE_VAL) nroom++;
    }
    CHECK(exit_p >= 0);
    CHECK_EQ_INT(nroom, 1);
    if (exit_p >= 0) {
        CHECK(fabs(cost[exit_p] - 14.5) < 1e-9); /* straight through the hole and the corridor */
        for (uint32_t p = 0; p < g->nportal; p++)
            if (p != (uint32_t)exit_p) CHECK(g->portal[p].comp != g->portal[exit_p].comp);
    }
    /* the nearest portal by straight line is on -x and not reached */
    double best = HUGE_VAL;
    uint32_t nearest = 0;
    for (uint32_t p = 0; p < g->nportal; p++) {
        double x[3];
        on_portal_point(g, p, x);
        if (dist(x, start) < best) best = dist(x, start), nearest = p;
    }
    CHECK(g->portal[nearest].face == 0);
    CHECK(cost[nearest] == HUGE_VAL);
    /* the pocket reaches nothing and no portal is of its component */
    CHECK(on_ok(reach_portals(&r, s, g, pocket, cost, &reached)));
    CHECK_EQ_INT(reached, 0);
    /* a point in a wall */
    double wall[3] = {0.5, 4, 4};
    CHECK_EQ_INT(reach_portals(&r, s, g, wall, cost, &reached), ON_FAILURE | ON_BLOCKED);
    free(cost);
    on_reach_free(&r);
    on_tgraph_free(g);
    on_boxset_free(s);
    on_tree_destroy(t);
}

/* ---- random tiles against a flood fill of the leaves --------------------------------------------- */

/* Leaf components of tile 0 (6-connected): label per leaf (0 blocked). */
static int flood(const on_tree *t, int n, int *lab)
{
    int nl = 0, *stack = malloc((size_t)n * n * n * sizeof *stack);
    for (int i = 0; i < n * n * n; i++) lab[i] = -1;
    for (int i = 0; i < n * n * n; i++) {
        if (lab[i] >= 0) continue;
        int x = i % n, y = (i / n) % n, z = i / (n * n);
        if (!on_tree_leaf_free(t, x, y, z, NULL)) {
            lab[i] = 0;
            continue;
        }
        nl++;
        int sp = 0;
        stack[sp++] = i;
        lab[i] = nl;
        while (sp) {
            int c = stack[--sp], cx = c % n, cy = (c / n) % n, cz = c / (n * n);
            static const int d[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
            for (int k = 0; k < 6; k++) {
                int ax = cx + d[k][0], ay = cy + d[k][1], az = cz + d[k][2];
                if (ax < 0 || ay < 0 || az < 0 || ax >= n || ay >= n || az >= n) continue;
                int j = ax + n * (ay + n * az);
                if (lab[j] >= 0) continue;
                if (!on_tree_leaf_free(t, ax, ay, az, NULL)) {
                    lab[j] = 0;
                    continue;
                }
                lab[j] = nl;
                stack[sp++] = j;
            }
        }
    }
    free(stack);
    return nl;
}

/* The leaf just inside the tile under a portal's crossing point. */
static int portal_leaf(const on_tgraph *g, uint32_t p, int n)
{
    double x[3];
    on_portal_point(g, p, x);
    int c[3];
    for (int k = 0; k < 3; k++) {
        c[k] = (int)floor(x[k]);
        if (c[k] >= n) c[k] = n - 1;
    }
    /* on an even-sized rectangle the centre is a lattice point: take the leaf below-left (in the rect) */
    const on_portal *q = &g->portal[p];
    const on_prect *r = &g->rect[q->rect];
    int k = q->face >> 1, u = (k + 1) % 3, v = (k + 2) % 3;
    if (c[u] >= r->mx[0]) c[u] = r->mx[0] - 1;
    if (c[v] >= r->mx[1]) c[v] = r->mx[1] - 1;
    return c[0] + n * (c[1] + n * c[2]);
}

static void test_random_tiles(void)
{
    const int n = 16;
    int *lab = malloc((size_t)n * n * n * sizeof *lab);
    double *d = malloc((size_t)n * n * n * sizeof *d);
    double worst = 0, sum = 0;
    int nrect_total = 0, nratio = 0, over = 0, bad_tri = 0, bad_fresh = 0, ntri = 0, bad_bound = 0, bad_cover = 0, bad_comp = 0, bad_w = 0, bad_conn = 0;
    for (int trial = 0; trial < 24; trial++) {
        on_tree *t = new_tree(1, 4);
        int nb = 4 + trial % 12;
        for (int i = 0; i < nb; i++) {
            double a[3], b[3];
            for (int k = 0; k < 3; k++) {
                a[k] = floor(rnd() * n);
                b[k] = a[k] + 1 + floor(rnd() * (trial % 2 ? 12 : 5));
            }
            box(t, a[0], a[1], a[2], b[0], b[1], b[2]);
        }
        on_tgraph_opts o = {.bound = trial % 3 == 0 ? 4 : 0};
        on_tgraph *g = NULL;
        CHECK(on_ok(on_tgraph_build_tile(t, 0, &o, &g)));
        if (!g) continue;
        int S = g->bound;
        CHECK_EQ_INT(S, trial % 3 == 0 ? 4 : 16);
        flood(t, n, lab);
        gt_lattice L = gt_lattice_of(t); /* one tile: its leaves, indexed as lab */
        /* portals: inside one S-square, disjoint, covering the free face leaves exactly */
        for (int f = 0; f < 6; f++) {
            int k = f >> 1, u = (k + 1) % 3, v = (k + 2) % 3;
            int *cover = calloc((size_t)n * n, sizeof *cover);
            for (uint32_t p = 0; p < g->nportal; p++) {
                const on_portal *q = &g->portal[p];
                if (q->face != f) continue;
                const on_prect *r0 = &g->rect[q->rect];
                for (uint32_t i = 0; i < q->nrect; i++) {
                    const on_prect *r = &g->rect[q->rect + i];
                    if (r->mn[0] / S != r0->mn[0] / S || r->mn[1] / S != r0->mn[1] / S ||
                        r->mn[0] / S != (r->mx[0] - 1) / S || r->mn[1] / S != (r->mx[1] - 1) / S)
                        bad_bound++;
                    if (i > 0 && (r->mx[0] - r->mn[0]) * (r->mx[1] - r->mn[1]) >
                                     (r0->mx[0] - r0->mn[0]) * (r0->mx[1] - r0->mn[1]))
                        bad_bound++; /* the largest first */
                    for (int b = r->mn[1]; b < r->mx[1]; b++)
                        for (int a = r->mn[0]; a < r->mx[0]; a++) cover[a + n * b]++;
                }
                nrect_total += q->nrect;
            }
            for (int b = 0; b < n; b++)
                for (int a = 0; a < n; a++) {
                    int c[3];
                    c[k] = (f & 1) ? n - 1 : 0;
                    c[u] = a;
                    c[v] = b;
                    int fr = lab[c[0] + n * (c[1] + n * c[2])] > 0;
                    if (cover[a + n * b] != fr) bad_cover++;
                }
            free(cover);
        }
        /* same component iff the same leaf component; edges only inside a component, never below the
         * straight line; every component's portals connected by the edges */
        for (uint32_t a = 0; a < g->nportal; a++) {
            int la = lab[portal_leaf(g, a, n)];
            double xa[3];
            on_portal_point(g, a, xa);
            int src = portal_leaf(g, a, n), s3[3] = {src % n, (src / n) % n, src / (n * n)};
            gt_dijkstra(&L, s3, d);
            /* connectivity over the edges from a */
            char *seen = calloc(g->nportal, 1);
            uint32_t *st = malloc(g->nportal * sizeof *st), sp = 0;
            seen[a] = 1;
            st[sp++] = a;
            while (sp) {
                uint32_t c = st[--sp];
                for (uint32_t e = 0; e < g->nportal; e++)
                    if (!seen[e] && edge_w(g, c, e)) {
                        seen[e] = 1;
                        st[sp++] = e;
                    }
            }
            for (uint32_t b = 0; b < g->nportal; b++) {
                int lb = lab[portal_leaf(g, b, n)];
                if ((lb == la) != (g->portal[a].comp == g->portal[b].comp)) bad_comp++;
                if ((lb == la) != (seen[b] != 0)) bad_conn++;
                uint32_t w = edge_w(g, a, b);
                if (!w) continue;
                double xb[3];
                on_portal_point(g, b, xb);
                if (w < dist(xa, xb) * unit(g) - 1e-6 || lb != la) bad_w++;
                /* against the cell path between the leaves under the points (+1 for the half leaves at
                 * both ends) */
                double ref = d[portal_leaf(g, b, n)] + 1;
                double ratio = (w / unit(g)) / ref;
                if (ratio > worst) worst = ratio;
                if (w / unit(g) > 1.35 * ref + 2) over++;
                sum += ratio;
                nratio++;
            }
            free(seen);
            free(st);
        }
        /* the matrices: never above a fresh search's free path (rounded up), and closed under the
         * triangle inequality (up to the rounding of the two terms) */
        on_boxset *s = boxes_of(t, 0);
        on_reach r;
        memset(&r, 0, sizeof r);
        double *cost = malloc((g->nportal + 1) * sizeof *cost);
        for (uint32_t a = 0; a < g->nportal; a++) {
            double xa[3];
            uint32_t reached;
            on_portal_point(g, a, xa);
            reach_portals(&r, s, g, xa, cost, &reached);
            for (uint32_t b = a + 1; b < g->nportal; b++) {
                if (!edge_w(g, a, b)) continue;
                if (edge_w(g, a, b) > ceil(cost[b] * unit(g)) + 1) bad_fresh++;
                for (uint32_t c = 0; c < g->nportal; c++) {
                    if (c == a || c == b || !edge_w(g, a, c)) continue;
                    ntri++;
                    if (edge_w(g, a, b) > edge_w(g, a, c) + edge_w(g, c, b) + 1) bad_tri++;
                }
            }
        }
        free(cost);
        on_reach_free(&r);
        on_boxset_free(s);
        on_tgraph_free(g);
        free(L.free);
        on_tree_destroy(t);
    }
    CHECK(nrect_total > 0);
    CHECK_EQ_INT(bad_tri, 0);
    CHECK_EQ_INT(bad_fresh, 0);
    CHECK(ntri > 1000);
    CHECK_EQ_INT(bad_bound, 0);
    CHECK_EQ_INT(bad_cover, 0);
    CHECK_EQ_INT(bad_comp, 0);
    CHECK_EQ_INT(bad_conn, 0);
    CHECK_EQ_INT(bad_w, 0);
    CHECK(nratio > 100);
    /* an edge's free path is close to the 26-connected cell path (never far above it) */
    printf("portals: edge weight / (26-connected cell path + 1): mean %.3f max %.3f over %d edges\n",
           sum / nratio, worst, nratio);
    CHECK_EQ_INT(over, 0); /* w <= 1.35 x cells + 2 leaves (the bound portals.h states) */
    CHECK(sum / nratio < 1.0); /* and on average below the cell path: close to the any-angle length */
    free(lab);
    free(d);
}

/* ---- the binary form ------------------------------------------------------------------------------ */

static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* Decode from an exactly sized heap copy (ASan sees any read past it). */
static on_status decode_copy(const uint8_t *b, size_t len, int depth, on_tgraph **out)
{
    uint8_t *c = malloc(len ? len : 1);
    memcpy(c, b, len);
    on_status st = on_tgraph_decode(c, len, depth, out);
    free(c);
    return st;
}

static void test_binary(void)
{
    on_tree *t = new_tree(1, 5);
    for (int i = 0; i < 30; i++) {
        double a[3] = {floor(rnd() * 32), floor(rnd() * 32), floor(rnd() * 32)};
        box(t, a[0], a[1], a[2], a[0] + 1 + floor(rnd() * 8), a[1] + 1 + floor(rnd() * 8), a[2] + 1 + floor(rnd() * 8));
    }
    on_tgraph_opts o = {.tag = 0xdeadbeefu};
    on_tgraph *g = NULL, *h = NULL;
    CHECK(on_ok(on_tgraph_build_tile(t, 0, &o, &g)));
    size_t len = 0, len2 = 0;
    CHECK_EQ_INT(on_tgraph_encode(g, NULL, 0, &len), ON_FAILURE | ON_BUFFER_SMALL);
    CHECK(len > 20);
    uint8_t *buf = malloc(len), *buf2 = malloc(len);
    CHECK_EQ_INT(on_tgraph_encode(g, buf, len - 1, &len2), ON_FAILURE | ON_BUFFER_SMALL);
    CHECK(on_ok(on_tgraph_encode(g, buf, len, &len2)));
    CHECK_EQ_INT(len2, len);
    CHECK(memcmp(buf, "ONTG", 4) == 0);
    printf("portals: a random 32^3 tile: %u portals, %u edges, %u components, %zu bytes encoded, %zu in memory\n",
           g->nportal, g->nedge, g->ncomp, len, g->bytes);
    /* round trip: same graph, same bytes */
    CHECK(on_ok(decode_copy(buf, len, 5, &h)));
    if (h) {
        CHECK(h->nportal == g->nportal && h->nedge == g->nedge && h->ncomp == g->ncomp && h->tag == g->tag &&
              h->bound == g->bound && h->depth == g->depth);
        int same = h->nrect == g->nrect;
        for (uint32_t p = 0; p < g->nportal; p++) {
            const on_portal *x = &g->portal[p], *y = &h->portal[p];
            same &= x->face == y->face && x->comp == y->comp && x->rect == y->rect && x->nrect == y->nrect;
        }
        CHECK(same);
        CHECK(memcmp(h->rect, g->rect, g->nrect * sizeof *g->rect) == 0);
        CHECK(memcmp(h->comp_first, g->comp_first, (g->ncomp + 1) * sizeof *g->comp_first) == 0);
        CHECK(memcmp(h->comp_w, g->comp_w, (g->ncomp + 1) * sizeof *g->comp_w) == 0);
        CHECK(memcmp(h->w, g->w, g->nedge * sizeof *g->w) == 0);
        CHECK(h->wshift == g->wshift && h->crc == g->crc && h->npair == g->npair);
        CHECK(on_ok(on_tgraph_encode(h, buf2, len, &len2)));
        CHECK(len2 == len && memcmp(buf, buf2, len) == 0);
        on_tgraph_free(h);
    }
    /* the portals alone (what linking needs): the same portals and identity, no weights */
    CHECK(on_ok(on_tgraph_build_tile_portals(t, 0, 0, &h)));
    if (h) {
        CHECK(h->crc == g->crc && h->nportal == g->nportal && h->nrect == g->nrect && h->npair == 0);
        CHECK(memcmp(h->rect, g->rect, g->nrect * sizeof *g->rect) == 0);
        on_tgraph_free(h);
    }
    /* another tag: other bytes, the same portals' identity */
    on_tgraph_opts o2 = {.tag = 5};
    CHECK(on_ok(on_tgraph_build_tile(t, 0, &o2, &h)));
    if (h) {
        CHECK(h->crc == g->crc);
        on_tgraph_free(h);
    }
    /* the same graph from the decoded tile table (a bake job) */
    CHECK(on_ok(on_tgraph_build_table(&t->tiles[0].table, t->tiles[0].solid, 5, &o, &h)));
    if (h) {
        CHECK(on_ok(on_tgraph_encode(h, buf2, len, &len2)));
        CHECK(len2 == len && memcmp(buf, buf2, len) == 0);
        on_tgraph_free(h);
    }
    /* every truncation */
    int bad = 0;
    for (size_t l = 0; l < len; l++) {
        h = NULL;
        on_status st = decode_copy(buf, l, 5, &h);
        if (st != (ON_FAILURE | ON_CORRUPT) || h) bad++;
        on_tgraph_free(h);
    }
    CHECK_EQ_INT(bad, 0);
    /* every bit flip */
    bad = 0;
    for (size_t i = 0; i < len; i++)
        for (int b = 0; b < 8; b++) {
            buf[i] ^= (uint8_t)(1u << b);
            h = NULL;
            on_status st = decode_copy(buf, len, 5, &h);
            if (!on_failed(st) || h) bad++;
            buf[i] ^= (uint8_t)(1u << b);
        }
    CHECK_EQ_INT(bad, 0);
    /* hostile content with a valid checksum: refused by the field checks */
    size_t at = 12; /* the varints: portals, components, rectangles; then the first face */
    size_t at_np = at;
    for (int i = 0; i < 3; i++)
        while (buf[at++] & 0x80) {
        }
    size_t at_ncomp = at_np + 1 + (buf[at_np] & 0x80 ? 1 : 0);
    memcpy(buf2, buf, len);
    buf2[at] = 7; /* the first portal's face */
    wr32(buf2 + len - 4, on_crc32(0, buf2, len - 4));
    CHECK_EQ_INT(decode_copy(buf2, len, 5, &h), ON_FAILURE | ON_CORRUPT);
    memcpy(buf2, buf, len);
    CHECK_EQ_INT(g->npair, 15); /* 15 weights of one byte or two after the wshift byte */
    size_t at_w = len - 4;
    for (int i = 0; i < 15; i++) at_w -= buf[at_w - 2] & 0x80 ? 2 : 1;
    at_w--;
    CHECK_EQ_INT(buf[at_w], 20);
    buf2[at_w] = 40; /* wshift 24: finer than 1/16 leaf */
    wr32(buf2 + len - 4, on_crc32(0, buf2, len - 4));
    CHECK_EQ_INT(decode_copy(buf2, len, 5, &h), ON_FAILURE | ON_CORRUPT);
    memcpy(buf2, buf, len);
    buf2[at_np] ^= 1; /* portal count */
    wr32(buf2 + len - 4, on_crc32(0, buf2, len - 4));
    CHECK_EQ_INT(decode_copy(buf2, len, 5, &h), ON_FAILURE | ON_CORRUPT);
    memcpy(buf2, buf, len);
    buf2[at_ncomp] ^= 1; /* component count */
    wr32(buf2 + len - 4, on_crc32(0, buf2, len - 4));
    CHECK_EQ_INT(decode_copy(buf2, len, 5, &h), ON_FAILURE | ON_CORRUPT);
    memcpy(buf2, buf, len);
    buf2[4] = 1; /* version 1, the format before the weight matrices */
    wr32(buf2 + len - 4, on_crc32(0, buf2, len - 4));
    CHECK_EQ_INT(decode_copy(buf2, len, 5, &h), ON_FAILURE | ON_VERSION);
    CHECK_EQ_INT(decode_copy(buf, len, 6, &h), ON_FAILURE | ON_INVALID); /* built for other tiles */
    /* a weight below the straight line: the first one set to 1, encoded with a valid CRC */
    CHECK(g->nedge > 0);
    if (g->nedge > 0) {
        uint16_t keep = g->w[0];
        g->w[0] = 1;
        size_t l3;
        on_tgraph_encode(g, NULL, 0, &l3);
        uint8_t *b3 = malloc(l3);
        CHECK(on_ok(on_tgraph_encode(g, b3, l3, &l3)));
        CHECK_EQ_INT(decode_copy(b3, l3, 5, &h), ON_FAILURE | ON_CORRUPT);
        free(b3);
        g->w[0] = keep;
    }
    free(buf);
    free(buf2);
    on_tgraph_free(g);
    on_tree_destroy(t);
}

/* ---- the stretch: a greedy spanner of each component's matrix ----------------------------------- */
static void test_stretch(void)
{
    int kept = 0, all = 0, bad = 0;
    for (int trial = 0; trial < 8; trial++) {
        on_tree *t = new_tree(1, 5);
        for (int i = 0; i < 20; i++) {
            double a[3] = {floor(rnd() * 32), floor(rnd() * 32), floor(rnd() * 32)};
            box(t, a[0], a[1], a[2], a[0] + 1 + floor(rnd() * 10), a[1] + 1 + floor(rnd() * 10), a[2] + 1 + floor(rnd() * 10));
        }
        on_tgraph_opts o1 = {.bound = 8}, o2 = {.bound = 8, .stretch = 1.5};
        on_tgraph *g1 = NULL, *g2 = NULL;
        CHECK(on_ok(on_tgraph_build_tile(t, 0, &o1, &g1)));
        CHECK(on_ok(on_tgraph_build_tile(t, 0, &o2, &g2)));
        if (!g1 || !g2) continue;
        CHECK(g1->crc == g2->crc && g1->npair == g2->npair && g1->nedge == g1->npair);
        kept += g2->nedge;
        all += g1->nedge;
        /* every pair joined over the kept edges within 1.5 x its full weight */
        uint32_t np = g1->nportal;
        uint64_t *d = malloc((np + 1) * sizeof *d);
        char *done = malloc(np + 1);
        for (uint32_t a = 0; a < np; a++) {
            for (uint32_t b = 0; b < np; b++) d[b] = UINT64_MAX, done[b] = 0;
            d[a] = 0;
            for (;;) {
                int64_t c = -1;
                for (uint32_t b = 0; b < np; b++)
                    if (!done[b] && d[b] != UINT64_MAX && (c < 0 || d[b] < d[c])) c = b;
                if (c < 0) break;
                done[c] = 1;
                for (uint32_t b = 0; b < np; b++) {
                    uint32_t w = edge_w(g2, (uint32_t)c, b);
                    if (w && d[c] + w < d[b]) d[b] = d[c] + w;
                }
            }
            for (uint32_t b = a + 1; b < np; b++)
                if (edge_w(g1, a, b) && (double)d[b] > floor(1.5 * edge_w(g1, a, b))) bad++;
        }
        free(d);
        free(done);
        on_tgraph_free(g1);
        on_tgraph_free(g2);
        on_tree_destroy(t);
    }
    printf("portals: stretch 1.5 keeps %d of %d edges\n", kept, all);
    CHECK_EQ_INT(bad, 0);
    CHECK(kept < all && all > 500);
}

TEST_MAIN("portals", {
    test_stretch();
    test_open_tile();
    test_room();
    test_random_tiles();
    test_binary();
})
