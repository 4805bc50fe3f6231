/*
 * anet.h -- small TCP helpers (after Redis's anet): listen, accept,
 * non-blocking mode, TCP_NODELAY, keepalive, peer/local address strings.
 *
 * Every function returns 0 / a descriptor on success and -1 on failure with
 * a message in err (ANET_ERR_LEN bytes) when err is not NULL.
 */
#ifndef STRATA_ANET_H
#define STRATA_ANET_H

#include <stddef.h>

#define ANET_ERR_LEN 256

/* Binds and listens on addr:port (IPv4 or IPv6 literal or "*"). */
int anet_tcp_server(char *err, int port, const char *addr, int backlog);
/* Accepts one connection; returns its fd (non-blocking, close-on-exec), or
 * -1 (errno EAGAIN when nothing is pending). */
int anet_tcp_accept(char *err, int listen_fd);
int anet_nonblock(char *err, int fd);
int anet_nodelay(char *err, int fd);
/* Turns on keepalive probes after interval seconds of idleness. */
int anet_keepalive(char *err, int fd, int interval);
/* "ip:port" of the peer (local = 0) or of our side (local = 1). */
int anet_fd_to_string(int fd, char *buf, size_t len, int local);

#endif
