/*
 * test.h -- a tiny unit test harness.
 *
 *   TEST(TruncatedTrailingRecordIsIgnored) { ... CHECK(x == 1); CHECK_EQ_INT(a, b); ... }
 *   int main(int argc, char **argv) { return test_main(argc, argv); }
 *
 * Each test prints "PASS <name>" or "FAIL <name>: <file>:<line>: <expr>";
 * tests/run.sh counts those lines. A test stops at its first failed check.
 * test_main(argc, argv) runs every test, or those whose name contains argv[1].
 * Tests get a fresh empty directory from test_tmpdir().
 */
#ifndef STRATA_TEST_H
#define STRATA_TEST_H

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void (*test_fn)(void);
struct test_case {
    const char *name;
    test_fn fn;
};

#define TEST_MAX 512
static struct test_case test_cases[TEST_MAX];
static int test_count;
static jmp_buf test_jmp;
static char test_failure[1024];
static char test_dir[256];

#define TEST(name)                                                                                 \
    static void test_##name(void);                                                                 \
    __attribute__((constructor)) static void test_register_##name(void)                            \
    {                                                                                              \
        if (test_count < TEST_MAX)                                                                 \
            test_cases[test_count++] = (struct test_case){#name, test_##name};                     \
    }                                                                                              \
    static void test_##name(void)

#define CHECK_MSG(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            int n_ = snprintf(test_failure, sizeof(test_failure), "%s:%d: ", __FILE__, __LINE__);  \
            snprintf(test_failure + n_, sizeof(test_failure) - (size_t)n_, __VA_ARGS__);           \
            longjmp(test_jmp, 1);                                                                  \
        }                                                                                          \
    } while (0)
#define CHECK(cond) CHECK_MSG(cond, "%s", #cond)
#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        CHECK_MSG(a_ == b_, "%s == %s (%lld vs %lld)", #a, #b, a_, b_);                            \
    } while (0)
#define CHECK_MEM(p, n, s)                                                                         \
    CHECK_MSG((n) == strlen(s) && memcmp((p), (s), (n)) == 0, "%s == \"%s\"", #p, s)

/* A fresh empty directory for the running test (removed when it passes). */
static inline const char *test_tmpdir(void)
{
    return test_dir;
}

static inline int test_main(int argc, char **argv)
{
    volatile int passed = 0, failed = 0; /* live across the longjmp of a failed check */
    const char *filter = argc > 1 ? argv[1] : NULL;
    for (volatile int i = 0; i < test_count; i++) {
        if (filter && !strstr(test_cases[i].name, filter)) continue;
        const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        /* mkdtemp's template: the name ends in six 'X' it replaces. */
        int tn_ = snprintf(test_dir, sizeof(test_dir) - 7, "%s/strata-test-", base);
        if (tn_ < 0 || (size_t)tn_ >= sizeof(test_dir) - 7) {
            fprintf(stderr, "TMPDIR too long\n");
            return 2;
        }
        memset(test_dir + tn_, 'X', 6);
        test_dir[tn_ + 6] = 0;
        if (!mkdtemp(test_dir)) {
            perror("mkdtemp");
            return 2;
        }
        if (setjmp(test_jmp) == 0) {
            test_cases[i].fn();
            printf("PASS %s\n", test_cases[i].name);
            passed++;
            char cmd[300];
            snprintf(cmd, sizeof(cmd), "rm -rf '%s'", test_dir);
            if (system(cmd) != 0) { /* leave it */
            }
        } else {
            printf("FAIL %s: %s (dir %s)\n", test_cases[i].name, test_failure, test_dir);
            failed++;
        }
        fflush(stdout);
    }
    return failed ? 1 : 0;
}

#endif
