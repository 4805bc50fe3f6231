/*
 * workload.c -- profile generation, the .NET legacy random generator, the
 * plan, the checksum and the parallel partitioning of the profile workload
 * (the public profile-workload specification; section numbers cited as §n).
 *
 * The generator must match .NET's seeded System.Random bit for bit: the
 * checksums of every phase depend on the exact sequence of draws. All
 * arithmetic on u64 wraps; the subtractive generator works on int32 with the
 * explicit "add MAXI when negative" corrections of the original.
 */
#include "bench/profiles/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const wl_countries[WL_NCOUNTRIES] = {
    "US", "DE", "GB", "FR", "NL", "SE", "NO", "DK", "FI", "ES", "IT", "PT", "PL", "CZ", "TR", "JP",
    "KR", "SG", "IN", "BR", "CA", "AU", "MX", "AR", "ZA", "IL", "IE", "CH", "AT", "BE", "RO", "GR"};
const char *const wl_statuses[WL_NSTATUSES] = {"active", "suspended", "deleted", "pending"};
static const char *const topics[5] = {"storage engines", "distributed systems", "analytics",
                                      "developer tools", "backend services"};

uint64_t wl_mix(uint64_t x)
{
    x += WL_GOLDEN;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* created_at of create(id) without building the strings (used by the plan). */
static int64_t created_at_of(int64_t id)
{
    uint64_t a = wl_mix((uint64_t)id + WL_SEED);
    return WL_BASE_MS + id * 1000 + (int64_t)(a % 997);
}

void wl_create(int64_t id, wl_profile *out)
{
    uint64_t a = wl_mix((uint64_t)id + WL_SEED);
    uint64_t b = wl_mix(a + WL_GOLDEN);
    out->user_id = id;
    snprintf(out->country, sizeof(out->country), "%s", wl_countries[a % 32]);
    snprintf(out->status, sizeof(out->status), "%s", wl_statuses[(a >> 8) % 4]);
    out->created_at = WL_BASE_MS + id * 1000 + (int64_t)(a % 997);
    out->last_login = WL_BASE_MS + (int64_t)(b % 7776000000ULL);
    out->reputation = (int32_t)(b % 1000000);
    snprintf(out->email, sizeof(out->email), "user%012lld@example%02lld.com", (long long)id,
             (long long)(id % 97));
    snprintf(out->display_name, sizeof(out->display_name), "User %012lld", (long long)id);
    snprintf(out->bio, sizeof(out->bio), "Profile %lld prefers %s and has segment %04d.",
             (long long)id, topics[a % 5], (int)(b % 10000));
}

int wl_update(const wl_profile *p, wl_profile *out)
{
    uint64_t m = wl_mix((uint64_t)p->user_id + WL_SEED + 0xD1B54A32D192ED03ULL);
    size_t bl = strlen(p->bio);
    if (bl + 9 > sizeof(out->bio)) return -1;
    if (out != p) *out = *p;
    if (p->user_id % 4 == 0) {
        int si = wl_status_index(p->status);
        if (si < 0) return -1;
        snprintf(out->status, sizeof(out->status), "%s", wl_statuses[(si + 1) % 4]);
    }
    int64_t rep = (int64_t)p->reputation + (int64_t)(m % 501) - 250;
    if (rep < 0) rep = 0;
    if (rep > WL_MAX_REPUTATION) rep = WL_MAX_REPUTATION;
    out->reputation = (int32_t)rep;
    out->last_login = p->last_login + 604800000 + (int64_t)(m % 86400000ULL);
    memcpy(out->bio + bl, " updated", 9);
    return 0;
}

int wl_status_index(const char *s)
{
    for (int i = 0; i < WL_NSTATUSES; i++)
        if (!strcmp(s, wl_statuses[i])) return i;
    return -1;
}

int wl_country_index(const char *s)
{
    for (int i = 0; i < WL_NCOUNTRIES; i++)
        if (!strcmp(s, wl_countries[i])) return i;
    return -1;
}

int wl_profile_equal(const wl_profile *a, const wl_profile *b)
{
    return a->user_id == b->user_id && a->created_at == b->created_at &&
           a->last_login == b->last_login && a->reputation == b->reputation &&
           !strcmp(a->email, b->email) && !strcmp(a->country, b->country) &&
           !strcmp(a->status, b->status) && !strcmp(a->display_name, b->display_name) &&
           !strcmp(a->bio, b->bio);
}

/* ---- Checksum ---------------------------------------------------------- */

void wl_sum_str(uint64_t *h, const char *s)
{
    for (; *s; s++)
        wl_sum_add(h, (unsigned char)*s);
}

void wl_sum_profile(uint64_t *h, const wl_profile *p)
{
    wl_sum_add(h, (uint64_t)p->user_id);
    wl_sum_str(h, p->email);
    wl_sum_str(h, p->country);
    wl_sum_str(h, p->status);
    wl_sum_add(h, (uint64_t)p->created_at);
    wl_sum_add(h, (uint64_t)p->last_login);
    wl_sum_add(h, (uint64_t)(int64_t)p->reputation);
}

void wl_sum_hex(uint64_t h, char buf[17])
{
    snprintf(buf, 17, "%016llX", (unsigned long long)h);
}

/* ---- .NET legacy subtractive generator (Knuth's ran3) ------------------ */

#define MAXI 2147483647

void wl_rng_seed(wl_rng *r, int32_t seed)
{
    int32_t *s = r->s;
    int64_t abs_seed = seed < 0 ? -(int64_t)seed : seed;
    if (abs_seed > MAXI) abs_seed = MAXI; /* .NET maps Int32.MinValue to MaxValue */
    int32_t mj = (int32_t)(161803398 - abs_seed), mk = 1;
    memset(s, 0, sizeof(r->s));
    s[55] = mj;
    int ii = 0;
    for (int i = 1; i < 55; i++) {
        ii = (ii + 21) % 55;
        s[ii] = mk;
        mk = mj - mk;
        if (mk < 0) mk += MAXI;
        mj = s[ii];
    }
    for (int k = 0; k < 4; k++) {
        for (int i = 1; i < 56; i++) {
            int n = i + 30;
            if (n >= 55) n -= 55;
            s[i] = (int32_t)((uint32_t)s[i] - (uint32_t)s[1 + n]);
            if (s[i] < 0) s[i] += MAXI;
        }
    }
    r->inext = 0;
    r->inextp = 21;
}

int32_t wl_rng_sample_int(wl_rng *r)
{
    if (++r->inext >= 56) r->inext = 1;
    if (++r->inextp >= 56) r->inextp = 1;
    int32_t v = (int32_t)((uint32_t)r->s[r->inext] - (uint32_t)r->s[r->inextp]);
    if (v == MAXI) v--;
    if (v < 0) v += MAXI;
    r->s[r->inext] = v;
    return v;
}

double wl_rng_sample(wl_rng *r)
{
    return wl_rng_sample_int(r) * (1.0 / MAXI);
}

int32_t wl_rng_next(wl_rng *r, int32_t lo, int32_t hi)
{
    int64_t range = (int64_t)hi - lo;
    return (int32_t)(wl_rng_sample(r) * (double)range) + lo;
}

uint64_t wl_rng_next_u64(wl_rng *r)
{
    uint64_t x0 = (uint64_t)(uint32_t)(int32_t)(wl_rng_sample(r) * (double)(1 << 22));
    uint64_t x1 = (uint64_t)(uint32_t)(int32_t)(wl_rng_sample(r) * (double)(1 << 22));
    uint64_t x2 = (uint64_t)(uint32_t)(int32_t)(wl_rng_sample(r) * (double)(1 << 20));
    return x0 | x1 << 22 | x2 << 44;
}

int64_t wl_rng_next_int64(wl_rng *r, int64_t lo, int64_t hi)
{
    uint64_t range = (uint64_t)hi - (uint64_t)lo;
    if (hi <= lo || range <= 1) return lo;
    int bits = 64 - __builtin_clzll(range - 1); /* ceil(log2(range)) */
    for (;;) {
        uint64_t v = wl_rng_next_u64(r) >> (64 - bits);
        if (v < range) return lo + (int64_t)v;
    }
}

/* ---- Plan -------------------------------------------------------------- */

static void draw_ids(wl_rng *r, int64_t *out, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = wl_rng_next_int64(r, 1, n + 1);
}

static void draw_cs(wl_rng *r, wl_cs_query *out, int64_t q)
{
    for (int64_t i = 0; i < q; i++) {
        out[i].country = (uint8_t)wl_rng_next(r, 0, WL_NCOUNTRIES);
        out[i].status = (uint8_t)wl_rng_next(r, 0, WL_NSTATUSES);
    }
}

int wl_plan_build(wl_plan *p, int64_t n)
{
    memset(p, 0, sizeof(*p));
    p->n = n;
    p->q = n / 4;
    p->q_run = p->q;
    size_t ni = (size_t)n * sizeof(int64_t), qs = (size_t)(p->q + 1) * sizeof(wl_cs_query);
    p->point_reads = malloc(ni);
    p->email_reads = malloc(ni);
    p->update_ids = malloc(ni);
    p->post_point_reads = malloc(ni);
    p->post_email_reads = malloc(ni);
    p->cs_queries = malloc(qs);
    p->post_cs_queries = malloc(qs);
    p->ca_queries = malloc((size_t)(p->q + 1) * sizeof(wl_ca_query));
    if (!p->point_reads || !p->email_reads || !p->update_ids || !p->post_point_reads ||
        !p->post_email_reads || !p->cs_queries || !p->post_cs_queries || !p->ca_queries) {
        wl_plan_free(p);
        return -1;
    }
    wl_rng r;
    wl_rng_seed(&r, WL_SEED);
    draw_ids(&r, p->point_reads, n);
    draw_ids(&r, p->email_reads, n);
    draw_cs(&r, p->cs_queries, p->q);
    for (int64_t i = 0; i < p->q; i++) {
        int64_t start = wl_rng_next_int64(&r, 1, n - 5000 > 2 ? n - 5000 : 2);
        int64_t end = start + 5000 < n ? start + 5000 : n;
        p->ca_queries[i].from = created_at_of(start);
        p->ca_queries[i].to = created_at_of(end);
    }
    draw_ids(&r, p->update_ids, n);
    draw_ids(&r, p->post_point_reads, n);
    draw_ids(&r, p->post_email_reads, n);
    draw_cs(&r, p->post_cs_queries, p->q);
    return 0;
}

void wl_plan_free(wl_plan *p)
{
    free(p->point_reads);
    free(p->email_reads);
    free(p->update_ids);
    free(p->post_point_reads);
    free(p->post_email_reads);
    free(p->cs_queries);
    free(p->post_cs_queries);
    free(p->ca_queries);
    memset(p, 0, sizeof(*p));
}

/* ---- Parallel partitioning --------------------------------------------- */

void wl_partition(int64_t t, int nworkers, int w, int64_t *start, int64_t *count)
{
    int64_t base = t / nworkers, rem = t % nworkers;
    *count = base + (w < rem ? 1 : 0);
    *start = (int64_t)w * base + (w < rem ? w : rem);
}

int wl_bucket_ids(const int64_t *ids, int64_t n, int nworkers, int64_t **bucket,
                  int64_t *bucket_len)
{
    for (int w = 0; w < nworkers; w++) {
        bucket_len[w] = 0;
        bucket[w] = NULL;
    }
    for (int64_t i = 0; i < n; i++)
        bucket_len[ids[i] % nworkers]++;
    for (int w = 0; w < nworkers; w++) {
        bucket[w] = malloc((size_t)(bucket_len[w] + 1) * sizeof(int64_t));
        if (!bucket[w]) {
            for (int k = 0; k < w; k++)
                free(bucket[k]);
            return -1;
        }
        bucket_len[w] = 0;
    }
    for (int64_t i = 0; i < n; i++) {
        int w = (int)(ids[i] % nworkers);
        bucket[w][bucket_len[w]++] = ids[i];
    }
    return 0;
}

uint64_t wl_combine(const uint64_t *sums, const int *active, int nworkers)
{
    int nactive = 0, last = -1;
    for (int w = 0; w < nworkers; w++)
        if (active[w]) nactive++, last = w;
    if (nactive == 1) return sums[last];
    uint64_t h = WL_SUM_INIT;
    char hex[17];
    for (int w = 0; w < nworkers; w++) {
        if (!active[w]) continue;
        wl_sum_hex(sums[w], hex);
        wl_sum_str(&h, hex);
    }
    return h;
}

/* ---- Binary record ----------------------------------------------------- */

static void put64(char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (char)(v >> (8 * i));
}

static uint64_t get64(const char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)(unsigned char)p[i] << (8 * i);
    return v;
}

