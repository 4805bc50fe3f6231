/*
 * histogram_test.c -- the latency histogram gives the values Redis's HDR
 * histogram gives for the same samples: exact below 256 ns, the highest
 * equivalent value of the sample's sub-bucket above (1000 ns reads back as
 * 1003, Redis's familiar "p50=1.003"), clamping at 1 ns and 1 s, percentile
 * ranks rounded as hdr_value_at_percentile, and LATENCY HISTOGRAM's log-2
 * buckets of 1024 ns and up with their cumulative counts.
 */
#include <stdlib.h>
#include <string.h>

#include "server/histogram.h"
#include "test.h"

static histogram *hnew(void)
{
    histogram *h = calloc(1, sizeof(*h));
    CHECK(h != NULL);
    return h;
}

TEST(SmallValuesAreExactAndLargerOnesReadAsTheirSubBucketTop)
{
    histogram *h = hnew();
    hist_record(h, 200);
    CHECK_EQ_INT(hist_value_at_percentile(h, 50), 200);
    memset(h, 0, sizeof(*h));
    hist_record(h, 1000); /* bucket 2, sub-bucket 250: [1000, 1003] */
    CHECK_EQ_INT(hist_value_at_percentile(h, 50), 1003);
    CHECK_EQ_INT(hist_value_at_percentile(h, 0), 1000); /* p0 is the lowest equivalent */
    memset(h, 0, sizeof(*h));
    hist_record(h, 50000000); /* 50 ms: within 1/128 */
    int64_t v = hist_value_at_percentile(h, 99.9);
    CHECK(v >= 50000000 && v < 50000000 + 50000000 / 128);
    free(h);
}

TEST(ValuesAreClampedToOneNanosecondAndOneSecond)
{
    histogram *h = hnew();
    hist_record(h, 0);
    hist_record(h, -5);
    CHECK_EQ_INT(hist_value_at_percentile(h, 100), 1);
    hist_record(h, 5000000000LL);
    CHECK_EQ_INT(h->total, 3);
    int64_t top = hist_value_at_percentile(h, 100);
    CHECK(top >= HIST_MAX_NS && top < HIST_MAX_NS + HIST_MAX_NS / 128);
    free(h);
}

TEST(PercentileRanksRoundAsHdr)
{
    histogram *h = hnew();
    for (int i = 1; i <= 100; i++)
        hist_record(h, i); /* exact values 1..100 */
    CHECK_EQ_INT(hist_value_at_percentile(h, 50), 50);
    CHECK_EQ_INT(hist_value_at_percentile(h, 99), 99);
    CHECK_EQ_INT(hist_value_at_percentile(h, 99.9), 100); /* rank 99.9 + 0.5 -> 100 */
    CHECK_EQ_INT(hist_value_at_percentile(h, 0.4), 1);    /* rank 0.9 -> at least 1 */
    CHECK_EQ_INT(hist_value_at_percentile(h, 150), 100);
    free(h);
}

typedef struct walk {
    int64_t usec[40];
    uint64_t cum[40];
    int n;
} walk;

static void collect(void *arg, int64_t usec, uint64_t cum)
{
    walk *w = arg;
    if (w->n < 40) {
        w->usec[w->n] = usec;
        w->cum[w->n++] = cum;
    }
}

TEST(Log2BucketsCarryCumulativeCounts)
{
    histogram *h = hnew();
    walk w = {{0}, {0}, 0};
    hist_walk_log2(h, collect, &w);
    CHECK_EQ_INT(w.n, 0); /* empty: no buckets */
    hist_record(h, 1000); /* 1 us */
    hist_record(h, 1000);
    hist_record(h, 3000);  /* 3 us */
    hist_record(h, 40000); /* 40 us */
    hist_walk_log2(h, collect, &w);
    /* 1024 ns: the two 1 us samples; 4096: +3 us; 65536: +40 us (each
     * reported as the top of the counter that reaches the level: 1031,
     * 4111 and 66047 ns). */
    CHECK_EQ_INT(w.n, 3);
    CHECK_EQ_INT(w.usec[0], 1);
    CHECK_EQ_INT(w.cum[0], 2);
    CHECK_EQ_INT(w.usec[1], 4);
    CHECK_EQ_INT(w.cum[1], 3);
    CHECK_EQ_INT(w.usec[2], 66);
    CHECK_EQ_INT(w.cum[2], 4);
    free(h);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
