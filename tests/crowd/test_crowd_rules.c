/*
 * test_crowd_rules.c -- the crowd's rules of the road (csrc/crowd/rules.c), read from the agent
 * records: an agent walking a path its own search found counts its progress from that path (a
 * free walk never looks held up); each agent decides from the frame's snapshot of its neighbours
 * (a neighbour's record changed during the frame changes nothing). And the local boundary
 * (csrc/crowd/boundary.c) against the code it replaced, kept here as the reference: the boxes read
 * and the half-spaces made from them equal bit for bit on random scenes (ties in distance, more
 * candidates than the 128 kept, points inside boxes, points away from where the boxes were read).
 */
#include "minitest.h"
#include "octonav.h"
#include "crowd.h"
#include "tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static on_tree *open_tree(int depth)
{
    on_tree_params p = {{1, 1, 1}, depth, 1.0, {0, 0, 0}, 0};
    on_tree *t = NULL;
    CHECK(on_ok(on_tree_create(&p, &t)));
    return t;
}

/* An agent sent by set_goal (its path searched for by the crowd) walks freely: its frames without
 * progress stay 0 all the way (before, its least distance left started at 0 and never shrank, so
 * after 20 frames every walking agent counted as held up, and the deadlock rules took any meeting
 * between walls for a deadlock at once). */
static void test_progress_of_a_planned_walk(void)
{
    on_tree *t = open_tree(5);
    on_crowd_params p = {.max_agents = 2};
    on_crowd *c = NULL;
    CHECK(on_ok(on_crowd_create(t, &p, &c)));
    on_crowd_agent_params ap = {0.5, 4.0, 8.0, 3.0, 0};
    double a[3] = {3, 16, 16}, g[3] = {29, 16, 16};
    uint32_t id;
    CHECK(on_ok(on_crowd_add(c, a, &ap, &id)));
    CHECK(on_ok(on_crowd_set_goal(c, id, g)));
    int moving = 0, worst = 0;
    for (int f = 0; f < 150; f++) {
        CHECK(on_ok(on_crowd_update(c, 1.0 / 30)));
        const on_agent *ag = on_crowd_find(c, id, NULL);
        if (ag->state != ON_CROWD_MOVING) continue;
        moving++;
        /* a tenth of a leaf within a few frames, even from rest (8 leaves/s^2): never more than a few */
        if (ag->still > worst) worst = ag->still;
    }
    CHECK(moving > 100);
    CHECK(worst <= 6);
    if (worst > 6) fprintf(stderr, "frames without progress reached %d on a free walk\n", worst);
    on_crowd_destroy(c);
    on_tree_destroy(t);
}

/* Two agents meeting head on along x in a tunnel: the frame after the snapshot, the one heading -x
 * (without the way) backs out of the tunnel while the other is ahead within reach; changing the other's live
 * record (its backing-off counter, its preferred velocity) after the snapshot changes nothing of
 * what the first decides: the rules read the snapshot alone. */
static void test_snapshot_and_hold(void)
{
    on_tree *t = open_tree(6);
    /* a tunnel along x: y, z in [29, 35) open through a wall x in [24, 40) */
    double w[4][6] = {
        {24, 0, 0, 40, 29, 64}, {24, 35, 0, 40, 64, 64}, {24, 29, 0, 40, 35, 29}, {24, 29, 35, 40, 35, 64}};
    for (int i = 0; i < 4; i++) on_tree_add_box(t, w[i], w[i] + 3);
    on_crowd_params p = {.max_agents = 2};
    on_crowd *c = NULL;
    CHECK(on_ok(on_crowd_create(t, &p, &c)));
    on_crowd_agent_params ap = {1.0, 4.0, 8.0, 3.0, 0};
    double a[3] = {27, 32, 32}, b[3] = {35, 32, 32};
    uint32_t ia, ib;
    CHECK(on_ok(on_crowd_add(c, a, &ap, &ia)));
    CHECK(on_ok(on_crowd_add(c, b, &ap, &ib)));
    double pa[3] = {60, 32, 32}, pb[3] = {4, 32, 32};
    CHECK(on_ok(on_crowd_set_path(c, ia, pa, 1)));
    CHECK(on_ok(on_crowd_set_path(c, ib, pb, 1)));
    /* two frames: the first counts the walls near each (read by the rules from the frame before) */
    CHECK(on_ok(on_crowd_update(c, 1.0 / 30)));
    CHECK(on_ok(on_crowd_update(c, 1.0 / 30)));
    on_crowd_agent_state sa, sb;
    on_crowd_agent_get(c, ia, &sa);
    on_crowd_agent_get(c, ib, &sb);
    CHECK(sa.pref[0] > 3.9); /* +x has the way: it goes on */
    CHECK(sb.walls > 0);
    if (!(sb.pref[0] > 1.99)) fprintf(stderr, "b's pref %g %g %g\n", sb.pref[0], sb.pref[1], sb.pref[2]);
    /* -x backs out of the passage (+x) at half its top speed */
    CHECK(sb.pref[0] > 1.99 && sb.pref[0] < 2.01 && fabs(sb.pref[1]) < 0.01 && fabs(sb.pref[2]) < 0.01);
    /* the rules again for b, with a's live record changed: the same answer (a's snapshot is read) */
    uint32_t slot_a, slot_b;
    on_agent *ra = on_crowd_find(c, ia, &slot_a), *rb = on_crowd_find(c, ib, &slot_b);
    on_agent keep_b = *rb;
    on_v3 first = on_rules_pref(c, rb, slot_b);
    *rb = keep_b;
    ra->yield = 50;
    ra->pref = v3(-4, 0, 0);
    ra->still = 100;
    on_v3 again = on_rules_pref(c, rb, slot_b);
    CHECK(memcmp(&first, &again, sizeof first) == 0);
    on_crowd_destroy(c);
    on_tree_destroy(t);
}