size_t wl_encode(const wl_profile *p, char *buf, size_t cap)
{
    const char *strs[5] = {p->email, p->country, p->status, p->display_name, p->bio};
    size_t off = 28;
    if (cap < off) return 0;
    put64(buf, (uint64_t)p->user_id);
    put64(buf + 8, (uint64_t)p->created_at);
    put64(buf + 16, (uint64_t)p->last_login);
    uint32_t rep = (uint32_t)p->reputation;
    for (int i = 0; i < 4; i++)
        buf[24 + i] = (char)(rep >> (8 * i));
    for (int i = 0; i < 5; i++) {
        size_t l = strlen(strs[i]);
        if (off + 2 + l > cap) return 0;
        buf[off] = (char)(l & 0xff);
        buf[off + 1] = (char)(l >> 8);
        memcpy(buf + off + 2, strs[i], l);
        off += 2 + l;
    }
    return off;
}

int wl_decode(const char *buf, size_t len, wl_profile *p)
{
    char *dst[5] = {p->email, p->country, p->status, p->display_name, p->bio};
    size_t caps[5] = {sizeof(p->email), sizeof(p->country), sizeof(p->status),
                      sizeof(p->display_name), sizeof(p->bio)};
    if (len < 28) return -1;
    p->user_id = (int64_t)get64(buf);
    p->created_at = (int64_t)get64(buf + 8);
    p->last_login = (int64_t)get64(buf + 16);
    uint32_t rep = 0;
    for (int i = 0; i < 4; i++)
        rep |= (uint32_t)(unsigned char)buf[24 + i] << (8 * i);
    p->reputation = (int32_t)rep;
    size_t off = 28;
    for (int i = 0; i < 5; i++) {
        if (off + 2 > len) return -1;
        size_t l = (unsigned char)buf[off] | (size_t)(unsigned char)buf[off + 1] << 8;
        if (off + 2 + l > len || l >= caps[i]) return -1;
        memcpy(dst[i], buf + off + 2, l);
        dst[i][l] = 0;
        off += 2 + l;
    }
    return off == len ? 0 : -1;
}
