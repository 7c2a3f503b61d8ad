/*
 * reach.c -- local searches inside one tile's box set (see reach.h), their scratch and results: the
 * per-box arrays reserved and grown, targets mapped to the boxes holding them (and, over a lazy set,
 * to blocks not built yet), each reached target's corridor pulled taut, and the entry points of
 * reach.h. The search itself (the Dijkstra / A* over the boxes and its heap) is reach_run.c.
 */
#include "reach_impl.h"
#include "facepoint.h"
#include "nodepool.h"

#include <stdlib.h>
#include <string.h>

/* Passes of the corridor relaxation (pulled_length): the build's and a full search's, and a directed
 * search's (each pass only shortens the free path, so fewer passes give a longer one, never a wrong
 * one). */
#define PULL_PASSES 64

/* 16 -> 8 (session 9): the joins' instructions -6% (33.4 M -> 31.4 M over 8 tail pairs of 3x1x3 x
 * 512^3, callgrind), route costs / 16's mean 1.0001, max 1.0011 (35 pairs of 8x1x8 x 512^3) */
#define ROUTE_PULL_PASSES 8

void on_reach_free(on_reach *r)
{
    on_pages_free(r->g);
    on_pages_free(r->pt);
    on_pages_free(r->parent);
    on_pages_free(r->seen);
    on_pages_free(r->done);
    free(r->heap_box);
    free(r->heap_key);
    on_pages_free(r->tmark);
    on_pages_free(r->thead);
    free(r->tent_t);
    free(r->tent_next);
    free(r->tbn);
    free(r->tbox);
    free(r->phead);
    free(r->whead);
    free(r->pvalid);
    free(r->wvalid);
    free(r->ptouch);
    free(r->wtouch);
    free(r->wtail);
    free(r->wnext);
    free(r->wbox);
    free(r->wside);
    free(r->pnext);
    free(r->ptgt);
    on_pages_free(r->chain);
    on_pages_free(r->cpt);
    free(r->gneed);
    on_pages_free(r->hkey);
    on_pages_free(r->hexact);
    free(r->order);
    free(r->hp);
    free(r->hc);
    free(r->plink);
    free(r->pseg);
    free(r->pax);
    free(r->pdirty);
    memset(r, 0, sizeof *r);
}



#define REACH_HEAP_RESERVE 65536

/* A search over a lazy set starts with room for this many boxes beyond those built (its blocks' boxes
 * are numbered on as it builds them): a join builds at most a few thousand, so the per-box arrays are
 * not grown mid-search (reach_grow_keep copies them, and its new pages were first touched in one call:
 * a copy of a few MB is hundreds of page faults, 12 us each on the seed's machine; the planner's steps
 * of 1.4-1.7 ms on one block, issue 31). The room is in pages of its own (on_pages_*, nodepool.h), untouched until used (stamps_upto). */
#define REACH_LAZY_ROOM 16384

/* Room for a search over nbox boxes with nadj neighbour entries and ntarget targets; lazy: over a
 * lazy set (REACH_LAZY_ROOM more, the arrays made twice the size when they are made anew). */