/* ---- the reference: boundary.c's read and half-spaces as they were (session 25) ---- */

typedef struct refwalk {
    double *b;
    size_t n, cap;
    double lo[3], hi[3];
    const on_tree *t;
} refwalk;

static void ref_emit(refwalk *w, const double nlo[3], const double nhi[3])
{
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 64;
        w->b = realloc(w->b, w->cap * 6 * sizeof *w->b);
        if (!w->b) abort();
    }
    double *b = w->b + 6 * w->n++, s = w->t->p.scale;
    for (int i = 0; i < 3; i++) {
        b[i] = w->t->p.origin[i] + nlo[i] * s;
        b[3 + i] = w->t->p.origin[i] + nhi[i] * s;
    }
}

static int ref_meets(const refwalk *w, const double lo[3], double size)
{
    for (int i = 0; i < 3; i++)
        if (lo[i] > w->hi[i] || lo[i] + size < w->lo[i]) return 0;
    return 1;
}

static void ref_walk(refwalk *w, uint32_t ti, const double base[3], uint32_t code, int v)
{
    const on_table *tab = &w->t->tiles[ti].table;
    for (unsigned i = 0; i < 8; i++) {
        uint32_t cc = on_code_child(code, i);
        double size = (double)on_code_size(cc);
        double lo[3] = {base[0] + on_code_x(cc), base[1] + on_code_y(cc), base[2] + on_code_z(cc)};
        if (!ref_meets(w, lo, size)) continue;
        if (v & (1 << i)) {
            double hi[3] = {lo[0] + size, lo[1] + size, lo[2] + size};
            ref_emit(w, lo, hi);
            continue;
        }
        if (on_code_layer(cc) == 0) continue;
        int cv = on_table_get(tab, cc);
        if (cv >= 0) ref_walk(w, ti, base, cc, cv);
    }
}

static void ref_read(const on_tree *t, const double p[3], double reach, refwalk *w)
{
    double np[3];
    w->n = 0;
    w->t = t;
    on_to_nav(t, p, np);
    double nr = reach * t->inv_scale;
    for (int i = 0; i < 3; i++) w->lo[i] = np[i] - nr, w->hi[i] = np[i] + nr;
    for (int ax = 0; ax < 3; ax++) {
        double ext = (double)t->p.tiles[ax] * t->n, lo[3], hi[3];
        memcpy(lo, w->lo, sizeof lo);
        memcpy(hi, w->hi, sizeof hi);
        if (w->lo[ax] < 0) {
            lo[ax] = w->lo[ax] - 1, hi[ax] = 0;
            ref_emit(w, lo, hi);
        }
        memcpy(lo, w->lo, sizeof lo);
        memcpy(hi, w->hi, sizeof hi);
        if (w->hi[ax] > ext) {
            lo[ax] = ext, hi[ax] = w->hi[ax] + 1;
            ref_emit(w, lo, hi);
        }
    }
    int ta[3], tb[3];
    if (!on_tree_tile_range(t, w->lo, w->hi, ta, tb)) return;
    for (int k = ta[2]; k <= tb[2]; k++)
        for (int j = ta[1]; j <= tb[1]; j++)
            for (int i = ta[0]; i <= tb[0]; i++) {
                uint32_t ti = on_tile_index(t, i, j, k);
                const on_tile *tl = &t->tiles[ti];
                double base[3] = {(double)i * t->n, (double)j * t->n, (double)k * t->n};
                if (!ref_meets(w, base, t->n)) continue;
                if (!tl->loaded || tl->solid) {
                    double hi[3] = {base[0] + t->n, base[1] + t->n, base[2] + t->n};
                    ref_emit(w, base, hi);
                    continue;
                }
                uint32_t root = on_root_code(t);
                int v = on_table_get(&tl->table, root);
                if (v >= 0) ref_walk(w, ti, base, root, v);
            }
}

