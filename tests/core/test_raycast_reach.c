/*
 * test_raycast_reach.c -- the transition check's table (raycast_walk.h: reach_comp and reach_after, which
 * every line of sight, turn check and the dense reference walk use) against a plain flood fill over the
 * 2 x 2 x 2 block of voxels: every component entry, and every (free, before, after) triple of masks.
 */
#include "minitest.h"
#include "raycast_walk.h"

#include <stdint.h>

/* Voxels of `freem` joined to the free voxels of `from` through free voxels sharing a face (entry
 * e = x | y << 1 | z << 2; a face neighbour differs in one bit): breadth-first, one voxel at a time. */
static unsigned ref_reach(unsigned freem, unsigned from)
{
    unsigned seen = freem & from, queue[8], n = 0;
    for (unsigned e = 0; e < 8; e++)
        if (seen >> e & 1u) queue[n++] = e;
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < 3; j++) {
            unsigned u = queue[i] ^ (1u << j);
            if ((freem >> u & 1u) && !(seen >> u & 1u)) {
                seen |= 1u << u;
                queue[n++] = u;
            }
        }
    return seen;
}

static void components(void)
{
    long bad = 0;
    for (unsigned f = 0; f < 256; f++)
        for (unsigned e = 0; e < 8; e++)
            if (((reach_comp[f] >> (8 * e)) & 0xffu) != ref_reach(f, 1u << e)) bad++;
    CHECK_EQ_INT(bad, 0);
    /* known entries: all free (each voxel reaches all 8); two voxels across a diagonal only (0 and 3, no
     * face shared: each reaches itself); an L of three (0, 1, 3) */
    CHECK(reach_comp[0xff] == 0xffffffffffffffffull);
    CHECK(reach_comp[0x09] == 0x0000000008000001ull);
    CHECK(reach_comp[0x0b] == 0x000000000b000b0bull);
}

static void triples(void)
{
    long bad = 0, joined = 0;
    for (unsigned f = 0; f < 256; f++)
        for (unsigned b = 0; b < 256; b++) {
            unsigned r = ref_reach(f, b);
            for (unsigned a = 0; a < 256; a++) {
                unsigned got = reach_after(f, b, a), want = r & a & f;
                bad += got != want;
                joined += want != 0;
            }
        }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(joined, 13277153); /* (triples with a join: counted by the same flood fill in Python) */
    /* the zero-width gap: blocked voxels 1 and 2 meet the free 0 and 3 only at an edge */
    CHECK_EQ_INT(reach_after(0x09u, 0x01u, 0x08u), 0);
    CHECK_EQ_INT(reach_after(0x0bu, 0x01u, 0x08u), 0x08);
    CHECK_EQ_INT(reach_after(0xffu, 0x0fu, 0xf0u), 0xf0);
    CHECK_EQ_INT(reach_after(0x00u, 0xffu, 0xffu), 0);
}

TEST_MAIN("raycast_reach", {
    components();
    triples();
})
