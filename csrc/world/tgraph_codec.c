/*
 * tgraph_codec.c -- the binary form of a tile's portal graph (see portals.h for the layout): encode,
 * a strict decode (every count bounded by the bytes that must hold it before anything is allocated,
 * varints without overlong forms, canonical component order, weights never below the straight line
 * between their portals), and the seal that gives a built graph its CRC identity.
 */
#include "portals.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_BYTES 12
#define CRC_BYTES 4

static const uint8_t MAGIC[4] = {'O', 'N', 'T', 'G'};

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Append byte b / varint v at *pos when it fits under cap (the size is counted either way). */
static void put_byte(uint8_t *buf, size_t cap, size_t *pos, uint8_t b)
{
    if (buf && *pos < cap) buf[*pos] = b;
    (*pos)++;
}
static void put_var(uint8_t *buf, size_t cap, size_t *pos, uint32_t v)
{
    do {
        uint8_t b = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) b |= 0x80;
        put_byte(buf, cap, pos, b);
    } while (v);
}

/* Read a varint from [*p, end): at most 5 bytes, no overlong or over-32-bit forms; -1 when bad. */
static int get_var(const uint8_t **p, const uint8_t *end, uint32_t *v)
{
    uint64_t x = 0;
    for (int i = 0; i < 5; i++) {
        if (*p >= end) return -1;
        uint8_t b = *(*p)++;
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            if (x > 0xffffffffu || (i > 0 && b == 0)) return -1;
            *v = (uint32_t)x;
            return 0;
        }
    }
    return -1;
}

static int log2i(int s)
{
    int l = 0;
    while ((1 << l) < s) l++;
    return l;
}

/* The encoding into buf (cap; sizes counted either way); *wpos: where the weights start. */
static on_status encode(const on_tgraph *g, uint8_t *buf, size_t cap, size_t *len, size_t *wpos)
{
    *len = 0;
    if (!g) return ON_FAILURE | ON_INVALID;
    size_t pos = HEADER_BYTES;
    uint8_t *w = cap >= HEADER_BYTES ? buf : NULL;
    put_var(w, cap, &pos, g->nportal);
    put_var(w, cap, &pos, g->ncomp);
    put_var(w, cap, &pos, g->nrect);
    for (uint32_t p = 0; p < g->nportal; p++) {
        const on_portal *q = &g->portal[p];
        put_byte(w, cap, &pos, q->face);
        put_var(w, cap, &pos, p == 0 ? q->comp : q->comp - g->portal[p - 1].comp);
        put_var(w, cap, &pos, q->nrect - 1);
        for (uint32_t i = 0; i < q->nrect; i++) {
            const on_prect *r = &g->rect[q->rect + i];
            put_var(w, cap, &pos, r->mn[0]);
            put_var(w, cap, &pos, r->mn[1]);
            put_var(w, cap, &pos, (uint32_t)(r->mx[0] - r->mn[0] - 1));
            put_var(w, cap, &pos, (uint32_t)(r->mx[1] - r->mn[1] - 1));
        }
    }
    *wpos = pos;
    put_byte(w, cap, &pos, (uint8_t)(g->wshift - ON_TGRAPH_WSHIFT_MIN));
    for (uint32_t e = 0; e < g->npair; e++) put_var(w, cap, &pos, g->w[e]);
    size_t total = pos + CRC_BYTES;
    *len = total;
    if (!buf || cap < total) return ON_FAILURE | ON_BUFFER_SMALL;
    memcpy(buf, MAGIC, 4);
    buf[4] = ON_TGRAPH_VERSION & 0xff;
    buf[5] = ON_TGRAPH_VERSION >> 8;
    buf[6] = (uint8_t)g->depth;
    buf[7] = (uint8_t)log2i(g->bound);
    put32(buf + 8, g->tag);
    put32(buf + pos, on_crc32(0, buf, pos));
    return ON_SUCCESS;
}

