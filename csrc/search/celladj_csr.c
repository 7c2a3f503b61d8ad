/*
 * celladj_csr.c -- the list form of a tile's cell adjacency (on_cellcsr, celladj.h): every free cell's
 * neighbour numbers, for the landmarks' build, which reads every cell's list many times over.
 */
#include "celladj.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* A child entry of the builder's copy of the tree: a free cell's number, a stored node's id with
 * E_NODE set, or E_BLOCKED. */
#define E_BLOCKED 0xffffffffu
#define E_NODE 0x80000000u

typedef struct bnode {
    uint32_t ch[8];
} bnode;

typedef struct builder {
    const on_table *tab;
    bnode *node;
    size_t nnode, capnode;
    uint32_t *code;
    size_t ncell, capcell;
    uint32_t *off, *ent; /* the fill pass writes ent at off[i]++ (NULL: the count pass, off[i + 1]++) */
} builder;

/* Number a cell (its code kept); -1 on allocation failure or past ON_ADJ_INDEX cells. */
static int64_t add_cell(builder *b, uint32_t code)
{
    if (b->ncell >= ON_ADJ_BORDER || on_grow((void **)&b->code, &b->capcell, b->ncell + 1, sizeof *b->code)) return -1;
    b->code[b->ncell] = code;
    return (int64_t)b->ncell++;
}

/* Copy the stored node `code` (value bf) and its subtree, numbering free cells in child order (depth
 * first: on_table_visit's order); its id, or -1 on allocation failure. */
static int64_t copy_node(builder *b, uint32_t code, int bf)
{
    if (on_grow((void **)&b->node, &b->capnode, b->nnode + 1, sizeof *b->node)) return -1;
    size_t id = b->nnode++;
    for (unsigned i = 0; i < 8; i++) {
        uint32_t child = on_code_child(code, i);
        int v;
        int64_t e;
        if (bf & (1 << i)) e = E_BLOCKED;
        else if (on_code_layer(child) > 0 && (v = on_table_get(b->tab, child)) >= 0) {
            e = copy_node(b, child, v);
            if (e >= 0) e |= E_NODE;
        } else e = add_cell(b, child);
        if (e < 0) return -1;
        b->node[id].ch[i] = (uint32_t)e; /* (after the recursion: it may move the array) */
    }
    return (int64_t)id;
}

/* Cells x (low side) and y (high side) touch across `axis`: count or write both entries. */
static void link(builder *b, uint32_t x, uint32_t y, int axis)
{
    if (!b->ent) {
        b->off[x + 1]++;
        b->off[y + 1]++;
        return;
    }
    b->ent[b->off[x]++] = (uint32_t)(2 * axis + 1) << ON_ADJ_FACE_SHIFT | y;
    b->ent[b->off[y]++] = (uint32_t)(2 * axis) << ON_ADJ_FACE_SHIFT | x;
}

/* Two touching cubes of one size, x below y along `axis` (entries, not blocked): link the free cells on
 * x's high face to those on y's low face. A free cube stays whole while the other side subdivides. */
static void pair(builder *b, uint32_t x, uint32_t y, int axis)
{
    if (!(x & E_NODE) && !(y & E_NODE)) {
        link(b, x, y, axis);
        return;
    }
    unsigned bit = 1u << axis;
    for (unsigned p = 0; p < 8; p++) {
        if (p & bit) continue;
        uint32_t cx = (x & E_NODE) ? b->node[x & ~E_NODE].ch[p | bit] : x;
        uint32_t cy = (y & E_NODE) ? b->node[y & ~E_NODE].ch[p] : y;
        if (cx != E_BLOCKED && cy != E_BLOCKED) pair(b, cx, cy, axis);
    }
}

/* Every touching pair of free cells inside node `id`: its children's subtrees, then the faces between
 * sibling children. */
static void pairs_in(builder *b, uint32_t id)
{
    const uint32_t *ch = b->node[id].ch;
    for (unsigned i = 0; i < 8; i++)
        if (ch[i] != E_BLOCKED && (ch[i] & E_NODE)) pairs_in(b, ch[i] & ~E_NODE);
    for (int axis = 0; axis < 3; axis++) {
        unsigned bit = 1u << axis;
        for (unsigned p = 0; p < 8; p++)
            if (!(p & bit) && ch[p] != E_BLOCKED && ch[p | bit] != E_BLOCKED) pair(b, ch[p], ch[p | bit], axis);
    }
}

