/* A C program using octonav through its installed library alone (examples/c/README.md):
 * a tree of one tile, 64 leaves a side, a wall across the middle with a gap, a path around it. */
#include <octonav.h>
#include <stdio.h>

int main(void) {
    on_tree_params p = { .tiles = { 1, 1, 1 }, .depth = 6, .scale = 1.0 };
    on_tree *tree = NULL;
    on_status s = on_tree_create(&p, &tree);
    if (!on_ok(s)) { fprintf(stderr, "tree: %s\n", on_status_string(s)); return 1; }

    /* a wall at x in [30, 34] over the whole height, leaving a gap at z >= 56 */
    const double wmin[3] = { 30, 0, 0 }, wmax[3] = { 34, 64, 56 };
    s = on_tree_add_box(tree, wmin, wmax);
    if (!on_ok(s)) { fprintf(stderr, "add_box: %s\n", on_status_string(s)); return 1; }

    on_query *q = NULL;
    s = on_query_create(tree, 65536, &q);
    if (!on_ok(s)) { fprintf(stderr, "query: %s\n", on_status_string(s)); return 1; }

    on_query_opts o;
    on_query_opts_default(&o);
    const double a[3] = { 10, 32, 10 }, b[3] = { 54, 32, 10 };
    double path[3 * 64];
    size_t n = 0;
    on_query_info info;
    s = on_query_find(q, a, b, &o, path, 64, &n, &info);
    if (!on_ok(s)) { fprintf(stderr, "find: %s\n", on_status_string(s)); return 1; }

    printf("points %zu, length %.4f\n", n, info.length);
    for (size_t i = 0; i < n; i++)
        printf("  %.3f %.3f %.3f\n", path[3 * i], path[3 * i + 1], path[3 * i + 2]);

    on_query_destroy(q);
    on_tree_destroy(tree);
    return 0;
}
