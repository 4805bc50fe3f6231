/*
 * workload.h -- the profile workload of the public profile-workload specification:
 * profile generation (create/update), the .NET-compatible random plan, the
 * FNV-style checksum and the parallel partitioning rules.
 *
 * Everything here is pure computation: no I/O, no global state, safe to call
 * from any thread. Section numbers (§n) refer to the workload document.
 */
#ifndef STRATA_BENCH_WORKLOAD_H
#define STRATA_BENCH_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#define WL_SEED 570123434
#define WL_LIMIT 100
#define WL_BASE_MS 1672531200000LL
#define WL_GOLDEN 0x9E3779B97F4A7C15ULL
#define WL_NCOUNTRIES 32
#define WL_NSTATUSES 4
#define WL_MAX_REPUTATION 1000000

/* Size of the bio buffer: create() writes about 70 bytes and each update()
 * appends 8, so this holds over 50 updates of one id (the 2M plan draws an id
 * at most about ten times). */
#define WL_BIO_CAP 512

extern const char *const wl_countries[WL_NCOUNTRIES];
extern const char *const wl_statuses[WL_NSTATUSES];

/* A profile (§1). Strings are NUL-terminated and owned by the struct. */
typedef struct wl_profile {
    int64_t user_id;
    int64_t created_at;
    int64_t last_login;
    int32_t reputation;
    char email[48];
    char country[4];
    char status[12];
    char display_name[32];
    char bio[WL_BIO_CAP];
} wl_profile;

uint64_t wl_mix(uint64_t x);

/* create(id) of §1. REQUIRES: id >= 1. */
void wl_create(int64_t id, wl_profile *out);

/* update(p) of §1: *out = update(*p). out may equal p. Returns 0, or -1 when
 * the bio would not fit in WL_BIO_CAP (the caller reports an error). */
int wl_update(const wl_profile *p, wl_profile *out);

/* Index of s in wl_statuses / wl_countries, or -1. */
int wl_status_index(const char *s);
int wl_country_index(const char *s);

/* Two profiles equal in every stored field (bio and display_name included). */
int wl_profile_equal(const wl_profile *a, const wl_profile *b);

/* ---- Checksum (§4) ----------------------------------------------------- */

#define WL_SUM_INIT 14695981039346656037ULL

static inline void wl_sum_add(uint64_t *h, uint64_t w)
{
    *h ^= w;
    *h *= 1099511628211ULL;
}
void wl_sum_str(uint64_t *h, const char *s);
void wl_sum_profile(uint64_t *h, const wl_profile *p);
/* Writes 16 upper-case hex digits and a NUL into buf[17]. */
void wl_sum_hex(uint64_t h, char buf[17]);

/* ---- .NET System.Random, legacy seeded algorithm (§3) ------------------ */

typedef struct wl_rng {
    int32_t s[56];
    int inext, inextp;
} wl_rng;

void wl_rng_seed(wl_rng *r, int32_t seed);
int32_t wl_rng_sample_int(wl_rng *r);
double wl_rng_sample(wl_rng *r);
/* next(lo, hi): lo <= result < hi. REQUIRES: hi - lo <= INT32_MAX. */
int32_t wl_rng_next(wl_rng *r, int32_t lo, int32_t hi);
uint64_t wl_rng_next_u64(wl_rng *r);
/* next_int64(lo, hi): lo <= result < hi (lo when hi - lo <= 1). */
int64_t wl_rng_next_int64(wl_rng *r, int64_t lo, int64_t hi);

/* ---- The plan (§3) ----------------------------------------------------- */

typedef struct wl_cs_query {
    uint8_t country; /* index into wl_countries */
    uint8_t status;  /* index into wl_statuses */
} wl_cs_query;

typedef struct wl_ca_query {
    int64_t from, to; /* inclusive bounds on created_at */
} wl_ca_query;

typedef struct wl_plan {
    int64_t n, q;                       /* q = n / 4 query items are drawn for each query list */
    int64_t q_run;                      /* of which each query phase runs the first q_run (<= q) */
    int64_t *point_reads, *email_reads; /* n each */
    wl_cs_query *cs_queries;            /* q */
    wl_ca_query *ca_queries;            /* q */
    int64_t *update_ids;                /* n */
    int64_t *post_point_reads, *post_email_reads;
    wl_cs_query *post_cs_queries;
} wl_plan;

/* Draws the whole plan for n profiles in the order of §3. Returns 0, or -1
 * when out of memory. The caller frees with wl_plan_free. REQUIRES: n >= 1. */
int wl_plan_build(wl_plan *p, int64_t n);
void wl_plan_free(wl_plan *p);

/* ---- Parallel partitioning (§8) ---------------------------------------- */

/* The contiguous range of worker w out of nworkers for t operations. */
void wl_partition(int64_t t, int nworkers, int w, int64_t *start, int64_t *count);

/* Splits ids[0..n) into nworkers buckets by id % nworkers, in order.
 * bucket[w] and bucket_len[w] are malloc'd / filled; the caller frees each
 * bucket[w]. Returns 0 or -1 when out of memory. */
int wl_bucket_ids(const int64_t *ids, int64_t n, int nworkers, int64_t **bucket,
                  int64_t *bucket_len);

/* Combines per-worker checksums (§8): the single active worker's checksum,
 * or a fresh checksum over the active workers' hex strings in worker order.
 * active[w] != 0 when worker w had operations. */
uint64_t wl_combine(const uint64_t *sums, const int *active, int nworkers);

/* ---- A compact binary record for key-value stores ----------------------
 * Layout: user_id, created_at, last_login as 8-byte little-endian; reputation
 * as 4-byte little-endian; then email, country, status, display_name, bio,
 * each as a 2-byte little-endian length followed by its bytes. */

/* Encodes p into buf (cap bytes). Returns the length, or 0 if it does not fit. */
size_t wl_encode(const wl_profile *p, char *buf, size_t cap);
/* Decodes len bytes into *p. Returns 0, or -1 on a malformed record. */
int wl_decode(const char *buf, size_t len, wl_profile *p);
#define WL_RECORD_MAX (28 + 5 * 2 + 48 + 4 + 12 + 32 + WL_BIO_CAP)

#endif
