/*
 * ae.c -- the event loop core: file event table, timers, main loop. The
 * multiplexing backend lives in ae_epoll.c behind ae_api_*.
 *
 * Invariant A1: events[fd].mask is exactly the set of masks registered
 * with the backend for fd, so deleting a mask never leaves a stale
 * registration behind.
 * Timers are few (the server has one cron), so they live in an unsorted
 * list and finding the nearest is a linear scan.
 */
#include "server/ae.h"

#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "server/ae_api.h"

typedef struct ae_timer {
    long long id;
    int64_t when_ms;
    ae_timer_proc *proc;
    void *data;
    struct ae_timer *next;
} ae_timer;

int64_t ae_mstime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

ae_loop *ae_create(int setsize)
{
    ae_loop *el = calloc(1, sizeof(*el));
    if (!el) return NULL;
    el->setsize = setsize;
    el->events = calloc((size_t)setsize, sizeof(ae_file_event));
    el->fired = calloc((size_t)setsize, sizeof(ae_fired_event));
    if (!el->events || !el->fired || ae_api_create(el) != AE_OK) {
        free(el->events);
        free(el->fired);
        free(el);
        return NULL;
    }
    el->next_timer_id = 1;
    return el;
}

void ae_delete(ae_loop *el)
{
    if (!el) return;
    ae_api_free(el);
    ae_timer *t = el->timers;
    while (t) {
        ae_timer *n = t->next;
        free(t);
        t = n;
    }
    free(el->events);
    free(el->fired);
    free(el);
}

int ae_create_file_event(ae_loop *el, int fd, int mask, ae_file_proc *proc, void *data)
{
    if (fd < 0 || fd >= el->setsize) return AE_ERR;
    ae_file_event *fe = &el->events[fd];
    if (ae_api_add_event(el, fd, mask) == AE_ERR) return AE_ERR;
    fe->mask |= mask; /* A1 */
    if (mask & AE_READABLE) fe->rproc = proc;
    if (mask & AE_WRITABLE) fe->wproc = proc;
    fe->data = data;
    if (fd > el->maxfd) el->maxfd = fd;
    return AE_OK;
}

void ae_delete_file_event(ae_loop *el, int fd, int mask)
{
    if (fd < 0 || fd >= el->setsize) return;
    ae_file_event *fe = &el->events[fd];
    if (fe->mask == AE_NONE) return;
    ae_api_del_event(el, fd, mask);
    fe->mask &= ~mask; /* A1 */
    if (fd == el->maxfd && fe->mask == AE_NONE) {
        int j;
        for (j = el->maxfd - 1; j >= 0; j--)
            if (el->events[j].mask != AE_NONE) break;
        el->maxfd = j;
    }
}

int ae_get_file_events(ae_loop *el, int fd)
{
    if (fd < 0 || fd >= el->setsize) return 0;
    return el->events[fd].mask;
}

long long ae_create_timer(ae_loop *el, long long ms, ae_timer_proc *proc, void *data)
{
    ae_timer *t = malloc(sizeof(*t));
    if (!t) return AE_ERR;
    t->id = el->next_timer_id++;
    t->when_ms = monotonic_ms() + ms;
    t->proc = proc;
    t->data = data;
    t->next = el->timers;
    el->timers = t;
    return t->id;
}

void ae_delete_timer(ae_loop *el, long long id)
{
    /* Marked dead and unlinked by the next process_timers: a timer
     * procedure may delete another timer while the list is being walked. */
    for (ae_timer *t = el->timers; t; t = t->next)
        if (t->id == id) t->proc = NULL;
}

void ae_set_before_sleep(ae_loop *el, ae_before_sleep_proc *proc)
{
    el->before_sleep = proc;
}

void ae_stop(ae_loop *el)
{
    el->stop = 1;
}

/* Runs every timer that is due; a timer returning AE_NOMORE is removed. */
static int process_timers(ae_loop *el)
{
    int processed = 0;
    int64_t now = monotonic_ms();
    ae_timer **pp = &el->timers;
    while (*pp) {
        ae_timer *t = *pp;
        if (t->proc && t->when_ms > now) {
            pp = &t->next;
            continue;
        }
        int again = t->proc ? t->proc(el, t->id, t->data) : AE_NOMORE;
        processed++;
        if (again == AE_NOMORE) {
            *pp = t->next;
            free(t);
        } else {
            t->when_ms = monotonic_ms() + again;
            pp = &t->next;
        }
    }
    return processed;
}

static int ms_to_next_timer(ae_loop *el)
{
    if (!el->timers) return -1;
    int64_t nearest = el->timers->proc ? el->timers->when_ms : 0;
    for (ae_timer *t = el->timers->next; t; t = t->next)
        if (t->when_ms < nearest || !t->proc) nearest = t->proc ? t->when_ms : 0;
    int64_t d = nearest - monotonic_ms();
    return d < 0 ? 0 : (int)d;
}

int ae_process_file_events(ae_loop *el, int wait_ms)
{
    int n = ae_api_poll(el, wait_ms);
    for (int j = 0; j < n; j++) {
        int fd = el->fired[j].fd, mask = el->fired[j].mask;
        ae_file_event *fe = &el->events[fd];
        int fired_read = 0;
        /* Read first: a pipelined client gets its replies queued before we
         * try to write them. Re-check the mask: an earlier handler in this
         * batch may have closed fd. */
        if (fe->mask & mask & AE_READABLE) {
            fe->rproc(el, fd, fe->data, mask);
            fired_read = 1;
        }
        if (fe->mask & mask & AE_WRITABLE) {
            if (!fired_read || fe->wproc != fe->rproc) fe->wproc(el, fd, fe->data, mask);
        }
    }
    return n;
}

int ae_process_events(ae_loop *el, int wait_ms)
{
    int next = ms_to_next_timer(el);
    if (wait_ms < 0 || (next >= 0 && next < wait_ms)) wait_ms = next;
    int n = ae_process_file_events(el, wait_ms);
    return n + process_timers(el);
}

void ae_main(ae_loop *el)
{
    el->stop = 0;
    while (!el->stop) {
        if (el->before_sleep) el->before_sleep(el);
        if (el->stop) break;
        ae_process_events(el, -1);
    }
}
