/*
 * reply.c -- the reply writer: RESP2/RESP3 encodings appended to a
 * client's chain of output blocks. Nothing here touches a socket;
 * networking.c writes the chain with writev after the group commit.
 *
 * Invariants:
 *   R1. Only the tail block receives appended bytes, and never a deferred
 *       block: a deferred length is a block of its own, filled in later by
 *       set_deferred_*, so later appends start a new block.
 *   R2. reply_bytes == sum of used over the chain minus head_sent.
 *   R3. A client in CLIENT REPLY OFF mode (or skipping this reply), or
 *       closing, gets nothing -- except push messages (pub/sub), which
 *       bypass REPLY OFF/SKIP as in Redis (reply_push_begin/end).
 *   R4. reply_mem == sizeof(reply_block) + size summed over the chain, and
 *       server.reply_mem_total == the sum of reply_mem over the clients not
 *       yet scheduled to close (reply_mem_release). Every block is taken by
 *       block_new and given back by reply_block_free, and each new block is
 *       a point where the output buffer limits are checked (as Redis checks
 *       when its reply list grows).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/reply.h"
#include "server/server.h"

#define BLOCK_SIZE (16 * 1024)

/* R3 */
static inline int muted(const struct client_private *p)
{
    return ((p->reply_off || p->reply_skip == 1) && !p->pushing) || p->close_asap;
}

static void mem_add(client *c, size_t add, size_t sub)
{
    struct client_private *p = c->priv;
    p->reply_mem = p->reply_mem + add - sub; /* R4 */
    if (!p->reply_mem_released) server.reply_mem_total = server.reply_mem_total + add - sub;
}

static reply_block *block_new(client *c, size_t size)
{
    reply_block *b = malloc(sizeof(*b) + size);
    if (!b) abort(); /* as Redis's zmalloc: out of memory is fatal */
    b->next = NULL;
    b->size = size;
    b->used = 0;
    b->deferred = 0;
    mem_add(c, sizeof(*b) + size, 0);
    return b;
}

void reply_block_free(client *c, reply_block *b)
{
    mem_add(c, 0, sizeof(*b) + b->size);
    free(b);
}

size_t reply_obuf_usage(const client *c)
{
    size_t first = sizeof(reply_block) + BLOCK_SIZE;
    return c->priv->reply_mem > first ? c->priv->reply_mem - first : 0;
}

void reply_mem_release(client *c)
{
    struct client_private *p = c->priv;
    if (p->reply_mem_released) return;
    server.reply_mem_total -= p->reply_mem; /* R4 */
    p->reply_mem_released = 1;
}

static void link_block(client *c, reply_block *b)
{
    struct client_private *p = c->priv;
    if (p->reply_tail)
        p->reply_tail->next = b;
    else
        p->reply_head = b;
    p->reply_tail = b;
    networking_reply_grew(c); /* R4: may schedule c, or another client, to close */
}

void reply_append(client *c, const char *s, size_t n)
{
    struct client_private *p = c->priv;
    if (muted(p)) return; /* R3 */
    reply_block *t = p->reply_tail;
    p->reply_bytes += n; /* R2 */
    if (t && !t->deferred) {
        size_t room = t->size - t->used;
        size_t k = room < n ? room : n;
        memcpy(t->buf + t->used, s, k);
        t->used += k;
        s += k;
        n -= k;
    }
    if (n) {
        reply_block *b = block_new(c, n > BLOCK_SIZE ? n : BLOCK_SIZE);
        memcpy(b->buf, s, n);
        b->used = n;
        link_block(c, b);
    }
}

void reply_mark_get(client *c, reply_mark *m)
{
    m->tail = c->priv->reply_tail;
    m->used = m->tail ? m->tail->used : 0;
    m->bytes = c->priv->reply_bytes;
}

void reply_truncate(client *c, const reply_mark *m)
{
    struct client_private *p = c->priv;
    reply_block *b = m->tail ? m->tail->next : p->reply_head;
    while (b) {
        reply_block *n = b->next;
        reply_block_free(c, b);
        b = n;
    }
    if (m->tail) {
        m->tail->next = NULL;
        m->tail->used = m->used;
    } else {
        p->reply_head = NULL;
        p->head_sent = 0;
    }
    p->reply_tail = m->tail;
    p->reply_bytes = m->bytes;
}

