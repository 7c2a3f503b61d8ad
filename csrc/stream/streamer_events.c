/*
 * streamer_events.c -- the two steps every part of the streamer takes on the caller's thread (see
 * streamer.h): unloading a tile (its graph, contents and obstacle snapshot go) and listing an event for
 * the next on_streamer_update's answer. The update's rules (streamer_update.c), the API's calls
 * (streamer.c) and the tree files' reports (streamer_worker.c) use them.
 */
#include "streamer.h"

#include <stdlib.h>

void on_streamer_do_unload(on_streamer *s, uint32_t tile)
{
    if (s->graph) on_wgraph_remove_tile(s->graph, tile); /* (ON_SUCCESS also when it held none) */
    on_tree_unload_tile(s->t, tile);
    on_obstacles_tile_unloaded(s->t, tile);
    s->tiles[tile].state = ON_TILE_UNLOADED;
    for (size_t i = 0; i < s->nloaded; i++)
        if (s->loaded[i] == tile) {
            s->loaded[i] = s->loaded[--s->nloaded];
            break;
        }
}

void on_streamer_emit(on_streamer *s, uint32_t tile, int kind, on_status st)
{
    if (s->nev == s->evcap) {
        size_t nc = s->evcap ? s->evcap * 2 : 64;
        on_stream_event *bigger = realloc(s->ev, nc * sizeof *bigger);
        if (!bigger) {
            s->evlost = 1;
            return;
        }
        s->ev = bigger;
        s->evcap = nc;
    }
    s->ev[s->nev].tile = tile;
    s->ev[s->nev].kind = kind;
    s->ev[s->nev].status = st;
    s->ev[s->nev].tree = NULL;
    s->ev[s->nev].err[0] = 0;
    s->nev++;
}
