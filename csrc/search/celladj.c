/*
 * celladj.c -- building a tile's cell adjacency from its node table, publishing it in the tile, freeing
 * it, listing a cell's neighbours, finding a cell's number (the structure and its life: celladj.h). The
 * list form for the landmarks' build (on_cellcsr) is celladj_csr.c's.
 */
/* The lists built by gcc without if-conversion (branches into conditional moves, which run both sides):
 * make bench-query-ir Complex 409,333 -> 408,626 (gcc 12.2; clang: no pragma). Before the includes, so
 * that the headers' inline functions get the same options and still inline. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-if-conversion")
#endif
#include "celladj.h"
#include "isaclone.h"
#include "util.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- the compact form ------------------------------------------------------------------------ */

/* Set bits of x: the popcnt instruction where the caller is compiled for it (hw), else a SWAR count
 * (the baseline x86-64 has no popcnt, and gcc's __builtin_popcountll then calls libgcc). */
static inline __attribute__((always_inline)) uint32_t pop64(uint64_t x, const int hw)
{
    if (hw & 1) return (uint32_t)__builtin_popcountll(x);
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (uint32_t)((x * 0x0101010101010101ull) >> 56);
}

#ifdef ON_ISA_CLONE /* (the clones: isaclone.h) */
#define HAVE_POPCNT_CLONE 1
#endif
#define TARGET_POPCNT ON_TARGET_BITS
#if defined(__POPCNT__) || defined(__aarch64__)
#define POP_BASE 1 /* (the plain build has a popcount instruction already) */
#else
#define POP_BASE 0
#endif

/* (bit 3 of a body's `hw` (below): a clone compiled for BMI2 whose slot_at is pext, for the search's lists
 * where pext is fast (on_isa_fast_pext)) */
#define PEXT 8

/* The child index at layer l of code c's ancestor at layer l + 1 (bit l of x, y, z). With PEXT, BMI2's pext
 * gathers the three bits: two instructions instead of five (the multiply's), on every level of every descent
 * (make bench-query-ir DC1 413,214 -> 410,554, Complex 431,026 -> 427,524, A1 425,392 -> 423,371); where
 * pext is microcoded (AMD's Zen 1 and 2: about 18 cycles) the multiply is kept (on_isa_fast_pext). */
static inline __attribute__((always_inline)) unsigned slot_at(uint32_t c, uint32_t l, const int hw)
{
#ifdef HAVE_POPCNT_CLONE
    if (hw & PEXT) {
        uint32_t r;
        __asm__("pextl %2, %1, %0" : "=r"(r) : "r"(c >> (4 + l)), "r"(0x40201u));
        return r;
    }
#endif
    (void)hw;
    /* (bits 0, 9 and 18 of c >> (4 + l) to bits 20, 21, 22 by one multiply: no other product lands there) */
    return ((((c >> (4 + l)) & 0x40201u) * 0x101010u) >> 20) & 7u;
}

/* Child i of code c (layer >= 1; on_code_child); with PEXT, BMI2's pdep deposits i's three bits. */
static inline __attribute__((always_inline)) uint32_t code_child(uint32_t c, unsigned i, const int hw)
{
#ifdef HAVE_POPCNT_CLONE
    if (hw & PEXT) {
        uint32_t l = on_code_layer(c) - 1, r;
        __asm__("pdepl %2, %1, %0" : "=r"(r) : "r"((uint32_t)i), "r"(0x402010u << l));
        return (c & ~15u) | r | l;
    }
#endif
    (void)hw;
    return on_code_child(c, i);
}

static inline uint64_t below(unsigned b) { return (1ull << b) - 1u; }

/* on_code_at_packed (codes.h) by a table of the masks, one a layer: a load, an and and an or instead of
 * the mask's shift, subtraction and multiply (the same codes). */
