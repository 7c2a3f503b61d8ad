/*
 * fuzz_tile.c -- libFuzzer target: one tile blob (on_tree_decode_tile) or, for inputs starting
 * "ONTF", one tile file (on_tree_decode_tile_file, at the position it records when that is a tile of
 * the tree). The tree is 2 x 2 x 2 at the depth the blob claims (1..9, else 3). Properties: no crash,
 * no over-read (ASan), a reason for every refusal, and every accepted input re-encodes to the same
 * bytes.
 */
#include "octonav.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int file = size >= 16 && memcmp(data, "ONTF", 4) == 0;
    const uint8_t *blob = file ? data + 16 : data;
    size_t blen = file ? size - 16 : size;
    on_tree_params p;
    memset(&p, 0, sizeof p);
    p.tiles[0] = p.tiles[1] = p.tiles[2] = 2;
    p.depth = blen > 6 && blob[6] >= 1 && blob[6] <= ON_MAX_DEPTH ? blob[6] : 3;
    p.scale = 1;
    on_tree *t;
    if (!on_ok(on_tree_create(&p, &t))) abort();
    uint32_t tile = 0;
    if (file && data[7] == 0 && data[9] == 0 && data[11] == 0 && data[6] < 2 && data[8] < 2 && data[10] < 2)
        tile = (uint32_t)data[6] + 2u * ((uint32_t)data[8] + 2u * (uint32_t)data[10]);
    on_status s = file ? on_tree_decode_tile_file(t, tile, data, size) : on_tree_decode_tile(t, tile, data, size);
    if (on_ok(s)) {
        size_t len = 0;
        if (file) on_tree_encode_tile_file(t, tile, NULL, 0, &len);
        else on_tree_encode_tile(t, tile, NULL, 0, &len);
        uint8_t *buf = malloc(len ? len : 1);
        if (!buf) abort();
        s = file ? on_tree_encode_tile_file(t, tile, buf, len, &len) : on_tree_encode_tile(t, tile, buf, len, &len);
        if (!on_ok(s)) abort();
        if (len != size || memcmp(buf, data, size) != 0) abort(); /* accepted but not canonical */
        free(buf);
    } else if (!(s & (ON_CORRUPT | ON_VERSION | ON_MISPLACED | ON_NO_MEMORY))) {
        abort(); /* a failure without a reason */
    }
    on_tree_destroy(t);
    return 0;
}
