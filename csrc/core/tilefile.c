/*
 * tilefile.c -- tiles and whole trees as bytes: encode/decode one tile, save/load a tree file.
 *
 * All integers little-endian, written byte by byte; f64 = the IEEE-754 bits as a u64; CRC-32 is
 * zlib's (reflected polynomial 0xEDB88320) over every byte before it.
 * Tile blob (12 + 2n + 4 bytes): "ONTL", u16 version 1, u8 depth, u8 flags (bit0 solid, others 0),
 *   u32 n; n nodes in pre-order from the root, children in index order 0..7, 2 bytes each:
 *   blockFlag, childrenFlag (bit i = child i stored); u32 CRC. A blob is a tile's contents wherever
 *   the tile is: it can be moved to another position (the bake makes each tile in a tree of its own).
 * Tile file (a pack's tiles/I_J_K.tile): "ONTF", u16 version 1, u16 i, j, k (the tile's position),
 *   u32 CRC of those 12 bytes (16 bytes), then the blob. A file decodes only at its own position, so
 *   swapped tile files are refused (ON_MISPLACED); a bare blob (the files written before the header
 *   existed) is refused with ON_VERSION: packs are cheap to bake again, and an unchecked position is
 *   what the header is for.
 * Tree file: "OCTN", u16 version 1, u8 depth, u8 0, u32 nx ny nz, f64 origin x y z, f64 scale,
 *   f64 radius (60 bytes); per tile in index order u32 blob length + blob; u32 CRC. (Its tiles are in
 *   index order under one checksum: they cannot be swapped.)
 * Pre-order and index order make the bytes independent of the hash tables' layout, so
 * save -> load -> save is bit-exact. Decoding validates everything before the tree changes.
 */
#include "tree.h"
#include "fileio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(double) == 8, "f64 fields need a 64-bit double");

#define FORMAT_VERSION 1u
#define TILE_HEADER 12u
#define TILE_FILE_VERSION 1u
#define TILE_FILE_HEADER 16u
#define TREE_HEADER 60u
#define CRC_BYTES 4u
#define TILE_MIN (TILE_HEADER + CRC_BYTES)

/* ---- CRC-32 (IEEE 802.3, as zlib's crc32) ---------------------------------------------------- */

