/*
 * tls.c -- TLS for client connections with OpenSSL (see tls.h).
 *
 * The context: the certificate chain and key of tls-cert-file /
 * tls-key-file (tls-key-file-pass decrypts the key), client certificates
 * verified against tls-ca-cert-file / tls-ca-cert-dir as tls-auth-clients
 * says (yes: required, optional: checked when sent, no: not asked),
 * tls-protocols (default TLSv1.2 and TLSv1.3, as Redis), tls-ciphers
 * (TLS 1.2) and tls-ciphersuites (TLS 1.3), tls-prefer-server-ciphers, and
 * the server session cache (tls-session-caching, -size, -timeout).
 *
 * Connections are non-blocking: SSL_read runs the handshake on the first
 * reads, and WANT_READ / WANT_WRITE map to EAGAIN; partial writes are on,
 * and a write retried after EAGAIN passes the same bytes again (the reply
 * chain's unsent part), as OpenSSL requires.
 */
#include "server/tls.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "server/ae.h"
#include "server/anet.h"
#include "server/config.h"
#include "server/server.h"

struct tls_conn {
    SSL *ssl;
};

static SSL_CTX *server_ctx;

static int set(const char *s)
{
    return s && s[0];
}

static char *ssl_error(const char *what)
{
    char buf[256] = "";
    unsigned long e = ERR_get_error();
    if (e) ERR_error_string_n(e, buf, sizeof(buf));
    ERR_clear_error();
    char *out = NULL;
    if (asprintf(&out, "%s: %s", what, buf[0] ? buf : "unknown error") < 0) out = NULL;
    return out;
}

static int key_password(char *buf, int size, int rwflag, void *u)
{
    (void)rwflag;
    const char *pass = u;
    int n = (int)strlen(pass);
    if (n > size) n = size;
    memcpy(buf, pass, (size_t)n);
    return n;
}

/* tls-protocols: "TLSv1.2 TLSv1.3" (any of TLSv1 .. TLSv1.3). Sets the
 * context's version range; returns -1 on an unknown name. */
static int set_protocols(SSL_CTX *ctx, const char *list)
{
    static const struct {
        const char *name;
        int version;
    } names[] = {{"TLSv1", TLS1_VERSION},
                 {"TLSv1.1", TLS1_1_VERSION},
                 {"TLSv1.2", TLS1_2_VERSION},
                 {"TLSv1.3", TLS1_3_VERSION}};
    int lo = 0, hi = 0;
    char *copy = strdup(set(list) ? list : "TLSv1.2 TLSv1.3"), *save = NULL;
    for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        int v = 0;
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            if (!strcasecmp(t, names[i].name)) v = names[i].version;
        if (!v) {
            free(copy);
            return -1;
        }
        if (!lo || v < lo) lo = v;
        if (v > hi) hi = v;
    }
    free(copy);
    SSL_CTX_set_min_proto_version(ctx, lo);
    SSL_CTX_set_max_proto_version(ctx, hi);
    return 0;
}

static int configure_verify(SSL_CTX *ctx, char **err)
{
    if (set(cfg.tls_ca_cert_file) || set(cfg.tls_ca_cert_dir)) {
        const char *file = set(cfg.tls_ca_cert_file) ? cfg.tls_ca_cert_file : NULL;
        const char *dir = set(cfg.tls_ca_cert_dir) ? cfg.tls_ca_cert_dir : NULL;
        if (SSL_CTX_load_verify_locations(ctx, file, dir) <= 0) {
            *err = ssl_error("Failed to configure CA certificate(s) file/directory");
            return -1;
        }
    } else if (cfg.tls_auth_clients != TLS_CLIENT_AUTH_NO) {
        *err = strdup("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when "
                      "tls-auth-clients is not 'no'");
        return -1;
    }
    int mode = cfg.tls_auth_clients == TLS_CLIENT_AUTH_YES
                   ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT
               : cfg.tls_auth_clients == TLS_CLIENT_AUTH_OPTIONAL ? SSL_VERIFY_PEER
                                                                  : SSL_VERIFY_NONE;
    SSL_CTX_set_verify(ctx, mode, NULL);
    return 0;
}

