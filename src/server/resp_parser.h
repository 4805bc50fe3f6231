/*
 * resp_parser.h -- the request parser: RESP multibulk requests
 * ("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n") and inline requests ("GET k\r\n", what
 * telnet sends), in the manner of hiredis: no I/O, the caller feeds bytes
 * and takes complete requests, the state is explicit (no recursion).
 *
 * Zero copy: arguments point into the caller's buffer. The parser writes a
 * NUL over the byte after each argument (the '\r' of a bulk, a separator of
 * an inline line, or an unescaped quote tail), so every argument is
 * NUL-terminated in place. Inline arguments with escapes are unescaped in
 * place; the result is never longer than the input.
 *
 * Limits (Redis's, with Redis's exact error texts in p->err):
 *   a line without '\r\n' longer than RESP_INLINE_MAX ("too big inline
 *   request", "too big mbulk count string", "too big bulk count string");
 *   a multibulk count over max_multibulk ("invalid multibulk length"); a
 *   bulk length over max_bulk_len ("invalid bulk length"), rejected as soon
 *   as the header is read, before the caller sizes its buffer for it;
 *   unauthenticated clients: at most 10 arguments of 16 KiB each.
 * After RESP_ERR the caller replies with p->err and closes the connection.
 */
#ifndef STRATA_RESP_PARSER_H
#define STRATA_RESP_PARSER_H

#include <stddef.h>

#include "server/server.h"

#define RESP_INLINE_MAX (64 * 1024)
#define RESP_DEFAULT_MAX_BULK (512LL * 1024 * 1024)
#define RESP_DEFAULT_MAX_MULTIBULK (1024LL * 1024 * 1024)

enum {
    RESP_DONE = 0,  /* a complete request is in p->argv / p->argc */
    RESP_AGAIN = 1, /* need more bytes */
    RESP_ERR = -1,  /* protocol error: p->err */
};

typedef struct resp_parser {
    /* Limits; set after resp_parser_init, read at each header. */
    long long max_bulk_len;
    long long max_multibulk;
    int unauthenticated;
    /* Parse state of the request in progress. */
    int in_multibulk;   /* 0: at a request boundary */
    long long mb_left;  /* bulks still to come */
    long long bulk_len; /* length of the bulk being read; -1: expecting '$' */
    size_t req_start;   /* offset of the first byte of the request */
    int argc;
    size_t argcap;
    size_t *offs; /* argument offsets into the buffer while the request is partial */
    arg *argv;    /* filled at RESP_DONE */
    const char *err;
} resp_parser;

void resp_parser_init(resp_parser *p);
void resp_parser_free(resp_parser *p);

/* Parses from buf[*pos] up to buf[len). On RESP_DONE, p->argv[0..argc)
 * point into buf (valid until buf changes) and *pos is past the request;
 * empty requests (blank inline lines, "*0") are skipped. On RESP_AGAIN *pos
 * is past what was consumed; the bytes from resp_parser_keep_from() on must
 * be kept. Never reads or writes at or past buf[len]. */
int resp_parse(resp_parser *p, char *buf, size_t len, size_t *pos);

/* The offset of the first byte the caller must keep (the start of a
 * partial request, else pos). */
size_t resp_parser_keep_from(const resp_parser *p, size_t pos);
/* The caller moved its buffer contents down by delta bytes. */
void resp_parser_rebase(resp_parser *p, size_t delta);
/* Bytes the buffer must hold beyond pos to finish the bulk being read
 * (0 when not inside a bulk): lets the reader size one read for a big
 * value instead of growing step by step. */
size_t resp_parser_bulk_need(const resp_parser *p);

#endif
