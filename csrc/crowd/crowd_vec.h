/*
 * crowd_vec.h -- small 3-vector helpers of the crowd's room (internal; every file of csrc/crowd/ uses
 * them, so they sit below crowd.h's files).
 */
#ifndef OCTONAV_CROWD_VEC_H
#define OCTONAV_CROWD_VEC_H

#include <math.h>

typedef struct on_v3 {
    double x, y, z;
} on_v3;

static inline on_v3 v3(double x, double y, double z) { on_v3 r = {x, y, z}; return r; }
static inline on_v3 v3_add(on_v3 a, on_v3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline on_v3 v3_sub(on_v3 a, on_v3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline on_v3 v3_scale(on_v3 a, double s) { return v3(a.x * s, a.y * s, a.z * s); }
static inline double v3_dot(on_v3 a, on_v3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline on_v3 v3_cross(on_v3 a, on_v3 b)
{
    return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline double v3_len2(on_v3 a) { return v3_dot(a, a); }
static inline double v3_len(on_v3 a) { return sqrt(v3_dot(a, a)); }
static inline on_v3 v3_from(const double p[3]) { return v3(p[0], p[1], p[2]); }
static inline void v3_to(on_v3 a, double p[3]) { p[0] = a.x, p[1] = a.y, p[2] = a.z; }

#endif