static int ref_cands_full, ref_ties; /* how often the reference met more than 128 candidates, and ties */

static int ref_planes(const double *boxes, size_t nboxes, on_v3 p, double within, on_v3 *q, on_v3 *n, double *d,
                      int cap)
{
    int m = 0;
    enum { CAND = 4 * ON_CROWD_MAX_WALLS };
    double cd[CAND];
    uint32_t ci[CAND];
    for (size_t b = 0; b < nboxes; b++) {
        const double *bx = boxes + 6 * b;
        double dx = p.x < bx[0] ? bx[0] - p.x : p.x > bx[3] ? p.x - bx[3] : 0;
        if (dx > within) continue;
        double dy = p.y < bx[1] ? bx[1] - p.y : p.y > bx[4] ? p.y - bx[4] : 0;
        if (dy > within) continue;
        double dz = p.z < bx[2] ? bx[2] - p.z : p.z > bx[5] ? p.z - bx[5] : 0;
        double dist2 = dx * dx + dy * dy + dz * dz;
        if (dist2 > within * within) continue;
        if (m == CAND) ref_cands_full++;
        if (m == CAND && dist2 >= cd[m - 1]) continue;
        int k = m < CAND ? m++ : m - 1;
        while (k > 0 && cd[k - 1] > dist2) {
            cd[k] = cd[k - 1], ci[k] = ci[k - 1];
            k--;
        }
        if (k > 0 && cd[k - 1] == dist2) ref_ties++;
        cd[k] = dist2, ci[k] = (uint32_t)b;
    }
    int out = 0;
    for (int c = 0; c < m && out < cap; c++) {
        const double *bx = boxes + 6 * ci[c];
        on_v3 nq = v3(p.x < bx[0] ? bx[0] : p.x > bx[3] ? bx[3] : p.x, p.y < bx[1] ? bx[1] : p.y > bx[4] ? bx[4] : p.y,
                      p.z < bx[2] ? bx[2] : p.z > bx[5] ? bx[5] : p.z);
        on_v3 nn;
        double dist = sqrt(cd[c]);
        if (dist > 0) nn = v3_scale(v3_sub(p, nq), 1.0 / dist);
        else {
            double best = INFINITY;
            int ax = 0, side = 0;
            double pc[3] = {p.x, p.y, p.z};
            for (int i = 0; i < 3; i++) {
                if (pc[i] - bx[i] < best) best = pc[i] - bx[i], ax = i, side = 0;
                if (bx[3 + i] - pc[i] < best) best = bx[3 + i] - pc[i], ax = i, side = 1;
            }
            double e[3] = {0, 0, 0}, f[3] = {pc[0], pc[1], pc[2]};
            e[ax] = side ? 1 : -1;
            f[ax] = side ? bx[3 + ax] : bx[ax];
            nn = v3(e[0], e[1], e[2]);
            nq = v3(f[0], f[1], f[2]);
            dist = -best;
        }
        int behind = 0;
        for (int k = 0; k < out && !behind; k++) {
            double s = 0;
            s += n[k].x * ((n[k].x > 0 ? bx[3] : bx[0]) - q[k].x);
            s += n[k].y * ((n[k].y > 0 ? bx[4] : bx[1]) - q[k].y);
            s += n[k].z * ((n[k].z > 0 ? bx[5] : bx[2]) - q[k].z);
            if (s <= 1e-12) behind = 1;
        }
        if (behind) continue;
        q[out] = nq, n[out] = nn, d[out] = dist;
        out++;
    }
    return out;
}

static uint64_t trs = 0x2545F4914F6CDD1Dull;
static double trnd(void)
{
    trs ^= trs << 13;
    trs ^= trs >> 7;
    trs ^= trs << 17;
    return (double)(trs >> 11) / 9007199254740992.0;
}

/* The boxes read and the half-spaces made from them, against the reference, on two random scenes:
 * 30 boxes of 1 to 6 leaves, and leaves blocked at random (a third of them in a slab: hundreds of cubes
 * within reach, many at equal distances), a leaf of 0.5 world units and the tree moved off the
 * origin; points anywhere (inside boxes too, and near the tree's faces: the slabs beyond the grid),
 * read with reaches of 1 to 12 and asked from the read's centre and from points up to 3 away, with
 * `within` of 0.2 to 9 and caps of 1, 3 and 32. */
