/*
 * fuzz_obj.c -- libFuzzer target: OBJ text (on_obj_parse), and the triangles of an accepted mesh
 * inserted into a small tree. Properties: no crash, no over-read, indices in range, a message for
 * every refusal.
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
    double *v;
    uint32_t *tr;
    size_t nv, nt;
    char err[256];
    on_status s = on_obj_parse("fuzz.obj", text, size, &v, &nv, &tr, &nt, err, sizeof err);
    free(text);
    if (!on_ok(s)) {
        if (v || tr || !err[0]) abort();
        return 0;
    }
    for (size_t i = 0; i < 3 * nt; i++)
        if (tr[i] >= nv) abort();
    on_tree_params p;
    memset(&p, 0, sizeof p);
    p.tiles[0] = p.tiles[1] = p.tiles[2] = 1;
    p.depth = 4;
    p.scale = 1;
    on_tree *t;
    if (!on_ok(on_tree_create(&p, &t))) abort();
    on_tree_add_triangles(t, v, nv, tr, nt);
    on_tree_destroy(t);
    free(v);
    free(tr);
    return 0;
}
