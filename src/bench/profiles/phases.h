/*
 * phases.h -- executes one phase of the profile workload with W workers,
 * each on its own connection with up to P requests in flight (§5, §8).
 *
 * Internal to the runner. Not thread-safe: one phase at a time per set of
 * connections.
 */
#ifndef STRATA_BENCH_PHASES_H
#define STRATA_BENCH_PHASES_H

#include "bench/profiles/driver.h"
#include "bench/profiles/workload.h"

typedef struct ph_set ph_set;

/* Creates the per-worker buffers for nworkers connections conns[] (owned by
 * the caller) and pipeline depth. Returns NULL when out of memory. */
ph_set *ph_create(const drv_ops *ops, drv_conn **conns, int nworkers, int pipeline,
                  const wl_plan *plan);
void ph_free(ph_set *s);

/* Runs phase (0-based index into rn_phase_names) and stores its combined
 * checksum in *sum and its operation count in *ops. Returns 0, or -1 with
 * the first worker's error in err. */
int ph_run(ph_set *s, int phase, uint64_t *sum, int64_t *ops, char *err, size_t cap);

/* 1 when phase (0-based) is one of the query phases (scans and queries of
 * the three indexes), whose length --queries caps. */
int ph_is_query(int phase);

/* Single-connection helpers for the final verification. Return 0 or -1. */
int ph_get(const drv_ops *ops, drv_conn *c, int64_t id, wl_profile *out, char *err, size_t cap);

#endif
