/*
 * minitest.h -- the C unit tests' few macros: CHECK counts a pass or prints the failing line,
 * and TEST_MAIN ends with the line "c/NAME: N passed, N failed" that tools/summary.sh adds up.
 */
#ifndef OCTONAV_MINITEST_H
#define OCTONAV_MINITEST_H
#include <stdio.h>

static int mt_pass, mt_fail;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (cond) mt_pass++;                                                           \
        else {                                                                         \
            mt_fail++;                                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
        }                                                                              \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                             \
    do {                                                                               \
        long long mt_a = (long long)(a), mt_b = (long long)(b);                        \
        if (mt_a == mt_b) mt_pass++;                                                   \
        else {                                                                         \
            mt_fail++;                                                                 \
            fprintf(stderr, "%s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__,  \
                    #a, mt_a, mt_b);                                                   \
        }                                                                              \
    } while (0)

#define TEST_MAIN(name, body)                                                          \
    int main(void)                                                                     \
    {                                                                                  \
        body;                                                                          \
        printf("c/%s: %d passed, %d failed\n", name, mt_pass, mt_fail);                \
        return mt_fail ? 1 : 0;                                                        \
    }
#endif
