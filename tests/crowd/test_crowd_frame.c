/*
 * test_crowd_frame.c -- the crowd's frame (csrc/crowd/crowd.c, proximity.c): the proximity grid's k
 * nearest against a brute force over every agent (ties by slot, agents on cell borders and on one
 * point, buckets shared by several cells, ranges below the grid's).
 */
#include "minitest.h"
#include "octonav.h"
#include "crowd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static double rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* the k nearest within range by brute force: (distance squared, slot) ascending */
static int brute(const on_agent *ag, uint32_t n, uint32_t self, double range, int k, uint32_t *out)
{
    int m = 0;
    double d[ON_CROWD_MAX_NEIGHBOURS];
    for (uint32_t j = 0; j < n; j++) {
        if (!ag[j].id || j == self) continue;
        double dx = ag[j].pos.x - ag[self].pos.x, dy = ag[j].pos.y - ag[self].pos.y, dz = ag[j].pos.z - ag[self].pos.z;
        double d2 = dx * dx + dy * dy + dz * dz;
        if (d2 > range * range) continue;
        int q = m < k ? m++ : k;
        if (q == k && (d2 > d[k - 1] || (d2 == d[k - 1] && j > out[k - 1]))) continue;
        if (q == k) q = k - 1;
        while (q > 0 && (d[q - 1] > d2 || (d[q - 1] == d2 && out[q - 1] > j))) {
            d[q] = d[q - 1], out[q] = out[q - 1];
            q--;
        }
        d[q] = d2, out[q] = j;
    }
    return m;
}

/* n agents in a cube of side `side` (some removed, some on one point, some on cell borders): every
 * agent's k nearest for several ranges, the grid against the brute force */
static int compare(uint32_t n, double side, double grid_range, int *checked)
{
    on_agent *ag = calloc(n, sizeof *ag);
    for (uint32_t i = 0; i < n; i++) {
        ag[i].id = i % 7 == 3 ? 0 : i + 1; /* free slots among the live */
        double p[3] = {rnd() * side - side / 2, rnd() * side, rnd() * side};
        if (i % 11 == 0) p[0] = p[1] = p[2] = 1.0;               /* many on one point: ties by slot */
        if (i % 13 == 0) p[0] = floor(p[0] / grid_range) * grid_range; /* on a cell's border */
        if (i % 17 == 0) p[1] = -p[1];
        ag[i].pos = v3(p[0], p[1], p[2]);
    }
    on_proxgrid g;
    memset(&g, 0, sizeof g);
    int bad = 0;
    if (on_proxgrid_build(&g, ag, n, grid_range) < 0) bad++;
    double ranges[3] = {grid_range, grid_range * 0.55, grid_range * 0.01};
    int ks[3] = {1, 16, ON_CROWD_MAX_NEIGHBOURS};
    for (uint32_t i = 0; i < n && !bad; i++) {
        if (!ag[i].id) continue;
        for (int r = 0; r < 3; r++)
            for (int kk = 0; kk < 3; kk++) {
                uint32_t a[ON_CROWD_MAX_NEIGHBOURS], b[ON_CROWD_MAX_NEIGHBOURS];
                int ma = on_proxgrid_nearest(&g, ag, i, ranges[r], ks[kk], a);
                int mb = brute(ag, n, i, ranges[r], ks[kk], b);
                if (ma != mb || memcmp(a, b, (size_t)ma * sizeof *a) != 0) bad++;
                (*checked)++;
            }
    }
    on_proxgrid_free(&g);
    free(ag);
    return bad;
}

static void test_proximity(void)
{
    int checked = 0;
    CHECK_EQ_INT(compare(1000, 64, 13, &checked), 0);   /* the bench's density */
    CHECK_EQ_INT(compare(400, 2000, 3, &checked), 0);   /* sparse: most cells alone, buckets shared */
    CHECK_EQ_INT(compare(300, 8, 20, &checked), 0);     /* every agent in one cell or two */
    CHECK_EQ_INT(compare(3000, 40, 2.5, &checked), 0);  /* crowded: many agents a cell */
    CHECK(checked > 30000);
    printf("proximity: %d searches equal to the brute force\n", checked);
}

TEST_MAIN("crowd_frame", {
    test_proximity();
})