static const uint32_t crc_table[256] = {
    0x00000000u, 0x77073096u, 0xee0e612cu, 0x990951bau, 0x076dc419u, 0x706af48fu,
    0xe963a535u, 0x9e6495a3u, 0x0edb8832u, 0x79dcb8a4u, 0xe0d5e91eu, 0x97d2d988u,
    0x09b64c2bu, 0x7eb17cbdu, 0xe7b82d07u, 0x90bf1d91u, 0x1db71064u, 0x6ab020f2u,
    0xf3b97148u, 0x84be41deu, 0x1adad47du, 0x6ddde4ebu, 0xf4d4b551u, 0x83d385c7u,
    0x136c9856u, 0x646ba8c0u, 0xfd62f97au, 0x8a65c9ecu, 0x14015c4fu, 0x63066cd9u,
    0xfa0f3d63u, 0x8d080df5u, 0x3b6e20c8u, 0x4c69105eu, 0xd56041e4u, 0xa2677172u,
    0x3c03e4d1u, 0x4b04d447u, 0xd20d85fdu, 0xa50ab56bu, 0x35b5a8fau, 0x42b2986cu,
    0xdbbbc9d6u, 0xacbcf940u, 0x32d86ce3u, 0x45df5c75u, 0xdcd60dcfu, 0xabd13d59u,
    0x26d930acu, 0x51de003au, 0xc8d75180u, 0xbfd06116u, 0x21b4f4b5u, 0x56b3c423u,
    0xcfba9599u, 0xb8bda50fu, 0x2802b89eu, 0x5f058808u, 0xc60cd9b2u, 0xb10be924u,
    0x2f6f7c87u, 0x58684c11u, 0xc1611dabu, 0xb6662d3du, 0x76dc4190u, 0x01db7106u,
    0x98d220bcu, 0xefd5102au, 0x71b18589u, 0x06b6b51fu, 0x9fbfe4a5u, 0xe8b8d433u,
    0x7807c9a2u, 0x0f00f934u, 0x9609a88eu, 0xe10e9818u, 0x7f6a0dbbu, 0x086d3d2du,
    0x91646c97u, 0xe6635c01u, 0x6b6b51f4u, 0x1c6c6162u, 0x856530d8u, 0xf262004eu,
    0x6c0695edu, 0x1b01a57bu, 0x8208f4c1u, 0xf50fc457u, 0x65b0d9c6u, 0x12b7e950u,
    0x8bbeb8eau, 0xfcb9887cu, 0x62dd1ddfu, 0x15da2d49u, 0x8cd37cf3u, 0xfbd44c65u,
    0x4db26158u, 0x3ab551ceu, 0xa3bc0074u, 0xd4bb30e2u, 0x4adfa541u, 0x3dd895d7u,
    0xa4d1c46du, 0xd3d6f4fbu, 0x4369e96au, 0x346ed9fcu, 0xad678846u, 0xda60b8d0u,
    0x44042d73u, 0x33031de5u, 0xaa0a4c5fu, 0xdd0d7cc9u, 0x5005713cu, 0x270241aau,
    0xbe0b1010u, 0xc90c2086u, 0x5768b525u, 0x206f85b3u, 0xb966d409u, 0xce61e49fu,
    0x5edef90eu, 0x29d9c998u, 0xb0d09822u, 0xc7d7a8b4u, 0x59b33d17u, 0x2eb40d81u,
    0xb7bd5c3bu, 0xc0ba6cadu, 0xedb88320u, 0x9abfb3b6u, 0x03b6e20cu, 0x74b1d29au,
    0xead54739u, 0x9dd277afu, 0x04db2615u, 0x73dc1683u, 0xe3630b12u, 0x94643b84u,
    0x0d6d6a3eu, 0x7a6a5aa8u, 0xe40ecf0bu, 0x9309ff9du, 0x0a00ae27u, 0x7d079eb1u,
    0xf00f9344u, 0x8708a3d2u, 0x1e01f268u, 0x6906c2feu, 0xf762575du, 0x806567cbu,
    0x196c3671u, 0x6e6b06e7u, 0xfed41b76u, 0x89d32be0u, 0x10da7a5au, 0x67dd4accu,
    0xf9b9df6fu, 0x8ebeeff9u, 0x17b7be43u, 0x60b08ed5u, 0xd6d6a3e8u, 0xa1d1937eu,
    0x38d8c2c4u, 0x4fdff252u, 0xd1bb67f1u, 0xa6bc5767u, 0x3fb506ddu, 0x48b2364bu,
    0xd80d2bdau, 0xaf0a1b4cu, 0x36034af6u, 0x41047a60u, 0xdf60efc3u, 0xa867df55u,
    0x316e8eefu, 0x4669be79u, 0xcb61b38cu, 0xbc66831au, 0x256fd2a0u, 0x5268e236u,
    0xcc0c7795u, 0xbb0b4703u, 0x220216b9u, 0x5505262fu, 0xc5ba3bbeu, 0xb2bd0b28u,
    0x2bb45a92u, 0x5cb36a04u, 0xc2d7ffa7u, 0xb5d0cf31u, 0x2cd99e8bu, 0x5bdeae1du,
    0x9b64c2b0u, 0xec63f226u, 0x756aa39cu, 0x026d930au, 0x9c0906a9u, 0xeb0e363fu,
    0x72076785u, 0x05005713u, 0x95bf4a82u, 0xe2b87a14u, 0x7bb12baeu, 0x0cb61b38u,
    0x92d28e9bu, 0xe5d5be0du, 0x7cdcefb7u, 0x0bdbdf21u, 0x86d3d2d4u, 0xf1d4e242u,
    0x68ddb3f8u, 0x1fda836eu, 0x81be16cdu, 0xf6b9265bu, 0x6fb077e1u, 0x18b74777u,
    0x88085ae6u, 0xff0f6a70u, 0x66063bcau, 0x11010b5cu, 0x8f659effu, 0xf862ae69u,
    0x616bffd3u, 0x166ccf45u, 0xa00ae278u, 0xd70dd2eeu, 0x4e048354u, 0x3903b3c2u,
    0xa7672661u, 0xd06016f7u, 0x4969474du, 0x3e6e77dbu, 0xaed16a4au, 0xd9d65adcu,
    0x40df0b66u, 0x37d83bf0u, 0xa9bcae53u, 0xdebb9ec5u, 0x47b2cf7fu, 0x30b5ffe9u,
    0xbdbdf21cu, 0xcabac28au, 0x53b39330u, 0x24b4a3a6u, 0xbad03605u, 0xcdd70693u,
    0x54de5729u, 0x23d967bfu, 0xb3667a2eu, 0xc4614ab8u, 0x5d681b02u, 0x2a6f2b94u,
    0xb40bbe37u, 0xc30c8ea1u, 0x5a05df1bu, 0x2d02ef8du,
};