static int reach_reserve(on_reach *r, size_t nbox, size_t nadj, size_t ntarget, int lazy)
{
    if (nbox + 1 + (lazy ? REACH_LAZY_ROOM : 0) > r->cap) {
        /* per-box arrays hold nothing across a growth (the stamps start again), so they are made
         * anew instead of realloc'd and cleared: calloc'd stamps are zero pages until a search touches
         * them, so a planner's first join in a 512^3 tile (~84k boxes, ~7 MB of arrays) pays for the
         * pages it touches, not for copying and clearing all of them (~1 ms); on_pages_calloc clears
         * only an array too small for pages of its own (a heap's reused memory) */
        size_t c = lazy ? 2 * (nbox + 1) + REACH_LAZY_ROOM : nbox + 1;
        void **arr[] = {(void **)&r->g,     (void **)&r->pt,  (void **)&r->parent, (void **)&r->hkey,
                        (void **)&r->thead, (void **)&r->chain, (void **)&r->cpt, (void **)&r->seen,
                        (void **)&r->done,  (void **)&r->tmark, (void **)&r->hexact};
        size_t len[] = {c * sizeof *r->g, 3 * c * sizeof *r->pt, c * sizeof *r->parent, c * sizeof *r->hkey,
                        c * sizeof *r->thead, c * sizeof *r->chain, 3 * (c + 2) * sizeof *r->cpt};
        int fail = 0;
        for (size_t i = 0; i < sizeof arr / sizeof *arr; i++) {
            on_pages_free(*arr[i]);
            /* (the stamps zeroed by on_pages_calloc: a mapping's pages are the system's zero pages
             * until a search stamps them, so neither a lazy set's room nor its boxes the search never
             * reaches are touched; session 30: zeroing a lazy set's built boxes here, stamps_upto,
             * touched ~1,200 pages for a 299k-box set, 17-26 ms of a search that settles a few
             * boxes, tests/world/test_reach_grow.c; freed they go back to the system) */
            *arr[i] = i < sizeof len / sizeof *len ? on_pages_realloc(NULL, len[i]) : on_pages_calloc(c, sizeof(uint32_t));
            fail |= *arr[i] == NULL;
        }
        r->cur = r->tcur = 0; /* nothing is seen, done or mapped */
        r->remakes++;
        r->zeroed = c;
        if (fail) {
            for (size_t i = 0; i < sizeof arr / sizeof *arr; i++) {
                on_pages_free(*arr[i]);
                *arr[i] = NULL;
            }
            r->cap = 0;
            return -1;
        }
        r->cap = c;
    }
    stamps_upto(r, nbox + 1); /* (the boxes built since the last search's) */
    /* a box is pushed once per improvement: at most once per neighbour entry, plus the roots (up to
     * 8); reserved up to REACH_HEAP_RESERVE entries, beyond which heap_push grows it as a search
     * fills it: a route join settles hundreds of a 512^3 tile's ~1M entries, and reserving them all
     * (realloc copying the untouched old array) cost a fresh planner ~5 ms of page faults */
    size_t hneed = nadj + 9 < REACH_HEAP_RESERVE ? nadj + 9 : REACH_HEAP_RESERVE;
    if (hneed > r->heapcap) {
        size_t c = hneed;
        if (regrow((void **)&r->heap_box, c, sizeof *r->heap_box) || regrow((void **)&r->heap_key, c, sizeof *r->heap_key))
            return -1;
        r->heapcap = c;
    }
    if (ntarget + 1 > r->tcap) {
        size_t c = ntarget + 1;
        if (regrow((void **)&r->tent_t, 8 * c, sizeof *r->tent_t) ||
            regrow((void **)&r->tent_next, 8 * c, sizeof *r->tent_next) ||
            regrow((void **)&r->tbox, 8 * c, sizeof *r->tbox) || regrow((void **)&r->tbn, c, sizeof *r->tbn) ||
            regrow((void **)&r->pnext, 8 * c, sizeof *r->pnext) || regrow((void **)&r->ptgt, 8 * c, sizeof *r->ptgt) ||
            regrow((void **)&r->gneed, c, sizeof *r->gneed) || regrow((void **)&r->order, c, sizeof *r->order) ||
            regrow((void **)&r->hp, c, sizeof *r->hp) || regrow((void **)&r->hc, c, sizeof *r->hc))
            return -1;
        r->tcap = c;
    }
    reach_bytes(r);
    return 0;
}


/* The face boxes a and c share: lo, hi (flat along the axis *k across it). */
static inline void link_rect(const on_box *a, const on_box *c, double lo[3], double hi[3], int *k)
{
    *k = 0;
    for (int i = 0; i < 3; i++) {
        lo[i] = a->mn[i] > c->mn[i] ? a->mn[i] : c->mn[i];
        hi[i] = a->mx[i] < c->mx[i] ? a->mx[i] : c->mx[i];
        if (lo[i] == hi[i]) *k = i; /* the axis across the shared face */
    }
}