void reply_free_all(client *c)
{
    reply_mark m = {NULL, 0, 0};
    reply_truncate(c, &m);
}

/* "00".."99": two digits per division, as Redis's ll2string. */
static const char digits2[201] = "0001020304050607080910111213141516171819"
                                 "2021222324252627282930313233343536373839"
                                 "4041424344454647484950515253545556575859"
                                 "6061626364656667686970717273747576777879"
                                 "8081828384858687888990919293949596979899";

/* Writes v in decimal (no NUL) to dst, which has room for 20 bytes;
 * returns the length. snprintf's stdio machinery was a quarter of the
 * server's CPU on IDX.RANGE ... HASHES, a header per field. */
size_t reply_fmt_ull(char *dst, unsigned long long v)
{
    char tmp[20];
    char *p = tmp + sizeof(tmp);
    while (v >= 100) {
        unsigned i = (unsigned)(v % 100) * 2;
        v /= 100;
        *--p = digits2[i + 1];
        *--p = digits2[i];
    }
    if (v >= 10) {
        unsigned i = (unsigned)v * 2;
        *--p = digits2[i + 1];
        *--p = digits2[i];
    } else {
        *--p = (char)('0' + v);
    }
    size_t n = (size_t)(tmp + sizeof(tmp) - p);
    memcpy(dst, p, n);
    return n;
}

/* As fmt_ull for a signed value (LLONG_MIN included); dst needs 21 bytes. */
static size_t fmt_ll(char *dst, long long v)
{
    if (v >= 0) return reply_fmt_ull(dst, (unsigned long long)v);
    dst[0] = '-';
    return 1 + reply_fmt_ull(dst + 1, 0ULL - (unsigned long long)v);
}

/* Writes "<type><n>\r\n" to dst (room for 24 bytes); returns the length. */
static size_t fmt_header(char *dst, char type, long long n)
{
    dst[0] = type;
    size_t len = 1 + fmt_ll(dst + 1, n);
    dst[len] = '\r';
    dst[len + 1] = '\n';
    return len + 2;
}

/* Where n more bytes can go straight into the tail block (R1), or NULL
 * when they do not fit there and the caller must take the slow path. The
 * caller writes exactly n bytes and calls reply_commit(c, n). */
static inline char *tail_room(client *c, size_t n)
{
    reply_block *t = c->priv->reply_tail;
    if (!t || t->deferred || t->size - t->used < n) return NULL;
    return t->buf + t->used;
}

static inline void reply_commit(client *c, size_t n)
{
    c->priv->reply_tail->used += n;
    c->priv->reply_bytes += n; /* R2 */
}

static void add_header(client *c, char type, long long n)
{
    struct client_private *p = c->priv;
    if (muted(p)) return; /* R3 */
    char *dst = tail_room(c, 24);
    if (dst) {
        reply_commit(c, fmt_header(dst, type, n));
        return;
    }
    char buf[24];
    reply_append(c, buf, fmt_header(buf, type, n));
}

void add_reply_ok(client *c)
{
    reply_append(c, "+OK\r\n", 5);
}

void add_reply_status(client *c, const char *s)
{
    reply_append(c, "+", 1);
    reply_append(c, s, strlen(s));
    reply_append(c, "\r\n", 2);
}

/* Does msg start with a Redis error code ("WRONGTYPE ...")? Only known
 * codes count: plain messages such as "DB index is out of range" or "MULTI
 * calls can not be nested" also start with an upper-case word and must get
 * "ERR " like in Redis. A leading '-' marks any other code explicitly. */
static int has_code(const char *msg)
{
    static const char *codes[] = {
        "ERR",        "WRONGTYPE", "NOAUTH",    "WRONGPASS", "NOPROTO",    "EXECABORT",
        "BUSY",       "BUSYKEY",   "NOSCRIPT",  "LOADING",   "MISCONF",    "READONLY",
        "OOM",        "NOPERM",    "CROSSSLOT", "TRYAGAIN",  "NOREPLICAS", "MASTERDOWN",
        "UNKILLABLE", "NOTBUSY",   "NOGROUP",   "UNBLOCKED", NULL};
    size_t i = 0;
    while (msg[i] >= 'A' && msg[i] <= 'Z')
        i++;
    if (i == 0 || msg[i] != ' ') return 0;
    for (const char **c = codes; *c; c++)
        if (strlen(*c) == i && memcmp(*c, msg, i) == 0) return 1;
    return 0;
}