/* Faces of cell `code` on the tile's border with a tile beyond (bit f: face f). */
static unsigned border_faces(const on_tree *t, const int ijk[3], uint32_t code)
{
    uint32_t s = 1u << on_code_layer(code), n = (uint32_t)t->n;
    uint32_t c[3] = {on_code_x(code), on_code_y(code), on_code_z(code)};
    unsigned m = 0;
    for (int axis = 0; axis < 3; axis++) {
        if (c[axis] == 0 && ijk[axis] > 0) m |= 1u << (2 * axis);
        if (c[axis] + s == n && ijk[axis] + 1 < t->p.tiles[axis]) m |= 1u << (2 * axis + 1);
    }
    return m;
}

void on_cellcsr_free(on_cellcsr *a)
{
    if (!a) return;
    free(a->code);
    free(a->off);
    free(a->ent);
    free(a);
}

on_cellcsr *on_cellcsr_build(const on_tree *t, uint32_t tile)
{
    const on_tile *tl = &t->tiles[tile];
    if (tl->solid || !tl->loaded) return NULL;
    builder b;
    memset(&b, 0, sizeof b);
    b.tab = &tl->table;
    on_cellcsr *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    uint32_t root = on_root_code(t);
    int rv = on_table_get(&tl->table, root);
    if (rv >= 0 ? copy_node(&b, root, rv) < 0 : add_cell(&b, root) < 0) goto fail;
    size_t n = b.ncell;
    int ijk[3];
    on_tile_coords(t, tile, ijk);
    b.off = calloc(n + 1, sizeof *b.off);
    if (!b.off) goto fail;
    if (b.nnode) pairs_in(&b, 0); /* the count pass: off[i + 1] = cell i's entries */
    for (size_t i = 0; i < n; i++) b.off[i + 1] += (uint32_t)__builtin_popcount(border_faces(t, ijk, b.code[i]));
    for (size_t i = 0; i < n; i++) b.off[i + 1] += b.off[i];
    b.ent = malloc((b.off[n] ? b.off[n] : 1) * sizeof *b.ent);
    if (!b.ent) goto fail;
    if (b.nnode) pairs_in(&b, 0); /* the fill pass: off[i] runs to cell i's end */
    for (size_t i = 0; i < n; i++) {
        unsigned m = border_faces(t, ijk, b.code[i]);
        for (unsigned f = 0; f < 6; f++)
            if (m & (1u << f)) b.ent[b.off[i]++] = f << ON_ADJ_FACE_SHIFT | ON_ADJ_BORDER;
    }
    memmove(b.off + 1, b.off, n * sizeof *b.off); /* each off[i] is now cell i's end: shift back */
    b.off[0] = 0;
    /* the neighbour walk's order: by face, then in Morton (number) order across the face */
    for (size_t i = 0; i < n; i++)
        for (uint32_t j = b.off[i] + 1; j < b.off[i + 1]; j++) {
            uint32_t e = b.ent[j], k = j;
            for (; k > b.off[i] && b.ent[k - 1] > e; k--) b.ent[k] = b.ent[k - 1];
            b.ent[k] = e;
        }
    free(b.node);
    uint32_t *code = realloc(b.code, (n ? n : 1) * sizeof *code);
    a->code = code ? code : b.code;
    a->off = b.off;
    a->ent = b.ent;
    a->n = (uint32_t)n;
    a->bytes = sizeof *a + n * sizeof *a->code + (n + 1) * sizeof *a->off + b.off[n] * sizeof *a->ent;
    return a;
fail:
    free(b.node);
    free(b.code);
    free(b.off);
    free(b.ent);
    free(a);
    return NULL;
}

/* 9-bit v with two zero bits after each bit (Morton interleaving). */
static uint32_t spread3(uint32_t v)
{
    v &= 0x3ffu;
    v = (v | v << 16) & 0x030000ffu;
    v = (v | v << 8) & 0x0300f00fu;
    v = (v | v << 4) & 0x030c30c3u;
    v = (v | v << 2) & 0x09249249u;
    return v;
}

/* A cell's place in depth-first child order: its corner's Morton key, then larger cells first (an
 * ancestor comes before its descendants). */
static uint64_t dfs_key(uint32_t code)
{
    uint64_t m = spread3(on_code_x(code)) | spread3(on_code_y(code)) << 1 | spread3(on_code_z(code)) << 2;
    return m << 4 | (15u - on_code_layer(code));
}

uint32_t on_cellcsr_find(const on_cellcsr *a, uint32_t code)
{
    uint64_t key = dfs_key(code);
    uint32_t lo = 0, hi = a->n; /* the first cell whose key is not below key: in [lo, hi] */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (dfs_key(a->code[mid]) < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < a->n && a->code[lo] == code ? lo : ON_ADJ_NONE;
}

