/*
 * cmd_zset_range.c -- sorted-set range commands: ZRANGE (BYSCORE BYLEX
 * REV LIMIT WITHSCORES), ZRANGESTORE, ZRANGEBYSCORE, ZREVRANGEBYSCORE,
 * ZRANGEBYLEX, ZREVRANGEBYLEX, ZREVRANGE, ZCOUNT, ZLEXCOUNT,
 * ZREMRANGEBYRANK, ZREMRANGEBYSCORE, ZREMRANGEBYLEX. Argument rules,
 * replies and error texts follow Redis 7.0 (t_zset.c: zrangeGenericCommand,
 * zslParseRange, zslParseLexRange); the data work is in
 * src/keyspace/ks_zset_range.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "server/cmd_zset.h"

#define ERR_SCORE_RANGE "min or max is not a float"
#define ERR_LEX_RANGE "min or max not valid string range item"

/* zslParseRange: "(x" is exclusive; strtod must use the whole argument. */
static int parse_score_bound(const arg *a, double *v, int *ex)
{
    const char *p = a->ptr;
    char *end;
    *ex = p[0] == '(';
    *v = strtod(p + *ex, &end);
    return end[0] == '\0' && !isnan(*v);
}

/* zslParseLexRangeItem: "+", "-", "(x", "[x". */
static int parse_lex_bound(const arg *a, ks_zlex *b)
{
    const char *p = a->ptr;
    memset(b, 0, sizeof(*b));
    switch (p[0]) {
    case '+':
    case '-':
        if (p[1] != '\0') return 0;
        b->inf = p[0] == '+' ? 1 : -1;
        b->ex = 1;
        return 1;
    case '(':
    case '[':
        b->ex = p[0] == '(';
        b->p = p + 1;
        b->n = a->len - 1;
        return 1;
    default:
        return 0;
    }
}

/* Parses min and max of r->by into r; replies the error and returns -1. */
static int parse_bounds(client *c, const arg *min, const arg *max, ks_zspec *r)
{
    if (r->by == KS_ZBY_SCORE) {
        if (parse_score_bound(min, &r->min, &r->minex) &&
            parse_score_bound(max, &r->max, &r->maxex))
            return 0;
        add_reply_error(c, ERR_SCORE_RANGE);
    } else {
        if (parse_lex_bound(min, &r->lmin) && parse_lex_bound(max, &r->lmax)) return 0;
        add_reply_error(c, ERR_LEX_RANGE);
    }
    return -1;
}

/* ---- ZRANGE and its older forms ---------------------------------------------------- */

enum { BY_AUTO = -1, DIR_AUTO = -1 };

typedef struct zreply {
    client *c;
    int withscores;
} zreply;

static void zreply_fn(void *arg, const ks_zmember *z, size_t n)
{
    zreply *r = arg;
    reply_zmembers(r->c, z, n, r->withscores);
}

/* zrangeGenericCommand: argv[first] is the source key, then min max and
 * the options. by and rev are fixed by the older commands, else AUTO. */
