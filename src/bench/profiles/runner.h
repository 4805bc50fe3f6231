/*
 * runner.h -- runs the profile workload (§5, §8 of
 * the public profile-workload specification) on one engine and collects what the
 * report shows.
 *
 * Each engine runs in a forked child process so that its peak memory is its
 * own and a crash of one engine does not take the others down; the child
 * sends its rn_result (plain data) back through a pipe.
 */
#ifndef STRATA_BENCH_RUNNER_H
#define STRATA_BENCH_RUNNER_H

#include <stdint.h>

#include "bench/profiles/driver.h"

#define RN_NPHASES 16

typedef struct rn_config {
    int64_t profiles;
    int64_t queries; /* query phases run at most this many operations; 0: all (n / 4) */
    int clients;     /* worker threads, each with its own connection */
    int pipeline;    /* requests in flight per connection (remote engines) */
    char tmp[512];   /* parent of the engines' temporary data directories */
} rn_config;

typedef enum { RN_COMPLETED, RN_SKIPPED, RN_FAILED } rn_status;

typedef struct rn_phase {
    int64_t ops;
    int64_t ns;
    /* CPU time the phase cost: the benchmark process (its workers; for an
     * embedded engine also the engine's own threads) and the server (-1:
     * embedded or unknown). On a shared machine these are the comparable
     * figures; wall time depends on how many threads each engine has
     * runnable against the other load. */
    int64_t bench_cpu_ns, server_cpu_ns;
    uint64_t sum;
    int done;
    int mismatch; /* checksum differs from the test vector */
} rn_phase;

typedef struct rn_result {
    char name[16], title[32];
    rn_status status;
    char message[512]; /* why skipped or failed */
    rn_phase ph[RN_NPHASES];
    int64_t run_ns, phase_ns;
    int64_t pre_stab_ns, post_stab_ns; /* -1: the engine has no stabilize step */
    int64_t settle_ns, reopen_ns, verify_ns;
    int64_t storage;     /* bytes, -1 unknown */
    int64_t bench_peak;  /* bytes: peak RSS of the benchmark process */
    int64_t server_peak; /* bytes: VmHWM of the server process, -1 embedded */
    uint64_t final_sum;
    int final_done, final_mismatch;
    int vectors_checked; /* the run had test vectors to compare with */
} rn_result;

extern const char *const rn_phase_names[RN_NPHASES];

/* Expected checksums for n profiles with one worker (phases, then final), or
 * NULL when the document gives none for n. Entries may be NULL (unknown). */
const char *const *rn_vectors(int64_t n);

/* Runs the workload on ops in a child process and fills *res (always: a
 * skipped or failed engine says why in res->message). Prints a progress
 * line per phase on stdout. Returns 0 when the engine completed with every
 * checksum as expected, 1 otherwise. */
int rn_run_engine(const drv_ops *ops, const rn_config *cfg, rn_result *res);

#endif
