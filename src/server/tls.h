/*
 * tls.h -- TLS for client connections (tls-port), with Debian's OpenSSL,
 * as Redis's tls.c: one server context built from the tls-* settings
 * (certificate, key, CA for client certificates, protocols, ciphers,
 * session cache); each connection accepted on tls-port gets a tls_conn that
 * networking.c reads and writes through instead of read/writev. The
 * handshake happens inside the first reads (a non-blocking accept).
 *
 * Command thread only.
 */
#ifndef STRATA_TLS_H
#define STRATA_TLS_H

#include <stddef.h>
#include <sys/types.h>

typedef struct tls_conn tls_conn;

/* (Re)builds the server context from the settings (CONFIG SET of a tls-*
 * setting calls it: new connections use the new certificates). Does
 * nothing and returns 0 while tls-port is 0 and no certificate is set.
 * Returns -1 with *err (malloc'd) when the files cannot be used; the old
 * context then stays. */
int tls_configure(char **err);
/* Opens the tls-port listeners on the bind addresses (closing earlier
 * ones) and registers their accept handler. Returns 0 or -1 (logged). */
int tls_listen_update(void);
/* Closes the tls-port listeners (shutdown). */
void tls_listen_close(void);

/* A TLS connection over fd (accepted, non-blocking), or NULL when TLS is
 * not configured. The caller owns it (tls_conn_free). */
tls_conn *tls_conn_new(int fd);
void tls_conn_free(tls_conn *t);
/* As read(2)/write(2): bytes moved, 0 at a clean close (read), or -1 with
 * errno EAGAIN when the connection must wait (also during the handshake)
 * or another errno when it failed (handshake refused, bad record, peer
 * gone). */
ssize_t tls_read(tls_conn *t, void *buf, size_t n);
ssize_t tls_write(tls_conn *t, const void *buf, size_t n);
/* Whether decrypted bytes wait inside the connection (the socket will not
 * signal them). */
int tls_pending(const tls_conn *t);

#endif
