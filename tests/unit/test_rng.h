/*
 * test_rng.h -- the xorshift64 generator of the randomized tests
 * (eng_model_test, eng_fault_workload_test, eng_block_test,
 * eng_mget_test, idx_key_test, ks_glob_test, ks_set_test): rnd() gives
 * the next 64 bits and rn(n) a number below n. rng starts at
 * TEST_RNG_SEED (define it before the include to draw another fixed
 * sequence); a test that takes its seed at run time assigns rng. Never
 * 0: xorshift stays at 0. Included once per test program.
 */
#ifndef STRATA_TEST_RNG_H
#define STRATA_TEST_RNG_H

#include <stdint.h>

#ifndef TEST_RNG_SEED
#define TEST_RNG_SEED 88172645463325252ull
#endif

static uint64_t rng = TEST_RNG_SEED;

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
