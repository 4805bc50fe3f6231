/*
 * cmd_ft_search.c -- FT.SEARCH and FT.AGGREGATE: argument parsing and the
 * replies, in RESP2 (RediSearch's flat arrays) and RESP3 (RediSearch 2.8's
 * maps: attributes, format, results, total_results, warning).
 *
 *   FT.SEARCH idx query [NOCONTENT] [VERBATIM] [NOSTOPWORDS] [WITHSCORES]
 *             [FILTER f min max]... [INKEYS n k ...] [INFIELDS n f ...]
 *             [RETURN n f [AS a] ...] [SORTBY f [ASC|DESC]] [LIMIT off num]
 *             [PARAMS n k v ...] [DIALECT d] [TIMEOUT t] [SCORER TFIDF]
 *             [LANGUAGE english]
 *   FT.AGGREGATE idx query <pipeline...>   (parsed by the index layer)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/ft.h"
#include "server/reply.h"
#include "server/acl.h"
#include "server/server.h"

#define FT_MAX_LIST 1024

static idx_str as_str(const arg *a)
{
    return (idx_str){a->ptr, a->len};
}

typedef struct search_args {
    ft_search_req r;
    idx_str *ret, *ret_as, *params; /* argc entries each: lists are parts of argv */
    idx_str *inkeys;
    idx_buf query; /* the query with FILTER and INFIELDS folded in */
} search_args;

static int count_arg(client *c, int i, long long max, long long *n)
{
    if (i >= c->argc || arg_to_ll(c, &c->argv[i], n) < 0) return -1;
    if (*n < 0 || *n > c->argc - i - 1 || *n > max) {
        add_reply_error(c, "-Bad arguments: count out of range");
        return -1;
    }
    return 0;
}

static void append_str(idx_buf *b, const char *s)
{
    idx_buf_append(b, s, strlen(s));
}

