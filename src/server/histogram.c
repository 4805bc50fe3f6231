/*
 * histogram.c -- the HDR histogram of histogram.h (unit 1, 256 sub-buckets,
 * half-count magnitude 7, 23 buckets up to 1e9).
 */
#include "server/histogram.h"

#include <stddef.h>

#define SUB_HALF_MAG 7
#define SUB_HALF 128 /* 1 << SUB_HALF_MAG */
#define SUB_COUNT 256
#define SUB_MASK 255

static int bucket_of(int64_t v)
{
    return (64 - __builtin_clzll((uint64_t)v | SUB_MASK)) - (SUB_HALF_MAG + 1);
}

static int index_of(int64_t v)
{
    int b = bucket_of(v);
    int sb = (int)(v >> b);
    return ((b + 1) << SUB_HALF_MAG) + (sb - SUB_HALF);
}

static int64_t value_at_index(int idx)
{
    int b = (idx >> SUB_HALF_MAG) - 1;
    int sb = (idx & (SUB_HALF - 1)) + SUB_HALF;
    if (b < 0) {
        sb -= SUB_HALF;
        b = 0;
    }
    return (int64_t)sb << b;
}

static int64_t lowest_equivalent(int64_t v)
{
    int b = bucket_of(v);
    return (v >> b) << b;
}

static int64_t range_size(int64_t v)
{
    int b = bucket_of(v);
    int sb = (int)(v >> b);
    return (int64_t)1 << (sb >= SUB_COUNT ? b + 1 : b);
}

static int64_t highest_equivalent(int64_t v)
{
    return lowest_equivalent(v) + range_size(v) - 1;
}

void hist_record(histogram *h, int64_t ns)
{
    if (ns < HIST_MIN_NS) ns = HIST_MIN_NS;
    if (ns > HIST_MAX_NS) ns = HIST_MAX_NS;
    h->counts[index_of(ns)]++;
    h->total++;
}

int64_t hist_value_at_percentile(const histogram *h, double p)
{
    double req = p < 100.0 ? p : 100.0;
    int64_t want = (int64_t)((req / 100) * (double)h->total + 0.5);
    if (want < 1) want = 1;
    uint64_t seen = 0;
    int64_t v = 0;
    for (int i = 0; i < HIST_COUNTS; i++) {
        seen += h->counts[i];
        if (seen >= (uint64_t)want) {
            v = value_at_index(i);
            break;
        }
    }
    return p == 0.0 ? lowest_equivalent(v) : highest_equivalent(v);
}

/* hdr's log iterator: each step ends at the first counter whose value
 * reaches the next reporting level (1024, 2048, ...), its count included;
 * the step reports that counter's highest equivalent value. */
void hist_walk_log2(const histogram *h, void (*fn)(void *arg, int64_t usec, uint64_t cum),
                    void *arg)
{
    int idx = -1;
    int64_t value = 0, highest = 0;
    uint64_t cum = 0, prev = 0;
    int64_t level = 1024, level_low = lowest_equivalent(1024);
    for (;;) {
        int more = cum < h->total || (idx + 1 < HIST_COUNTS && value_at_index(idx + 1) > level_low);
        if (!more) return;
        for (;;) {
            if (value >= level_low) {
                level *= 2;
                level_low = lowest_equivalent(level);
                break;
            }
            if (idx + 1 >= HIST_COUNTS) break;
            idx++;
            cum += h->counts[idx];
            value = value_at_index(idx);
            highest = highest_equivalent(value);
        }
        if (cum > prev) fn(arg, highest / 1000, cum);
        prev = cum;
        if (idx + 1 >= HIST_COUNTS && value < level_low) return;
    }
}