static void zrange_generic(client *c, int first, int store, int by, int rev)
{
    ks_zspec r = {.offset = 0, .limit = -1};
    int withscores = 0, minidx = first + 1, maxidx = first + 2;
    for (int j = first + 3; j < c->argc; j++) {
        int left = c->argc - j - 1;
        const arg *a = &c->argv[j];
        if (!store && arg_is(a, "withscores")) {
            withscores = 1;
        } else if (arg_is(a, "limit") && left >= 2) {
            if (zarg_long(c, &c->argv[j + 1], &r.offset) < 0 ||
                zarg_long(c, &c->argv[j + 2], &r.limit) < 0)
                return;
            j += 2;
        } else if (rev == DIR_AUTO && arg_is(a, "rev")) {
            rev = 1;
        } else if (by == BY_AUTO && arg_is(a, "bylex")) {
            by = KS_ZBY_LEX;
        } else if (by == BY_AUTO && arg_is(a, "byscore")) {
            by = KS_ZBY_SCORE;
        } else {
            add_reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    r.rev = rev == 1;
    r.by = by == BY_AUTO ? KS_ZBY_RANK : by;
    if (r.limit != -1 && r.by == KS_ZBY_RANK) {
        add_reply_error(
            c, "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
        return;
    }
    if (withscores && r.by == KS_ZBY_LEX) {
        add_reply_error(c, "syntax error, WITHSCORES not supported in combination with BYLEX");
        return;
    }
    if (r.rev && r.by != KS_ZBY_RANK) { /* given as max min */
        int t = minidx;
        minidx = maxidx;
        maxidx = t;
    }
    if (r.by == KS_ZBY_RANK) {
        if (zarg_long(c, &c->argv[minidx], &r.start) < 0 ||
            zarg_long(c, &c->argv[maxidx], &r.end) < 0)
            return;
    } else if (parse_bounds(c, &c->argv[minidx], &c->argv[maxidx], &r) < 0) {
        return;
    }
    ks_ctx *k = client_ks(c);
    const arg *src = &c->argv[first];
    if (store) {
        uint64_t stored;
        int existed = notify_exists(c, c->argv[1].ptr, c->argv[1].len);
        ks_status st =
            ks_zrangestore(k, c->argv[1].ptr, c->argv[1].len, src->ptr, src->len, &r, &stored);
        if (st == KS_OK) notify_stored(c, NOTIFY_ZSET, "zrangestore", &c->argv[1], stored, existed);
        if (st != KS_OK)
            reply_zerr(c, st);
        else
            add_reply_long_long(c, (long long)stored);
        return;
    }
    zreply rr = {c, withscores};
    ks_status st = ks_zrange(k, src->ptr, src->len, &r, zreply_fn, &rr);
    if (st == KS_NOTFOUND)
        add_reply_array_len(c, 0);
    else if (st != KS_OK)
        reply_zerr(c, st);
}

void cmd_zrange(client *c)
{
    zrange_generic(c, 1, 0, BY_AUTO, DIR_AUTO);
}

void cmd_zrangestore(client *c)
{
    zrange_generic(c, 2, 1, BY_AUTO, DIR_AUTO);
}

void cmd_zrevrange(client *c)
{
    zrange_generic(c, 1, 0, KS_ZBY_RANK, 1);
}

void cmd_zrangebyscore(client *c)
{
    zrange_generic(c, 1, 0, KS_ZBY_SCORE, 0);
}

void cmd_zrevrangebyscore(client *c)
{
    zrange_generic(c, 1, 0, KS_ZBY_SCORE, 1);
}

void cmd_zrangebylex(client *c)
{
    zrange_generic(c, 1, 0, KS_ZBY_LEX, 0);
}

void cmd_zrevrangebylex(client *c)
{
    zrange_generic(c, 1, 0, KS_ZBY_LEX, 1);
}

/* ---- ZCOUNT, ZLEXCOUNT ------------------------------------------------------------ */

static void zcount_generic(client *c, int by)
{
    ks_zspec r = {.by = by, .limit = -1};
    if (parse_bounds(c, &c->argv[2], &c->argv[3], &r) < 0) return;
    uint64_t n;
    ks_status st = ks_zcount(client_ks(c), c->argv[1].ptr, c->argv[1].len, &r, &n);
    if (st != KS_OK && st != KS_NOTFOUND)
        reply_zerr(c, st);
    else
        add_reply_long_long(c, st == KS_OK ? (long long)n : 0);
}

void cmd_zcount(client *c)
{
    zcount_generic(c, KS_ZBY_SCORE);
}

void cmd_zlexcount(client *c)
{
    zcount_generic(c, KS_ZBY_LEX);
}

/* ---- ZREMRANGEBYRANK, BYSCORE, BYLEX ---------------------------------------------- */

static void zremrange_generic(client *c, int by)
{
    ks_zspec r = {.by = by, .limit = -1};
    if (by == KS_ZBY_RANK) {
        if (zarg_long(c, &c->argv[2], &r.start) < 0 || zarg_long(c, &c->argv[3], &r.end) < 0)
            return;
    } else if (parse_bounds(c, &c->argv[2], &c->argv[3], &r) < 0) {
        return;
    }
    uint64_t removed;
    ks_status st = ks_zremrange(client_ks(c), c->argv[1].ptr, c->argv[1].len, &r, &removed);
    if (st == KS_OK && removed) {
        static const char *ev[] = {[KS_ZBY_RANK] = "zremrangebyrank",
                                   [KS_ZBY_SCORE] = "zremrangebyscore",
                                   [KS_ZBY_LEX] = "zremrangebylex"};
        notify_arg(c, NOTIFY_ZSET, ev[by], 1);
        notify_del_if_gone(c, c->argv[1].ptr, c->argv[1].len);
    }
    if (st != KS_OK && st != KS_NOTFOUND)
        reply_zerr(c, st);
    else
        add_reply_long_long(c, st == KS_OK ? (long long)removed : 0);
}

void cmd_zremrangebyrank(client *c)
{
    zremrange_generic(c, KS_ZBY_RANK);
}

void cmd_zremrangebyscore(client *c)
{
    zremrange_generic(c, KS_ZBY_SCORE);
}

void cmd_zremrangebylex(client *c)
{
    zremrange_generic(c, KS_ZBY_LEX);
}
