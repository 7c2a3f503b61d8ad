/*
 * fuzz_map2d.c -- libFuzzer target: Moving AI 2D .map text (on_grid_parse_map2d), and a search
 * across an accepted grid. Properties: no crash, no over-read, a message for every refusal, and a
 * grid never larger than the rows the text holds.
 */
#include "octonav.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) abort();
    memcpy(text, data, size);
    text[size] = '\0';
    on_grid *g;
    char err[256];
    on_status s = on_grid_parse_map2d("fuzz.map", text, size, &g, err, sizeof err);
    free(text);
    if (!on_ok(s)) {
        if (g || !err[0]) abort();
        return 0;
    }
    int dims[3];
    on_grid_dims(g, dims);
    if (dims[2] != 1 || (uint64_t)dims[0] * (uint64_t)dims[1] > size) abort();
    int a[3] = {0, 0, 0}, b[3] = {dims[0] - 1, dims[1] - 1, 0};
    double len;
    size_t exp, np;
    on_grid_find(g, a, b, &len, &exp, NULL, 0, &np);
    on_grid_destroy(g);
    return 0;
}