static const uint32_t at_packed_mask[16] = {0xfffffff0u, 0xffbfdfe0u, 0xff3f9fc0u, 0xfe3f1f80u, 0xfc3e1f00u, 0xf83c1e00u, 0xf0381c00u, 0xe0301800u, 0xc0201000u, 0x80000000u, 0xffbfe000u, 0xff3fa000u, 0xfe3f2000u, 0xfc3e2000u, 0xf83c2000u, 0xf0382000u};
static inline uint32_t at_packed(uint32_t c, uint32_t layer) { return (c & at_packed_mask[layer & 15u]) | layer; }

/* The bit of node nd's child s in its group's masks (a node above layer 1). */
#define BIT(nd, s) (8u * ((nd) & 7u) + (s))

/* Node nd's group: its masks (gs: stored children, gb: blocked, gn: the children that take no number
 * in the count of a number), the number of the group's first child node and first free cell, and the
 * node's byte's shift in the masks. Layer-1 nodes (nd >= nup: breadth first, they come last) have no
 * stored children; their blocked children are their value in the node table (at `leaf`'s ancestor at
 * layer `lay`: node nd's code), and their leaves are numbered by slot (celladj.h): a group of their
 * own, shift 0, gn 0. */
typedef struct gview {
    uint64_t gs, gb, gn;
    uint32_t node, cell;
    unsigned sh;
} gview;

/* A layer-1 node's value (its blocked leaves) from the node table, through the caller's cache (may be
 * NULL). */
static inline __attribute__((always_inline)) unsigned l1_value(const on_celladj *a, on_adjchain *lc, uint32_t code)
{
    if (!lc) return (uint8_t)on_table_get(a->tab, code);
    /* (slot: the code's Fibonacci hash, 3 instructions; by x, y and z's bits 1-2 before, 8: make
     * bench-query-ir DC1 421,695 -> 420,548, Complex 442,448 -> 440,265, A1 433,082 -> 431,839) */
    unsigned h = (code * 0x9E3779B9u) >> 26;
    if (lc->l1code[h] == code) return lc->l1val[h];
    unsigned v = (uint8_t)on_table_get(a->tab, code);
    lc->l1code[h] = code;
    lc->l1val[h] = (uint8_t)v;
    return v;
}

static inline __attribute__((always_inline)) gview view(const on_celladj *a, uint32_t nd, uint32_t leaf, uint32_t lay,
                                                        on_adjchain *lc)
{
    gview v;
    if (nd < a->nup) {
        const on_adjgrp *g = &a->grp[nd >> 3];
        v.gs = g->sub;
        v.gb = g->blk;
        v.gn = v.gs | v.gb;
        v.node = g->node;
        v.cell = g->cell;
        v.sh = 8u * (nd & 7u);
    } else {
        v.gs = 0;
        v.gb = l1_value(a, lc, at_packed(leaf, lay));
        v.gn = 0;
        v.node = 0;
        v.cell = a->lbase + 8u * (nd - a->nup);
        v.sh = 0;
    }
    return v;
}

/* Where a list goes: out[k] = {tile, code}, ix[k], fc[k] for k < cap (the count goes on past cap). */
#define LOUT on_cell *restrict out, uint32_t *restrict ix, uint8_t *restrict fc, size_t cap, uint32_t tile, on_adjchain *lc
#define LARGS out, ix, fc, cap, tile, lc

/* (the bodies below take `hw`: bit 0, the popcnt instruction; bit 1 (NONUM), no numbers asked: ix is
 * NULL, and the counts that make them fold away) */
#define NONUM 2
/* (bit 2 (NOTILE): the search's bodies, on_celladj_lister_for: out[k].tile not written at this level, a
 * chain always given (ch, lc) and no number of the cell's own asked (self NULL): their tests fold away) */
#define NOTILE 4

static inline __attribute__((always_inline)) size_t emit(LOUT, size_t k, uint32_t code, uint32_t num, unsigned face,
                                                         const int hw)
{
    (void)lc;
    if (k < cap) {
        if (!(hw & NOTILE)) out[k].tile = tile;
        out[k].code = code;
        if (!(hw & NONUM)) ix[k] = num;
        fc[k] = (uint8_t)face;
    }
    return k + 1;
}