/* Room in the relaxation's scratch for a corridor of m boxes (m + 1 points); -1 when out of memory. */
static int pull_room(on_reach *r, size_t m)
{
    if (m + 2 <= r->pullcap) return 0;
    size_t c = m + 2 > 2 * r->pullcap ? m + 2 : 2 * r->pullcap;
    if (regrow((void **)&r->plink, 6 * c, sizeof *r->plink) || regrow((void **)&r->pseg, c, sizeof *r->pseg) ||
        regrow((void **)&r->pax, c, sizeof *r->pax) || regrow((void **)&r->pdirty, 2 * (c / 64 + 1), sizeof *r->pdirty))
        return -1;
    r->pullcap = c;
    reach_bytes(r);
    return 0;
}

/* The length of a free path from the search's root to point x held by box bt: the corridor of boxes
 * back to the root, with the points where the path crosses from one box to the next, each on the
 * face the two boxes share. The points are relaxed in passes (each moved to where the line between
 * its neighbours crosses its face's plane, clamped onto the face) until they stop moving: the string
 * pulled taut inside the corridor. A segment between two points on the faces of one box stays in
 * that box (convex), so the path stays free; the relaxation only ever shortens it.
 * The same arithmetic in the same order, with three things kept instead of computed again (so the
 * length is the same to the bit): each link's face and axes (plink, pax), each segment's length (pseg:
 * a point's move computes its two new ones), and which links a point moved next to since they were
 * last looked at (pdirty): a link whose point and both neighbours are where they were when it was
 * last looked at would find the same best point again and not move, so it is skipped (most of a
 * corridor, most passes). A pass looks at its links in order: a point that moves makes the link after
 * it one to look at in this pass, the one before it in the next; the links of a pass come off its bit
 * set 64 at a time (the same links in the same order as a test of every link's three points). */
static double pulled_length(on_reach *r, const on_boxset *s, uint32_t bt, const double x[3], int passes)
{
    size_t m = 0;
    for (uint32_t b = bt; b != UINT32_MAX; b = r->parent[b]) r->chain[m++] = b;
    for (size_t i = 0; i < m / 2; i++) { /* root first */
        uint32_t t = r->chain[i];
        r->chain[i] = r->chain[m - 1 - i];
        r->chain[m - 1 - i] = t;
    }
    /* P[0] = root point, P[j] (1..m-1) = where the path enters chain[j], P[m] = x */
    double *P = r->cpt;
    for (size_t j = 0; j < m; j++) memcpy(P + 3 * j, r->pt + 3 * (size_t)r->chain[j], 3 * sizeof *P);
    memcpy(P + 3 * m, x, 3 * sizeof *P);
    if (pull_room(r, m)) { /* (no memory for the scratch: everything computed each time) */
        for (int pass = 0; pass < passes && m > 1; pass++) {
            double moved = 0;
            for (size_t j = 1; j < m; j++) {
                double lo[3], hi[3], *q = P + 3 * j, nq[3];
                const double *pa = q - 3, *pc = q + 3;
                int k;
                link_rect(&s->box[r->chain[j - 1]], &s->box[r->chain[j]], lo, hi, &k);
                on_rect_best(pa, pc, lo, hi, k, nq); /* (facepoint.h: the one or two edges that can hold it) */
                /* keep the move only when it shortens the two segments (a clamped crossing may not) */
                if (dist3(pa, nq) + dist3(nq, pc) < dist3(pa, q) + dist3(q, pc) - 1e-12) {
                    double d = dist3(q, nq);
                    if (d > moved) moved = d;
                    memcpy(q, nq, sizeof nq);
                }
            }
            if (moved < 1e-4) break;
        }
        double len = 0;
        for (size_t j = 0; j < m; j++) len += dist3(P + 3 * j, P + 3 * (j + 1));
        return len;
    }
    double *L = r->plink, *seg = r->pseg; /* link j: lo at L + 6 j, hi at L + 6 j + 3 */
    uint32_t *ax = r->pax;                /* link j: k | i << 2 | j << 4 (on_rect_best_ax) */
    size_t nw = m / 64 + 1;               /* bits 0 .. m */
    uint64_t *cur = r->pdirty, *nxt = r->pdirty + nw;
    for (size_t j = 0; j < m; j++) {
        seg[j] = dist3(P + 3 * j, P + 3 * (j + 1));
        if (j == 0) continue;
        int k;
        link_rect(&s->box[r->chain[j - 1]], &s->box[r->chain[j]], L + 6 * j, L + 6 * j + 3, &k);
        ax[j] = (uint32_t)k | (uint32_t)((k + 1) % 3) << 2 | (uint32_t)((k + 2) % 3) << 4;
    }
    for (size_t w = 0; w < nw; w++) { /* every link 1 .. m - 1 */
        size_t lo = w * 64, hi = lo + 64 < m ? lo + 64 : m;
        cur[w] = 0;
        for (size_t j = lo > 1 ? lo : 1; j < hi; j++) cur[w] |= (uint64_t)1 << (j - lo);
        nxt[w] = 0;
    }
    for (int pass = 0; pass < passes && m > 1; pass++) {
        double moved = 0;
        for (size_t w = 0; w < nw; w++)
            while (cur[w]) {
                size_t j = w * 64 + (size_t)__builtin_ctzll(cur[w]);
                cur[w] &= cur[w] - 1;
                double *q = P + 3 * j, nq[3];
                const double *pa = q - 3, *pc = q + 3;
                uint32_t a = ax[j];
                on_rect_best_ax(pa, pc, L + 6 * j, L + 6 * j + 3, (int)(a & 3), (int)(a >> 2 & 3), (int)(a >> 4), nq);
                double s0 = dist3(pa, nq), s1 = dist3(nq, pc);
                if (s0 + s1 < seg[j - 1] + seg[j] - 1e-12) {
                    double d = dist3(q, nq);
                    if (d > moved) moved = d;
                    memcpy(q, nq, sizeof nq);
                    seg[j - 1] = s0;
                    seg[j] = s1;
                    if (j + 1 < m) cur[(j + 1) / 64] |= (uint64_t)1 << ((j + 1) % 64); /* (later in this pass) */
                    if (j > 1) nxt[(j - 1) / 64] |= (uint64_t)1 << ((j - 1) % 64);
                }
            }
        uint64_t *t = cur; /* (cur is empty now) */
        cur = nxt;
        nxt = t;
        if (moved < 1e-4) break;
    }
    double len = 0;
    for (size_t j = 0; j < m; j++) len += seg[j];
    return len;
}


