/*
 * export.c -- the tree as an OBJ of boxes (blocked or free cubes, world space), to look at it in
 * any 3D viewer. Each box is 8 vertices and 6 quads.
 */
#include "tree.h"

#include <stdio.h>

typedef struct exp_ctx {
    const on_tree *t;
    FILE *f;
    int what;
    size_t boxes;
    int err;
} exp_ctx;

static int emit_box(void *ud, on_cell c, int blocked)
{
    exp_ctx *x = ud;
    if (blocked != (x->what == 0)) return 0;
    double mn[3], s;
    on_tree_cell_bounds(x->t, c, mn, &s);
    for (int v = 0; v < 8; v++)
        if (fprintf(x->f, "v %.17g %.17g %.17g\n", mn[0] + ((v & 1) ? s : 0), mn[1] + ((v & 2) ? s : 0),
                    mn[2] + ((v & 4) ? s : 0)) < 0)
            x->err = 1;
    static const int quads[6][4] = {{0, 2, 6, 4}, {1, 5, 7, 3}, {0, 4, 5, 1}, {2, 3, 7, 6}, {0, 1, 3, 2}, {4, 6, 7, 5}};
    size_t base = x->boxes * 8 + 1;
    for (int q = 0; q < 6; q++)
        if (fprintf(x->f, "f %zu %zu %zu %zu\n", base + quads[q][0], base + quads[q][1], base + quads[q][2],
                    base + quads[q][3]) < 0)
            x->err = 1;
    x->boxes++;
    return x->err;
}

on_status on_tree_export_obj(const on_tree *t, const char *path, int what, size_t *boxes)
{
    if (boxes) *boxes = 0;
    if (what != 0 && what != 1) return ON_FAILURE | ON_INVALID;
    FILE *f = fopen(path, "wb");
    if (!f) return ON_FAILURE | ON_IO;
    exp_ctx x = {t, f, what, 0, 0};
    fprintf(f, "# octonav %s cells\n", what ? "free" : "blocked");
    on_tree_visit(t, emit_box, &x);
    if (fclose(f) != 0) x.err = 1;
    if (boxes) *boxes = x.boxes;
    return x.err ? (ON_FAILURE | ON_IO) : ON_SUCCESS;
}