/* The faces of child slot s towards a sibling (bit f: face f), by s: on each axis the high face when the
 * slot's bit is clear, else the low one (a table: 10 instructions fewer a list than working it out). */
static const uint8_t sibling_faces[8] = {0x2a, 0x29, 0x26, 0x25, 0x1a, 0x19, 0x16, 0x15};

/* A node's children on its side hi of an axis (bit i: child i), by axis * 2 + hi. */
static const uint8_t side_children[6] = {0x55, 0xaa, 0x33, 0xcc, 0x0f, 0xf0};

#define COLLECT_ARGS const on_celladj *a, uint32_t nd, uint32_t code, unsigned side, unsigned face, LOUT, size_t k
static size_t collect_sw(COLLECT_ARGS);
static size_t collect_sw_nn(COLLECT_ARGS);
#ifdef HAVE_POPCNT_CLONE
TARGET_POPCNT static size_t collect_hw(COLLECT_ARGS);
TARGET_POPCNT static size_t collect_hw_nn(COLLECT_ARGS);
TARGET_POPCNT static size_t collect_hwp(COLLECT_ARGS);
TARGET_POPCNT static size_t collect_hwp_nn(COLLECT_ARGS);
#endif

/* The free descendants of stored node nd (code `code`) on its side `side` (axis * 2 + hi), in child
 * order: the free children numbered from the node's first free cell on, stored ones descended into.
 * The count so far goes in as k and out as the result. */
static inline __attribute__((always_inline)) size_t collect_body(const on_celladj *a, uint32_t nd, uint32_t code,
                                                                 unsigned side, unsigned face, LOUT, size_t k,
                                                                 const int hw)
{
    if ((hw & NOTILE) && !lc) __builtin_unreachable();
    gview g = view(a, nd, code, on_code_layer(code), lc);
    unsigned sh = g.sh;
    uint64_t gs = g.gs, gb = g.gb;
    unsigned sub = (unsigned)(gs >> sh) & 255u, fr = ~(sub | (unsigned)(gb >> sh)) & 255u;
    unsigned frn = ~(unsigned)(g.gn >> sh) & 255u; /* (the children a number counts) */
    unsigned m = side_children[side] & (sub | fr);
    if (!m) return k;
    uint32_t cell0 = g.cell + pop64(~g.gn & below(sh), hw);
    uint32_t node0 = sub ? g.node + pop64(gs & below(sh), hw) : 0;
    while (m) {
        unsigned i = (unsigned)__builtin_ctz(m);
        m &= m - 1u;
        uint32_t child = code_child(code, i, hw);
        if ((sub >> i) & 1u) {
            uint32_t cn = node0 + pop64(sub & ((1u << i) - 1u), hw);
#ifdef HAVE_POPCNT_CLONE
            if (hw & PEXT) k = (hw & NONUM ? collect_hwp_nn : collect_hwp)(a, cn, child, side, face, LARGS, k);
            else if (hw & 1) k = (hw & NONUM ? collect_hw_nn : collect_hw)(a, cn, child, side, face, LARGS, k);
            else
#endif
                k = (hw & NONUM ? collect_sw_nn : collect_sw)(a, cn, child, side, face, LARGS, k);
        } else k = emit(LARGS, k, child, cell0 + pop64(frn & ((1u << i) - 1u), hw), face, hw);
    }
    return k;
}

static size_t collect_sw(COLLECT_ARGS) { return collect_body(a, nd, code, side, face, LARGS, k, POP_BASE); }
static size_t collect_sw_nn(COLLECT_ARGS) { return collect_body(a, nd, code, side, face, LARGS, k, POP_BASE | NONUM); }