/* zlib's crc32(crc, p, n): start from 0, chain calls over consecutive pieces. */
uint32_t on_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) crc = crc_table[(crc ^ *p++) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

/* ---- little-endian fields -------------------------------------------------------------------- */

static void put_u16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_f64(uint8_t *p, double d)
{
    uint64_t v;
    memcpy(&v, &d, sizeof v);
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get_u16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static double get_f64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    double d;
    memcpy(&d, &v, sizeof d);
    return d;
}

/* Magic and version: ON_SUCCESS, ON_FAILURE|ON_CORRUPT or ON_FAILURE|ON_VERSION. */
static on_status check_magic(const uint8_t *buf, size_t len, const char magic[4])
{
    if (len < 6 || memcmp(buf, magic, 4) != 0) return ON_FAILURE | ON_CORRUPT;
    if (get_u16(buf + 4) != FORMAT_VERSION) return ON_FAILURE | ON_VERSION;
    return ON_SUCCESS;
}

/* Most nodes a tile of this depth can store: every node of layers 1..depth. */
static uint64_t max_nodes(uint32_t depth)
{
    return (((uint64_t)1 << (3 * depth)) - 1) / 7;
}

size_t on_tile_file_max_bytes(int depth)
{
    if (depth < 1 || depth > ON_MAX_DEPTH) return TILE_FILE_HEADER + TILE_MIN;
    return TILE_FILE_HEADER + TILE_MIN + 2 * (size_t)max_nodes((uint32_t)depth);
}

/* ---- one tile -------------------------------------------------------------------------------- */

/* Pre-order from stored node `code` (value bf): counts the nodes in *count and, while *count is
 * below room, writes them at out. Recursion depth is the tile depth at most (<= ON_MAX_DEPTH). */
static void enc_walk(const on_table *tab, uint32_t code, uint8_t bf, uint8_t *out, size_t room, size_t *count)
{
    uint8_t cf = 0, kid[8] = {0};
    if (on_code_layer(code) >= 2) /* children of layer 1 are leaves: never stored */
        for (unsigned i = 0; i < 8; i++) {
            if (bf & (1u << i)) continue;
            int v = on_table_get(tab, on_code_child(code, i));
            if (v >= 0) {
                cf |= (uint8_t)(1u << i);
                kid[i] = (uint8_t)v;
            }
        }
    if (*count < room) {
        out[2 * *count] = bf;
        out[2 * *count + 1] = cf;
    }
    (*count)++;
    for (unsigned i = 0; i < 8; i++)
        if (cf & (1u << i)) enc_walk(tab, on_code_child(code, i), kid[i], out, room, count);
}

on_status on_tree_encode_tile(const on_tree *t, uint32_t tile, uint8_t *buf, size_t cap, size_t *len)
{
    if (len) *len = 0;
    if (!t || !len || tile >= t->ntiles) return ON_FAILURE | ON_INVALID;
    const on_tile *tl = &t->tiles[tile];
    if (!tl->loaded) return ON_FAILURE | ON_INVALID; /* its contents are not in memory */
    int root = tl->solid ? -1 : on_table_get(&tl->table, on_root_code(t));
    size_t n = 0;
    if (root >= 0) {
        /* A walk never meets more nodes than the table holds (but for the boundary nodes of a table
         * with bounds, table.h, which it writes as stored): with that much room, one pass. */
        size_t bound = TILE_MIN + 2 * (size_t)tl->table.count;
        if (buf && cap >= bound && !on_table_limited(&tl->table)) {
            enc_walk(&tl->table, on_root_code(t), (uint8_t)root, buf + TILE_HEADER, tl->table.count, &n);
        } else {
            enc_walk(&tl->table, on_root_code(t), (uint8_t)root, NULL, 0, &n);
            if (buf && cap >= TILE_MIN + 2 * n) {
                size_t m = 0;
                enc_walk(&tl->table, on_root_code(t), (uint8_t)root, buf + TILE_HEADER, n, &m);
            }
        }
    }
    size_t size = TILE_MIN + 2 * n;
    *len = size;
    if (!buf || cap < size) return ON_FAILURE | ON_BUFFER_SMALL;
    memcpy(buf, "ONTL", 4);
    put_u16(buf + 4, FORMAT_VERSION);
    buf[6] = (uint8_t)t->p.depth;
    buf[7] = tl->solid ? 1u : 0u;
    put_u32(buf + 8, (uint32_t)n);
    put_u32(buf + size - CRC_BYTES, on_crc32(0, buf, size - CRC_BYTES));
    return ON_SUCCESS;
}

/* Rebuild the n nodes at `nodes` (pre-order, 2 bytes each) into tab, checking the structure. */
static on_status dec_walk(uint32_t *keys, uint8_t *vals, const uint8_t *nodes, uint32_t n, uint32_t depth)
{
    struct {
        uint32_t code;
        uint8_t left; /* children still to visit */
    } st[ON_MAX_DEPTH + 1];
    int sp = 0;
    uint32_t idx = 0, code = on_code_make(0, 0, 0, depth);
    for (;;) {
        if (idx >= n) return ON_FAILURE | ON_CORRUPT; /* the structure wants more nodes */
        uint8_t bf = nodes[2 * (size_t)idx], cf = nodes[2 * (size_t)idx + 1];
        idx++;
        if ((bf & cf) || bf == 0xff || (bf | cf) == 0 || (on_code_layer(code) == 1 && cf))
            return ON_FAILURE | ON_CORRUPT;
        keys[idx - 1] = code;
        vals[idx - 1] = bf;
        if (cf) { /* layer >= 2 here, so at most depth - 1 frames are ever stacked */
            st[sp].code = code;
            st[sp].left = cf;
            sp++;
        }
        for (;;) {
            if (sp == 0) return idx == n ? ON_SUCCESS : (ON_FAILURE | ON_CORRUPT);
            uint8_t left = st[sp - 1].left;
            if (!left) {
                sp--;
                continue;
            }
            st[sp - 1].left = (uint8_t)(left & (left - 1));
            code = on_code_child(st[sp - 1].code, (unsigned)__builtin_ctz(left));
            break;
        }
    }
}

on_status on_tile_decode(int depth, const uint8_t *buf, size_t len, on_table *out, uint8_t *solid)
{
    on_table_init(out);
    *solid = 0;
    if (!buf && len) return ON_FAILURE | ON_INVALID;
    on_status s = check_magic(buf, len, "ONTL");
    if (!on_ok(s)) return s;
    if (len < TILE_MIN) return ON_FAILURE | ON_CORRUPT;
    uint32_t d = buf[6], flags = buf[7], n = get_u32(buf + 8);
    if (d != (uint32_t)depth || (flags & ~1u) != 0) return ON_FAILURE | ON_CORRUPT;
    if ((uint64_t)len != (uint64_t)TILE_MIN + 2 * (uint64_t)n) return ON_FAILURE | ON_CORRUPT;
    if (on_crc32(0, buf, len - CRC_BYTES) != get_u32(buf + len - CRC_BYTES)) return ON_FAILURE | ON_CORRUPT;
    if ((flags & 1u) && n != 0) return ON_FAILURE | ON_CORRUPT;
    if (n > max_nodes(d)) return ON_FAILURE | ON_CORRUPT;
    if (n) {
        uint32_t *keys = malloc((size_t)n * sizeof *keys);
        uint8_t *vals = malloc(n);
        if (!keys || !vals) {
            free(keys);
            free(vals);
            return ON_FAILURE | ON_NO_MEMORY;
        }
        s = dec_walk(keys, vals, buf + TILE_HEADER, n, d);
        if (on_ok(s) && on_table_fill(out, keys, vals, n) != 0) s = ON_FAILURE | ON_NO_MEMORY;
        free(keys);
        free(vals);
        if (!on_ok(s)) {
            on_table_free(out);
            return s;
        }
    }
    *solid = (uint8_t)(flags & 1u);
    return ON_SUCCESS;
}

on_status on_tree_decode_tile(on_tree *t, uint32_t tile, const uint8_t *buf, size_t len)
{
    if (!t || tile >= t->ntiles || (!buf && len)) return ON_FAILURE | ON_INVALID;
    on_table tab;
    uint8_t solid;
    on_status s = on_tile_decode(t->p.depth, buf, len, &tab, &solid);
    if (!on_ok(s)) return s;
    on_tree_install_tile(t, tile, &tab, solid);
    return ON_SUCCESS;
}

/* ---- tile files ------------------------------------------------------------------------------- */

on_status on_tree_encode_tile_file(const on_tree *t, uint32_t tile, uint8_t *buf, size_t cap, size_t *len)
{
    if (len) *len = 0;
    if (!t || !len || tile >= t->ntiles) return ON_FAILURE | ON_INVALID;
    size_t blen = 0;
    on_status s = on_tree_encode_tile(t, tile, buf && cap > TILE_FILE_HEADER ? buf + TILE_FILE_HEADER : NULL,
                                      cap > TILE_FILE_HEADER ? cap - TILE_FILE_HEADER : 0, &blen);
    *len = TILE_FILE_HEADER + blen;
    if (s != ON_SUCCESS && s != (ON_FAILURE | ON_BUFFER_SMALL)) {
        *len = 0;
        return s;
    }
    if (!on_ok(s)) return s;
    int ijk[3];
    on_tile_coords(t, tile, ijk);
    memcpy(buf, "ONTF", 4);
    put_u16(buf + 4, TILE_FILE_VERSION);
    for (int a = 0; a < 3; a++) put_u16(buf + 6 + 2 * a, (uint32_t)ijk[a]);
    put_u32(buf + 12, on_crc32(0, buf, 12));
    return ON_SUCCESS;
}

on_status on_tile_file_decode(int depth, const int ijk[3], const uint8_t *buf, size_t len, on_table *out,
                              uint8_t *solid)
{
    on_table_init(out);
    *solid = 0;
    if (!buf && len) return ON_FAILURE | ON_INVALID;
    if (len >= 4 && memcmp(buf, "ONTL", 4) == 0) return ON_FAILURE | ON_VERSION; /* a bare blob: no position */
    if (len < TILE_FILE_HEADER || memcmp(buf, "ONTF", 4) != 0) return ON_FAILURE | ON_CORRUPT;
    if (get_u16(buf + 4) != TILE_FILE_VERSION) return ON_FAILURE | ON_VERSION;
    if (on_crc32(0, buf, 12) != get_u32(buf + 12)) return ON_FAILURE | ON_CORRUPT;
    /* an intact header of another position: a swapped or misnamed file, not damage */
    for (int a = 0; a < 3; a++)
        if (get_u16(buf + 6 + 2 * a) != (uint32_t)ijk[a]) return ON_FAILURE | ON_MISPLACED;
    return on_tile_decode(depth, buf + TILE_FILE_HEADER, len - TILE_FILE_HEADER, out, solid);
}

uint32_t on_tile_file_tag(const uint8_t *buf, size_t len)
{
    return len >= TILE_FILE_HEADER + TILE_MIN ? get_u32(buf + len - CRC_BYTES) : 0;
}

on_status on_tree_decode_tile_file(on_tree *t, uint32_t tile, const uint8_t *buf, size_t len)
{
    if (!t || tile >= t->ntiles || (!buf && len)) return ON_FAILURE | ON_INVALID;
    int ijk[3];
    on_tile_coords(t, tile, ijk);
    on_table tab;
    uint8_t solid;
    on_status s = on_tile_file_decode(t->p.depth, ijk, buf, len, &tab, &solid);
    if (!on_ok(s)) return s;
    on_tree_install_tile(t, tile, &tab, solid);
    return ON_SUCCESS;
}

/* ---- the whole tree -------------------------------------------------------------------------- */

static on_status write_all(on_atomic_file *f, const uint8_t *p, size_t n, uint32_t *crc)
{
    *crc = on_crc32(*crc, p, n);
    return on_atomic_write(f, p, n) == 0 ? ON_SUCCESS : (ON_FAILURE | ON_IO);
}

static on_status write_tree(const on_tree *t, on_atomic_file *f)
{
    uint8_t hdr[TREE_HEADER];
    memcpy(hdr, "OCTN", 4);
    put_u16(hdr + 4, FORMAT_VERSION);
    hdr[6] = (uint8_t)t->p.depth;
    hdr[7] = 0;
    for (int i = 0; i < 3; i++) put_u32(hdr + 8 + 4 * i, (uint32_t)t->p.tiles[i]);
    for (int i = 0; i < 3; i++) put_f64(hdr + 20 + 8 * i, t->p.origin[i]);
    put_f64(hdr + 44, t->p.scale);
    put_f64(hdr + 52, t->p.radius);
    uint32_t crc = 0;
    on_status s = write_all(f, hdr, sizeof hdr, &crc);
    uint8_t *blob = NULL; /* u32 length, then the tile blob; reused across tiles */
    size_t bcap = 0;
    for (uint32_t i = 0; i < t->ntiles && on_ok(s); i++) {
        size_t need;
        s = on_tree_encode_tile(t, i, blob ? blob + 4 : NULL, bcap > 4 ? bcap - 4 : 0, &need);
        if (s == (ON_FAILURE | ON_BUFFER_SMALL)) {
            size_t nc = need + 4 + need / 2;
            uint8_t *nb = realloc(blob, nc);
            if (!nb) {
                s = ON_FAILURE | ON_NO_MEMORY;
                break;
            }
            blob = nb;
            bcap = nc;
            s = on_tree_encode_tile(t, i, blob + 4, bcap - 4, &need);
        }
        if (!on_ok(s)) break;
        if (need > UINT32_MAX) {
            s = ON_FAILURE | ON_INVALID;
            break;
        }
        put_u32(blob, (uint32_t)need);
        s = write_all(f, blob, need + 4, &crc);
    }
    free(blob);
    if (!on_ok(s)) return s;
    uint8_t tail[CRC_BYTES];
    put_u32(tail, crc);
    return write_all(f, tail, sizeof tail, &crc);
}

on_status on_tree_save_msg(const on_tree *t, const char *path, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!t || !path) return ON_FAILURE | ON_INVALID;
    on_atomic_file f;
    on_status s = on_atomic_open(&f, path, err, errlen);
    if (!on_ok(s)) return s;
    s = write_tree(t, &f);
    if (s & ON_IO) return on_atomic_commit(&f, err, errlen); /* reports the write's reason */
    if (!on_ok(s)) {
        on_atomic_abort(&f);
        if (err && errlen) snprintf(err, errlen, "%s: cannot write: %s", path, on_status_string(s));
        return s;
    }
    return on_atomic_commit(&f, err, errlen);
}

