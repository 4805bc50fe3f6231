/*
 * phases.c -- the per-phase work of the profile workload.
 *
 * A phase is a list of operations (ids, query parameters or a count). With
 * W workers, worker w runs a contiguous range of it (§8) or, for updates,
 * the ids with id % W == w in plan order. A worker sends its operations in
 * batches of at most P requests through ops->exec and adds each result to
 * its own checksum in operation order; the phase checksum is wl_combine of
 * the workers' sums.
 *
 * Invariant 1: an update reads what the same worker wrote before. Updates of
 * one id go to one worker (bucketing), and a batch of update reads never
 * holds an id twice: the batch is cut before a repeated id, so the second
 * read is sent only after the first write was answered.
 */
#include "bench/profiles/phases.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum kind { K_INSERT, K_GET, K_EMAIL, K_CS, K_CA, K_TOP, K_UPDATE };

static const struct {
    enum kind kind;
    int profiles; /* scans (0) or queries (1) */
    int post;     /* uses the post-update lists */
} phase_def[16] = {
    {K_INSERT, 0, 0}, {K_GET, 1, 0},    {K_EMAIL, 1, 0}, {K_CS, 0, 0},
    {K_CS, 1, 0},     {K_CA, 0, 0},     {K_CA, 1, 0},    {K_TOP, 0, 0},
    {K_TOP, 1, 0},    {K_UPDATE, 1, 0}, {K_GET, 1, 1},   {K_EMAIL, 1, 1},
    {K_CS, 0, 1},     {K_CS, 1, 1},     {K_TOP, 0, 1},   {K_TOP, 1, 1},
};

typedef struct worker {
    ph_set *set;
    int w;
    drv_conn *conn;
    drv_req *reqs;   /* pipeline */
    int64_t *ids;    /* pipeline * WL_LIMIT */
    wl_profile *out; /* pipeline * WL_LIMIT */
    wl_profile *in;  /* pipeline: profiles to write, or whose email is looked up */
    /* the phase being run */
    int phase;
    const int64_t *list; /* update bucket */
    int64_t start, count;
    uint64_t sum;
    int rc;
    char err[512];
    pthread_t thread;
} worker;

struct ph_set {
    const drv_ops *ops;
    const wl_plan *plan;
    int nworkers, pipeline;
    worker *workers;
};

ph_set *ph_create(const drv_ops *ops, drv_conn **conns, int nworkers, int pipeline,
                  const wl_plan *plan)
{
    ph_set *s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    s->ops = ops;
    s->plan = plan;
    s->nworkers = nworkers;
    s->pipeline = pipeline;
    s->workers = calloc((size_t)nworkers, sizeof(worker));
    if (!s->workers) {
        free(s);
        return NULL;
    }
    for (int w = 0; w < nworkers; w++) {
        worker *k = &s->workers[w];
        k->set = s;
        k->w = w;
        k->conn = conns[w];
        k->reqs = calloc((size_t)pipeline, sizeof(drv_req));
        k->ids = calloc((size_t)pipeline * WL_LIMIT, sizeof(int64_t));
        k->out = calloc((size_t)pipeline * WL_LIMIT, sizeof(wl_profile));
        k->in = calloc((size_t)pipeline, sizeof(wl_profile));
        if (!k->reqs || !k->ids || !k->out || !k->in) {
            ph_free(s);
            return NULL;
        }
    }
    return s;
}

void ph_free(ph_set *s)
{
    if (!s) return;
    for (int w = 0; w < s->nworkers && s->workers; w++) {
        free(s->workers[w].reqs);
        free(s->workers[w].ids);
        free(s->workers[w].out);
        free(s->workers[w].in);
    }
    free(s->workers);
    free(s);
}

/* Fills request k of the batch for operation i of the worker's range. */
static void fill(worker *k, int slot, int64_t i)
{
    const wl_plan *pl = k->set->plan;
    int post = phase_def[k->phase].post;
    drv_req *r = &k->reqs[slot];
    memset(r, 0, sizeof(*r));
    r->ids = k->ids + (size_t)slot * WL_LIMIT;
    r->out = k->out + (size_t)slot * WL_LIMIT;
    r->want_profiles = phase_def[k->phase].profiles;
    switch (phase_def[k->phase].kind) {
    case K_INSERT:
        r->op = DRV_INSERT;
        wl_create(i + 1, &k->in[slot]);
        r->new_p = &k->in[slot];
        break;
    case K_GET:
        r->op = DRV_GET;
        r->id = (post ? pl->post_point_reads : pl->point_reads)[i];
        break;
    case K_EMAIL:
        r->op = DRV_EMAIL;
        wl_create((post ? pl->post_email_reads : pl->email_reads)[i], &k->in[slot]);
        r->email = k->in[slot].email;
        break;
    case K_CS: {
        const wl_cs_query *q = &(post ? pl->post_cs_queries : pl->cs_queries)[i];
        r->op = DRV_CS;
        r->country = q->country;
        r->status = q->status;
        break;
    }
    case K_CA:
        r->op = DRV_CA;
        r->from = pl->ca_queries[i].from;
        r->to = pl->ca_queries[i].to;
        break;
    case K_TOP:
        r->op = DRV_TOP;
        break;
    case K_UPDATE:
        r->op = DRV_GET;
        r->id = k->list[i];
        break;
    }
}

