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

/* The thread's CPU clock is a system call on some virtual machines (kvm-clock: 3.3 us a call here,
 * against 25 ns for CLOCK_MONOTONIC): the profiling build reads it 2 times a job a thread and 5 times a
 * frame on the caller, ~20-30 us a frame of a 0.9 ms frame. -DON_CROWD_PROFILE_WALL leaves it out
 * (the CPU columns then 0), so that the phases' spans are the frame's own. */
static inline double prof_cpu(void)
{
#ifdef ON_CROWD_PROFILE_WALL
    return 0;
#endif
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
#endif
#endif
