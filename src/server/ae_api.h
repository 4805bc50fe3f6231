/*
 * ae_api.h -- the loop's internals shared by ae.c and its backend
 * (ae_epoll.c). Not for use outside the event loop.
 */
#ifndef STRATA_AE_API_H
#define STRATA_AE_API_H

#include "server/ae.h"

typedef struct ae_file_event {
    int mask; /* AE_READABLE | AE_WRITABLE */
    ae_file_proc *rproc, *wproc;
    void *data;
} ae_file_event;

typedef struct ae_fired_event {
    int fd, mask;
} ae_fired_event;

struct ae_timer;

struct ae_loop {
    int maxfd, setsize, stop;
    long long next_timer_id;
    ae_file_event *events; /* indexed by fd */
    ae_fired_event *fired;
    struct ae_timer *timers;
    ae_before_sleep_proc *before_sleep;
    void *apidata;
};

int ae_api_create(ae_loop *el);
void ae_api_free(ae_loop *el);
int ae_api_add_event(ae_loop *el, int fd, int mask);
void ae_api_del_event(ae_loop *el, int fd, int delmask);
/* Waits up to wait_ms (-1 forever) and fills el->fired; returns the count. */
int ae_api_poll(ae_loop *el, int wait_ms);

#endif