static inline void stats_error_code_if(int count, const char *code, size_t n)
{
    if (count) stats_error_code(code, n);
}

static void reply_error(client *c, const char *msg, int count)
{
    c->last_cmd_errors++;
    if (count) server.stat_errors++;
    size_t n = strlen(msg);
    char *copy = NULL;
    /* Newlines would break the protocol: Redis turns them into spaces. */
    if (memchr(msg, '\r', n) || memchr(msg, '\n', n)) {
        copy = strdup(msg);
        for (size_t i = 0; i < n; i++)
            if (copy[i] == '\r' || copy[i] == '\n') copy[i] = ' ';
        msg = copy;
    }
    if (msg[0] == '-') {
        msg++;
        n--;
        reply_append(c, "-", 1);
        /* Redis's afterErrorReply: the code ends at a space within 32 bytes. */
        const char *sp = memchr(msg, ' ', n < 31 ? n : 31);
        if (sp)
            stats_error_code_if(count, msg, (size_t)(sp - msg));
        else
            stats_error_code_if(count, "ERR", 3);
    } else if (has_code(msg)) {
        reply_append(c, "-", 1);
        stats_error_code_if(count, msg, strcspn(msg, " "));
    } else {
        reply_append(c, "-ERR ", 5);
        stats_error_code_if(count, "ERR", 3);
    }
    reply_append(c, msg, n);
    reply_append(c, "\r\n", 2);
    free(copy);
}

void add_reply_error(client *c, const char *msg)
{
    reply_error(c, msg, 1);
}

void add_reply_error_counted(client *c, const char *msg)
{
    reply_error(c, msg, 0);
}

void add_reply_error_fmt(client *c, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    add_reply_error(c, buf);
}

void add_reply_bulk(client *c, const char *p, size_t n)
{
    struct client_private *cp = c->priv;
    if (muted(cp)) return; /* R3 */
    /* One copy into the tail block for the common small value. */
    char *dst = n <= BLOCK_SIZE ? tail_room(c, 24 + n + 2) : NULL;
    if (dst) {
        size_t h = fmt_header(dst, '$', (long long)n);
        memcpy(dst + h, p, n);
        dst[h + n] = '\r';
        dst[h + n + 1] = '\n';
        reply_commit(c, h + n + 2);
        return;
    }
    add_header(c, '$', (long long)n);
    reply_append(c, p, n);
    reply_append(c, "\r\n", 2);
}

/* ---- Whole hashes in one pass (reply.h) --------------------------------- */

/* The most bytes a bulk string of n bytes takes: '$', 20 digits, CRLF, the
 * bytes, CRLF. */
#define BULK_MAX(n) (25 + (n))

/* Writes "$<n>\r\n<p>\r\n" to dst (room for BULK_MAX(n)); returns the end.
 * Field names and small values are short: the one- and two-digit lengths
 * skip the general formatter. */
static inline char *put_bulk(char *dst, const char *p, size_t n)
{
    *dst++ = '$';
    if (n < 10) {
        *dst++ = (char)('0' + n);
    } else if (n < 100) {
        memcpy(dst, digits2 + 2 * n, 2);
        dst += 2;
    } else {
        dst += reply_fmt_ull(dst, n);
    }
    dst[0] = '\r';
    dst[1] = '\n';
    if (n) memcpy(dst + 2, p, n);
    dst[n + 2] = '\r';
    dst[n + 3] = '\n';
    return dst + n + 4;
}

/* Room for need bytes in one piece at the end of the chain: the tail block
 * when it has them (R1), else a new block of at least need bytes. The
 * caller writes at most need bytes and commits what it wrote. */
static char *reserve(client *c, size_t need)
{
    char *dst = tail_room(c, need);
    if (dst) return dst;
    reply_block *b = block_new(c, need > BLOCK_SIZE ? need : BLOCK_SIZE);
    link_block(c, b);
    return b->buf;
}

