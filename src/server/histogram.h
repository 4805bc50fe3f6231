/*
 * histogram.h -- the latency histogram of one command (INFO latencystats,
 * LATENCY HISTOGRAM): an HDR histogram with the layout Redis uses (values
 * in nanoseconds from 1 to 1e9, 2 significant digits), so percentiles and
 * the histogram buckets come out as Redis computes them from the same
 * samples.
 *
 * Layout: 24 buckets of 128 half-sub-buckets (3072 counters, 24 KB). A
 * value v lands in bucket b = bits(v | 255) - 8 and sub-bucket v >> b:
 * exact below 256, within 1/128 above. A histogram is allocated on a
 * command's first sample. Command thread only.
 */
#ifndef STRATA_HISTOGRAM_H
#define STRATA_HISTOGRAM_H

#include <stdint.h>

#define HIST_MIN_NS 1
#define HIST_MAX_NS 1000000000LL
#define HIST_COUNTS 3072

typedef struct histogram {
    uint64_t total;
    uint64_t counts[HIST_COUNTS];
} histogram;

/* Records one value (clamped to [HIST_MIN_NS, HIST_MAX_NS]). */
void hist_record(histogram *h, int64_t ns);
/* The value at percentile p (0..100), as hdr_value_at_percentile: the
 * highest value equivalent to the sample at that rank (the lowest for
 * p == 0). 0 when empty. */
int64_t hist_value_at_percentile(const histogram *h, double p);
/* Walks the log-2 buckets of LATENCY HISTOGRAM, as hdr's logarithmic
 * iterator with a first bucket of 1024 ns: calls fn(arg, usec, cumulative
 * count) for every bucket whose cumulative count grew. */
void hist_walk_log2(const histogram *h, void (*fn)(void *arg, int64_t usec, uint64_t cum),
                    void *arg);

#endif
