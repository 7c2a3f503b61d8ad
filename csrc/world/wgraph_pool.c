/*
 * wgraph_pool.c -- the world graph's records held once (wgraph_pool.h): a pool's records sorted by their
 * contents (found by binary search; the index sized to fit, 8 bytes a record, so a pool's bytes depend on
 * what it holds, not on what it held), counted by reference from the tiles of every graph
 * sharing the pool, each freed with its last tile; the graphs joining (on_wgraph_share) and leaving.
 */
#include "wgraph.h"

#include <stdlib.h>

/* A pool with w its only member; NULL when out of memory. */
wpool *on_wpool_new(on_wgraph *w)
{
    wpool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    if (!(p->member = malloc(sizeof *p->member))) {
        free(p);
        return NULL;
    }
    p->member[0] = w;
    p->nmember = p->membercap = 1;
    return p;
}

/* w (holding no record) leaves its pool, freed with its last member. */
void on_wpool_leave(on_wgraph *w)
{
    wpool *p = w->pool;
    size_t i = 0;
    while (i < p->nmember && p->member[i] != w) i++;
    if (i < p->nmember) {
        memmove(p->member + i, p->member + i + 1, (p->nmember - i - 1) * sizeof *p->member);
        p->nmember--;
    }
    w->pool = NULL;
    if (p->nmember) {
        on_wgraph **q = realloc(p->member, p->nmember * sizeof *q); /* (kept as it is when that fails) */
        if (q) {
            p->member = q;
            p->membercap = p->nmember;
        }
        return;
    }
    free(p->rec); /* (NULL: every record went with its last tile) */
    free(p->member);
    free(p);
}

size_t on_wpool_bytes(const wpool *p)
{
    return sizeof *p + p->reccap * sizeof *p->rec + p->membercap * sizeof *p->member + p->rec_bytes;
}

/* The records' order: their contents (the header's fields, then the bytes). */
static int rec_cmp(const crec *a, const crec *b)
{
    uint32_t x[5] = {a->id, a->np, a->ncomp, (uint32_t)a->w << 16 | (uint32_t)a->depth_lb << 8 | (uint8_t)a->wshift,
                     (uint32_t)cr_size(a)};
    uint32_t y[5] = {b->id, b->np, b->ncomp, (uint32_t)b->w << 16 | (uint32_t)b->depth_lb << 8 | (uint8_t)b->wshift,
                     (uint32_t)cr_size(b)};
    for (int i = 0; i < 5; i++)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return memcmp(a->d, b->d, x[4]);
}

/* Where r is or would go in the pool's records (binary search); *found: it or its equal is there. */
static size_t pool_find(const wpool *p, const crec *r, int *found)
{
    size_t lo = 0, hi = p->nrec;
    *found = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = rec_cmp(p->rec[mid], r);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The pool's record equal to r (r freed) or r itself, put in the pool; one more reference either way.
 * NULL when out of memory (r freed). */
const crec *on_wpool_intern(wpool *p, crec *r)
{
    int found;
    size_t i = pool_find(p, r, &found);
    if (found) {
        free(r);
        p->rec[i]->refs++;
        return p->rec[i];
    }
    if (p->nrec == p->reccap) { /* (sized to fit: 8 bytes a record, whatever the pool held before) */
        size_t nc = p->nrec + 1;
        crec **q = nc <= SIZE_MAX / sizeof *q ? realloc(p->rec, nc * sizeof *q) : NULL;
        if (!q) {
            free(r);
            return NULL;
        }
        p->rec = q;
        p->reccap = nc;
    }
    memmove(p->rec + i + 1, p->rec + i, (p->nrec - i) * sizeof *p->rec);
    p->rec[i] = r;
    p->nrec++;
    r->refs = 1;
    p->rec_bytes += cr_bytes(r);
    return r;
}

/* One reference to r less: freed with its last. */
void on_wpool_release(wpool *p, const crec *r)
{
    int found;
    size_t i = pool_find(p, r, &found);
    if (!found || --p->rec[i]->refs) return; /* (found: a pool's records are its tiles') */
    p->rec_bytes -= cr_bytes(r);
    memmove(p->rec + i, p->rec + i + 1, (p->nrec - i - 1) * sizeof *p->rec);
    p->nrec--;
    free((crec *)r);
    if (p->nrec == 0) {
        free(p->rec);
        p->rec = NULL;
        p->reccap = 0;
    } else {
        crec **q = realloc(p->rec, p->nrec * sizeof *q); /* (kept as it is when that fails) */
        if (q) {
            p->rec = q;
            p->reccap = p->nrec;
        }
    }
}

on_status on_wgraph_share(on_wgraph *w, on_wgraph *with)
{
    if (!w || !with) return ON_FAILURE | ON_INVALID;
    if (w->pool == with->pool) return ON_SUCCESS;
    if (w->ngraphs) return ON_FAILURE | ON_INVALID;
    wpool *p = with->pool;
    if (p->nmember == p->membercap) {
        on_wgraph **q = realloc(p->member, (p->membercap + 1) * sizeof *q); /* (sized to fit: few graphs share) */
        if (!q) return ON_FAILURE | ON_NO_MEMORY;
        p->member = q;
        p->membercap++;
    }
    on_wpool_leave(w);
    p->member[p->nmember++] = w;
    w->pool = p;
    return ON_SUCCESS;
}
