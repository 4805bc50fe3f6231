/*
 * db_readahead.c -- the readahead thread: data blocks that a pipeline's
 * point lookups will read, loaded into the block cache by a second thread
 * while the command thread runs the requests before them.
 *
 * eng_prefetch (db_prefetch.c) finds, on the caller's thread, the table
 * and the data block of each key it is given; a block the cache does not
 * hold is handed here as a job (the table's file_meta, with a reference,
 * and the block's handle), the keys' jobs in the keys' order. The thread
 * takes the newest job first: the last key of the newest pipeline, then
 * the one before it, while the caller runs the pipeline from its first
 * key. The two meet in the middle and each miss -- a read of the table
 * file and a decompression, the bulk of a lookup whose block is not
 * cached -- is paid once, by whichever thread gets there first. A job
 * whose block is cached by the time the thread takes it costs one cache
 * probe; a block both load is read twice and cached once (the later
 * insert replaces the earlier). When the queue is full the oldest job is
 * dropped: its pipeline has most likely run already.
 *
 * Nothing here changes an answer or a cache statistic of the lookups; a
 * read that fails is left for the lookup to meet and report.
 *
 * Invariant RA1: a queued job holds a reference on its file_meta, so the
 * table's reader stays open and its file on disk until the job is done or
 * dropped (file_unref, outside ra.mu: it may close and unlink).
 */
#include "db_impl.h"

#include "table.h"

/* Jobs the thread takes under one lock. */
#define RA_TAKE 16

static void ra_unref_all(ra_job *j, size_t n)
{
    for (size_t i = 0; i < n; i++)
        file_unref(j[i].f); /* RA1 */
}

static void ra_run(eng_db *db, const ra_job *j)
{
    db_readahead *ra = &db->ra;
    sst_reader *r = __atomic_load_n(&j->f->reader, __ATOMIC_ACQUIRE);
    int loaded = 0;
    if (!r || sst_reader_load_block(r, j->offset, j->size, &loaded) != ENG_OK) return;
    __atomic_add_fetch(loaded ? &ra->loads : &ra->cached, 1, __ATOMIC_RELAXED);
}

static void *ra_thread(void *arg)
{
    eng_db *db = arg;
    db_readahead *ra = &db->ra;
    ra_job take[RA_TAKE];
    pthread_mutex_lock(&ra->mu);
    for (;;) {
        while (!ra->n && !ra->stop) {
            ra->waiting = 1;
            pthread_cond_wait(&ra->cv, &ra->mu);
            ra->waiting = 0;
        }
        if (ra->stop) break;
        size_t k = 0;
        while (ra->n && k < RA_TAKE) /* newest first */
            take[k++] = ra->q[(ra->head + --ra->n) % DB_READAHEAD_QUEUE];
        pthread_mutex_unlock(&ra->mu);
        for (size_t i = 0; i < k; i++)
            ra_run(db, &take[i]);
        ra_unref_all(take, k);
        pthread_mutex_lock(&ra->mu);
    }
    size_t n = ra->n;
    ra_job left[DB_READAHEAD_QUEUE];
    for (size_t i = 0; i < n; i++)
        left[i] = ra->q[(ra->head + i) % DB_READAHEAD_QUEUE];
    ra->n = 0;
    pthread_mutex_unlock(&ra->mu);
    ra_unref_all(left, n);
    return NULL;
}

void db_readahead_start(eng_db *db)
{
    db_readahead *ra = &db->ra;
    pthread_mutex_init(&ra->mu, NULL);
    pthread_cond_init(&ra->cv, NULL);
    ra->started = pthread_create(&ra->thr, NULL, ra_thread, db) == 0;
}

void db_readahead_stop(eng_db *db)
{
    db_readahead *ra = &db->ra;
    if (!ra->started) return;
    pthread_mutex_lock(&ra->mu);
    ra->stop = 1;
    pthread_cond_signal(&ra->cv);
    pthread_mutex_unlock(&ra->mu);
    pthread_join(ra->thr, NULL);
    ra->started = 0;
    pthread_cond_destroy(&ra->cv);
    pthread_mutex_destroy(&ra->mu);
}

void db_readahead_add(eng_db *db, size_t n, const ra_job *jobs)
{
    db_readahead *ra = &db->ra;
    if (!ra->started || n == 0) return;
    if (n > DB_READAHEAD_QUEUE) {
        jobs += n - DB_READAHEAD_QUEUE; /* the first keys run before the thread could help */
        n = DB_READAHEAD_QUEUE;
    }
    ra_job dropped[DB_READAHEAD_QUEUE];
    size_t nd = 0;
    for (size_t i = 0; i < n; i++)
        file_ref(jobs[i].f); /* RA1 */
    pthread_mutex_lock(&ra->mu);
    for (size_t i = 0; i < n; i++) {
        if (ra->n == DB_READAHEAD_QUEUE) { /* the oldest goes */
            dropped[nd++] = ra->q[ra->head];
            ra->head = (ra->head + 1) % DB_READAHEAD_QUEUE;
            ra->n--;
        }
        ra->q[(ra->head + ra->n++) % DB_READAHEAD_QUEUE] = jobs[i];
    }
    if (ra->waiting) pthread_cond_signal(&ra->cv);
    pthread_mutex_unlock(&ra->mu);
    __atomic_add_fetch(&ra->dropped, nd, __ATOMIC_RELAXED);
    ra_unref_all(dropped, nd);
}
