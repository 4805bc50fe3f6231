/*
 * profiles_workload_test.c -- the profile workload's generator, random plan,
 * checksum and partitioning against the public profile-workload specification.
 *
 * The whole 100_000-profile workload is also replayed against an in-memory
 * model (arrays and sorted lists, no engine) and every phase checksum is
 * compared with the document's test vectors (§6), so a wrong draw, a wrong
 * update() or a wrong index order fails here before any engine runs.
 *
 * workload.c is compiled into this test directly: unit tests link the
 * server layers, not strata-bench's sources.
 */
#include "bench/profiles/workload.c"

#include "test.h"

static const char *hex(uint64_t h)
{
    static char buf[4][17];
    static int i;
    i = (i + 1) % 4;
    wl_sum_hex(h, buf[i]);
    return buf[i];
}

#define CHECK_HEX(h, s) CHECK_MSG(!strcmp(hex(h), s), "%s: %s != %s", #h, hex(h), s)

TEST(MixIsSplitMix64Finaliser)
{
    /* The first output of SplitMix64 from state 0 is mix(0). */
    CHECK(wl_mix(0) == 0xE220A8397B1DCDAFULL);
    CHECK(wl_mix(1) != wl_mix(0));
}

TEST(CreateOneHasDocumentedFields)
{
    wl_profile p;
    wl_create(1, &p);
    uint64_t a = wl_mix(1 + WL_SEED), b = wl_mix(a + WL_GOLDEN);
    CHECK_EQ_INT(p.user_id, 1);
    CHECK(!strcmp(p.email, "user000000000001@example01.com"));
    CHECK(!strcmp(p.country, wl_countries[a % 32]));
    CHECK(!strcmp(p.country, "NO"));
    CHECK(!strcmp(p.status, "active"));
    CHECK_EQ_INT(p.created_at, 1672531201300LL);
    CHECK_EQ_INT(p.created_at, WL_BASE_MS + 1000 + (int64_t)(a % 997));
    CHECK_EQ_INT(p.last_login, WL_BASE_MS + (int64_t)(b % 7776000000ULL));
    CHECK_EQ_INT(p.reputation, 534062);
    CHECK(!strcmp(p.display_name, "User 000000000001"));
    CHECK(!strcmp(p.bio, "Profile 1 prefers developer tools and has segment 4062."));
}

TEST(EmailPadsIdAndModulo97)
{
    wl_profile p;
    wl_create(123456789012LL, &p);
    CHECK(!strcmp(p.email, "user123456789012@example18.com")); /* 123456789012 % 97 == 18 */
    wl_create(97, &p);
    CHECK(!strcmp(p.email, "user000000000097@example00.com"));
}

TEST(UpdateRotatesStatusOnlyForMultiplesOfFour)
{
    wl_profile p, q;
    wl_create(8, &p);
    CHECK(!wl_update(&p, &q));
    CHECK_EQ_INT(wl_status_index(q.status), (wl_status_index(p.status) + 1) % 4);
    uint64_t m = wl_mix(8 + WL_SEED + 0xD1B54A32D192ED03ULL);
    CHECK_EQ_INT(q.last_login, p.last_login + 604800000 + (int64_t)(m % 86400000));
    CHECK(strlen(q.bio) == strlen(p.bio) + 8 && !strcmp(q.bio + strlen(p.bio), " updated"));
    wl_create(9, &p);
    CHECK(!wl_update(&p, &q));
    CHECK(!strcmp(p.status, q.status));
}

TEST(UpdateClampsReputation)
{
    wl_profile p, q;
    for (int64_t id = 1; id < 2000; id++) {
        wl_create(id, &p);
        p.reputation = 3;
        CHECK(!wl_update(&p, &q));
        CHECK(q.reputation >= 0 && q.reputation <= 253);
        p.reputation = WL_MAX_REPUTATION - 2;
        CHECK(!wl_update(&p, &q));
        CHECK(q.reputation <= WL_MAX_REPUTATION && q.reputation >= WL_MAX_REPUTATION - 252);
    }
}

TEST(InsertChecksumsMatchVectors)
{
    uint64_t h = WL_SUM_INIT;
    for (int64_t id = 1; id <= 2000000; id++) {
        wl_sum_add(&h, (uint64_t)id);
        if (id == 100000) CHECK_HEX(h, "37C6E9056D5AC045");
    }
    CHECK_HEX(h, "4F24F178E189EEA5");
}

TEST(SeededRandomMatchesLegacyDotNet)
{
    /* new System.Random(0): the first Next() values are well known. */
    wl_rng r;
    wl_rng_seed(&r, 0);
    CHECK_EQ_INT(wl_rng_sample_int(&r), 1559595546);
    CHECK_EQ_INT(wl_rng_sample_int(&r), 1755192844);
    CHECK_EQ_INT(wl_rng_sample_int(&r), 1649316166);
}