/* Worst-case bytes of the hash's header and bulk strings. */
static size_t hash_max(const ks_field *f, size_t n, reply_hash_part what)
{
    size_t need = 24;
    for (size_t i = 0; i < n; i++) {
        if (what != REPLY_HASH_VALUES) need += BULK_MAX(f[i].fl);
        if (what == REPLY_HASH_PAIRS || what == REPLY_HASH_VALUES) need += BULK_MAX(f[i].vl);
    }
    return need;
}

static char *put_hash(client *c, char *dst, const ks_field *f, size_t n, reply_hash_part what)
{
    if (what == REPLY_HASH_PAIRS)
        dst += c->resp >= 3 ? fmt_header(dst, '%', (long long)n)
                            : fmt_header(dst, '*', 2 * (long long)n);
    else if (what != REPLY_HASH_BULKS)
        dst += fmt_header(dst, '*', (long long)n);
    for (size_t i = 0; i < n; i++) {
        if (what != REPLY_HASH_VALUES) dst = put_bulk(dst, f[i].f, f[i].fl);
        if (what == REPLY_HASH_PAIRS || what == REPLY_HASH_VALUES)
            dst = put_bulk(dst, f[i].v, f[i].vl);
    }
    return dst;
}

void add_reply_hash(client *c, const ks_field *f, size_t n, reply_hash_part what)
{
    struct client_private *p = c->priv;
    if (muted(p)) return; /* R3 */
    char *start = reserve(c, hash_max(f, n, what));
    reply_commit(c, (size_t)(put_hash(c, start, f, n, what) - start));
}

void add_reply_keyed_hash(client *c, const char *key, size_t klen, const ks_field *f, size_t n)
{
    struct client_private *p = c->priv;
    if (muted(p)) return; /* R3 */
    char *start = reserve(c, BULK_MAX(klen) + hash_max(f, n, REPLY_HASH_PAIRS));
    char *dst = put_bulk(start, key, klen);
    reply_commit(c, (size_t)(put_hash(c, dst, f, n, REPLY_HASH_PAIRS) - start));
}

void add_reply_keyed_values(client *c, const char *key, size_t klen, const ks_field *const *v,
                            size_t n)
{
    struct client_private *p = c->priv;
    if (muted(p)) return; /* R3 */
    size_t need = BULK_MAX(klen) + 24;
    for (size_t i = 0; i < n; i++)
        need += v[i] ? BULK_MAX(v[i]->vl) : 5;
    char *start = reserve(c, need);
    char *dst = put_bulk(start, key, klen);
    dst += fmt_header(dst, '*', (long long)n);
    for (size_t i = 0; i < n; i++) {
        if (v[i]) {
            dst = put_bulk(dst, v[i]->v, v[i]->vl);
        } else if (c->resp >= 3) {
            memcpy(dst, "_\r\n", 3);
            dst += 3;
        } else {
            memcpy(dst, "$-1\r\n", 5);
            dst += 5;
        }
    }
    reply_commit(c, (size_t)(dst - start));
}

void add_reply_bulk_cstr(client *c, const char *s)
{
    if (!s)
        add_reply_null(c);
    else
        add_reply_bulk(c, s, strlen(s));
}

void add_reply_bulk_ll(client *c, long long v)
{
    char buf[24];
    add_reply_bulk(c, buf, fmt_ll(buf, v));
}

void add_reply_null(client *c)
{
    if (c->resp >= 3)
        reply_append(c, "_\r\n", 3);
    else
        reply_append(c, "$-1\r\n", 5);
}

void add_reply_null_array(client *c)
{
    if (c->resp >= 3)
        reply_append(c, "_\r\n", 3);
    else
        reply_append(c, "*-1\r\n", 5);
}

void add_reply_long_long(client *c, long long v)
{
    /* The common small replies (:0 :1) without formatting. */
    if (v == 0)
        reply_append(c, ":0\r\n", 4);
    else if (v == 1)
        reply_append(c, ":1\r\n", 4);
    else
        add_header(c, ':', v);
}

