/*
 * fuzz_tree.c -- libFuzzer target: a whole tree file (on_tree_load_memory). Properties: no crash, no
 * over-read, nothing allocated beyond what the file holds (libFuzzer's -rss_limit_mb and
 * -malloc_limit_mb catch it), and an accepted file re-encodes tile by tile to the same blobs.
 */
#include "octonav.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    on_tree *t = NULL;
    on_status s = on_tree_load_memory(data, size, &t);
    if (!on_ok(s)) {
        if (t || !(s & (ON_CORRUPT | ON_VERSION | ON_MISPLACED | ON_NO_MEMORY))) abort();
        return 0;
    }
    size_t pos = 60;
    for (uint32_t i = 0; i < on_tree_tile_count(t); i++) {
        if (pos + 4 > size) abort();
        uint32_t bl = rd32(data + pos);
        pos += 4;
        size_t len = 0;
        on_tree_encode_tile(t, i, NULL, 0, &len);
        uint8_t *buf = malloc(len ? len : 1);
        if (!buf) abort();
        if (!on_ok(on_tree_encode_tile(t, i, buf, len, &len))) abort();
        if (len != bl || pos + bl > size || memcmp(buf, data + pos, bl) != 0) abort();
        free(buf);
        pos += bl;
    }
    if (pos + 4 != size) abort();
    on_tree_destroy(t);
    return 0;
}
