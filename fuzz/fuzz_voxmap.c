/*
 * fuzz_voxmap.c -- libFuzzer target: .3dmap text (on_voxmap_parse), then on_voxmap_fit at the depth the
 * first byte picks, and a bake (on_tree_from_voxmap) of accepted small maps, whose voxels must come
 * out blocked. Properties: no crash, no over-read, a message for every refusal, and a header can
 * never make the bake cost more than on_voxmap_fit allows.
 */
#include "octonav.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int depth = 1 + data[0] % ON_MAX_DEPTH;
    data++;
    size--;
    char *text = malloc(size + 1);
    if (!text) abort();
    memcpy(text, data, size);
    text[size] = '\0';
    on_voxmap m;
    char err[256];
    on_status s = on_voxmap_parse("fuzz.3dmap", text, size, &m, err, sizeof err);
    free(text);
    if (!on_ok(s)) {
        if (m.xyz || !err[0]) abort();
        return 0;
    }
    for (size_t i = 0; i < m.count; i++)
        if (m.xyz[3 * i] >= m.w || m.xyz[3 * i + 1] >= m.h || m.xyz[3 * i + 2] >= m.d) abort();
    s = on_voxmap_fit(&m, depth, err, sizeof err);
    if (on_failed(s) && !err[0]) abort();
    /* the bake itself only for maps it can do quickly (the fit bounds are for real maps) */
    if (on_ok(s) && (uint64_t)m.w * (uint64_t)m.h * (uint64_t)m.d <= (1u << 15)) {
        on_tree *t;
        s = on_tree_from_voxmap(&m, depth, &t);
        if (!on_ok(s)) abort();
        for (size_t i = 0; i < m.count; i++) {
            double p[3] = {m.xyz[3 * i] + 0.5, m.xyz[3 * i + 1] + 0.5, m.xyz[3 * i + 2] + 0.5};
            on_cell c;
            if (on_tree_locate(t, p, &c) != (ON_FAILURE | ON_BLOCKED)) abort();
        }
        on_tree_destroy(t);
    }
    on_voxmap_free(&m);
    return 0;
}