#ifdef HAVE_POPCNT_CLONE
TARGET_POPCNT static size_t collect_hw(COLLECT_ARGS) { return collect_body(a, nd, code, side, face, LARGS, k, 1); }
TARGET_POPCNT static size_t collect_hw_nn(COLLECT_ARGS)
{
    return collect_body(a, nd, code, side, face, LARGS, k, 1 | NONUM);
}
TARGET_POPCNT static size_t collect_hwp(COLLECT_ARGS) { return collect_body(a, nd, code, side, face, LARGS, k, 1 | PEXT); }
TARGET_POPCNT static size_t collect_hwp_nn(COLLECT_ARGS)
{
    return collect_body(a, nd, code, side, face, LARGS, k, 1 | NONUM | PEXT);
}
#endif

static inline __attribute__((always_inline)) long list_body(const on_celladj *a, on_adjchain *ch,
                                                            uint32_t code, unsigned walk, LOUT,
                                                            uint32_t *restrict self, const int hw)
{
    if ((hw & NOTILE) && (!ch || lc != ch || self)) __builtin_unreachable();
    size_t k = 0;
    const uint32_t root = a->root, nnode = a->nnode;
    const unsigned border = a->border;
    const on_adjgrp *grp = a->grp;
    uint32_t L = on_code_layer(code), D = on_code_layer(root);
    /* (the search's bodies list the codes of its nodes, cells the tree or a list gave: well formed) */
    if (L > D || (!(hw & NOTILE) && on_code_at_packed(code, L) != code)) return -1;
    uint32_t local[16], *anc = ch ? ch->anc : local;
    if (!nnode) {
        if (code != root) return -1;
        if (self) *self = 0;
    } else {
        if (L == D) return -1;
        /* the cell's ancestors: stored nodes, each the one before's child; those it shares with the cell
         * the chain last held (of this adjacency) are kept */
        uint32_t from = D;
        if (ch && ch->a == a && ch->code != ON_CODE_NONE) {
            uint32_t d = (code ^ ch->code) >> 4, x = (d | d >> 9 | d >> 18) & 511u;
            uint32_t top = x ? (uint32_t)(32 - __builtin_clz(x)) : 0;
            from = top > ch->lo ? top : ch->lo;
            if (from > D) from = D;
        } else if (ch) /* (a chain starting over: its layer-1 values may be another table's, or older) */
            memset(ch->l1code, 0xff, sizeof ch->l1code); /* (ON_CODE_NONE) */
        if (ch) {
            ch->a = a;
            ch->code = ON_CODE_NONE; /* (until the descent below is through) */
        }
        anc[D] = 0;
        uint32_t nd = anc[from];
        for (uint32_t l = from - 1; l > L; l--) { /* (nodes above layer 1: their children are stored) */
            const on_adjgrp *g = &grp[nd >> 3];
            unsigned b = BIT(nd, slot_at(code, l, hw));
            uint64_t gs = g->sub;
            if (!((gs >> b) & 1u)) return -1;
            anc[l] = nd = g->node + pop64(gs & below(b), hw);
        }
        if (ch) {
            ch->code = code;
            ch->lo = L + 1;
        }
    }
    uint32_t s = 1u << L, n = 1u << D, leaf = code & ~15u;
    /* the parent's children: a face towards a sibling (its own slot's bit clear on the axis, the face
     * on the high side, or set and low) needs no descent */
    unsigned cs = 0, psub = 0, pfr = 0, pfn = 0;
    uint32_t pcell = 0, pnode = 0;
    if (nnode) {
        gview g = view(a, anc[L + 1], code, L + 1, lc);
        unsigned sh = g.sh;
        uint64_t gs = g.gs, gb = g.gb;
        cs = slot_at(code, L, hw);
        psub = (unsigned)(gs >> sh) & 255u;
        pfr = ~(psub | ((unsigned)(gb >> sh) & 255u)) & 255u;
        pfn = ~(unsigned)(g.gn >> sh) & 255u;
        if (!((pfr >> cs) & 1u)) {
            if (ch) ch->code = ON_CODE_NONE;
            return -1; /* (a stored node or blocked: no free cell) */
        }
        pcell = g.cell + pop64(~g.gn & below(sh), hw);
        pnode = g.node + pop64(gs & below(sh), hw);
        if (self) *self = pcell + pop64(pfn & ((1u << cs) - 1u), hw);
    }
    /* the faces towards a sibling: on each axis the high one when the slot's bit is clear, else the low */
    unsigned sibm = nnode ? sibling_faces[cs] : 0u;
    for (unsigned fm = walk & 63u; fm; fm &= fm - 1u) { /* (the faces asked, in order) */
        unsigned f = (unsigned)__builtin_ctz(fm), axis = f >> 1, dir = f & 1u;
        if ((sibm >> f) & 1u) { /* a sibling */
            unsigned sib = cs ^ (1u << axis);
            uint32_t sc = code ^ (1u << (4 + 9 * axis + L));
            if ((pfr >> sib) & 1u) k = emit(LARGS, k, sc, pcell + pop64(pfn & ((1u << sib) - 1u), hw), f, hw);
            else if ((psub >> sib) & 1u)
                k = collect_body(a, pnode + pop64(psub & ((1u << sib) - 1u), hw), sc, f ^ 1u, f, LARGS, k, hw);
            continue;
        }
        uint32_t p = (code >> (4 + 9 * axis)) & 511u;
        if (!(dir ? p + s < n : p >= s)) { /* on the tile's border */
            if (border & (1u << f)) k = emit(LARGS, k, code, ON_ADJ_BORDER, f, hw);
            continue;
        }
        uint32_t np = dir ? p + s : p - s, layer = (uint32_t)(32 - __builtin_clz(p ^ np)); /* (their LCA's) */
        uint32_t nleaf = on_code_with_axis(leaf, (int)axis, np), nd = anc[layer];
        for (;;) {
            gview g = view(a, nd, nleaf, layer, lc);
            layer--;
            unsigned b = g.sh + slot_at(nleaf, layer, hw);
            uint64_t gs = g.gs, gb = g.gb;
            if ((gb >> b) & 1u) break; /* blocked */
            if (!((gs >> b) & 1u)) { /* a free cell at least as large */
                k = emit(LARGS, k, at_packed(nleaf, layer), g.cell + pop64(~g.gn & below(b), hw), f, hw);
                break;
            }
            nd = g.node + pop64(gs & below(b), hw);
            if (layer == L) { /* the same-size region is subdivided: its free descendants on the face */
                k = collect_body(a, nd, at_packed(nleaf, layer), f ^ 1u, f, LARGS, k, hw);
                break;
            }
        }
    }
    return (long)k;
}

