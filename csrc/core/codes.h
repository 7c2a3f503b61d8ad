/*
 * codes.h -- node codes: a node's position and layer packed into 32 bits.
 *
 * code = z << 22 | y << 13 | x << 4 | layer; x, y, z are the node's min corner in leaf units inside its
 * tile (9 bits each, the low `layer` bits zero), layer 0 is a leaf and `depth` the tile's root.
 * Parent, child, face neighbour and bounds are a few integer operations each; no lookup tables.
 * Child index i = bx | by << 1 | bz << 2 (the seed's numbering).
 */
#ifndef OCTONAV_CODES_H
#define OCTONAV_CODES_H

#include <stdint.h>

#define ON_CODE_NONE 0xffffffffu /* never a valid code: bit 31 is always zero */

static inline uint32_t on_code_make(uint32_t x, uint32_t y, uint32_t z, uint32_t layer)
{
    return z << 22 | y << 13 | x << 4 | layer;
}
static inline uint32_t on_code_layer(uint32_t c) { return c & 15u; }
static inline uint32_t on_code_x(uint32_t c) { return (c >> 4) & 511u; }
static inline uint32_t on_code_y(uint32_t c) { return (c >> 13) & 511u; }
static inline uint32_t on_code_z(uint32_t c) { return (c >> 22) & 511u; }
static inline uint32_t on_code_size(uint32_t c) { return 1u << on_code_layer(c); }

/* A point's (leaf coordinates) enclosing node at a layer: clear the low `layer` bits. */
static inline uint32_t on_code_at(uint32_t x, uint32_t y, uint32_t z, uint32_t layer)
{
    uint32_t m = ~((1u << layer) - 1u);
    return on_code_make(x & m, y & m, z & m, layer);
}

/* The same from a code's packed coordinates (its layer bits ignored): `layer` low bits of each
 * coordinate cleared in place, without unpacking them (0x402010 is bit 0 of x, y and z at once). */
static inline uint32_t on_code_at_packed(uint32_t c, uint32_t layer)
{
    return (c & ~(((1u << layer) - 1u) * 0x402010u) & ~15u) | layer;
}

/* Code c with its coordinate on `axis` (0 x, 1 y, 2 z) replaced by v (< 512). */
static inline uint32_t on_code_with_axis(uint32_t c, int axis, uint32_t v)
{
    unsigned sh = 4u + 9u * (unsigned)axis;
    return (c & ~(511u << sh)) | v << sh;
}

/* Parent: clear bit `layer` of each coordinate, layer + 1. */
static inline uint32_t on_code_parent(uint32_t c)
{
    uint32_t l = on_code_layer(c);
    uint32_t m = 1u << l;
    uint32_t bits = (m << 22) | (m << 13) | (m << 4);
    return (c & ~bits & ~15u) | (l + 1);
}

/* Child i of c: set bit layer-1 of each coordinate from i, layer - 1. c must have layer >= 1. */
static inline uint32_t on_code_child(uint32_t c, unsigned i)
{
    uint32_t l = on_code_layer(c) - 1;
    uint32_t b = 1u << l;
    uint32_t x = (i & 1u) ? b : 0, y = (i & 2u) ? b : 0, z = (i & 4u) ? b : 0;
    return ((c & ~15u) | (z << 22) | (y << 13) | (x << 4)) | l;
}

/* Index of c among its parent's children. */
static inline unsigned on_code_child_index(uint32_t c)
{
    uint32_t l = on_code_layer(c);
    return (unsigned)(((on_code_x(c) >> l) & 1u) | (((on_code_y(c) >> l) & 1u) << 1) |
                      (((on_code_z(c) >> l) & 1u) << 2));
}

/* Is a the same as, or an ancestor of, d? */
static inline int on_code_contains(uint32_t a, uint32_t d)
{
    uint32_t la = on_code_layer(a);
    if (on_code_layer(d) > la) return 0;
    return on_code_at(on_code_x(d), on_code_y(d), on_code_z(d), la) == a;
}

#endif