/* Parses FT.SEARCH's options; returns 0, or -1 after replying. */
static int parse_search(client *c, search_args *a)
{
    ft_search_req *r = &a->r;
    r->index = as_str(&c->argv[1]);
    r->num = 10;
    const arg *infields[64];
    long long ninfields = 0;
    append_str(&a->query, "");
    idx_buf filters = {0};
    for (int i = 3; i < c->argc; i++) {
        const arg *o = &c->argv[i];
        long long n;
        if (arg_is(o, "nocontent")) {
            r->nocontent = 1;
        } else if (arg_is(o, "verbatim")) {
            r->verbatim = 1;
        } else if (arg_is(o, "nostopwords")) {
        } else if (arg_is(o, "withscores")) {
            r->withscores = 1;
        } else if (arg_is(o, "limit") && i + 2 < c->argc) {
            if (arg_to_ll(c, &c->argv[i + 1], &r->offset) < 0) return -1;
            if (arg_to_ll(c, &c->argv[i + 2], &r->num) < 0) return -1;
            if (r->offset < 0 || r->num < 0 || r->offset > 1000000000 || r->num > 1000000000) {
                add_reply_error(c, "-LIMIT exceeds maximum of 1000000000");
                return -1;
            }
            i += 2;
        } else if (arg_is(o, "sortby") && i + 1 < c->argc) {
            r->has_sortby = 1;
            r->sortby = as_str(&c->argv[++i]);
            if (r->sortby.n && r->sortby.p[0] == '@') r->sortby.p++, r->sortby.n--;
            if (i + 1 < c->argc &&
                (arg_is(&c->argv[i + 1], "asc") || arg_is(&c->argv[i + 1], "desc")))
                r->sort_desc = arg_is(&c->argv[++i], "desc");
        } else if (arg_is(o, "return")) {
            if (count_arg(c, i + 1, FT_MAX_LIST, &n) < 0) return -1;
            r->has_return = 1;
            r->nret = 0;
            for (long long k = 0; k < n; k++) {
                idx_str f = as_str(&c->argv[i + 2 + k]);
                if (f.n && f.p[0] == '@') f.p++, f.n--;
                a->ret_as[r->nret] = (idx_str){NULL, 0};
                if (k + 2 < n && arg_is(&c->argv[i + 3 + k], "as")) {
                    a->ret_as[r->nret] = as_str(&c->argv[i + 4 + k]);
                    k += 2;
                }
                a->ret[r->nret++] = f;
            }
            i += 1 + (int)n;
        } else if (arg_is(o, "params")) {
            if (count_arg(c, i + 1, 2 * FT_MAX_LIST, &n) < 0) return -1;
            if (n % 2) {
                add_reply_error(c, "-Parameters must be specified in PARAM VALUE pairs");
                return -1;
            }
            for (long long k = 0; k < n; k++)
                a->params[k] = as_str(&c->argv[i + 2 + k]);
            r->nparams = (size_t)n / 2;
            i += 1 + (int)n;
        } else if (arg_is(o, "inkeys")) {
            if (count_arg(c, i + 1, 1 << 20, &n) < 0) return -1;
            free(a->inkeys);
            a->inkeys = calloc((size_t)n + 1, sizeof(idx_str));
            for (long long k = 0; k < n; k++)
                a->inkeys[k] = as_str(&c->argv[i + 2 + k]);
            r->has_inkeys = 1;
            r->ninkeys = (size_t)n;
            i += 1 + (int)n;
        } else if (arg_is(o, "infields")) {
            if (count_arg(c, i + 1, 64, &n) < 0) return -1;
            for (long long k = 0; k < n; k++)
                infields[k] = &c->argv[i + 2 + k];
            ninfields = n;
            i += 1 + (int)n;
        } else if (arg_is(o, "filter") && i + 3 < c->argc) {
            /* the legacy numeric filter is the query AND @f:[min max] */
            append_str(&filters, " @");
            idx_buf_append(&filters, c->argv[i + 1].ptr, c->argv[i + 1].len);
            append_str(&filters, ":[");
            idx_buf_append(&filters, c->argv[i + 2].ptr, c->argv[i + 2].len);
            append_str(&filters, " ");
            idx_buf_append(&filters, c->argv[i + 3].ptr, c->argv[i + 3].len);
            append_str(&filters, "]");
            i += 3;
        } else if ((arg_is(o, "dialect") || arg_is(o, "timeout") || arg_is(o, "slop")) &&
                   i + 1 < c->argc) {
            i++;
        } else if (arg_is(o, "scorer") && i + 1 < c->argc) {
            if (!arg_is(&c->argv[++i], "tfidf")) {
                add_reply_error(c, "-strata: this SCORER is not supported (only TFIDF)");
                goto fail;
            }
        } else if (arg_is(o, "language") && i + 1 < c->argc) {
            if (!arg_is(&c->argv[++i], "english")) {
                add_reply_error(c, "-strata: this LANGUAGE is not supported (only english)");
                goto fail;
            }
        } else if (arg_is(o, "inorder")) {
        } else {
            add_reply_error_fmt(c, "-strata: FT.SEARCH option %s is not supported", o->ptr);
            goto fail;
        }
    }
    a->query.len = 0;
    if (ninfields) {
        append_str(&a->query, "@");
        for (long long k = 0; k < ninfields; k++) {
            if (k) append_str(&a->query, "|");
            idx_buf_append(&a->query, infields[k]->ptr, infields[k]->len);
        }
        append_str(&a->query, ":(");
    }
    if (ninfields || filters.len) append_str(&a->query, "(");
    idx_buf_append(&a->query, c->argv[2].ptr, c->argv[2].len);
    if (ninfields || filters.len) append_str(&a->query, ")");
    if (ninfields) append_str(&a->query, ")");
    if (filters.len) idx_buf_append(&a->query, filters.data, filters.len);
    idx_buf_free(&filters);
    r->query = (idx_str){a->query.data ? a->query.data : "", a->query.len};
    r->ret = a->ret;
    r->ret_as = a->ret_as;
    r->params = a->params;
    r->inkeys = a->inkeys;
    return 0;
fail:
    idx_buf_free(&filters);
    return -1;
}

/* RediSearch 2.8's RESP3 reply: a map whose "results" comes next. */
static void resp3_head(client *c)
{
    add_reply_map_len(c, 5);
    add_reply_bulk_cstr(c, "attributes");
    add_reply_array_len(c, 0);
    add_reply_bulk_cstr(c, "format");
    add_reply_bulk_cstr(c, "STRING");
    add_reply_bulk_cstr(c, "results");
}

/* ... and its end. */
static void resp3_tail(client *c, long long total)
{
    add_reply_bulk_cstr(c, "total_results");
    add_reply_long_long(c, total);
    add_reply_bulk_cstr(c, "warning");
    add_reply_array_len(c, 0);
}

static void stream_hash(void *arg, const ks_field *f, size_t n)
{
    add_reply_hash(arg, f, n, REPLY_HASH_PAIRS);
}

/* A document's fields: the ones RETURN picked, or the whole hash streamed
 * from the engine's buffer in one pass (as IDX.RANGE ... HASHES; the same
 * view, see cmd_idx.c). Returns 0, or -1 on a failed read (ctx->err). */
static int reply_pairs(client *c, const ft_search_req *r, const ft_doc *d)
{
    if (r->defer_content && !r->has_return) {
        ks_status st = ks_hash_fields(client_ks(c), d->key, d->klen, stream_hash, c);
        if (st == KS_NOTFOUND || st == KS_ERR_WRONGTYPE) add_reply_map_len(c, 0);
        return st == KS_OK || st == KS_NOTFOUND || st == KS_ERR_WRONGTYPE ? 0 : -1;
    }
    add_reply_map_len(c, (long)d->nf);
    for (size_t j = 0; j < d->nf; j++) {
        add_reply_bulk(c, d->f[j].f, d->f[j].fl);
        add_reply_bulk(c, d->f[j].v, d->f[j].vl);
    }
    return 0;
}

