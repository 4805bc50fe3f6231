/*
 * ae_epoll.c -- the epoll backend of the event loop. Level-triggered, so a
 * handler that leaves data unread is called again on the next poll.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "server/ae_api.h"

typedef struct epoll_state {
    int epfd;
    struct epoll_event *events;
} epoll_state;

int ae_api_create(ae_loop *el)
{
    epoll_state *st = malloc(sizeof(*st));
    if (!st) return AE_ERR;
    st->events = malloc(sizeof(struct epoll_event) * (size_t)el->setsize);
    st->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (!st->events || st->epfd < 0) {
        if (st->epfd >= 0) close(st->epfd);
        free(st->events);
        free(st);
        return AE_ERR;
    }
    el->apidata = st;
    return AE_OK;
}

void ae_api_free(ae_loop *el)
{
    epoll_state *st = el->apidata;
    if (!st) return;
    close(st->epfd);
    free(st->events);
    free(st);
}

static uint32_t to_epoll(int mask)
{
    uint32_t ev = 0;
    if (mask & AE_READABLE) ev |= EPOLLIN;
    if (mask & AE_WRITABLE) ev |= EPOLLOUT;
    return ev;
}

int ae_api_add_event(ae_loop *el, int fd, int mask)
{
    epoll_state *st = el->apidata;
    struct epoll_event ee = {0};
    int old = el->events[fd].mask;
    int op = old == AE_NONE ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
    ee.events = to_epoll(mask | old);
    ee.data.fd = fd;
    return epoll_ctl(st->epfd, op, fd, &ee) == -1 ? AE_ERR : AE_OK;
}

void ae_api_del_event(ae_loop *el, int fd, int delmask)
{
    epoll_state *st = el->apidata;
    struct epoll_event ee = {0};
    int mask = el->events[fd].mask & ~delmask;
    ee.events = to_epoll(mask);
    ee.data.fd = fd;
    epoll_ctl(st->epfd, mask != AE_NONE ? EPOLL_CTL_MOD : EPOLL_CTL_DEL, fd, &ee);
}

int ae_api_poll(ae_loop *el, int wait_ms)
{
    epoll_state *st = el->apidata;
    int n = epoll_wait(st->epfd, st->events, el->setsize, wait_ms);
    if (n < 0) return 0; /* EINTR: a signal; the caller loops */
    for (int j = 0; j < n; j++) {
        struct epoll_event *e = &st->events[j];
        int mask = 0;
        if (e->events & EPOLLIN) mask |= AE_READABLE;
        if (e->events & EPOLLOUT) mask |= AE_WRITABLE;
        /* Errors and hangups wake both sides so the handler sees the EOF. */
        if (e->events & (EPOLLERR | EPOLLHUP)) mask |= AE_READABLE | AE_WRITABLE;
        el->fired[j].fd = e->data.fd;
        el->fired[j].mask = mask;
    }
    return n;
}