/* Formats d as Redis does: "inf"/"-inf"/"nan", else %.17g. */
static int fmt_double(char *buf, size_t cap, double d)
{
    if (isinf(d)) return snprintf(buf, cap, "%s", d > 0 ? "inf" : "-inf");
    if (isnan(d)) return snprintf(buf, cap, "nan");
    /* An integral value below 2^53 (not -0) prints as %.17g prints it, its
     * digits (the common case of zset scores), without snprintf's cost. */
    if (d > -9007199254740992.0 && d < 9007199254740992.0 && d == (double)(long long)d &&
        !(d == 0 && signbit(d)))
        return (int)fmt_ll(buf, (long long)d);
    return snprintf(buf, cap, "%.17g", d);
}

void add_reply_double(client *c, double d)
{
    char buf[64];
    int n = fmt_double(buf, sizeof(buf), d);
    if (c->resp >= 3) {
        reply_append(c, ",", 1);
        reply_append(c, buf, (size_t)n);
        reply_append(c, "\r\n", 2);
    } else {
        add_reply_bulk(c, buf, (size_t)n);
    }
}

void add_reply_human_double(client *c, long double d)
{
    char buf[KS_LD_BUF];
    size_t n = ks_ld2string(buf, sizeof(buf), d);
    if (c->resp >= 3) {
        reply_append(c, ",", 1);
        reply_append(c, buf, n);
        reply_append(c, "\r\n", 2);
    } else {
        add_reply_bulk(c, buf, n);
    }
}

void add_reply_bool(client *c, int b)
{
    if (c->resp >= 3)
        reply_append(c, b ? "#t\r\n" : "#f\r\n", 4);
    else
        reply_append(c, b ? ":1\r\n" : ":0\r\n", 4);
}

void add_reply_array_len(client *c, long n)
{
    add_header(c, '*', n);
}

void add_reply_push_len(client *c, long n)
{
    add_header(c, c->resp >= 3 ? '>' : '*', n);
}

void reply_push_begin(client *c, long n)
{
    c->priv->pushing++;
    add_reply_push_len(c, n);
}

void reply_push_end(client *c)
{
    c->priv->pushing--;
    client_after_push(c);
}

void reply_push_raw(client *c, const char *p, size_t n)
{
    struct client_private *cp = c->priv;
    cp->pushing++;
    if (c->resp >= 3) { /* the same array as a push: '>' for '*' */
        reply_append(c, ">", 1);
        reply_append(c, p + 1, n - 1);
    } else {
        reply_append(c, p, n);
    }
    cp->pushing--;
    client_after_push(c);
}

void add_reply_map_len(client *c, long n)
{
    if (c->resp >= 3)
        add_header(c, '%', n);
    else
        add_header(c, '*', 2 * n);
}

void add_reply_set_len(client *c, long n)
{
    add_header(c, c->resp >= 3 ? '~' : '*', n);
}

void add_reply_verbatim(client *c, const char *p, size_t n, const char *ext)
{
    if (c->resp < 3) {
        add_reply_bulk(c, p, n);
        return;
    }
    char hdr[48];
    int h = snprintf(hdr, sizeof(hdr), "=%zu\r\n%.3s:", n + 4, ext);
    reply_append(c, hdr, (size_t)h);
    reply_append(c, p, n);
    reply_append(c, "\r\n", 2);
}

void *add_reply_deferred_len(client *c)
{
    struct client_private *p = c->priv;
    if (muted(p)) return NULL;
    reply_block *b = block_new(c, 24); /* "*<20 digits>\r\n" fits */
    b->deferred = 1;                   /* R1 */
    link_block(c, b);
    return b;
}

static void set_deferred(client *c, void *node, char type, long n)
{
    reply_block *b = node;
    if (!b) return;
    /* 24 bytes hold any header (add_reply_deferred_len) */
    b->used = fmt_header(b->buf, type, n);
    c->priv->reply_bytes += b->used; /* R2 */
}

void set_deferred_array_len(client *c, void *node, long n)
{
    set_deferred(c, node, '*', n);
}

void set_deferred_map_len(client *c, void *node, long n)
{
    if (c->resp >= 3)
        set_deferred(c, node, '%', n);
    else
        set_deferred(c, node, '*', 2 * n);
}