static int reply_search(client *c, const ft_search_req *r, const ft_result *res)
{
    int content = !r->nocontent && !(r->has_return && r->nret == 0);
    if (c->resp >= 3) {
        resp3_head(c);
        add_reply_array_len(c, (long)res->n);
        for (size_t i = 0; i < res->n; i++) {
            const ft_doc *d = &res->docs[i];
            add_reply_map_len(c, 2 + (r->withscores ? 1 : 0) + (content ? 1 : 0));
            add_reply_bulk_cstr(c, "id");
            add_reply_bulk(c, d->key, d->klen);
            if (r->withscores) {
                add_reply_bulk_cstr(c, "score");
                add_reply_double(c, d->score);
            }
            if (content) {
                add_reply_bulk_cstr(c, "extra_attributes");
                if (reply_pairs(c, r, d) < 0) return -1;
            }
            add_reply_bulk_cstr(c, "values");
            add_reply_array_len(c, 0);
        }
        resp3_tail(c, res->total);
        return 0;
    }
    add_reply_array_len(c, 1 + (long)res->n * (1 + (r->withscores ? 1 : 0) + (content ? 1 : 0)));
    add_reply_long_long(c, res->total);
    for (size_t i = 0; i < res->n; i++) {
        const ft_doc *d = &res->docs[i];
        add_reply_bulk(c, d->key, d->klen);
        if (r->withscores) {
            char buf[64];
            ft_fmt_num(d->score, buf, sizeof(buf));
            add_reply_bulk_cstr(c, buf);
        }
        if (content && reply_pairs(c, r, d) < 0) return -1;
    }
    return 0;
}

void cmd_ft_search(client *c)
{
    if (acl_refuse_ft_query(c, &c->argv[1])) return;
    search_args args = {0}, *a = &args;
    a->ret = calloc((size_t)c->argc * 3, sizeof(idx_str));
    if (!a->ret) abort();
    a->ret_as = a->ret + c->argc;
    a->params = a->ret + 2 * c->argc;
    if (parse_search(c, a) == 0) {
        ft_result res;
        a->r.defer_content = 1;
        ks_status st = ft_search(client_ks(c), &a->r, &res);
        if (st != KS_OK) {
            add_reply_ks_error(c, st, client_ks(c));
        } else {
            reply_mark mark;
            reply_mark_get(c, &mark);
            if (reply_search(c, &a->r, &res) < 0) { /* a failed hash read: the error alone */
                reply_truncate(c, &mark);
                add_reply_ks_error(c, KS_ERR_ENGINE, client_ks(c));
            }
            ft_result_free(&res);
        }
    }
    free(a->inkeys);
    free(a->ret);
    idx_buf_free(&a->query);
}

static void reply_val(client *c, const ft_val *v)
{
    if (!v->num) {
        add_reply_bulk(c, v->s ? v->s : "", v->n);
        return;
    }
    char buf[64];
    ft_fmt_num(v->d, buf, sizeof(buf));
    add_reply_bulk_cstr(c, buf);
}

void cmd_ft_aggregate(client *c)
{
    if (acl_refuse_ft_query(c, &c->argv[1])) return;
    idx_str *args = calloc((size_t)c->argc, sizeof(*args));
    if (!args) abort();
    for (int i = 3; i < c->argc; i++)
        args[i - 3] = as_str(&c->argv[i]);
    ft_agg_result res;
    ks_status st = ft_aggregate(client_ks(c), as_str(&c->argv[1]), as_str(&c->argv[2]), args,
                                (size_t)(c->argc - 3), &res);
    free(args);
    if (st != KS_OK) {
        add_reply_ks_error(c, st, client_ks(c));
        return;
    }
    if (c->resp >= 3) {
        resp3_head(c);
        add_reply_array_len(c, (long)res.n);
    } else {
        add_reply_array_len(c, 1 + (long)res.n);
        add_reply_long_long(c, res.total);
    }
    for (size_t i = 0; i < res.n; i++) {
        const ft_row *row = &res.rows[i];
        if (c->resp >= 3) {
            add_reply_map_len(c, 2);
            add_reply_bulk_cstr(c, "extra_attributes");
        }
        add_reply_map_len(c, (long)row->n);
        for (size_t j = 0; j < row->n; j++) {
            add_reply_bulk_cstr(c, row->names[j]);
            reply_val(c, &row->vals[j]);
        }
        if (c->resp >= 3) {
            add_reply_bulk_cstr(c, "values");
            add_reply_array_len(c, 0);
        }
    }
    if (c->resp >= 3) resp3_tail(c, res.total);
    ft_agg_result_free(&res);
}
