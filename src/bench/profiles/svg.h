/*
 * svg.h -- a grouped bar chart as a standalone SVG file (no dependencies).
 */
#ifndef STRATA_BENCH_SVG_H
#define STRATA_BENCH_SVG_H

/* Writes path: one group of bars per category, one bar per series, value
 * labels above the bars. values[s * ncat + c]; a negative value is drawn as
 * "n/a". Returns 0 or -1. */
int svg_grouped_bars(const char *path, const char *title, const char *unit, int ncat,
                     const char *const *cats, int nser, const char *const *series,
                     const double *values);

#endif
