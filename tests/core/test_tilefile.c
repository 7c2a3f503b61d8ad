/*
 * test_tilefile.c -- tile blobs and tree files (tilefile.c): round trips are bit-exact and every
 * damaged, truncated or hostile input is refused with the tree left as it was.
 */
#include "octonav.h"
#include "tree.h"
#include "minitest.h"

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAIL_CORRUPT (ON_FAILURE | ON_CORRUPT)
#define FAIL_VERSION (ON_FAILURE | ON_VERSION)

/* ---- helpers --------------------------------------------------------------------------------- */

typedef struct rng {
    uint64_t s;
} rng;

static uint32_t rnd(rng *r)
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(r->s >> 33);
}
static double rndf(rng *r) { return (double)rnd(r) / 2147483648.0; } /* [0, 1) */

/* Bitwise CRC-32 (zlib's), independent of the table in tilefile.c. */
static uint32_t tcrc(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++) c = (c & 1u) ? (c >> 1) ^ 0xedb88320u : c >> 1;
    }
    return ~c;
}
static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void wrf64(uint8_t *p, double d)
{
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
/* Recompute the trailing CRC of a blob or file of n bytes. */
static void fix_crc(uint8_t *p, size_t n) { wr32(p + n - 4, tcrc(p, n - 4)); }

/* An exact-size heap copy, so ASan sees any read past the end. */
static uint8_t *dup_bytes(const uint8_t *p, size_t n)
{
    uint8_t *q = malloc(n ? n : 1);
    if (n) memcpy(q, p, n);
    return q;
}

static on_tree_params scene_params(int depth, int nx, int ny, int nz)
{
    on_tree_params p;
    memset(&p, 0, sizeof p);
    p.tiles[0] = nx;
    p.tiles[1] = ny;
    p.tiles[2] = nz;
    p.depth = depth;
    p.scale = 0.5;
    p.origin[0] = -3.0;
    p.origin[1] = 1.25;
    p.origin[2] = 7.0;
    p.radius = 0.25; /* dyadic, so the tile-covering box below lands exactly on tile 0 */
    return p;
}

static on_tree *empty_like(const on_tree *a)
{
    on_tree *b = NULL;
    CHECK(on_ok(on_tree_create(on_tree_get_params(a), &b)));
    return b;
}

/* Tile 0 solid (a box covering it exactly once inflated), the last tile left empty, random boxes
 * of many sizes elsewhere. */
static on_tree *make_scene(uint64_t seed, int depth, int nx, int ny, int nz, int nboxes)
{
    on_tree_params p = scene_params(depth, nx, ny, nz);
    on_tree *t = NULL;
    CHECK(on_ok(on_tree_create(&p, &t)));
    if (!t) return NULL;
    double n = (double)(1 << depth), s = p.scale, r = p.radius;
    double lo[3], hi[3];
    for (int i = 0; i < 3; i++) {
        lo[i] = p.origin[i] + r;
        hi[i] = p.origin[i] + n * s - r;
    }
    CHECK(on_ok(on_tree_add_box(t, lo, hi)));
    double ext[3] = {nx * n, ny * n, nz * n}, last[3] = {(nx - 1) * n, (ny - 1) * n, (nz - 1) * n};
    rng g = {seed};
    for (int b = 0; b < nboxes; b++) {
        double bl[3], bh[3];
        int touches_last = 1;
        for (int i = 0; i < 3; i++) {
            double size = 0.2 + rndf(&g) * (rnd(&g) % 4 == 0 ? n * 0.7 : 2.5);
            bl[i] = rndf(&g) * ext[i];
            bh[i] = bl[i] + size;
            if (bh[i] + 1 <= last[i]) touches_last = 0;
        }
        if (touches_last) continue;
        double wl[3], wh[3];
        for (int i = 0; i < 3; i++) {
            wl[i] = p.origin[i] + bl[i] * s;
            wh[i] = p.origin[i] + bh[i] * s;
        }
        CHECK(on_ok(on_tree_add_box(t, wl, wh)));
    }
    CHECK(t->tiles[0].solid == 1);
    CHECK(t->tiles[t->ntiles - 1].solid == 0 && t->tiles[t->ntiles - 1].table.count == 0);
    return t;
}

/* Number of differences between two trees' params and stored nodes. */
static int tree_diff(const on_tree *a, const on_tree *b)
{
    int d = 0;
    const on_tree_params *pa = &a->p, *pb = &b->p;
    if (pa->depth != pb->depth || memcmp(pa->tiles, pb->tiles, sizeof pa->tiles) != 0) return 1;
    if (memcmp(pa->origin, pb->origin, sizeof pa->origin) != 0 || memcmp(&pa->scale, &pb->scale, 8) != 0 ||
        memcmp(&pa->radius, &pb->radius, 8) != 0)
        d++;
    for (uint32_t i = 0; i < a->ntiles; i++) {
        const on_tile *ta = &a->tiles[i], *tb = &b->tiles[i];
        if (ta->solid != tb->solid || ta->table.count != tb->table.count || !tb->loaded) d++;
        for (uint32_t k = 0; k < ta->table.cap; k++) {
            uint32_t key;
            uint8_t val;
            if (!on_table_slot(&ta->table, k, &key, &val)) continue;
            const uint8_t *v = on_table_find(&tb->table, key);
            if (!v || *v != val) d++;
        }
    }
    return d;
}

/* Random leaves: the same free/blocked answer and the same free cell. */
static int leaf_diff(const on_tree *a, const on_tree *b, uint64_t seed, int samples)
{
    rng g = {seed};
    int d = 0;
    int64_t n = a->n;
    for (int s = 0; s < samples; s++) {
        int64_t x = (int64_t)(rnd(&g) % (uint32_t)(n * a->p.tiles[0]));
        int64_t y = (int64_t)(rnd(&g) % (uint32_t)(n * a->p.tiles[1]));
        int64_t z = (int64_t)(rnd(&g) % (uint32_t)(n * a->p.tiles[2]));
        on_cell ca = {0, 0}, cb = {0, 0};
        int fa = on_tree_leaf_free(a, x, y, z, &ca), fb = on_tree_leaf_free(b, x, y, z, &cb);
        if (fa != fb || (fa && (ca.tile != cb.tile || ca.code != cb.code))) d++;
    }
    return d;
}

/* Encode a tile into an exact-size heap buffer. */
static uint8_t *encode_alloc(const on_tree *t, uint32_t tile, size_t *len)
{
    size_t n = 0;
    on_status s = on_tree_encode_tile(t, tile, NULL, 0, &n);
    CHECK_EQ_INT(s, ON_FAILURE | ON_BUFFER_SMALL);
    uint8_t *buf = malloc(n);
    CHECK(on_ok(on_tree_encode_tile(t, tile, buf, n, len)));
    CHECK_EQ_INT(*len, n);
    return buf;
}

static int read_whole(const char *path, uint8_t **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    *out = NULL;
    *len = 0;
    if (!f) return -1;
    size_t cap = 4096, n = 0;
    uint8_t *b = malloc(cap);
    for (;;) {
        if (n == cap) b = realloc(b, cap *= 2);
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    fclose(f);
    *out = b;
    *len = n;
    return 0;
}

static int write_whole(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int ok = fwrite(p, 1, n, f) == n;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

static int file_exists(const char *path) { return access(path, F_OK) == 0; }

/* Entries of a directory other than . and .. (leftover temporaries show up here). */
static int dir_entries(const char *dir)
{
    DIR *dp = opendir(dir);
    if (!dp) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(dp);
    return n;
}


/* A hand-made blob: header, the given nodes (2 bytes each), a correct CRC. */
static size_t make_blob(uint8_t *out, const char *magic, unsigned version, unsigned depth, unsigned flags,
                        uint32_t n, const uint8_t *nodes, size_t nbytes)
{
    memcpy(out, magic, 4);
    out[4] = (uint8_t)version;
    out[5] = (uint8_t)(version >> 8);
    out[6] = (uint8_t)depth;
    out[7] = (uint8_t)flags;
    wr32(out + 8, n);
    if (nbytes) memcpy(out + 12, nodes, nbytes);
    size_t len = 12 + nbytes + 4;
    fix_crc(out, len);
    return len;
}

/* Decode expecting a given failure, and check the tile, its salt and the revision did not move. */
static void expect_decode_fail(on_tree *t, uint32_t tile, const uint8_t *blob, size_t len, on_status want)
{
    size_t l0, l1;
    uint8_t *before = encode_alloc(t, tile, &l0);
    uint64_t rev = on_tree_revision(t);
    uint32_t salt = on_tree_tile_salt(t, tile);
    uint8_t *copy = dup_bytes(blob, len);
    CHECK_EQ_INT(on_tree_decode_tile(t, tile, copy, len), want);
    free(copy);
    CHECK_EQ_INT(on_tree_revision(t), rev);
    CHECK_EQ_INT(on_tree_tile_salt(t, tile), salt);
    uint8_t *after = encode_alloc(t, tile, &l1);
    CHECK(l0 == l1 && memcmp(before, after, l0) == 0);
    free(before);
    free(after);
}

/* ---- tests ----------------------------------------------------------------------------------- */

static void test_crc(void)
{
    CHECK_EQ_INT(tcrc((const uint8_t *)"123456789", 9), 0xcbf43926u);
}

static void test_tile_roundtrip(void)
{
    /* depth, tiles, boxes */
    static const int dims[][5] = {{3, 3, 2, 2, 40}, {4, 3, 2, 2, 60}, {5, 2, 2, 2, 120}, {6, 2, 2, 1, 150}, {9, 3, 1, 1, 4}};
    for (int c = 0; c < 5; c++) {
        for (uint64_t seed = 1; seed <= 3; seed++) {
            int depth = dims[c][0];
            on_tree *a = make_scene(seed * 7919 + (uint64_t)depth, depth, dims[c][1], dims[c][2], dims[c][3],
                                    dims[c][4]);
            on_tree *b = empty_like(a);
            if (!a || !b) return;
            uint8_t **blobs = calloc(a->ntiles, sizeof *blobs);
            size_t *lens = calloc(a->ntiles, sizeof *lens);
            for (uint32_t i = 0; i < a->ntiles; i++) {
                size_t need = 0, len = 7;
                blobs[i] = encode_alloc(a, i, &lens[i]);
                need = lens[i];
                CHECK_EQ_INT(need, 16 + 2 * (size_t)a->tiles[i].table.count);
                CHECK_EQ_INT(on_tree_encode_tile(a, i, blobs[i], need - 1, &len), ON_FAILURE | ON_BUFFER_SMALL);
                CHECK_EQ_INT(len, need);
                CHECK(memcmp(blobs[i], "ONTL", 4) == 0 && blobs[i][4] == 1 && blobs[i][5] == 0);
                CHECK_EQ_INT(blobs[i][6], depth);
                CHECK_EQ_INT(blobs[i][7], a->tiles[i].solid);
                CHECK_EQ_INT(rd32(blobs[i] + 8), a->tiles[i].table.count);
                CHECK_EQ_INT(rd32(blobs[i] + need - 4), tcrc(blobs[i], need - 4));
                uint64_t rev = on_tree_revision(b);
                uint32_t salt = on_tree_tile_salt(b, i);
                CHECK_EQ_INT(on_tree_decode_tile(b, i, blobs[i], need), ON_SUCCESS);
                CHECK_EQ_INT(on_tree_revision(b), rev + 1);
                CHECK(on_tree_tile_salt(b, i) != salt);
                /* the table is sized for exactly its nodes */
                uint32_t cnt = b->tiles[i].table.count, cap = b->tiles[i].table.cap;
                CHECK(cnt == 0 ? cap == 0 : (cap <= 8 || cap <= (uint32_t)(cnt / 0.9) + 1));
            }
            CHECK_EQ_INT(tree_diff(a, b), 0);
            CHECK_EQ_INT(leaf_diff(a, b, seed, 4000), 0);
            /* the bytes do not depend on the hash tables' layout */
            CHECK(on_ok(on_tree_compact(a, 0.3)));
            for (uint32_t i = 0; i < a->ntiles; i++) {
                size_t la, lb;
                uint8_t *ea = encode_alloc(a, i, &la), *eb = encode_alloc(b, i, &lb);
                CHECK(la == lens[i] && memcmp(ea, blobs[i], la) == 0);
                CHECK(lb == lens[i] && memcmp(eb, blobs[i], lb) == 0);
                free(ea);
                free(eb);
                free(blobs[i]);
            }
            free(blobs);
            free(lens);
            on_tree_destroy(a);
            on_tree_destroy(b);
        }
    }
}

static void test_encode_args(void)
{
    on_tree *t = make_scene(5, 3, 3, 1, 1, 10);
    if (!t) return;
    size_t len = 99;
    uint8_t buf[64];
    CHECK_EQ_INT(on_tree_encode_tile(t, 3, buf, sizeof buf, &len), ON_FAILURE | ON_INVALID);
    CHECK_EQ_INT(on_tree_decode_tile(t, 3, buf, sizeof buf), ON_FAILURE | ON_INVALID);
    /* a solid tile and an empty one are 16 bytes */
    CHECK_EQ_INT(on_tree_encode_tile(t, 0, buf, sizeof buf, &len), ON_SUCCESS);
    CHECK_EQ_INT(len, 16);
    CHECK_EQ_INT(buf[7], 1);
    on_tree_clear_tile(t, 1);
    CHECK_EQ_INT(on_tree_encode_tile(t, 1, buf, sizeof buf, &len), ON_SUCCESS);
    CHECK_EQ_INT(len, 16);
    CHECK_EQ_INT(buf[7], 0);
    CHECK_EQ_INT(on_tree_encode_tile(t, 1, buf, 15, &len), ON_FAILURE | ON_BUFFER_SMALL);
    CHECK_EQ_INT(len, 16);
    /* a tile whose contents are not in memory cannot be written */
    t->tiles[1].loaded = 0;
    CHECK_EQ_INT(on_tree_encode_tile(t, 1, buf, sizeof buf, &len), ON_FAILURE | ON_INVALID);
    t->tiles[1].loaded = 1;
    on_tree_destroy(t);
}

/* A blob written by hand decodes to the expected geometry and re-encodes to the same bytes. */
static void test_handmade_blob(void)
{
    on_tree_params p = scene_params(2, 1, 1, 1);
    p.origin[0] = p.origin[1] = p.origin[2] = 0;
    p.scale = 1;
    p.radius = 0;
    on_tree *t = NULL;
    CHECK(on_ok(on_tree_create(&p, &t)));
    if (!t) return;
    /* root: child 0 blocked, child 1 stored; child 1 (layer 1 at x=2): its child 7 blocked */
    const uint8_t nodes[] = {0x01, 0x02, 0x80, 0x00};
    uint8_t blob[64];
    size_t len = make_blob(blob, "ONTL", 1, 2, 0, 2, nodes, sizeof nodes);
    CHECK_EQ_INT(len, 20);
    uint8_t *copy = dup_bytes(blob, len);
    CHECK_EQ_INT(on_tree_decode_tile(t, 0, copy, len), ON_SUCCESS);
    free(copy);
    on_cell c;
    CHECK_EQ_INT(t->tiles[0].table.count, 2);
    CHECK(!on_tree_leaf_free(t, 0, 0, 0, NULL));
    CHECK(!on_tree_leaf_free(t, 1, 1, 1, NULL));
    CHECK(!on_tree_leaf_free(t, 3, 1, 1, NULL));
    CHECK(on_tree_leaf_free(t, 2, 0, 0, &c) && c.code == on_code_make(2, 0, 0, 0));
    CHECK(on_tree_leaf_free(t, 3, 3, 3, &c) && c.code == on_code_make(2, 2, 2, 1));
    size_t l2;
    uint8_t *again = encode_alloc(t, 0, &l2);
    CHECK(l2 == len && memcmp(again, blob, len) == 0);
    free(again);
    /* a solid blob makes the tile solid; a free one clears it */
    len = make_blob(blob, "ONTL", 1, 2, 1, 0, NULL, 0);
    CHECK_EQ_INT(on_tree_decode_tile(t, 0, blob, len), ON_SUCCESS);
    CHECK(t->tiles[0].solid && t->tiles[0].table.count == 0 && !on_tree_leaf_free(t, 2, 0, 0, NULL));
    len = make_blob(blob, "ONTL", 1, 2, 0, 0, NULL, 0);
    CHECK_EQ_INT(on_tree_decode_tile(t, 0, blob, len), ON_SUCCESS);
    CHECK(!t->tiles[0].solid && t->tiles[0].table.count == 0);
    CHECK(on_tree_leaf_free(t, 1, 1, 1, &c) && c.code == on_root_code(t));
    on_tree_destroy(t);
}

/* Structurally bad blobs with correct CRCs, wrong depth, versions, lengths. */
static void test_bad_blobs(void)
{
    on_tree *t = make_scene(11, 3, 3, 1, 1, 20);
    if (!t) return;
    uint32_t tile = 1; /* holds nodes */
    CHECK(t->tiles[tile].table.count > 0);
    uint8_t b[256];
    size_t len;
#define BAD(depth, flags, n, ...)                                                              \
    do {                                                                                       \
        const uint8_t nd[] = {__VA_ARGS__};                                                    \
        len = make_blob(b, "ONTL", 1, depth, flags, n, nd, sizeof nd);                         \
        expect_decode_fail(t, tile, b, len, FAIL_CORRUPT);                                     \
    } while (0)
    BAD(3, 0, 1, 0x01, 0x01);             /* blocked and stored */
    BAD(3, 0, 1, 0xff, 0x00);             /* all blocked: should have been pruned */
    BAD(3, 0, 1, 0x00, 0x00);             /* empty node: should not be stored */
    BAD(3, 0, 2, 0x00, 0x01, 0x00, 0x00); /* empty child */
    BAD(3, 0, 3, 0x00, 0x01, 0x00, 0x01, 0x01, 0x02); /* layer-1 node with stored (leaf) children */
    BAD(3, 1, 1, 0x01, 0x00);             /* solid with nodes */
    BAD(3, 2, 1, 0x01, 0x00);             /* unknown flag */
    BAD(3, 0, 2, 0x00, 0x03, 0x01, 0x00); /* the walk wants a third node */
    BAD(3, 0, 3, 0x00, 0x01, 0x01, 0x00, 0x01, 0x00); /* a node left over */
    BAD(4, 0, 1, 0x01, 0x00);             /* another depth */
    BAD(2, 0, 1, 0x01, 0x00);
    {
        const uint8_t nd[] = {0x01, 0x00};
        len = make_blob(b, "ONTL", 2, 3, 0, 1, nd, 2);
        expect_decode_fail(t, tile, b, len, FAIL_VERSION);
        len = make_blob(b, "ONTL", 0, 3, 0, 1, nd, 2);
        expect_decode_fail(t, tile, b, len, FAIL_VERSION);
        len = make_blob(b, "ONTX", 1, 3, 0, 1, nd, 2);
        expect_decode_fail(t, tile, b, len, FAIL_CORRUPT);
        /* n larger than the bytes, n smaller, a hostile n */
        len = make_blob(b, "ONTL", 1, 3, 0, 1, nd, 2);
        wr32(b + 8, 2);
        fix_crc(b, len);
        expect_decode_fail(t, tile, b, len, FAIL_CORRUPT);
        wr32(b + 8, 0);
        fix_crc(b, len);
        expect_decode_fail(t, tile, b, len, FAIL_CORRUPT);
        wr32(b + 8, 0xffffffffu);
        fix_crc(b, len);
        expect_decode_fail(t, tile, b, len, FAIL_CORRUPT);
        wr32(b + 8, 0x80000000u);
        fix_crc(b, len);
        expect_decode_fail(t, tile, b, len, FAIL_CORRUPT);
        /* a trailing byte */
        len = make_blob(b, "ONTL", 1, 3, 0, 1, nd, 2);
        b[len] = 0;
        expect_decode_fail(t, tile, b, len + 1, FAIL_CORRUPT);
        /* the baseline is good: it decodes */
        len = make_blob(b, "ONTL", 1, 3, 0, 1, nd, 2);
        CHECK_EQ_INT(on_tree_decode_tile(t, 0, b, len), ON_SUCCESS);
        CHECK(!t->tiles[0].solid && t->tiles[0].table.count == 1);
    }
    CHECK_EQ_INT(on_tree_decode_tile(t, tile, NULL, 0), FAIL_CORRUPT);
    CHECK_EQ_INT(on_tree_decode_tile(t, tile, NULL, 5), ON_FAILURE | ON_INVALID);
    /* a real blob from a tree of another depth */
    on_tree *d4 = make_scene(3, 4, 3, 1, 1, 20);
    if (d4) {
        size_t l4;
        uint8_t *e4 = encode_alloc(d4, 1, &l4);
        expect_decode_fail(t, tile, e4, l4, FAIL_CORRUPT);
        free(e4);
        on_tree_destroy(d4);
    }
#undef BAD
    on_tree_destroy(t);
}

/* Every truncation and every single-byte change of a real blob is refused. */
static void test_blob_damage(void)
{
    on_tree *t = make_scene(21, 4, 3, 1, 1, 30);
    if (!t) return;
    uint32_t tile = 1;
    size_t len;
    uint8_t *blob = encode_alloc(t, tile, &len);
    CHECK(len > 30);
    uint64_t rev = on_tree_revision(t);
    size_t l0;
    uint8_t *before = encode_alloc(t, tile, &l0);
    int bad = 0;
    for (size_t l = 0; l < len; l++) {
        uint8_t *c = dup_bytes(blob, l);
        if (on_tree_decode_tile(t, tile, c, l) != FAIL_CORRUPT) bad++;
        free(c);
    }
    CHECK_EQ_INT(bad, 0);
    static const uint8_t flips[] = {0x01, 0x10, 0x80, 0xff};
    for (size_t pos = 0; pos < len; pos++)
        for (unsigned f = 0; f < sizeof flips; f++) {
            uint8_t *c = dup_bytes(blob, len);
            c[pos] ^= flips[f];
            on_status want = (pos == 4 || pos == 5) ? FAIL_VERSION : FAIL_CORRUPT;
            if (on_tree_decode_tile(t, tile, c, len) != want) bad++;
            free(c);
        }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(on_tree_revision(t), rev);
    size_t l1;
    uint8_t *after = encode_alloc(t, tile, &l1);
    CHECK(l0 == l1 && memcmp(before, after, l0) == 0);
    free(before);
    free(after);
    free(blob);
    on_tree_destroy(t);
}

typedef struct tmpdir {
    char dir[64];
} tmpdir;

static void path_in(char *out, size_t cap, const tmpdir *d, const char *name)
{
    snprintf(out, cap, "%s/%s", d->dir, name);
}

static void test_save_load(const tmpdir *d)
{
    char pa[128], pb[128], ptmp[160];
    path_in(pa, sizeof pa, d, "a.oct");
    path_in(pb, sizeof pb, d, "b.oct");
    snprintf(ptmp, sizeof ptmp, "%s.tmp", pa);
    for (int depth = 3; depth <= 6; depth++) {
        on_tree *a = make_scene(100 + (uint64_t)depth, depth, 3, 2, depth <= 4 ? 2 : 1, depth * 20);
        if (!a) return;
        CHECK_EQ_INT(on_tree_save(a, pa), ON_SUCCESS);
        CHECK(!file_exists(ptmp));
        CHECK_EQ_INT(dir_entries(d->dir), depth == 3 ? 1 : 2); /* the file (and b.oct): no temporary */
        on_tree *b = NULL;
        CHECK_EQ_INT(on_tree_load(pa, &b), ON_SUCCESS);
        if (!b) {
            on_tree_destroy(a);
            return;
        }
        CHECK_EQ_INT(tree_diff(a, b), 0);
        CHECK_EQ_INT(leaf_diff(a, b, 9, 4000), 0);
        CHECK_EQ_INT(on_tree_save(b, pb), ON_SUCCESS);
        uint8_t *fa = NULL, *fb = NULL;
        size_t la = 0, lb = 0;
        CHECK(read_whole(pa, &fa, &la) == 0);
        CHECK(read_whole(pb, &fb, &lb) == 0);
        if (!fa || !fb || la < 64) {
            free(fa);
            free(fb);
            on_tree_destroy(a);
            on_tree_destroy(b);
            return;
        }
        CHECK(la == lb && memcmp(fa, fb, la) == 0);
        /* the layout: header, length-prefixed tile blobs in index order, CRC */
        CHECK(memcmp(fa, "OCTN", 4) == 0 && fa[4] == 1 && fa[5] == 0 && fa[6] == depth && fa[7] == 0);
        CHECK(rd32(fa + 8) == 3 && rd32(fa + 12) == 2);
        CHECK_EQ_INT(rd32(fa + la - 4), tcrc(fa, la - 4));
        size_t pos = 60;
        for (uint32_t i = 0; i < a->ntiles && pos + 4 <= la; i++) {
            uint32_t bl = rd32(fa + pos);
            CHECK_EQ_INT(bl, 16 + 2 * (size_t)a->tiles[i].table.count);
            pos += 4 + bl;
        }
        CHECK_EQ_INT(pos, la - 4);
        /* from memory, and saving over an existing file */
        on_tree *c = NULL;
        CHECK_EQ_INT(on_tree_load_memory(fa, la, &c), ON_SUCCESS);
        CHECK(c && tree_diff(a, c) == 0);
        on_tree_destroy(c);
        CHECK_EQ_INT(on_tree_save(b, pa), ON_SUCCESS);
        free(fb);
        CHECK(read_whole(pa, &fb, &lb) == 0 && la == lb && memcmp(fa, fb, la) == 0);
        free(fa);
        free(fb);
        on_tree_destroy(a);
        on_tree_destroy(b);
    }
    remove(pa);
    remove(pb);
}

/* Every truncation and single-byte change of a small file fails cleanly. */
static void test_file_damage(const tmpdir *d)
{
    char pa[128];
    path_in(pa, sizeof pa, d, "small.oct");
    on_tree *a = make_scene(77, 3, 3, 1, 1, 12);
    if (!a) return;
    CHECK_EQ_INT(on_tree_save(a, pa), ON_SUCCESS);
    on_tree_destroy(a);
    uint8_t *f;
    size_t len;
    CHECK(read_whole(pa, &f, &len) == 0);
    CHECK(len > 100);
    int bad = 0;
    for (size_t l = 0; l < len; l++) {
        uint8_t *c = dup_bytes(f, l);
        on_tree *o = (on_tree *)c;
        if (on_tree_load_memory(c, l, &o) != FAIL_CORRUPT || o != NULL) bad++;
        free(c);
    }
    CHECK_EQ_INT(bad, 0);
    static const uint8_t flips[] = {0x01, 0x40, 0x80, 0xff};
    for (size_t pos = 0; pos < len; pos++)
        for (unsigned k = 0; k < sizeof flips; k++) {
            uint8_t *c = dup_bytes(f, len);
            c[pos] ^= flips[k];
            on_tree *o = (on_tree *)c;
            on_status want = (pos == 4 || pos == 5) ? FAIL_VERSION : FAIL_CORRUPT;
            if (on_tree_load_memory(c, len, &o) != want || o != NULL) bad++;
            free(c);
        }
    CHECK_EQ_INT(bad, 0);
    /* a truncated file on disk */
    CHECK(write_whole(pa, f, len - 1) == 0);
    on_tree *o = NULL;
    CHECK_EQ_INT(on_tree_load(pa, &o), FAIL_CORRUPT);
    CHECK(o == NULL);
    free(f);
    remove(pa);
}

/* Patch a copy of a file, fix its CRC, expect a status. */
static void expect_load(const uint8_t *f, size_t len, on_status want)
{
    uint8_t *c = dup_bytes(f, len);
    fix_crc(c, len);
    on_tree *o = NULL;
    CHECK_EQ_INT(on_tree_load_memory(c, len, &o), want);
    CHECK(want == ON_SUCCESS ? o != NULL : o == NULL);
    on_tree_destroy(o);
    free(c);
}

static void test_hostile_file(void)
{
    on_tree *a = make_scene(55, 3, 3, 1, 1, 12);
    if (!a) return;
    CHECK(a->tiles[1].table.count > 0);
    /* build the file by hand from the blobs: at[i] is where tile i's length field sits */
    uint8_t *blob[3];
    size_t bl[3], at[3], len = 60;
    for (uint32_t i = 0; i < 3; i++) {
        blob[i] = encode_alloc(a, i, &bl[i]);
        at[i] = len;
        len += 4 + bl[i];
    }
    len += 4;
    uint8_t *f = calloc(1, len + 16);
    memcpy(f, "OCTN", 4);
    f[4] = 1;
    f[6] = 3;
    wr32(f + 8, 3);
    wr32(f + 12, 1);
    wr32(f + 16, 1);
    const on_tree_params *p = on_tree_get_params(a);
    for (int i = 0; i < 3; i++) wrf64(f + 20 + 8 * i, p->origin[i]);
    wrf64(f + 44, p->scale);
    wrf64(f + 52, p->radius);
    for (int i = 0; i < 3; i++) {
        wr32(f + at[i], (uint32_t)bl[i]);
        memcpy(f + at[i] + 4, blob[i], bl[i]);
    }
    expect_load(f, len, ON_SUCCESS);
    {
        on_tree *o = NULL;
        fix_crc(f, len);
        CHECK_EQ_INT(on_tree_load_memory(f, len, &o), ON_SUCCESS);
        CHECK(o && tree_diff(a, o) == 0);
        on_tree_destroy(o);
    }
    uint8_t *c = malloc(len + 16);
    size_t t1 = at[1] + 4; /* tile 1's blob */
#define PATCH(stmt, want)                                                                      \
    do {                                                                                       \
        memcpy(c, f, len);                                                                     \
        stmt;                                                                                  \
        expect_load(c, len, want);                                                             \
    } while (0)
    PATCH(wr32(c + at[0], 0xffffffffu), FAIL_CORRUPT);             /* hostile tile lengths */
    PATCH(wr32(c + at[0], 0xfffffffcu), FAIL_CORRUPT);
    PATCH(wr32(c + at[0], (uint32_t)(len - at[0] - 8 + 1)), FAIL_CORRUPT); /* one past the end */
    PATCH(wr32(c + at[0], (uint32_t)(len - at[0] - 8)), FAIL_CORRUPT);     /* all the rest */
    PATCH(wr32(c + at[0], (uint32_t)bl[0] - 1), FAIL_CORRUPT);
    PATCH(wr32(c + at[1], 0xffffffffu), FAIL_CORRUPT);
    PATCH(wr32(c + at[1], (uint32_t)bl[1] + 1), FAIL_CORRUPT);
    PATCH(wr32(c + at[2], 0x7fffffffu), FAIL_CORRUPT);
    PATCH(wr32(c + at[2], 0), FAIL_CORRUPT);
    PATCH(wr32(c + 8, 4096); wr32(c + 12, 4096); wr32(c + 16, 127), FAIL_CORRUPT); /* huge grid */
    PATCH(wr32(c + 8, 0xffffffffu), FAIL_CORRUPT);
    PATCH(wr32(c + 8, 0), FAIL_CORRUPT);
    PATCH(wr32(c + 8, 4097), FAIL_CORRUPT);
    PATCH(wr32(c + 8, 2), FAIL_CORRUPT);                           /* a tile left over */
    PATCH(wr32(c + 12, 2), FAIL_CORRUPT);                          /* tiles missing */
    PATCH(c[6] = 0, FAIL_CORRUPT);
    PATCH(c[6] = 10, FAIL_CORRUPT);
    PATCH(c[6] = 4, FAIL_CORRUPT);                                 /* the blobs say depth 3 */
    PATCH(c[7] = 1, FAIL_CORRUPT);                                 /* reserved */
    PATCH(wrf64(c + 44, NAN), FAIL_CORRUPT);
    PATCH(wrf64(c + 44, 0.0), FAIL_CORRUPT);
    PATCH(wrf64(c + 44, -1.0), FAIL_CORRUPT);
    PATCH(wrf64(c + 52, -0.5), FAIL_CORRUPT);
    PATCH(wrf64(c + 20, INFINITY), FAIL_CORRUPT);
    PATCH(c[4] = 2, FAIL_VERSION);
    PATCH(c[t1 + 4] = 2; fix_crc(c + t1, bl[1]), FAIL_VERSION);    /* a tile of a newer format */
    /* a structurally bad tile with both CRCs right: tile 1's root marked fully blocked */
    PATCH(c[t1 + 12] = 0xff; c[t1 + 13] = 0; fix_crc(c + t1, bl[1]), FAIL_CORRUPT);
    /* an unchanged file still loads */
    PATCH((void)0, ON_SUCCESS);
    /* a trailing byte */
    memcpy(c, f, len);
    memmove(c + len - 3, c + len - 4, 4);
    c[len - 4] = 0;
    expect_load(c, len + 1, FAIL_CORRUPT);
#undef PATCH
    on_tree *o = (on_tree *)c;
    CHECK_EQ_INT(on_tree_load_memory(NULL, 0, &o), FAIL_CORRUPT);
    CHECK(o == NULL);
    CHECK_EQ_INT(on_tree_load_memory(f, len, NULL), ON_FAILURE | ON_INVALID);
    free(c);
    free(f);
    for (int i = 0; i < 3; i++) free(blob[i]);
    on_tree_destroy(a);
}

static void test_io_errors(const tmpdir *d)
{
    char p[160];
    on_tree *o = (on_tree *)&p;
    path_in(p, sizeof p, d, "missing.oct");
    CHECK_EQ_INT(on_tree_load(p, &o), ON_FAILURE | ON_IO);
    CHECK(o == NULL);
    CHECK_EQ_INT(on_tree_load(d->dir, &o), ON_FAILURE | ON_IO); /* a directory */
    on_tree *a = make_scene(5, 3, 3, 1, 1, 5);
    if (!a) return;
    path_in(p, sizeof p, d, "no/such/dir/x.oct");
    CHECK_EQ_INT(on_tree_save(a, p), ON_FAILURE | ON_IO);
    /* a failed save leaves neither the file nor the temporary behind */
    path_in(p, sizeof p, d, "unloaded.oct");
    a->tiles[1].loaded = 0;
    CHECK_EQ_INT(on_tree_save(a, p), ON_FAILURE | ON_INVALID);
    CHECK(!file_exists(p));
    CHECK_EQ_INT(dir_entries(d->dir), 0);
    a->tiles[1].loaded = 1;
    /* an empty file */
    path_in(p, sizeof p, d, "empty.oct");
    CHECK(write_whole(p, (const uint8_t *)"", 0) == 0);
    CHECK_EQ_INT(on_tree_load(p, &o), FAIL_CORRUPT);
    remove(p);
    on_tree_destroy(a);
}

/* Tile files: the blob behind a header with the tile's position; refused at another position (a
 * swapped file), as a bare blob (the old files), or damaged anywhere. */
static void test_tile_files(void)
{
    on_tree *t = make_scene(41, 3, 3, 2, 1, 30);
    if (!t) return;
    size_t fl = 0, bl = 0, l2 = 0;
    CHECK_EQ_INT(on_tree_encode_tile_file(t, 4, NULL, 0, &fl), ON_FAILURE | ON_BUFFER_SMALL);
    uint8_t *f = malloc(fl), *blob = encode_alloc(t, 4, &bl);
    CHECK_EQ_INT(on_tree_encode_tile_file(t, 4, f, fl - 1, &l2), ON_FAILURE | ON_BUFFER_SMALL);
    CHECK_EQ_INT(l2, fl);
    CHECK_EQ_INT(on_tree_encode_tile_file(t, 4, f, fl, &l2), ON_SUCCESS);
    /* the layout: "ONTF", version 1, i j k = 1 1 0 (tile 4 of 3 x 2 x 1), CRC of the 12 bytes, the blob */
    CHECK(fl == 16 + bl && memcmp(f, "ONTF\1\0\1\0\1\0\0\0", 12) == 0);
    CHECK_EQ_INT(rd32(f + 12), tcrc(f, 12));
    CHECK(memcmp(f + 16, blob, bl) == 0);
    on_tree *u = empty_like(t);
    if (!u) return;
    CHECK_EQ_INT(on_tree_decode_tile_file(u, 4, f, fl), ON_SUCCESS);
    size_t l3;
    uint8_t *back = encode_alloc(u, 4, &l3);
    CHECK(l3 == bl && memcmp(back, blob, bl) == 0);
    free(back);
    /* at any other position: misplaced, and the tile is unchanged */
    int bad = 0;
    for (uint32_t i = 0; i < u->ntiles; i++) {
        if (i == 4) continue;
        uint32_t salt = on_tree_tile_salt(u, i);
        if (on_tree_decode_tile_file(u, i, f, fl) != (ON_FAILURE | ON_MISPLACED) || on_tree_tile_salt(u, i) != salt)
            bad++;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(on_tree_decode_tile_file(u, 4, blob, bl), ON_FAILURE | ON_VERSION); /* a bare blob */
    /* every truncation and every byte flip is refused: the header's CRC, the blob's CRC */
    for (size_t l = 0; l < fl; l++) {
        uint8_t *c = dup_bytes(f, l);
        if (on_tree_decode_tile_file(u, 4, c, l) != FAIL_CORRUPT) bad++;
        free(c);
    }
    for (size_t pos = 0; pos < fl; pos++) {
        uint8_t *c = dup_bytes(f, fl);
        c[pos] ^= 0x21;
        on_status want = (pos == 4 || pos == 5 || pos == 16 + 4 || pos == 16 + 5) ? FAIL_VERSION : FAIL_CORRUPT;
        if (on_tree_decode_tile_file(u, 4, c, fl) != want) bad++;
        free(c);
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(on_tree_decode_tile_file(u, 9, f, fl), ON_FAILURE | ON_INVALID);
    CHECK_EQ_INT(strcmp(on_status_string(ON_FAILURE | ON_MISPLACED), "tile file of another tile (a swapped file?)"), 0);
    free(f);
    free(blob);
    on_tree_destroy(u);
    on_tree_destroy(t);
}

/* What is not a regular file is refused at once, with its kind in the message: a FIFO (which used to
 * block the reader forever waiting for a writer; the alarm turns a hang into a failed run), a link to
 * /dev/zero (which used to be read until memory ran out), a directory. */
static void test_not_regular(const tmpdir *d)
{
    char p[160], err[256];
    on_tree *o = NULL;
    alarm(20);
    path_in(p, sizeof p, d, "fifo.oct");
    CHECK(mkfifo(p, 0600) == 0);
    CHECK_EQ_INT(on_tree_load_msg(p, &o, err, sizeof err), ON_FAILURE | ON_IO);
    CHECK(o == NULL && strstr(err, "fifo.oct: cannot read: not a regular file (a FIFO)") != NULL);
    uint8_t *buf = (uint8_t *)err;
    size_t len = 7;
    CHECK_EQ_INT(on_read_file(p, &buf, &len, NULL, 0), ON_FAILURE | ON_IO);
    CHECK(buf == NULL && len == 0);
    remove(p);
    path_in(p, sizeof p, d, "zero.oct");
    CHECK(symlink("/dev/zero", p) == 0);
    CHECK_EQ_INT(on_tree_load_msg(p, &o, err, sizeof err), ON_FAILURE | ON_IO);
    CHECK(strstr(err, "zero.oct: cannot read: not a regular file (a character device)") != NULL);
    remove(p);
    CHECK_EQ_INT(on_tree_load_msg(d->dir, &o, err, sizeof err), ON_FAILURE | ON_IO);
    CHECK(strstr(err, ": cannot read: not a regular file (a directory)") != NULL);
    path_in(p, sizeof p, d, "missing.oct");
    CHECK_EQ_INT(on_tree_load_msg(p, &o, err, sizeof err), ON_FAILURE | ON_IO);
    CHECK(strstr(err, "missing.oct: cannot read: No such file or directory") != NULL);
    alarm(0);
    /* the size limit: refused before anything is allocated, the exact limit passes */
    path_in(p, sizeof p, d, "big.tile");
    CHECK(write_whole(p, (const uint8_t *)"0123456789", 10) == 0);
    CHECK_EQ_INT(on_read_file_max(p, 9, &buf, &len, err, sizeof err), ON_FAILURE | ON_CORRUPT);
    CHECK(buf == NULL && strstr(err, "big.tile: 10 bytes, more than a well-formed file can hold (9)") != NULL);
    CHECK_EQ_INT(on_read_file_max(p, 10, &buf, &len, err, sizeof err), ON_SUCCESS);
    CHECK(len == 10 && buf && memcmp(buf, "0123456789", 11) == 0);
    free(buf);
    remove(p);
    /* the limit a tile file is read with: the largest blob of its depth */
    CHECK_EQ_INT(on_tile_file_max_bytes(1), 16 + 16 + 2);
    CHECK_EQ_INT(on_tile_file_max_bytes(9), 16 + 16 + 2 * (((1ull << 27) - 1) / 7));
}

/* Save failures say why, and leave neither the target changed nor a temporary behind. */
static void test_save_errors(const tmpdir *d)
{
    char p[160], err[256];
    on_tree *a = make_scene(5, 3, 3, 1, 1, 5);
    if (!a) return;
    path_in(p, sizeof p, d, "no/such/dir/x.oct");
    CHECK_EQ_INT(on_tree_save_msg(a, p, err, sizeof err), ON_FAILURE | ON_IO);
    CHECK(strstr(err, "no/such/dir/x.oct: cannot write: No such file or directory") != NULL);
    /* a full disk */
    CHECK_EQ_INT(on_tree_save_msg(a, "/dev/full", err, sizeof err), ON_FAILURE | ON_IO);
    CHECK_EQ_INT(strcmp(err, "/dev/full: cannot write: No space left on device"), 0);
    /* a directory is not replaced */
    CHECK_EQ_INT(on_tree_save_msg(a, d->dir, err, sizeof err), ON_FAILURE | ON_IO);
    CHECK(strstr(err, ": cannot write: not a regular file (a directory)") != NULL);
    CHECK_EQ_INT(dir_entries(d->dir), 0);
    /* a write failing half-way (a file size limit, in a child): the old file stays whole */
    path_in(p, sizeof p, d, "keep.oct");
    on_tree *small = make_scene(6, 3, 2, 1, 1, 0), *big = make_scene(8, 4, 3, 2, 2, 100);
    if (small) CHECK_EQ_INT(on_tree_save(small, p), ON_SUCCESS);
    uint8_t *before = NULL, *after = NULL;
    size_t lb = 0, la = 0;
    CHECK(read_whole(p, &before, &lb) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {200, 200};
        setrlimit(RLIMIT_FSIZE, &rl);
        char e2[256] = "";
        on_status s = big ? on_tree_save_msg(big, p, e2, sizeof e2) : 0;
        _exit(s == (ON_FAILURE | ON_IO) && strstr(e2, "keep.oct: cannot write: File too large") ? 0 : 1);
    }
    int ws = -1;
    CHECK(pid > 0 && waitpid(pid, &ws, 0) == pid);
    CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    CHECK(read_whole(p, &after, &la) == 0);
    CHECK(lb > 60 && la == lb && memcmp(before, after, lb) == 0);
    CHECK_EQ_INT(dir_entries(d->dir), 1);
    free(before);
    free(after);
    remove(p);
    on_tree_destroy(small);
    on_tree_destroy(big);
    on_tree_destroy(a);
}

/* Two processes saving different trees to one path over and over while a third loads it: every load
 * gets one whole tree or the other (with one fixed temporary name the two writers wrote into the same
 * file and published a mix), and no temporary is left behind. */
static void test_concurrent_saves(const tmpdir *d)
{
    char p[160];
    path_in(p, sizeof p, d, "shared.oct");
    on_tree *t[2] = {make_scene(31, 4, 3, 2, 2, 200), make_scene(32, 4, 2, 2, 1, 50)};
    if (!t[0] || !t[1]) return;
    CHECK_EQ_INT(on_tree_save(t[0], p), ON_SUCCESS);
    pid_t pid[2];
    for (int w = 0; w < 2; w++) {
        pid[w] = fork();
        if (pid[w] == 0) {
            int bad = 0;
            for (int k = 0; k < 60; k++) bad += on_tree_save(t[w], p) != ON_SUCCESS;
            _exit(bad ? 1 : 0);
        }
    }
    int loads = 0, wrong = 0, running = 2;
    while (running > 0) {
        on_tree *o = NULL;
        on_status s = on_tree_load(p, &o);
        loads++;
        if (s != ON_SUCCESS || !o || (tree_diff(o, t[0]) != 0 && tree_diff(o, t[1]) != 0)) wrong++;
        on_tree_destroy(o);
        running = 0;
        for (int w = 0; w < 2; w++) {
            int ws;
            if (pid[w] > 0 && waitpid(pid[w], &ws, WNOHANG) == 0) running++;
            else if (pid[w] > 0) {
                CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
                pid[w] = 0;
            }
        }
    }
    CHECK(loads > 0);
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(dir_entries(d->dir), 1);
    remove(p);
    on_tree_destroy(t[0]);
    on_tree_destroy(t[1]);
}

static void run_all(void)
{
    tmpdir d;
    snprintf(d.dir, sizeof d.dir, "/tmp/octonav-tilefile-XXXXXX");
    if (!mkdtemp(d.dir)) {
        CHECK(!"mkdtemp failed");
        return;
    }
    test_crc();
    test_tile_roundtrip();
    test_encode_args();
    test_handmade_blob();
    test_bad_blobs();
    test_blob_damage();
    test_save_load(&d);
    test_file_damage(&d);
    test_hostile_file();
    test_io_errors(&d);
    test_tile_files();
    test_not_regular(&d);
    test_save_errors(&d);
    test_concurrent_saves(&d);
    CHECK_EQ_INT(rmdir(d.dir), 0);
}

TEST_MAIN("tilefile", run_all())
