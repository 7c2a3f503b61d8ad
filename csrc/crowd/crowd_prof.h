/* crowd_prof.h: the clocks a profiling build (-DON_CROWD_PROFILE, bench/crowd only) times the crowd's
 * phases by: wall (CLOCK_MONOTONIC) and the calling thread's CPU, in seconds. Included by crowd.c and
 * workers.c; nothing in it is compiled into a normal build. */
#ifndef ON_CROWD_PROF_H
#define ON_CROWD_PROF_H
#ifdef ON_CROWD_PROFILE
#include <time.h>

static inline double prof_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline double prof_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
#endif
#endif
