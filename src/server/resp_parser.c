/*
 * resp_parser.c -- RESP request parser; see resp_parser.h.
 *
 * States (explicit, so a request split across any number of reads resumes
 * where it stopped):
 *   idle         in_multibulk == 0; the next byte starts a request:
 *                '*' -> multibulk header, anything else -> inline line.
 *   want '$'     in_multibulk, bulk_len == -1: a "$<len>\r\n" line.
 *   want data    in_multibulk, bulk_len >= 0: <len> bytes and "\r\n".
 * Invariants:
 *   P1. While in_multibulk, offs[0..argc) hold the offsets of the finished
 *       arguments and req_start <= offs[i] < *pos; rebase shifts all of them.
 *   P2. argc + mb_left is the request's declared element count.
 *   P3. argcap >= argc; argv and offs have argcap entries; argcap grows by
 *       doubling from at most 1024, so a header claiming a huge count
 *       allocates nothing until the elements actually arrive.
 */
#include "server/resp_parser.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

void resp_parser_init(resp_parser *p)
{
    memset(p, 0, sizeof(*p));
    p->max_bulk_len = RESP_DEFAULT_MAX_BULK;
    p->max_multibulk = RESP_DEFAULT_MAX_MULTIBULK;
    p->bulk_len = -1;
}

void resp_parser_free(resp_parser *p)
{
    free(p->offs);
    free(p->argv);
    p->offs = NULL;
    p->argv = NULL;
    p->argcap = 0;
}

size_t resp_parser_keep_from(const resp_parser *p, size_t pos)
{
    return p->in_multibulk ? p->req_start : pos;
}

void resp_parser_rebase(resp_parser *p, size_t delta)
{
    if (!p->in_multibulk) return;
    p->req_start -= delta;
    for (int i = 0; i < p->argc; i++)
        p->offs[i] -= delta; /* P1 */
}

size_t resp_parser_bulk_need(const resp_parser *p)
{
    return p->in_multibulk && p->bulk_len >= 0 ? (size_t)p->bulk_len + 2 : 0;
}

static int grow_args(resp_parser *p, size_t want)
{
    if (want <= p->argcap) return 0;
    size_t cap = p->argcap ? p->argcap : 8;
    while (cap < want)
        cap *= 2;
    size_t *o = realloc(p->offs, cap * sizeof(*o));
    if (!o) return -1;
    p->offs = o;
    arg *a = realloc(p->argv, cap * sizeof(*a));
    if (!a) return -1;
    p->argv = a;
    p->argcap = cap;
    return 0;
}

/* Strict decimal parse of [s, s+n) as Redis's string2ll: no spaces, no '+',
 * no leading zeros except "0". Returns 0 on success. */