static SSL_CTX *build_context(char **err)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx) {
        *err = ssl_error("Failed to create the TLS context");
        return NULL;
    }
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_SINGLE_DH_USE);
    if (cfg.tls_prefer_server_ciphers) SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_ecdh_auto(ctx, 1);
    SSL_CTX_set_dh_auto(ctx, 1);
    if (cfg.tls_session_caching) {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
        SSL_CTX_sess_set_cache_size(ctx, cfg.tls_session_cache_size);
        SSL_CTX_set_timeout(ctx, cfg.tls_session_cache_timeout);
        static const unsigned char sid_ctx[] = "strata";
        SSL_CTX_set_session_id_context(ctx, sid_ctx, sizeof(sid_ctx) - 1);
    } else {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    }
    if (set_protocols(ctx, cfg.tls_protocols) < 0) {
        *err = strdup("Invalid tls-protocols value");
        goto fail;
    }
    if (set(cfg.tls_key_file_pass)) {
        SSL_CTX_set_default_passwd_cb(ctx, key_password);
        SSL_CTX_set_default_passwd_cb_userdata(ctx, cfg.tls_key_file_pass);
    }
    if (SSL_CTX_use_certificate_chain_file(ctx, cfg.tls_cert_file) <= 0) {
        *err = ssl_error("Failed to load certificate");
        goto fail;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, cfg.tls_key_file, SSL_FILETYPE_PEM) <= 0) {
        *err = ssl_error("Failed to load private key");
        goto fail;
    }
    if (configure_verify(ctx, err) < 0) goto fail;
    if (set(cfg.tls_ciphers) && !SSL_CTX_set_cipher_list(ctx, cfg.tls_ciphers)) {
        *err = strdup("Failed to configure ciphers");
        goto fail;
    }
    if (set(cfg.tls_ciphersuites) && !SSL_CTX_set_ciphersuites(ctx, cfg.tls_ciphersuites)) {
        *err = strdup("Failed to configure ciphersuites");
        goto fail;
    }
    return ctx;
fail:
    SSL_CTX_free(ctx);
    return NULL;
}

int tls_configure(char **err)
{
    *err = NULL;
    if (!cfg.tls_port && !set(cfg.tls_cert_file)) return 0;
    if (!set(cfg.tls_cert_file) || !set(cfg.tls_key_file)) {
        *err = strdup("tls-cert-file and tls-key-file must be set for tls-port");
        return -1;
    }
    SSL_CTX *ctx = build_context(err);
    if (!ctx) return -1;
    SSL_CTX_free(server_ctx);
    server_ctx = ctx;
    return 0;
}

void tls_listen_close(void)
{
    for (int i = 0; i < server.ntls_listen; i++) {
        ae_delete_file_event(server.el, server.tls_listen_fd[i], AE_READABLE);
        close(server.tls_listen_fd[i]);
    }
    server.ntls_listen = 0;
}

int tls_listen_update(void)
{
    tls_listen_close();
    if (!cfg.tls_port || !server.el) return 0;
    char **argv;
    int argc = config_split_args(cfg.bind, &argv);
    for (int i = 0; i < argc && server.ntls_listen < 16; i++) {
        const char *a = argv[i][0] == '-' ? argv[i] + 1 : argv[i];
        char err[ANET_ERR_LEN] = "";
        int fd = anet_tcp_server(err, cfg.tls_port, a, cfg.tcp_backlog);
        if (fd < 0) {
            if (argv[i][0] == '-') continue;
            server_log(LL_WARNING, "Could not create server TLS listening socket %s:%d: %s", a,
                       cfg.tls_port, err);
            config_free_args(argv, argc);
            return -1;
        }
        server.tls_listen_fd[server.ntls_listen++] = fd;
        ae_create_file_event(server.el, fd, AE_READABLE, networking_accept_tls_handler, NULL);
    }
    if (argc > 0) config_free_args(argv, argc);
    return server.ntls_listen ? 0 : -1;
}

tls_conn *tls_conn_new(int fd)
{
    if (!server_ctx) return NULL;
    SSL *ssl = SSL_new(server_ctx);
    if (!ssl) return NULL;
    SSL_set_fd(ssl, fd);
    SSL_set_accept_state(ssl);
    tls_conn *t = calloc(1, sizeof(*t));
    if (!t) {
        SSL_free(ssl);
        return NULL;
    }
    t->ssl = ssl;
    return t;
}

void tls_conn_free(tls_conn *t)
{
    if (!t) return;
    SSL_shutdown(t->ssl); /* one close_notify, not waiting for the peer's */
    SSL_free(t->ssl);
    ERR_clear_error();
    free(t);
}

/* Maps an SSL_read/SSL_write failure to errno; returns what the caller returns. */
static ssize_t failed(tls_conn *t, int r)
{
    int e = SSL_get_error(t->ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        errno = EAGAIN;
        return -1;
    }
    if (e == SSL_ERROR_ZERO_RETURN) return 0;
    if (e == SSL_ERROR_SSL) {
        char buf[256];
        ERR_error_string_n(ERR_get_error(), buf, sizeof(buf));
        server_log(LL_VERBOSE, "TLS error: %s", buf);
    }
    ERR_clear_error();
    errno = errno ? errno : ECONNRESET;
    if (errno == EAGAIN) errno = ECONNRESET; /* a failed record is not "try again" */
    return -1;
}

ssize_t tls_read(tls_conn *t, void *buf, size_t n)
{
    ERR_clear_error();
    errno = 0;
    int r = SSL_read(t->ssl, buf, n > (1u << 30) ? 1 << 30 : (int)n);
    return r > 0 ? r : failed(t, r);
}

ssize_t tls_write(tls_conn *t, const void *buf, size_t n)
{
    ERR_clear_error();
    errno = 0;
    int r = SSL_write(t->ssl, buf, n > (1u << 30) ? 1 << 30 : (int)n);
    return r > 0 ? r : failed(t, r);
}

int tls_pending(const tls_conn *t)
{
    return SSL_pending(t->ssl) > 0;
}