on_status on_tgraph_encode(const on_tgraph *g, uint8_t *buf, size_t cap, size_t *len)
{
    size_t wpos;
    return encode(g, buf, cap, len, &wpos);
}

/* The portals' identity of an encoding: version, depth and bound, then the counts and portals. */
static uint32_t portal_crc(const uint8_t *buf, size_t wpos)
{
    return on_crc32(on_crc32(0, buf + 4, 4), buf + HEADER_BYTES, wpos - HEADER_BYTES);
}

int on_tgraph_seal(on_tgraph *g)
{
    size_t len = 0, wpos = 0;
    encode(g, NULL, 0, &len, &wpos);
    uint8_t *b = malloc(len);
    if (!b) return -1;
    on_status st = encode(g, b, len, &len, &wpos);
    if (on_ok(st)) {
        g->crc = portal_crc(b, wpos);
        g->blob_crc = get32(b + len - CRC_BYTES);
    }
    free(b);
    on_tgraph_count_bytes(g);
    return on_ok(st) ? 0 : -1;
}

/* The portals (and their rectangles) from [*pp, end) into g (counts set, arrays allocated); -1 bad. */
static int decode_portals(on_tgraph *g, const uint8_t **pp, const uint8_t *end, uint32_t nr)
{
    const uint8_t *p = *pp;
    uint32_t n = 1u << g->depth, S = (uint32_t)g->bound, np = g->nportal;
    g->nrect = 0;
    for (uint32_t i = 0; i < np; i++) {
        uint32_t dc, m;
        if (p >= end) return -1;
        uint8_t f = *p++;
        if (f > 5 || get_var(&p, end, &dc) || get_var(&p, end, &m) || m >= nr - g->nrect) return -1;
        uint32_t c = i == 0 ? dc : g->portal[i - 1].comp + dc;
        if (dc > 1 || (i == 0 && dc != 0) || c >= g->ncomp) return -1; /* components in order, none skipped */
        on_portal *q = &g->portal[i];
        q->face = f;
        q->comp = c;
        q->rect = g->nrect;
        q->nrect = m + 1;
        if (dc == 1 || i == 0) g->comp_first[c] = i;
        for (uint32_t j = 0; j <= m; j++) {
            uint32_t u0, v0, du, dv;
            if (get_var(&p, end, &u0) || get_var(&p, end, &v0) || get_var(&p, end, &du) || get_var(&p, end, &dv))
                return -1;
            /* inside the tile face, inside the S-square of the portal's first rectangle */
            if (u0 >= n || v0 >= n || du >= S || dv >= S || u0 + du >= n || v0 + dv >= n ||
                u0 / S != (u0 + du) / S || v0 / S != (v0 + dv) / S)
                return -1;
            if (j > 0 && (u0 / S != g->rect[q->rect].mn[0] / S || v0 / S != g->rect[q->rect].mn[1] / S)) return -1;
            g->rect[g->nrect++] = (on_prect){{(uint16_t)u0, (uint16_t)v0}, {(uint16_t)(u0 + du + 1), (uint16_t)(v0 + dv + 1)}};
        }
    }
    if (g->nrect != nr || (np > 0 && g->portal[np - 1].comp != g->ncomp - 1)) return -1;
    g->comp_first[g->ncomp] = np;
    *pp = p;
    return 0;
}

/* The weights from [*pp, end) into g->w (sized); -1 bad. */
static int decode_weights(on_tgraph *g, const uint8_t **pp, const uint8_t *end)
{
    const uint8_t *p = *pp;
    double unit = ldexp(1.0, g->wshift);
    for (uint32_t c = 0; c < g->ncomp; c++) {
        uint32_t f = g->comp_first[c], m = g->comp_first[c + 1] - f;
        uint32_t e = g->comp_w[c];
        for (uint32_t i = 0; i + 1 < m; i++)
            for (uint32_t j = i + 1; j < m; j++) {
                uint32_t w;
                if (get_var(&p, end, &w) || w > 65535) return -1;
                g->w[e++] = (uint16_t)w;
                if (w == 0) continue; /* no edge */
                g->nedge++;
                double x[3], y[3];
                on_portal_point(g, f + i, x);
                on_portal_point(g, f + j, y);
                if ((double)w < floor(on_dist3(x, y) * unit)) return -1; /* shorter than the straight line */
            }
    }
    *pp = p;
    return 0;
}