static int parse_ll(const char *s, size_t n, long long *out)
{
    if (n == 0 || n > 20) return -1;
    int neg = 0;
    size_t i = 0;
    if (s[0] == '-') {
        neg = 1;
        if (++i == n) return -1;
    }
    if (s[i] == '0' && n - i > 1) return -1;
    unsigned long long v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (ULLONG_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    if (neg) {
        if (v > (unsigned long long)LLONG_MAX + 1) return -1;
        *out = (long long)(0 - v);
    } else {
        if (v > LLONG_MAX) return -1;
        *out = (long long)v;
    }
    return 0;
}

/* Finds "\r" ending the line at buf[pos]; returns its offset, or -1 when the
 * line (and its '\n') is not complete yet. */
static long find_cr(const char *buf, size_t len, size_t pos)
{
    const char *cr = memchr(buf + pos, '\r', len - pos);
    if (!cr || (size_t)(cr - buf) + 1 >= len) return -1;
    return cr - buf;
}

static int fail(resp_parser *p, const char *msg)
{
    p->err = msg;
    return RESP_ERR;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\0';
}

/* Unescapes one character of a "double quoted" string at *r into *w. */
static void unescape_dq(char **r, char *e, char **w)
{
    char *p = *r;
    if (p + 3 < e && p[1] == 'x' && hexval(p[2]) >= 0 && hexval(p[3]) >= 0) {
        *(*w)++ = (char)(hexval(p[2]) * 16 + hexval(p[3]));
        *r = p + 4;
        return;
    }
    char c = p[1];
    *(*w)++ = c == 'n'   ? '\n'
              : c == 'r' ? '\r'
              : c == 't' ? '\t'
              : c == 'b' ? '\b'
              : c == 'a' ? '\a'
                         : c;
    *r = p + 2;
}

/* Scans one argument starting at *r (not a space), writing its unescaped
 * bytes at *w. Returns 0, or -1 on unbalanced quotes. The write cursor
 * never passes the read cursor, so unescaping in place is safe. */
static int scan_arg(char **rp, char *e, char **wp)
{
    char *r = *rp, *w = *wp;
    char quote = 0; /* '"' or '\'' while inside quotes */
    for (;;) {
        if (quote) {
            if (r >= e) return -1;
            if (*r == '\\' && r + 1 < e && quote == '"') {
                unescape_dq(&r, e, &w);
            } else if (*r == '\\' && r + 1 < e && r[1] == '\'') {
                *w++ = '\'';
                r += 2;
            } else if (*r == quote) {
                r++;
                /* A closing quote must be followed by a space or the end. */
                if (r < e && !is_space(*r)) return -1;
                quote = 0;
                break;
            } else {
                *w++ = *r++;
            }
        } else {
            if (r >= e || is_space(*r)) break;
            if (*r == '"' || *r == '\'')
                quote = *r++;
            else
                *w++ = *r++;
        }
    }
    *rp = r;
    *wp = w;
    return 0;
}

/* Splits the inline line [s, e) in place into arguments, as Redis's
 * sdssplitargs: whitespace separates, "..." allows \n \r \t \b \a \\ \" and
 * \xHH, '...' allows \'. Each NUL lands on a byte already read. */
static int split_inline(resp_parser *p, char *s, char *e)
{
    char *r = s;
    p->argc = 0;
    for (;;) {
        while (r < e && is_space(*r))
            r++;
        if (r >= e) return RESP_DONE;
        char *w = r, *start = r;
        if (scan_arg(&r, e, &w) < 0) return fail(p, "Protocol error: unbalanced quotes in request");
        if (grow_args(p, (size_t)p->argc + 1) < 0) return fail(p, "Protocol error: out of memory");
        p->argv[p->argc].ptr = start;
        p->argv[p->argc].len = (size_t)(w - start);
        p->argc++;
        /* w <= r; when the argument ended at e, *e is the line's '\r' or
         * '\n', already consumed, so the NUL may go there. */
        *w = '\0';
        if (r < e) r++; /* step over the separator */
    }
}

static int parse_inline(resp_parser *p, char *buf, size_t len, size_t *pos)
{
    char *nl = memchr(buf + *pos, '\n', len - *pos);
    if (!nl) {
        if (len - *pos > RESP_INLINE_MAX) return fail(p, "Protocol error: too big inline request");
        return RESP_AGAIN;
    }
    char *s = buf + *pos, *e = nl;
    if (e > s && e[-1] == '\r') e--;
    if (nl - s > RESP_INLINE_MAX) return fail(p, "Protocol error: too big inline request");
    *pos = (size_t)(nl - buf) + 1;
    return split_inline(p, s, e);
}

/* Reads the "*<n>\r\n" header. */
static int parse_mb_header(resp_parser *p, char *buf, size_t len, size_t *pos)
{
    long cr = find_cr(buf, len, *pos);
    if (cr < 0) {
        if (len - *pos > RESP_INLINE_MAX)
            return fail(p, "Protocol error: too big mbulk count string");
        return RESP_AGAIN;
    }
    long long n;
    size_t start = *pos + 1;
    if (parse_ll(buf + start, (size_t)cr - start, &n) < 0 || n > p->max_multibulk || n > INT_MAX)
        return fail(p, "Protocol error: invalid multibulk length");
    if (p->unauthenticated && n > 10)
        return fail(p, "Protocol error: unauthenticated multibulk length");
    p->req_start = *pos;
    *pos = (size_t)cr + 2;
    p->argc = 0;
    if (n <= 0) return RESP_DONE; /* empty request: the caller skips it */
    if (grow_args(p, n < 1024 ? (size_t)n : 1024) < 0)
        return fail(p, "Protocol error: out of memory");
    p->in_multibulk = 1;
    p->mb_left = n;
    p->bulk_len = -1;
    return RESP_AGAIN;
}

/* Reads bulks until the request is complete or the bytes run out. */
static int parse_bulks(resp_parser *p, char *buf, size_t len, size_t *pos)
{
    while (p->mb_left > 0) {
        if (p->bulk_len < 0) {
            long cr = find_cr(buf, len, *pos);
            if (cr < 0) {
                if (len - *pos > RESP_INLINE_MAX)
                    return fail(p, "Protocol error: too big bulk count string");
                return RESP_AGAIN;
            }
            if (buf[*pos] != '$') {
                static char msg[64];
                /* Redis's text; the byte is printed as is. */
                memcpy(msg, "Protocol error: expected '$', got ' '", 38);
                msg[35] = buf[*pos];
                return fail(p, msg);
            }
            long long bl;
            size_t start = *pos + 1;
            if (parse_ll(buf + start, (size_t)cr - start, &bl) < 0 || bl < 0 ||
                bl > p->max_bulk_len)
                return fail(p, "Protocol error: invalid bulk length");
            if (p->unauthenticated && bl > 16384)
                return fail(p, "Protocol error: unauthenticated bulk length");
            p->bulk_len = bl;
            *pos = (size_t)cr + 2;
        }
        if (len - *pos < (size_t)p->bulk_len + 2) return RESP_AGAIN;
        if (grow_args(p, (size_t)p->argc + 1) < 0) return fail(p, "Protocol error: out of memory");
        p->offs[p->argc] = *pos;
        p->argv[p->argc].len = (size_t)p->bulk_len;
        p->argc++;
        *pos += (size_t)p->bulk_len + 2;
        p->bulk_len = -1;
        p->mb_left--; /* P2 */
    }
    for (int i = 0; i < p->argc; i++) {
        p->argv[i].ptr = buf + p->offs[i];
        p->argv[i].ptr[p->argv[i].len] = '\0'; /* over the bulk's '\r' */
    }
    p->in_multibulk = 0;
    return RESP_DONE;
}

int resp_parse(resp_parser *p, char *buf, size_t len, size_t *pos)
{
    for (;;) {
        int r;
        if (!p->in_multibulk) {
            if (*pos >= len) return RESP_AGAIN;
            if (buf[*pos] == '*') {
                r = parse_mb_header(p, buf, len, pos);
                if (r == RESP_DONE) continue; /* "*0" or "*-1": nothing to run */
                if (r == RESP_ERR || !p->in_multibulk) return r;
            } else {
                p->req_start = *pos;
                r = parse_inline(p, buf, len, pos);
                if (r == RESP_DONE && p->argc == 0) continue; /* blank line */
                return r;
            }
        }
        return parse_bulks(p, buf, len, pos);
    }
}
