/*
 * test_rng.h -- the xorshift64 generator of the randomized engine tests
 * (eng_model_test, eng_fault_workload_test): seed rng, then rnd() gives the
 * next 64 bits and rn(n) a number below n. Included once per test program.
 */
#ifndef STRATA_TEST_RNG_H
#define STRATA_TEST_RNG_H

#include <stdint.h>

static uint64_t rng;

static inline uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static inline unsigned rn(unsigned n)
{
    return (unsigned)(rnd() % n);
}

#endif
