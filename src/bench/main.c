/*
 * main.c -- strata-bench: benchmarks of strata against its peers, measured
 * side by side in one run.
 */
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"

static void usage(void)
{
    fprintf(stderr, "usage: strata-bench engine   [--num N] [--value-size B] [--compare rocksdb]\n"
                    "       strata-bench index    [--num N] ...\n"
                    "       strata-bench profiles [--profiles N] [--engine "
                    "strata,redis,rocksdb,sqlite,mariadb|all]\n"
                    "                             [--clients C --pipeline P] [--out DIR]\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage();
        return 2;
    }
    if (!strcmp(argv[1], "engine")) return bench_engine_main(argc - 1, argv + 1);
    if (!strcmp(argv[1], "index")) return bench_index_main(argc - 1, argv + 1);
    if (!strcmp(argv[1], "profiles")) return bench_profiles_main(argc - 1, argv + 1);
    usage();
    return 2;
}
