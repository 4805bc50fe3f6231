/*
 * bench_util.h -- small helpers shared by the strata-bench subcommands
 * (bench_engine*.c, bench_index.c).
 */
#ifndef STRATA_BENCH_UTIL_H
#define STRATA_BENCH_UTIL_H

/* Seconds on the monotonic clock, for measuring intervals. */
double bench_now_sec(void);

/* Installs handler for SIGINT, SIGTERM and SIGHUP, the signals on which a
 * benchmark must clean up what it left (directories, child servers) before
 * exiting. REQUIRES: handler is async-signal-safe. */
void bench_catch_fatal_signals(void (*handler)(int));

#endif
