/*
 * report.h -- the Markdown report and SVG charts of a profile run, shaped
 * like the public 2M-profile report (its published seeds).
 */
#ifndef STRATA_BENCH_REPORT_H
#define STRATA_BENCH_REPORT_H

#include <stddef.h>

#include "bench/profiles/runner.h"

/* Writes report.md and the charts (*.svg) into dir (created if missing).
 * res[0..n) are the engines in run order; run_ns is the wall time of the
 * whole run. Returns 0, or -1 with err. */
int rp_write(const char *dir, const rn_config *cfg, const rn_result *res, int n,
             const char *engine_settings[], char *err, size_t cap);

#endif