/* Adds the results of batch slot to the worker's checksum. */
static int account(worker *k, int slot)
{
    drv_req *r = &k->reqs[slot];
    switch (r->op) {
    case DRV_INSERT:
        wl_sum_add(&k->sum, (uint64_t)r->new_p->user_id);
        return 0;
    case DRV_GET:
    case DRV_EMAIL:
        if (r->n != 1) {
            snprintf(k->err, sizeof(k->err), "%s %lld: not found",
                     r->op == DRV_GET ? "user" : "email",
                     r->op == DRV_GET ? (long long)r->id : (long long)k->in[slot].user_id);
            return -1;
        }
        wl_sum_profile(&k->sum, &r->out[0]);
        return 0;
    default:
        for (int j = 0; j < r->n; j++) {
            if (r->want_profiles)
                wl_sum_profile(&k->sum, &r->out[j]);
            else
                wl_sum_add(&k->sum, (uint64_t)r->ids[j]);
        }
        return 0;
    }
}

/* One update batch from list[i..]: reads, update(), writes (invariant 1).
 * Returns how many operations it ran, or -1. */
static int64_t update_batch(worker *k, int64_t i, int64_t end)
{
    const drv_ops *ops = k->set->ops;
    int b = 0;
    for (; b < k->set->pipeline && i + b < end; b++) {
        int dup = 0;
        for (int j = 0; j < b && !dup; j++)
            dup = k->list[i + j] == k->list[i + b];
        if (dup) break;
        fill(k, b, i + b);
    }
    if (ops->exec(k->conn, k->reqs, b, k->err, sizeof(k->err))) return -1;
    for (int j = 0; j < b; j++) {
        drv_req *r = &k->reqs[j];
        if (r->n != 1) {
            snprintf(k->err, sizeof(k->err), "update: user %lld not found", (long long)r->id);
            return -1;
        }
        if (wl_update(&r->out[0], &k->in[j])) {
            snprintf(k->err, sizeof(k->err), "update: bio of user %lld too long", (long long)r->id);
            return -1;
        }
        r->op = DRV_WRITE;
        r->old_p = &r->out[0];
        r->new_p = &k->in[j];
    }
    if (ops->exec(k->conn, k->reqs, b, k->err, sizeof(k->err))) return -1;
    for (int j = 0; j < b; j++)
        wl_sum_profile(&k->sum, &k->in[j]);
    return b;
}

static void *worker_run(void *arg)
{
    worker *k = arg;
    const drv_ops *ops = k->set->ops;
    int64_t end = k->start + k->count;
    k->rc = 0;
    k->sum = WL_SUM_INIT;
    for (int64_t i = k->start; i < end;) {
        if (phase_def[k->phase].kind == K_UPDATE) {
            int64_t done = update_batch(k, i, end);
            if (done < 0) goto fail;
            i += done;
            continue;
        }
        int b = 0;
        for (; b < k->set->pipeline && i + b < end; b++)
            fill(k, b, i + b);
        if (ops->exec(k->conn, k->reqs, b, k->err, sizeof(k->err))) goto fail;
        for (int j = 0; j < b; j++)
            if (account(k, j)) goto fail;
        i += b;
    }
    return NULL;
fail:
    k->rc = -1;
    return NULL;
}

/* Number of operations of a phase (T in §8). */
static int64_t phase_total(const ph_set *s, int phase)
{
    enum kind kd = phase_def[phase].kind;
    return kd == K_INSERT || kd == K_GET || kd == K_EMAIL || kd == K_UPDATE ? s->plan->n
                                                                            : s->plan->q_run;
}

int ph_is_query(int phase)
{
    enum kind kd = phase_def[phase].kind;
    return kd == K_CS || kd == K_CA || kd == K_TOP;
}

int ph_run(ph_set *s, int phase, uint64_t *sum, int64_t *ops, char *err, size_t cap)
{
    int W = s->nworkers, rc = 0;
    int64_t total = phase_total(s, phase);
    int64_t *bucket[W], blen[W];
    uint64_t sums[W];
    int active[W];
    int is_update = phase_def[phase].kind == K_UPDATE;
    if (is_update && wl_bucket_ids(s->plan->update_ids, total, W, bucket, blen)) {
        snprintf(err, cap, "out of memory");
        return -1;
    }
    for (int w = 0; w < W; w++) {
        worker *k = &s->workers[w];
        k->phase = phase;
        k->err[0] = 0;
        if (is_update) {
            k->list = bucket[w];
            k->start = 0;
            k->count = blen[w];
        } else {
            wl_partition(total, W, w, &k->start, &k->count);
        }
        active[w] = k->count > 0;
    }
    if (W == 1) {
        worker_run(&s->workers[0]);
    } else {
        for (int w = 0; w < W; w++)
            if (pthread_create(&s->workers[w].thread, NULL, worker_run, &s->workers[w])) {
                s->workers[w].rc = -1;
                snprintf(s->workers[w].err, sizeof(s->workers[w].err), "pthread_create failed");
                s->workers[w].thread = 0;
            }
        for (int w = 0; w < W; w++)
            if (s->workers[w].thread) pthread_join(s->workers[w].thread, NULL);
    }
    for (int w = 0; w < W; w++) {
        sums[w] = s->workers[w].sum;
        if (s->workers[w].rc && !rc) {
            snprintf(err, cap, "worker %d: %s", w, s->workers[w].err);
            rc = -1;
        }
        if (is_update) free(bucket[w]);
    }
    *sum = wl_combine(sums, active, W);
    *ops = total;
    return rc;
}

int ph_get(const drv_ops *ops, drv_conn *c, int64_t id, wl_profile *out, char *err, size_t cap)
{
    int64_t ids[WL_LIMIT];
    drv_req r = {.op = DRV_GET, .id = id, .ids = ids, .out = out};
    if (ops->exec(c, &r, 1, err, cap)) return -1;
    if (r.n != 1) {
        snprintf(err, cap, "user %lld not found", (long long)id);
        return -1;
    }
    return 0;
}