#define LIST_ARGS                                                                                             \
    const on_celladj *a, on_adjchain *ch, uint32_t tile, uint32_t code, unsigned walk, on_cell *out, uint32_t *ix, \
        uint8_t *face, size_t cap, uint32_t *self
static long list_sw(LIST_ARGS) { return list_body(a, ch, code, walk, out, ix, face, cap, tile, ch, self, POP_BASE); }
static long list_sw_nn(LIST_ARGS)
{
    return list_body(a, ch, code, walk, out, ix, face, cap, tile, ch, self, POP_BASE | NONUM);
}

#ifdef HAVE_POPCNT_CLONE
TARGET_POPCNT static long list_hw(LIST_ARGS) { return list_body(a, ch, code, walk, out, ix, face, cap, tile, ch, self, 1); }
TARGET_POPCNT static long list_hw_nn(LIST_ARGS)
{
    return list_body(a, ch, code, walk, out, ix, face, cap, tile, ch, self, 1 | NONUM);
}
#endif

/* The search's bodies (on_celladj_lister_for): the entries' tiles are the listed cell's, which the
 * search knows; not written (one store an entry). */
static long list_sw_nt(LIST_ARGS) { return list_body(a, ch, code, walk, out, ix, face, cap, tile, ch, self, POP_BASE | NOTILE); }
static long list_sw_nn_nt(LIST_ARGS)
{
    return list_body(a, ch, code, walk, out, ix, face, cap, tile, ch, self, POP_BASE | NONUM | NOTILE);
}
#ifdef HAVE_POPCNT_CLONE
TARGET_POPCNT static long list_hw_nt(LIST_ARGS)
{
    return list_body(a, ch, code, walk, out, ix, face, cap, tile, ch, self, 1 | NOTILE);
}
TARGET_POPCNT static long list_hw_nn_nt(LIST_ARGS)
{
    return list_body(a, ch, code, walk, out, ix, face, cap, tile, ch, self, 1 | NONUM | NOTILE);
}
/* (the same with pext: see slot_at) */
TARGET_POPCNT static long list_hwp_nt(LIST_ARGS)
{
    return list_body(a, ch, code, walk, out, ix, face, cap, tile, ch, self, 1 | NOTILE | PEXT);
}
TARGET_POPCNT static long list_hwp_nn_nt(LIST_ARGS)
{
    return list_body(a, ch, code, walk, out, ix, face, cap, tile, ch, self, 1 | NONUM | NOTILE | PEXT);
}
#endif

