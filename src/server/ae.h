/*
 * ae.h -- a tiny event loop in the style of Redis's ae: file events on
 * non-blocking descriptors, millisecond timers, and a hook that runs before
 * the loop sleeps (the server commits the write batch and flushes replies
 * there). One backend: epoll (ae_epoll.c).
 *
 * Threading: an event loop belongs to the thread that runs ae_main(); none
 * of these functions may be called from another thread.
 */
#ifndef STRATA_AE_H
#define STRATA_AE_H

#include <stdint.h>

#define AE_OK 0
#define AE_ERR -1

#define AE_NONE 0
#define AE_READABLE 1
#define AE_WRITABLE 2

#define AE_NOMORE -1 /* a timer proc returns this to be deleted */

typedef struct ae_loop ae_loop;
typedef void ae_file_proc(ae_loop *el, int fd, void *data, int mask);
/* Returns the milliseconds until it should run again, or AE_NOMORE. */
typedef int ae_timer_proc(ae_loop *el, long long id, void *data);
typedef void ae_before_sleep_proc(ae_loop *el);

/* Creates a loop for descriptors below setsize. Returns NULL on failure. */
ae_loop *ae_create(int setsize);
void ae_delete(ae_loop *el);
/* Registers interest in mask for fd; proc is called on readiness. Adding a
 * mask keeps the masks already registered. Returns AE_OK or AE_ERR (fd out
 * of range, epoll_ctl failure). */
int ae_create_file_event(ae_loop *el, int fd, int mask, ae_file_proc *proc, void *data);
void ae_delete_file_event(ae_loop *el, int fd, int mask);
int ae_get_file_events(ae_loop *el, int fd);
/* Returns the timer id (> 0), or AE_ERR. */
long long ae_create_timer(ae_loop *el, long long ms, ae_timer_proc *proc, void *data);
/* Removes the timer id (unknown ids are ignored); safe from a timer
 * procedure. */
void ae_delete_timer(ae_loop *el, long long id);
void ae_set_before_sleep(ae_loop *el, ae_before_sleep_proc *proc);
/* Runs until ae_stop(). */
void ae_main(ae_loop *el);
void ae_stop(ae_loop *el);
/* Processes the events ready now or within wait_ms (-1: block until the
 * next timer). Returns the number of events handled. */
int ae_process_events(ae_loop *el, int wait_ms);
/* As ae_process_events, but only file events: no timer runs (a script
 * serving clients while it is busy). */
int ae_process_file_events(ae_loop *el, int wait_ms);

int64_t ae_mstime(void);

#endif