on_status on_tree_save(const on_tree *t, const char *path)
{
    return on_tree_save_msg(t, path, NULL, 0);
}

on_status on_tree_load_memory(const uint8_t *buf, size_t len, on_tree **out)
{
    if (!out) return ON_FAILURE | ON_INVALID;
    *out = NULL;
    if (!buf && len) return ON_FAILURE | ON_INVALID;
    on_status s = check_magic(buf, len, "OCTN");
    if (!on_ok(s)) return s;
    if (len < TREE_HEADER + CRC_BYTES) return ON_FAILURE | ON_CORRUPT;
    size_t end = len - CRC_BYTES, pos = TREE_HEADER;
    if (on_crc32(0, buf, end) != get_u32(buf + end) || buf[7] != 0) return ON_FAILURE | ON_CORRUPT;
    on_tree_params p;
    memset(&p, 0, sizeof p);
    p.depth = buf[6];
    uint64_t nt = 1;
    for (int i = 0; i < 3; i++) {
        uint32_t v = get_u32(buf + 8 + 4 * i);
        if (v < 1 || v > ON_MAX_TILES_PER_AXIS) return ON_FAILURE | ON_CORRUPT;
        p.tiles[i] = (int)v;
        nt *= v;
        p.origin[i] = get_f64(buf + 20 + 8 * i);
    }
    p.scale = get_f64(buf + 44);
    p.radius = get_f64(buf + 52);
    /* Every tile takes at least a length and an empty blob: refuse before allocating the tiles. */
    if (nt > (end - pos) / (4 + TILE_MIN)) return ON_FAILURE | ON_CORRUPT;
    on_tree *t;
    s = on_tree_create(&p, &t);
    if (!on_ok(s)) return (s & ON_NO_MEMORY) ? s : (ON_FAILURE | ON_CORRUPT);
    for (uint32_t i = 0; i < t->ntiles; i++) {
        if (end - pos < 4) {
            s = ON_FAILURE | ON_CORRUPT;
            break;
        }
        uint32_t bl = get_u32(buf + pos);
        pos += 4;
        if (bl > end - pos) {
            s = ON_FAILURE | ON_CORRUPT;
            break;
        }
        s = on_tree_decode_tile(t, i, buf + pos, bl);
        if (!on_ok(s)) break;
        pos += bl;
    }
    if (on_ok(s) && pos != end) s = ON_FAILURE | ON_CORRUPT;
    if (!on_ok(s)) {
        on_tree_destroy(t);
        return s;
    }
    *out = t;
    return ON_SUCCESS;
}

on_status on_tree_load_msg(const char *path, on_tree **out, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!out) return ON_FAILURE | ON_INVALID;
    *out = NULL;
    if (!path) return ON_FAILURE | ON_INVALID;
    uint8_t *buf;
    size_t n;
    on_status s = on_read_file(path, &buf, &n, err, errlen);
    if (!on_ok(s)) return s;
    s = on_tree_load_memory(buf, n, out);
    free(buf);
    if (!on_ok(s) && err && errlen) snprintf(err, errlen, "%s: %s", path, on_status_string(s));
    return s;
}

on_status on_tree_load(const char *path, on_tree **out)
{
    return on_tree_load_msg(path, out, NULL, 0);
}