long on_celladj_list_isa(int bits, const on_celladj *a, on_adjchain *ch, uint32_t tile, uint32_t code, unsigned walk,
                         on_cell *out, uint32_t *ix, uint8_t *face, size_t cap, uint32_t *self)
{
#ifdef HAVE_POPCNT_CLONE
    if (bits && on_isa_bits())
        return (ix ? list_hw : list_hw_nn)(a, ch, tile, code, walk, out, ix, face, cap, self);
#endif
    (void)bits;
    return (ix ? list_sw : list_sw_nn)(a, ch, tile, code, walk, out, ix, face, cap, self);
}

on_celladj_lister on_celladj_lister_for(int numbers)
{
#ifdef HAVE_POPCNT_CLONE
    if (on_isa_bits() && on_isa_fast_pext()) return numbers ? list_hwp_nt : list_hwp_nn_nt;
    if (on_isa_bits()) return numbers ? list_hw_nt : list_hw_nn_nt;
#endif
    return numbers ? list_sw_nt : list_sw_nn_nt;
}

long on_celladj_list(const on_celladj *a, on_adjchain *ch, uint32_t tile, uint32_t code, unsigned walk, on_cell *out,
                     uint32_t *ix, uint8_t *face, size_t cap, uint32_t *self)
{
    return on_celladj_list_isa(1, a, ch, tile, code, walk, out, ix, face, cap, self);
}

uint32_t on_celladj_find(const on_celladj *a, uint32_t code)
{
    uint32_t i;
    return on_celladj_list(a, NULL, 0, code, 0, NULL, NULL, NULL, 0, &i) < 0 ? ON_ADJ_NONE : i;
}

int on_celladj_codes(const on_celladj *a, uint32_t *codes)
{
    if (!a->nnode) {
        codes[0] = a->root;
        return 0;
    }
    uint32_t *nc = malloc(a->nnode * sizeof *nc), next = 1;
    if (!nc) return -1;
    for (uint32_t i = 0; i < a->n; i++) codes[i] = ON_CODE_NONE;
    nc[0] = a->root;
    for (uint32_t nd = 0; nd < a->nnode; nd++) {
        gview g = view(a, nd, nc[nd], on_code_layer(nc[nd]), NULL);
        uint32_t num = g.cell + (uint32_t)__builtin_popcountll(~g.gn & below(g.sh));
        for (unsigned i = 0; i < 8; i++) {
            unsigned b = g.sh + i;
            if ((g.gs >> b) & 1u) nc[next++] = on_code_child(nc[nd], i);
            else if (!((g.gb >> b) & 1u)) codes[num] = on_code_child(nc[nd], i);
            if (!((g.gn >> b) & 1u)) num++;
        }
    }
    free(nc);
    return 0;
}

void on_celladj_free(on_celladj *a)
{
    if (!a) return;
    free(a->grp);
    free(a);
}