TEST(NextInt64DegenerateRangeReturnsLow)
{
    wl_rng r;
    wl_rng_seed(&r, WL_SEED);
    wl_rng r2 = r;
    CHECK_EQ_INT(wl_rng_next_int64(&r, 5, 6), 5);
    CHECK(!memcmp(&r, &r2, sizeof(r))); /* no draw was consumed */
    for (int i = 0; i < 10000; i++) {
        int64_t v = wl_rng_next_int64(&r, 1, 1001);
        CHECK(v >= 1 && v <= 1000);
    }
}

TEST(PlanFirstDrawsMatch)
{
    wl_plan p;
    CHECK(!wl_plan_build(&p, 100000));
    CHECK_EQ_INT(p.q, 25000);
    CHECK_EQ_INT(p.point_reads[0], 29342);
    CHECK_EQ_INT(p.point_reads[1], 9152);
    CHECK_EQ_INT(p.email_reads[0], 32298);
    CHECK_EQ_INT(p.cs_queries[0].country, 22);
    CHECK_EQ_INT(p.cs_queries[0].status, 3);
    CHECK_EQ_INT(p.ca_queries[0].from, 1672606726695LL);
    CHECK_EQ_INT(p.ca_queries[0].to, 1672611726767LL);
    CHECK_EQ_INT(p.update_ids[0], 82355);
    wl_plan_free(&p);
}

/* ---- In-memory model of the whole workload ----------------------------- */

static wl_profile *model;
static int64_t model_n;

static int by_rep(const void *a, const void *b)
{
    const wl_profile *x = &model[*(const int64_t *)a - 1], *y = &model[*(const int64_t *)b - 1];
    if (x->reputation != y->reputation) return x->reputation > y->reputation ? -1 : 1;
    return x->user_id < y->user_id ? -1 : x->user_id > y->user_id;
}

/* Top-100 by reputation, repeated q times (phases 8/9, 15/16). */
static void top_phases(int64_t q, uint64_t *ids_sum, uint64_t *prof_sum)
{
    int64_t *order = malloc((size_t)model_n * sizeof(int64_t));
    for (int64_t i = 0; i < model_n; i++)
        order[i] = i + 1;
    qsort(order, (size_t)model_n, sizeof(int64_t), by_rep);
    *ids_sum = *prof_sum = WL_SUM_INIT;
    for (int64_t k = 0; k < q; k++)
        for (int j = 0; j < WL_LIMIT && j < model_n; j++) {
            wl_sum_add(ids_sum, (uint64_t)order[j]);
            wl_sum_profile(prof_sum, &model[order[j] - 1]);
        }
    free(order);
}

/* Country/status phases: ids ascending within each (country, status). */
static void cs_phases(const wl_cs_query *qs, int64_t q, uint64_t *ids_sum, uint64_t *prof_sum)
{
    int64_t *lists[WL_NCOUNTRIES * WL_NSTATUSES];
    int64_t len[WL_NCOUNTRIES * WL_NSTATUSES] = {0};
    for (int i = 0; i < WL_NCOUNTRIES * WL_NSTATUSES; i++)
        lists[i] = malloc(WL_LIMIT * sizeof(int64_t));
    for (int64_t id = 1; id <= model_n; id++) {
        int k = wl_country_index(model[id - 1].country) * WL_NSTATUSES +
                wl_status_index(model[id - 1].status);
        if (len[k] < WL_LIMIT) lists[k][len[k]++] = id;
    }
    *ids_sum = *prof_sum = WL_SUM_INIT;
    for (int64_t i = 0; i < q; i++) {
        int k = qs[i].country * WL_NSTATUSES + qs[i].status;
        for (int64_t j = 0; j < len[k]; j++) {
            wl_sum_add(ids_sum, (uint64_t)lists[k][j]);
            wl_sum_profile(prof_sum, &model[lists[k][j] - 1]);
        }
    }
    for (int i = 0; i < WL_NCOUNTRIES * WL_NSTATUSES; i++)
        free(lists[i]);
}

/* Created-at phases: created_at grows with id (id * 1000 + a % 997), so the
 * (created_at, user_id) order is the id order. */