/* The target map: for each target its boxes (tbox), for each box its targets (tmark, thead, the
 * entries); -1 when a target is in no box, unless lenient: then such a target is left out (never
 * reached). Touches only the boxes holding targets. Over a lazy set, the targets in blocks not built
 * yet wait for them (phead). */
static int map_targets(on_reach *r, const on_boxset *s, const double *pts, uint32_t npt, int lenient)
{
    if (++r->tcur == 0) {
        memset(r->tmark, 0, r->cap * sizeof *r->tmark);
        r->tcur = 1;
    }
    uint32_t in[8];
    r->nent = 0;
    r->npend = 0;
    r->tpts = pts;
    on_boxlazy *z = lazy_of(r, s);
    if (z) {
        size_t nblk = (size_t)s->nb * (size_t)s->nb * (size_t)s->nb;
        if (nblk > r->phcap) {
            /* every head NO_ENTRY by its bit (head_get): none written here */
            free(r->pvalid);
            free(r->wvalid);
            r->pvalid = calloc((nblk + 63) / 64, sizeof *r->pvalid);
            r->wvalid = calloc((nblk + 63) / 64, sizeof *r->wvalid);
            r->phcap = 0;
            if (!r->pvalid || !r->wvalid || regrow((void **)&r->phead, nblk, sizeof *r->phead) ||
                regrow((void **)&r->whead, nblk, sizeof *r->whead) || regrow((void **)&r->wtail, nblk, sizeof *r->wtail) ||
                regrow((void **)&r->ptouch, nblk, sizeof *r->ptouch) || regrow((void **)&r->wtouch, nblk, sizeof *r->wtouch))
                return -2;
            r->phcap = nblk;
            r->nptouch = r->nwtouch = 0;
            reach_bytes(r);
        }
        for (size_t i = 0; i < r->nptouch; i++) head_set(r->phead, r->pvalid, r->ptouch[i], NO_ENTRY);
        r->nptouch = 0;
    }
    for (uint32_t p = 0; p < npt; p++) {
        const double *x = pts + 3 * (size_t)p;
        r->tbn[p] = 0;
        if (z) {
            uint32_t blocks[8];
            int nb = on_boxlazy_blocks_at(z, x, blocks);
            for (int i = 0; i < nb; i++) {
                if (!on_boxlazy_built(z, blocks[i])) {
                    uint32_t h = head_get(r->phead, r->pvalid, blocks[i]);
                    if (h == NO_ENTRY) r->ptouch[r->nptouch++] = blocks[i]; /* (once a block) */
                    uint32_t e = r->npend++;
                    r->ptgt[e] = p;
                    r->pnext[e] = h;
                    head_set(r->phead, r->pvalid, blocks[i], e);
                    continue;
                }
                int n = 0;
                on_boxlazy_locate_in(z, blocks[i], x, in, &n);
                for (int j = 0; j < n; j++) add_entry(r, in[j], p);
            }
            continue;
        }
        int n = on_boxset_locate_on_face(s, x, in);
        if (n == 0 && !lenient) return -1;
        for (int i = 0; i < n; i++) add_entry(r, in[i], p);
    }
    return 0;
}