/* The tile's faces with a tile beyond. */
static uint8_t tile_border(const on_tree *t, uint32_t tile)
{
    int ijk[3];
    on_tile_coords(t, tile, ijk);
    unsigned m = 0;
    for (int axis = 0; axis < 3; axis++) {
        if (ijk[axis] > 0) m |= 1u << (2 * axis);
        if (ijk[axis] + 1 < t->p.tiles[axis]) m |= 1u << (2 * axis + 1);
    }
    return (uint8_t)m;
}

/* Breadth first over the stored nodes above layer 1: each node's children read from the table (a
 * child is stored when on_table_get finds it, blocked when its parent's value flags it), the stored
 * ones queued; the layer-1 nodes (the last in breadth-first order) are counted, their leaves' numbers
 * reserved, and their free leaves counted from their values. */
on_celladj *on_celladj_build(const on_tree *t, uint32_t tile, const on_table *tab)
{
    on_celladj *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->root = on_root_code(t);
    a->border = tile_border(t, tile);
    a->tab = tab;
    int rv = on_table_get(tab, a->root);
    if (rv < 0) { /* one free cell */
        a->n = a->ncell = 1;
        a->bytes = sizeof *a;
        return a;
    }
    uint32_t *qc = NULL;
    uint8_t *qv = NULL;
    size_t capq = 0, capv = 0, capg = 0, nq = 1, ncell = 0, nd = 0;
    if (on_grow((void **)&qc, &capq, 1, sizeof *qc) || on_grow((void **)&qv, &capv, 1, sizeof *qv)) goto fail;
    qc[0] = a->root;
    qv[0] = (uint8_t)rv;
    for (; nd < nq && on_code_layer(qc[nd]) > 1; nd++) {
        if (!(nd & 7)) {
            if (on_grow((void **)&a->grp, &capg, nd / 8 + 1, sizeof *a->grp)) goto fail;
            a->grp[nd / 8] = (on_adjgrp){0, ~0ull, (uint32_t)nq, (uint32_t)ncell};
        }
        on_adjgrp *g = &a->grp[nd / 8];
        uint32_t code = qc[nd];
        unsigned blk = qv[nd], sub = 0;
        for (unsigned i = 0; i < 8; i++) {
            if (blk & (1u << i)) continue;
            uint32_t child = on_code_child(code, i);
            int v;
            if ((v = on_table_get(tab, child)) >= 0) { /* (children of a node above layer 1: no leaves) */
                if (nq >= ON_ADJ_BORDER || on_grow((void **)&qc, &capq, nq + 1, sizeof *qc) ||
                    on_grow((void **)&qv, &capv, nq + 1, sizeof *qv))
                    goto fail;
                qc[nq] = child;
                qv[nq++] = (uint8_t)v;
                sub |= 1u << i;
            } else if (++ncell >= ON_ADJ_BORDER) goto fail;
        }
        unsigned sh = 8u * (unsigned)(nd & 7);
        g->sub |= (uint64_t)sub << sh;
        g->blk &= ~(0xffull << sh) | (uint64_t)blk << sh;
    }
    size_t nup = nd, lbase = ncell;
    if (nq - nup >= (ON_ADJ_BORDER - lbase) / 8) goto fail; /* (every number below ON_ADJ_BORDER) */
    for (; nd < nq; nd++) ncell += 8u - (uint32_t)__builtin_popcount(qv[nd]);
    free(qc);
    free(qv);
    size_t ng = (nup + 7) / 8;
    on_adjgrp *grp = ng ? realloc(a->grp, ng * sizeof *grp) : NULL;
    if (grp || !ng) {
        if (!ng) free(a->grp);
        a->grp = grp;
    }
    a->n = (uint32_t)(lbase + 8 * (nq - nup));
    a->ncell = (uint32_t)ncell;
    a->lbase = (uint32_t)lbase;
    a->nnode = (uint32_t)nq;
    a->nup = (uint32_t)nup;
    a->bytes = sizeof *a + ng * sizeof *a->grp;
    return a;
fail:
    free(qc);
    free(qv);
    on_celladj_free(a);
    return NULL;
}