static void ca_phases(const wl_plan *p, uint64_t *ids_sum, uint64_t *prof_sum)
{
    *ids_sum = *prof_sum = WL_SUM_INIT;
    for (int64_t i = 0; i < p->q; i++) {
        int64_t lo = 1, hi = model_n + 1;
        while (lo < hi) { /* first id with created_at >= from */
            int64_t mid = (lo + hi) / 2;
            if (model[mid - 1].created_at < p->ca_queries[i].from)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (int64_t id = lo, n = 0; id <= model_n && n < WL_LIMIT; id++, n++) {
            if (model[id - 1].created_at > p->ca_queries[i].to) break;
            wl_sum_add(ids_sum, (uint64_t)id);
            wl_sum_profile(prof_sum, &model[id - 1]);
        }
    }
}

static void reads(const int64_t *ids, int64_t n, uint64_t *sum)
{
    *sum = WL_SUM_INIT;
    for (int64_t i = 0; i < n; i++)
        wl_sum_profile(sum, &model[ids[i] - 1]);
}

TEST(InMemoryModelReproducesEveryTestVector)
{
    static const char *const vec[17] = {"37C6E9056D5AC045", "3C75C3A02940F75F", "8EACBB38279A3446",
                                        "550DE764BD164CCC", "8A71BD4E88816061", "1BED8F615F0CDA9D",
                                        "DD87F18F9230D64C", "5045A3EB2C7535C5", "3C71031ED8049A9D",
                                        "FA3F051A503B5D43", "2AD19D2C2B2F8F3D", "6B8148031A502EBA",
                                        "D57DAE36F8AAE9C3", "1583D5A1C67A8B7C", "4EAFA92C8AA7C495",
                                        "8A0AD194E6834A4D", "1C7232F217FD84C5"};
    wl_plan p;
    uint64_t s[17];
    model_n = 100000;
    CHECK(!wl_plan_build(&p, model_n));
    model = malloc((size_t)model_n * sizeof(wl_profile));
    CHECK(model != NULL);
    s[0] = WL_SUM_INIT;
    for (int64_t id = 1; id <= model_n; id++) {
        wl_create(id, &model[id - 1]);
        wl_sum_add(&s[0], (uint64_t)id);
    }
    reads(p.point_reads, p.n, &s[1]);
    reads(p.email_reads, p.n, &s[2]); /* emails are unique: email -> its own id */
    cs_phases(p.cs_queries, p.q, &s[3], &s[4]);
    ca_phases(&p, &s[5], &s[6]);
    top_phases(p.q, &s[7], &s[8]);
    s[9] = WL_SUM_INIT;
    for (int64_t i = 0; i < p.n; i++) {
        wl_profile *m = &model[p.update_ids[i] - 1];
        CHECK(!wl_update(m, m));
        wl_sum_profile(&s[9], m);
    }
    reads(p.post_point_reads, p.n, &s[10]);
    reads(p.post_email_reads, p.n, &s[11]);
    cs_phases(p.post_cs_queries, p.q, &s[12], &s[13]);
    top_phases(p.q, &s[14], &s[15]);
    s[16] = WL_SUM_INIT;
    wl_sum_add(&s[16], (uint64_t)model_n);
    wl_sum_profile(&s[16], &model[0]);
    wl_sum_profile(&s[16], &model[model_n / 2 - 1]);
    wl_sum_profile(&s[16], &model[model_n - 1]);
    for (int i = 0; i < 17; i++)
        CHECK_MSG(!strcmp(hex(s[i]), vec[i]), "phase %d: %s != %s", i + 1, hex(s[i]), vec[i]);
    free(model);
    wl_plan_free(&p);
}

TEST(PartitionGivesRemainderToFirstWorkers)
{
    int64_t st, cnt, next = 0;
    static const int64_t want[3] = {4, 3, 3};
    for (int w = 0; w < 3; w++) {
        wl_partition(10, 3, w, &st, &cnt);
        CHECK_EQ_INT(cnt, want[w]);
        CHECK_EQ_INT(st, next);
        next += cnt;
    }
    wl_partition(2, 4, 3, &st, &cnt);
    CHECK_EQ_INT(cnt, 0);
}

TEST(BucketsKeepPlanOrderById)
{
    int64_t ids[] = {5, 2, 8, 5, 3, 6}, *b[3], len[3];
    CHECK(!wl_bucket_ids(ids, 6, 3, b, len));
    CHECK_EQ_INT(len[0], 2);
    CHECK(b[0][0] == 3 && b[0][1] == 6);
    CHECK_EQ_INT(len[2], 4);
    CHECK(b[2][0] == 5 && b[2][1] == 2 && b[2][2] == 8 && b[2][3] == 5);
    CHECK_EQ_INT(len[1], 0);
    for (int w = 0; w < 3; w++)
        free(b[w]);
}

TEST(CombineUsesSingleActiveWorkerAsIs)
{
    uint64_t sums[3] = {111, 0x0123456789ABCDEFULL, 333};
    int one[3] = {0, 1, 0}, two[3] = {1, 1, 0};
    CHECK(wl_combine(sums, one, 3) == 0x0123456789ABCDEFULL);
    uint64_t h = WL_SUM_INIT;
    wl_sum_str(&h, "000000000000006F");
    wl_sum_str(&h, "0123456789ABCDEF");
    CHECK(wl_combine(sums, two, 3) == h);
    int rev[3] = {0, 1, 1};
    CHECK(wl_combine(sums, rev, 3) != wl_combine(sums, two, 3));
}

TEST(RecordRoundTripsAndRejectsTruncation)
{
    wl_profile p, q;
    char buf[WL_RECORD_MAX];
    wl_create(424242, &p);
    CHECK(!wl_update(&p, &p));
    size_t n = wl_encode(&p, buf, sizeof(buf));
    CHECK(n > 28);
    CHECK(!wl_decode(buf, n, &q));
    CHECK(wl_profile_equal(&p, &q));
    for (size_t cut = 0; cut < n; cut++)
        CHECK(wl_decode(buf, cut, &q) != 0);
    CHECK_EQ_INT(wl_encode(&p, buf, 40), 0);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