void add_reply_wrong_arity(client *c)
{
    add_reply_error_fmt(c, "wrong number of arguments for '%s' command",
                        c->cmd ? c->cmd->name : c->argv[0].ptr);
}

/* The command's name in upper case, as Redis's help and error texts. */
static void cmd_upper(const client *c, char *upper, size_t cap)
{
    size_t i;
    for (i = 0; i < cap - 1 && c->argv[0].ptr[i]; i++) {
        char ch = c->argv[0].ptr[i];
        upper[i] = (char)(ch >= 'a' && ch <= 'z' ? ch - 32 : ch);
    }
    upper[i] = '\0';
}

void add_reply_help(client *c, const char **lines)
{
    char upper[64];
    size_t i, n = 0;
    cmd_upper(c, upper, sizeof(upper));
    while (lines[n])
        n++;
    add_reply_array_len(c, (long)n + 3);
    char head[128];
    snprintf(head, sizeof(head),
             "%s <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", upper);
    add_reply_status(c, head);
    for (i = 0; i < n; i++)
        add_reply_status(c, lines[i]);
    add_reply_status(c, "HELP");
    add_reply_status(c, "    Prints this help.");
}

void add_reply_subcommand_error(client *c)
{
    char upper[64];
    cmd_upper(c, upper, sizeof(upper));
    add_reply_error_fmt(c, "unknown subcommand '%.128s'. Try %s HELP.", c->argv[1].ptr, upper);
    c->priv->cmd_outcome = CMD_BAD_SUBCOMMAND; /* no stats: Redis finds no command to count */
}

void add_reply_subcommand_syntax_error(client *c)
{
    char upper[64];
    cmd_upper(c, upper, sizeof(upper));
    add_reply_error_fmt(
        c, "unknown subcommand or wrong number of arguments for '%.128s'. Try %s HELP.",
        c->argv[1].ptr, upper);
}

int arg_to_ll(client *c, const arg *a, long long *out)
{
    char *end;
    if (a->len == 0 || a->len > 20 || a->ptr[0] == ' ' || a->ptr[0] == '+' ||
        (a->ptr[0] == '0' && a->len > 1) || (a->ptr[0] == '-' && a->len > 1 && a->ptr[1] == '0'))
        goto bad;
    errno = 0;
    long long v = strtoll(a->ptr, &end, 10);
    if (errno || end != a->ptr + a->len) goto bad;
    *out = v;
    return 0;
bad:
    add_reply_error(c, ERR_NOT_INTEGER);
    return -1;
}

int arg_to_double(client *c, const arg *a, double *out)
{
    char *end;
    if (a->len == 0 || a->len > 5000 || a->ptr[0] == ' ') goto bad;
    errno = 0;
    double v = strtod(a->ptr, &end);
    if (end != a->ptr + a->len || isnan(v) || (errno == ERANGE && !isinf(v))) goto bad;
    *out = v;
    return 0;
bad:
    add_reply_error(c, ERR_NOT_FLOAT);
    return -1;
}

int arg_is(const arg *a, const char *w)
{
    return strcasecmp(a->ptr, w) == 0 && strlen(w) == a->len;
}

void add_reply_ks_error(client *c, ks_status st, const ks_ctx *ctx)
{
    switch (st) {
    case KS_ERR_WRONGTYPE:
        add_reply_error(c, ERR_WRONGTYPE);
        break;
    case KS_ERR_NOTINT:
        add_reply_error(c, ERR_NOT_INTEGER);
        break;
    case KS_ERR_NOTFLOAT:
        add_reply_error(c, ERR_NOT_FLOAT);
        break;
    case KS_ERR_OVERFLOW:
        add_reply_error(c, ERR_OVERFLOW);
        break;
    default:
        add_reply_error(c, ctx->err ? ctx->err : "ERR internal keyspace error");
        break;
    }
}

void reply_names_begin(client *c, reply_names *rn)
{
    rn->c = c;
    rn->len = add_reply_deferred_len(c);
    rn->n = 0;
}

void reply_names_add(void *arg, const char *name, size_t nlen)
{
    reply_names *rn = arg;
    add_reply_bulk(rn->c, name, nlen);
    rn->n++;
}

void reply_names_end(reply_names *rn)
{
    set_deferred_array_len(rn->c, rn->len, rn->n);
}