/* The tree's hook (tree.h): a tile's adjacency goes with its contents, all of them with the tree; the
 * stats count their bytes. Added before the first adjacency is published. */
static void hook_touched(on_tree *t, uint32_t tile) { on_tile_celladj_drop(&t->tiles[tile]); }
static void hook_drop(on_tree *t)
{
    for (uint32_t i = 0; i < t->ntiles; i++) on_tile_celladj_drop(&t->tiles[i]);
}
static void hook_stats(const on_tree *t, on_tree_stats *st) { st->adj_bytes = on_tree_celladj_bytes(t, &st->adj_tiles); }
static const on_tree_hook celladj_hook = {NULL, hook_drop, hook_touched, hook_stats};

/* force 0 (a search's read): on a deferred tree (on_tree_set_los_defer: a frame budget's) a tile
 * without one is not built here: a 512^3 terrain tile's build takes 30-60 ms, which ran inside one
 * expansion of q:step_until past the frame's deadline (the seed's world, 100 navigators, ms = 2:
 * steps 27-63 ms over); the search walks the tree instead (the same cells in the same order). */
static const on_celladj *tile_celladj(const on_tree *t, uint32_t tile, int force)
{
    on_tile *tl = &t->tiles[tile]; /* (the pointer is the tile's cache: atomics only) */
    on_celladj *a = atomic_load_explicit(&tl->adj, memory_order_acquire);
    if (a) return a;
    if (t->los_defer && !force) return NULL;
    if (tl->solid || !tl->loaded || t->no_cell_adj) return NULL;
    a = on_celladj_build(t, tile, &tl->table);
    return a ? on_tile_celladj_publish(t, tile, a) : NULL;
}

const on_celladj *on_tile_celladj_publish(const on_tree *t, uint32_t tile, on_celladj *a)
{
    on_tile *tl = &t->tiles[tile];
    if (tl->solid || !tl->loaded || t->no_cell_adj || on_tree_hook_add(t, &celladj_hook) != 0) {
        on_celladj_free(a);
        return NULL;
    }
    a->tab = &tl->table;
    on_celladj *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&tl->adj, &none, a, memory_order_acq_rel, memory_order_acquire)) {
        on_celladj_free(a); /* another reader published one first */
        return none;
    }
    return a;
}

const on_celladj *on_tile_celladj(const on_tree *t, uint32_t tile) { return tile_celladj(t, tile, 0); }
const on_celladj *on_tile_celladj_build(const on_tree *t, uint32_t tile) { return tile_celladj(t, tile, 1); }

void on_tile_celladj_drop(on_tile *tl)
{
    on_celladj_free(atomic_exchange_explicit(&tl->adj, NULL, memory_order_acq_rel));
}

size_t on_tree_celladj_bytes(const on_tree *t, size_t *tiles)
{
    size_t n = 0, k = 0;
    for (uint32_t i = 0; i < t->ntiles; i++) {
        const on_celladj *a = atomic_load_explicit(&t->tiles[i].adj, memory_order_acquire);
        if (a) {
            n += a->bytes;
            k++;
        }
    }
    if (tiles) *tiles = k;
    return n;
}

void on_tree_set_adjacency(on_tree *t, int on)
{
    t->no_cell_adj = !on;
    if (on) return;
    for (uint32_t i = 0; i < t->ntiles; i++) on_tile_celladj_drop(&t->tiles[i]);
}

on_status on_tree_adjacency_prepare(const on_tree *t, size_t *bytes)
{
    on_status st = ON_SUCCESS;
    if (bytes) *bytes = 0;
    if (t->no_cell_adj) return ON_FAILURE | ON_INVALID;
    for (uint32_t i = 0; i < t->ntiles; i++)
        if (t->tiles[i].loaded && !t->tiles[i].solid && !on_tile_celladj_build(t, i)) st = ON_FAILURE | ON_NO_MEMORY;
    if (bytes) *bytes = on_tree_celladj_bytes(t, NULL);
    return st;
}

