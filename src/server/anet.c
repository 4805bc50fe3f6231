/*
 * anet.c -- TCP helpers; see anet.h.
 */
#include "server/anet.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void set_err(char *err, const char *fmt, ...)
{
    if (!err) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, ANET_ERR_LEN, fmt, ap);
    va_end(ap);
}

int anet_nonblock(char *err, int fd)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags == -1 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1) {
        set_err(err, "fcntl(O_NONBLOCK): %s", strerror(errno));
        return -1;
    }
    return 0;
}

int anet_nodelay(char *err, int fd)
{
    int yes = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes)) == -1) {
        set_err(err, "setsockopt TCP_NODELAY: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int anet_keepalive(char *err, int fd, int interval)
{
    int yes = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &yes, sizeof(yes)) == -1) {
        set_err(err, "setsockopt SO_KEEPALIVE: %s", strerror(errno));
        return -1;
    }
    /* As Redis: first probe after interval, then every interval/3, and the
     * peer is declared dead after three unanswered probes. */
    int idle = interval, intvl = interval / 3 ? interval / 3 : 1, cnt = 3;
    if (setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) == -1 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl)) == -1 ||
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt)) == -1) {
        set_err(err, "setsockopt keepalive: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int anet_tcp_server(char *err, int port, const char *addr, int backlog)
{
    char portstr[8];
    struct addrinfo hints, *servinfo, *p;
    int s = -1, rv;
    snprintf(portstr, sizeof(portstr), "%d", port);
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    if (addr && (strcmp(addr, "*") == 0 || *addr == '\0')) addr = NULL;
    if ((rv = getaddrinfo(addr, portstr, &hints, &servinfo)) != 0) {
        set_err(err, "%s", gai_strerror(rv));
        return -1;
    }
    for (p = servinfo; p; p = p->ai_next) {
        s = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC, p->ai_protocol);
        if (s == -1) continue;
        int yes = 1;
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
        if (bind(s, p->ai_addr, p->ai_addrlen) == -1 || listen(s, backlog) == -1) {
            set_err(err, "bind/listen %s:%d: %s", addr ? addr : "*", port, strerror(errno));
            close(s);
            s = -1;
            continue;
        }
        break;
    }
    if (!p && s == -1 && err && !*err) set_err(err, "unable to bind socket");
    freeaddrinfo(servinfo);
    if (s != -1 && anet_nonblock(err, s) == -1) {
        close(s);
        return -1;
    }
    return s;
}

int anet_tcp_accept(char *err, int listen_fd)
{
    struct sockaddr_storage sa;
    socklen_t salen = sizeof(sa);
    int fd;
    do {
        fd = accept4(listen_fd, (struct sockaddr *)&sa, &salen, SOCK_NONBLOCK | SOCK_CLOEXEC);
    } while (fd == -1 && errno == EINTR);
    if (fd == -1 && errno != EAGAIN && errno != EWOULDBLOCK)
        set_err(err, "accept: %s", strerror(errno));
    return fd;
}

int anet_fd_to_string(int fd, char *buf, size_t len, int local)
{
    struct sockaddr_storage sa;
    socklen_t salen = sizeof(sa);
    int r = local ? getsockname(fd, (struct sockaddr *)&sa, &salen)
                  : getpeername(fd, (struct sockaddr *)&sa, &salen);
    char ip[INET6_ADDRSTRLEN];
    int port;
    if (r == -1) {
        snprintf(buf, len, "?:0");
        return -1;
    }
    if (sa.ss_family == AF_INET) {
        struct sockaddr_in *s = (struct sockaddr_in *)&sa;
        inet_ntop(AF_INET, &s->sin_addr, ip, sizeof(ip));
        port = ntohs(s->sin_port);
        snprintf(buf, len, "%s:%d", ip, port);
    } else if (sa.ss_family == AF_INET6) {
        struct sockaddr_in6 *s = (struct sockaddr_in6 *)&sa;
        inet_ntop(AF_INET6, &s->sin6_addr, ip, sizeof(ip));
        port = ntohs(s->sin6_port);
        snprintf(buf, len, "%s:%d", ip, port);
    } else {
        snprintf(buf, len, "/unixsocket:0");
    }
    return 0;
}
