/*
 * bench_util.c -- helpers shared by the strata-bench subcommands; see
 * bench_util.h.
 */
#include <signal.h>
#include <string.h>
#include <time.h>

#include "bench/bench_util.h"

double bench_now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

void bench_catch_fatal_signals(void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}