/* After a search: cost[t] for every target t > after (UINT32_MAX: every target) it reached, the
 * corridor to t pulled taut; *reached counts them. */
static void collect(on_reach *r, const on_boxset *s, const double *pts, uint32_t npt, uint32_t after, int settled,
                    double *cost, uint32_t *reached)
{
    for (uint32_t t = after == UINT32_MAX ? 0 : after + 1; t < npt; t++)
        for (uint32_t e = 0; e < r->tbn[t]; e++) {
            uint32_t b = r->tbox[8 * (size_t)t + e];
            if (gval(r, b) == HUGE_VAL || (settled && r->done[b] != r->cur)) continue;
            double c = pulled_length(r, s, b, pts + 3 * (size_t)t, settled ? ROUTE_PULL_PASSES : PULL_PASSES);
            if (cost[t] == HUGE_VAL) (*reached)++;
            if (c < cost[t]) cost[t] = c;
        }
}

on_status on_reach_points(on_reach *r, const on_boxset *s, const double *pts, uint32_t npt, const double p[3],
                          double *cost, uint32_t *reached)
{
    return on_reach_points_group(r, s, pts, npt, p, NULL, NULL, 1, 0, 0, 0, cost, reached);
}

on_status on_reach_points_group(on_reach *r, const on_boxset *s, const double *pts, uint32_t npt, const double p[3],
                                const uint32_t *group, const double *to, double weight, double slack, double add,
                                size_t budget, double *cost, uint32_t *reached)
{
    *reached = 0;
    for (uint32_t i = 0; i < npt; i++) cost[i] = HUGE_VAL;
    uint32_t roots[8];
    int nroot = 0;
    on_boxlazy *z = lazy_of(r, s);
    double t0 = r->deadline > 0 ? reach_now() : 0;
    if (z && (nroot = on_boxlazy_locate_all(z, p, 1, roots)) < 0) return ON_FAILURE | ON_NO_MEMORY; /* (builds p's blocks) */
    if (s->nbox == 0) return ON_FAILURE | ON_BLOCKED;
    if (reach_reserve(r, s->nbox, z ? 0 : s->adj_off[s->nbox], npt, z != NULL)) return ON_FAILURE | ON_NO_MEMORY;
    if (!z) nroot = on_boxset_locate_all(s, p, roots);
    if (nroot == 0) return ON_FAILURE | ON_BLOCKED;
    /* lenient: the tile's boxes come from the tree as it is now, the portals from its bake; a portal
     * an edit has blocked since (a closed door, a hole's inside, a temporary obstacle) is not reached */
    int m = map_targets(r, s, pts, npt, 1);
    if (m) return m == -2 ? ON_FAILURE | ON_NO_MEMORY : ON_FAILURE | ON_CORRUPT;
    reach_stop d = {group, npt, pts, to, weight, slack, add, budget, r->order, r->hp, r->hc, p};
    if (to) { /* each target's straight line on to `to`, and their order for heading */
        for (uint32_t i = 0; i < npt; i++) r->hp[i] = dist3(pts + 3 * (size_t)i, to);
        on_reach_order_targets(r, pts, npt, p);
    }
    if (r->deadline > 0) r->setup_s += reach_now() - t0;
    r->heap_failed = 0;
    /* what a suspended search needs to go on (on_reach_resume) */
    struct reach_resume *rs = &r->rs;
    memcpy(rs->root, p, sizeof rs->root);
    if (to) memcpy(rs->to, to, sizeof rs->to);
    rs->has_stop = group != NULL;
    rs->has_to = to != NULL;
    rs->settled = to != NULL && group != NULL;
    rs->group = group;
    rs->pts = pts;
    rs->npt = npt;
    rs->weight = weight;
    rs->slack = slack;
    rs->add = add;
    rs->budget = budget;
    d.root = rs->root;
    if (to) d.to = rs->to;
    on_reach_run(r, s, roots, nroot, p, group ? &d : NULL);
    if (r->heap_failed) return ON_FAILURE | ON_NO_MEMORY;
    if (r->suspended) return ON_IN_PROGRESS;
    collect(r, s, pts, npt, UINT32_MAX, rs->settled, cost, reached);
    return ON_SUCCESS;
}