on_status on_tgraph_decode(const uint8_t *buf, size_t len, int expected_depth, on_tgraph **out)
{
    *out = NULL;
    const on_status bad = ON_FAILURE | ON_CORRUPT;
    if (!buf || len < HEADER_BYTES + CRC_BYTES || memcmp(buf, MAGIC, 4) != 0) return bad;
    unsigned ver = (unsigned)buf[4] | (unsigned)buf[5] << 8;
    if (ver != ON_TGRAPH_VERSION) return ON_FAILURE | ON_VERSION;
    if (on_crc32(0, buf, len - CRC_BYTES) != get32(buf + len - CRC_BYTES)) return bad;
    int depth = buf[6], lb = buf[7];
    if (depth < 1 || depth > ON_MAX_DEPTH || lb > depth) return bad;
    if (expected_depth > 0 && depth != expected_depth) return ON_FAILURE | ON_INVALID;
    const uint8_t *p = buf + HEADER_BYTES, *end = buf + len - CRC_BYTES;
    uint32_t np, ncomp, nr;
    if (get_var(&p, end, &np) || get_var(&p, end, &ncomp) || get_var(&p, end, &nr)) return bad;
    size_t left = (size_t)(end - p);
    /* counts bounded by the bytes that must hold them: no allocation a header alone can inflate */
    if ((uint64_t)np * 3 + (uint64_t)nr * 4 > left || nr < np || ncomp > np || (np > 0 && ncomp == 0)) return bad;
    on_tgraph *g = calloc(1, sizeof *g);
    on_status st = ON_FAILURE | ON_NO_MEMORY;
    if (!g) return st;
    g->depth = depth;
    g->bound = 1 << lb;
    g->tag = get32(buf + 8);
    g->blob_crc = get32(buf + len - CRC_BYTES);
    g->nportal = np;
    g->ncomp = ncomp;
    g->portal = malloc(((size_t)np + 1) * sizeof *g->portal);
    g->rect = malloc(((size_t)nr + 1) * sizeof *g->rect);
    g->comp_first = malloc(((size_t)ncomp + 1) * sizeof *g->comp_first);
    g->comp_w = malloc(((size_t)ncomp + 1) * sizeof *g->comp_w);
    if (!g->portal || !g->rect || !g->comp_first || !g->comp_w) goto fail;
    st = bad;
    if (decode_portals(g, &p, end, nr)) goto fail;
    g->crc = portal_crc(buf, (size_t)(p - buf));
    if (p >= end) goto fail;
    g->wshift = (int)*p++ + ON_TGRAPH_WSHIFT_MIN;
    if (g->wshift > ON_TGRAPH_WSHIFT) goto fail;
    uint64_t ne = 0;
    g->comp_w[0] = 0;
    for (uint32_t c = 0; c < ncomp; c++) {
        uint64_t m = g->comp_first[c + 1] - g->comp_first[c];
        ne += m * (m - 1) / 2;
        if (ne > (uint64_t)(end - p)) goto fail; /* a weight takes a byte at least */
        g->comp_w[c + 1] = (uint32_t)ne;
    }
    g->npair = (uint32_t)ne;
    st = ON_FAILURE | ON_NO_MEMORY;
    g->w = malloc(((size_t)ne + 1) * sizeof *g->w);
    if (!g->w) goto fail;
    st = bad;
    if (decode_weights(g, &p, end) || p != end) goto fail;
    on_tgraph_count_bytes(g);
    *out = g;
    return ON_SUCCESS;
fail:
    on_tgraph_free(g);
    return st;
}
