/*
 * bench.h -- strata-bench subcommands. Each takes the arguments after its
 * name and returns the process exit status.
 */
#ifndef STRATA_BENCH_H
#define STRATA_BENCH_H

int bench_engine_main(int argc, char **argv);   /* bench_engine.c */
int bench_index_main(int argc, char **argv);    /* bench_index.c */
int bench_profiles_main(int argc, char **argv); /* profiles/ *.c */

#endif
