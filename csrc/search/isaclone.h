/*
 * isaclone.h -- hot loops compiled twice on x86: once for the baseline x86-64 and once for the bit
 * instructions x86 CPUs have had since 2013 (Haswell, Excavator): popcnt, BMI1 and BMI2 (shifts
 * by a register without the count in cl, andn, tzcnt). The caller picks the clone at each call
 * (on_isa_bits: libgcc's cpuid, read once by its constructor). The cell adjacency's lists
 * (celladj.c) were cloned for popcnt alone before; with the BMI instructions too, callgrind (make
 * bench-query-ir) counts about 10 k instructions a query fewer on DC1 (docs/benchmarks.md, "Search
 * instructions"). The search loop itself cloned the same way gained 0.5 k on DC1: not done.
 */
#ifndef OCTONAV_ISACLONE_H
#define OCTONAV_ISACLONE_H

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define ON_ISA_CLONE 1
#define ON_TARGET_BITS __attribute__((target("popcnt,bmi,bmi2")))
/* 1 when the CPU runs the clones compiled with ON_TARGET_BITS. */
static inline int on_isa_bits(void)
{
    return __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
}
/* 1 unless BMI2's pext is microcoded (AMD's Zen 1 and 2, about 18 cycles against 3): where the clones may
 * use it (celladj.c's slot_at). */
static inline int on_isa_fast_pext(void) { return !__builtin_cpu_is("znver1") && !__builtin_cpu_is("znver2"); }
#else
#define ON_TARGET_BITS
static inline int on_isa_bits(void) { return 0; }
static inline int on_isa_fast_pext(void) { return 0; }
#endif

#endif