on_status on_reach_resume(on_reach *r, const on_boxset *s, double *cost, uint32_t *reached)
{
    if (!r->suspended) return ON_FAILURE | ON_INVALID;
    const struct reach_resume *rs = &r->rs;
    reach_stop d = {rs->group, rs->npt, rs->pts, rs->has_to ? rs->to : NULL, rs->weight, rs->slack, rs->add,
                    rs->budget, r->order, r->hp, r->hc, rs->root};
    r->heap_failed = 0;
    on_reach_run_more(r, s, rs->has_stop ? &d : NULL);
    if (r->heap_failed) {
        r->suspended = 0;
        return ON_FAILURE | ON_NO_MEMORY;
    }
    if (r->suspended) return ON_IN_PROGRESS;
    *reached = 0;
    for (uint32_t i = 0; i < rs->npt; i++) cost[i] = HUGE_VAL;
    collect(r, s, rs->pts, rs->npt, UINT32_MAX, rs->settled, cost, reached);
    return ON_SUCCESS;
}

on_status on_reach_from_target(on_reach *r, const on_boxset *s, const double *pts, uint32_t npt, uint32_t first,
                               uint32_t after, double *cost)
{
    for (uint32_t i = 0; i < npt; i++) cost[i] = HUGE_VAL;
    uint32_t roots[8], reached = 0;
    int nroot = on_boxset_locate_all(s, pts + 3 * (size_t)first, roots);
    if (nroot == 0) return ON_FAILURE | ON_CORRUPT;
    r->heap_failed = 0;
    r->limit = 0; /* (the build's searches run whole) */
    r->deadline = 0;
    on_reach_run(r, s, roots, nroot, pts + 3 * (size_t)first, NULL);
    if (r->heap_failed) return ON_FAILURE | ON_NO_MEMORY;
    collect(r, s, pts, npt, after, 0, cost, &reached);
    return ON_SUCCESS;
}

on_status on_reach_map(on_reach *r, const on_boxset *s, const double *pts, uint32_t npt, int lenient)
{
    if (s->nbox == 0) return ON_FAILURE | ON_CORRUPT;
    if (reach_reserve(r, s->nbox, lazy_of(r, s) ? 0 : s->adj_off[s->nbox], npt, lazy_of(r, s) != NULL)) return ON_FAILURE | ON_NO_MEMORY;
    return map_targets(r, s, pts, npt, lenient) ? ON_FAILURE | ON_CORRUPT : ON_SUCCESS; /* one tile's own boxes */
}

double on_reach_cost_to(on_reach *r, const on_boxset *s, const double x[3])
{
    uint32_t in[8];
    on_boxlazy *z = lazy_of(r, s);
    int n = z ? on_boxlazy_locate_all(z, x, 0, in) : on_boxset_locate_all(s, x, in);
    stamps_upto(r, s->nbox); /* (boxes built since the search: not reached) */
    double best = HUGE_VAL;
    for (int i = 0; i < n; i++)
        if (gval(r, in[i]) != HUGE_VAL) {
            double c = pulled_length(r, s, in[i], x, PULL_PASSES);
            if (c < best) best = c;
        }
    return best;
}