static void test_boundary_against_reference(void)
{
    int cases = 0, equal_reads = 0, equal_planes = 0, skipped = 0, nonempty = 0;
    for (int scene = 0; scene < 2; scene++) {
        on_tree_params tp = {{2, 1, 1}, 5, 0.5, {-3.25, 1.5, 0.75}, 0};
        on_tree *t = NULL;
        CHECK(on_ok(on_tree_create(&tp, &t)));
        if (!t) return;
        double ext[3] = {32, 16, 16}; /* world: 2 x 1 x 1 tiles of 32 leaves of 0.5 */
        if (scene == 0)
            for (int i = 0; i < 30; i++) {
                double lo[3], hi[3];
                for (int k = 0; k < 3; k++) {
                    lo[k] = tp.origin[k] + trnd() * ext[k];
                    hi[k] = lo[k] + 0.5 * (1 + floor(trnd() * 6));
                }
                on_tree_add_box(t, lo, hi);
            }
        else
            for (int x = 0; x < 64; x++)
                for (int y = 8; y < 24; y++)
                    for (int z = 0; z < 32; z++)
                        if (trnd() < 0.33) {
                            double lo[3] = {tp.origin[0] + 0.5 * x, tp.origin[1] + 0.5 * y, tp.origin[2] + 0.5 * z};
                            double hi[3] = {lo[0] + 0.5, lo[1] + 0.5, lo[2] + 0.5};
                            on_tree_add_box(t, lo, hi);
                        }
        on_agent a;
        memset(&a, 0, sizeof a);
        refwalk rw = {0};
        for (int i = 0; i < 400; i++) {
            double c[3];
            for (int k = 0; k < 3; k++) c[k] = tp.origin[k] - 1 + trnd() * (ext[k] + 2);
            double reach = 1 + trnd() * 11;
            a.pos = v3_from(c);
            CHECK(on_boundary_read(t, &a, reach) == 0);
            ref_read(t, c, reach, &rw);
            int same = a.nboxes == rw.n && (rw.n == 0 || memcmp(a.boxes, rw.b, rw.n * 6 * sizeof *rw.b) == 0);
            equal_reads += same;
            if (!same) continue;
            for (int j = 0; j < 6; j++) {
                on_v3 p = a.pos;
                if (j > 0) p = v3_add(p, v3(3 * (trnd() - 0.5), 3 * (trnd() - 0.5), 3 * (trnd() - 0.5)));
                double within = 0.2 + trnd() * 8.8;
                int cap = j % 3 == 0 ? 32 : j % 3 == 1 ? 3 : 1;
                on_v3 q0[ON_CROWD_MAX_WALLS], n0[ON_CROWD_MAX_WALLS], q1[ON_CROWD_MAX_WALLS], n1[ON_CROWD_MAX_WALLS];
                double d0[ON_CROWD_MAX_WALLS], d1[ON_CROWD_MAX_WALLS];
                int k0 = on_boundary_planes(&a, p, within, q0, n0, d0, cap);
                int k1 = ref_planes(rw.b, rw.n, p, within, q1, n1, d1, cap);
                cases++;
                nonempty += k1 > 0;
                skipped += k1 == 0 && rw.n > 0;
                equal_planes += k0 == k1 && memcmp(q0, q1, (size_t)k1 * sizeof *q1) == 0 &&
                                memcmp(n0, n1, (size_t)k1 * sizeof *n1) == 0 &&
                                memcmp(d0, d1, (size_t)k1 * sizeof *d1) == 0;
            }
        }
        CHECK_EQ_INT(equal_reads, 400 * (scene + 1));
        free(a.boxes);
        free(rw.b);
        on_tree_destroy(t);
    }
    CHECK_EQ_INT(equal_planes, cases);
    CHECK_EQ_INT(cases, 2 * 400 * 6);
    /* the scenes reach what they are for */
    CHECK(ref_cands_full > 0);
    CHECK(ref_ties > 0);
    CHECK(nonempty > cases / 4);
    if (!(skipped > cases / 20)) fprintf(stderr, "cases %d nonempty %d skipped %d full %d ties %d\n", cases, nonempty, skipped, ref_cands_full, ref_ties);
    CHECK(skipped > cases / 20);
}

TEST_MAIN("crowd_rules", {
    test_boundary_against_reference();
    test_progress_of_a_planned_walk();
    test_snapshot_and_hold();
})
