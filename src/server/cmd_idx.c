/*
 * cmd_idx.c -- the IDX.* command handlers: argument parsing and replies.
 * The work is done by the index layer (src/index/index.h).
 *
 *   IDX.CREATE <index> PREFIX <prefix> [UNIQUE] SCHEMA <field> TAG|NUMERIC [DESC] ...
 *   IDX.RANGE <index> [EQ <value> ...] [MIN <bound>] [MAX <bound>] [REV]
 *             [LIMIT <offset> <count>] [HASHES | FIELDS <n> <field> ...]
 *   IDX.DROP <index>     IDX.LIST     IDX.INFO <index>     IDX.CHECK
 *
 * EQ takes at most as many values as the index has fields and stops early at
 * the next option word (MIN, MAX, REV, LIMIT, HASHES, FIELDS, EQ).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/index.h"
#include "server/reply.h"
#include "server/acl.h"
#include "server/server.h"

#define IDX_MAX_SCHEMA 16

static idx_str arg_str(const arg *a)
{
    return (idx_str){a->ptr, a->len};
}

/* A bounded copy of a user-supplied word for an error line: an error is one
 * RESP line, so CR, LF and other control bytes become '?'. */
static const char *err_word(const arg *a, char *buf, size_t cap)
{
    size_t n = a->len < cap - 1 ? a->len : cap - 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)a->ptr[i];
        buf[i] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
    }
    buf[n] = 0;
    return buf;
}

static void reply_no_such_index(client *c, const arg *name)
{
    char buf[201];
    const char *why = idx_quarantined_reason(dbmap_stored(c->db), name->ptr, name->len);
    if (why)
        add_reply_error_fmt(c,
                            "ERR index '%s' is quarantined: its stored definition cannot be "
                            "read (%s); IDX.DROP removes it",
                            err_word(name, buf, sizeof(buf)), why);
    else
        add_reply_error_fmt(c, "ERR no such index '%s'", err_word(name, buf, sizeof(buf)));
}

void cmd_idx_create(client *c)
{
    idx_field_spec fields[IDX_MAX_SCHEMA];
    idx_spec spec = {.name = arg_str(&c->argv[1]), .fields = fields};
    int i = 2;
    if (c->argc < 7 || !arg_is(&c->argv[i], "prefix")) goto syntax;
    spec.prefix = arg_str(&c->argv[i + 1]);
    i += 2;
    if (i < c->argc && arg_is(&c->argv[i], "unique")) spec.unique = 1, i++;
    if (i >= c->argc || !arg_is(&c->argv[i], "schema")) goto syntax;
    for (i++; i < c->argc;) {
        if (i + 1 >= c->argc) goto syntax;
        if (spec.nfields == IDX_MAX_SCHEMA) {
            add_reply_error_fmt(c, "ERR an index has at most %d fields", IDX_MAX_SCHEMA);
            return;
        }
        idx_field_spec *f = &fields[spec.nfields++];
        f->name = arg_str(&c->argv[i]);
        f->desc = 0;
        if (arg_is(&c->argv[i + 1], "numeric")) {
            f->numeric = 1;
        } else if (arg_is(&c->argv[i + 1], "tag")) {
            f->numeric = 0;
        } else {
            char buf[65];
            add_reply_error_fmt(c, "ERR unknown field type '%s' (TAG or NUMERIC)",
                                err_word(&c->argv[i + 1], buf, sizeof(buf)));
            return;
        }
        i += 2;
        if (i < c->argc && arg_is(&c->argv[i], "desc")) f->desc = 1, i++;
    }
    if (spec.nfields == 0) goto syntax;
    ks_status st = idx_create(client_ks(c), &spec);
    if (st != KS_OK) {
        add_reply_ks_error(c, st, client_ks(c));
        return;
    }
    add_reply_ok(c);
    return;
syntax:
    add_reply_error(c, ERR_SYNTAX);
}

static int is_range_option(const arg *a)
{
    static const char *words[] = {"eq", "min", "max", "rev", "limit", "hashes", "fields"};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (arg_is(a, words[i])) return 1;
    return 0;
}

/* Parses IDX.RANGE's options into q (eq and fields point into c->argv).
 * Returns 0, or -1 after replying the error. */
static int parse_range(client *c, idx_query *q, idx_str *eq, int nfields, const arg **fields,
                       long long *nf)
{
    int seen_eq = 0, seen_out = 0;
    q->count = -1;
    for (int i = 2; i < c->argc;) {
        const arg *a = &c->argv[i];
        int left = c->argc - i - 1;
        if (arg_is(a, "eq") && !seen_eq) {
            seen_eq = 1;
            for (i++; i < c->argc && (int)q->neq < nfields && !is_range_option(&c->argv[i]); i++)
                eq[q->neq++] = arg_str(&c->argv[i]);
            if (q->neq == 0) goto syntax;
        } else if (arg_is(a, "min") && !q->has_min && left >= 1) {
            q->has_min = 1, q->min = arg_str(&c->argv[i + 1]), i += 2;
        } else if (arg_is(a, "max") && !q->has_max && left >= 1) {
            q->has_max = 1, q->max = arg_str(&c->argv[i + 1]), i += 2;
        } else if (arg_is(a, "rev")) {
            q->rev = 1, i++;
        } else if (arg_is(a, "limit") && left >= 2) {
            if (arg_to_ll(c, &c->argv[i + 1], &q->offset) < 0) return -1;
            if (arg_to_ll(c, &c->argv[i + 2], &q->count) < 0) return -1;
            i += 3;
        } else if (arg_is(a, "hashes") && !seen_out) {
            seen_out = 1, q->reply = IDX_REPLY_HASHES, i++;
        } else if (arg_is(a, "fields") && !seen_out && left >= 2) {
            if (arg_to_ll(c, &c->argv[i + 1], nf) < 0) return -1;
            if (*nf < 1 || *nf > left - 1) goto syntax;
            seen_out = 1, q->reply = IDX_REPLY_FIELDS;
            *fields = &c->argv[i + 2];
            i += 2 + (int)*nf;
        } else {
            goto syntax;
        }
    }
    return 0;
syntax:
    add_reply_error(c, ERR_SYNTAX);
    return -1;
}

/* The fields of one hit: all of them, or the requested ones that exist. */
static void reply_fields(client *c, const idx_hit *h, const arg *want, long long nwant)
{
    if (!want) {
        add_reply_map_len(c, (long)h->nf);
        for (size_t j = 0; j < h->nf; j++) {
            add_reply_bulk(c, h->f[j].f, h->f[j].fl);
            add_reply_bulk(c, h->f[j].v, h->f[j].vl);
        }
        return;
    }
    void *len = add_reply_deferred_len(c);
    long n = 0;
    for (long long w = 0; w < nwant; w++) {
        for (size_t j = 0; j < h->nf; j++) {
            if (h->f[j].fl != want[w].len || memcmp(h->f[j].f, want[w].ptr, want[w].len) != 0)
                continue;
            add_reply_bulk(c, h->f[j].f, h->f[j].fl);
            add_reply_bulk(c, h->f[j].v, h->f[j].vl);
            n++;
            break;
        }
    }
    set_deferred_map_len(c, len, n);
}

typedef struct hash_reply {
    client *c;
    const idx_result *r;
} hash_reply;

/* One hit's key and hash (no fields when it is gone or is not a hash). */
static void stream_hash(void *arg, size_t i, ks_status st, const ks_field *f, size_t n)
{
    hash_reply *hr = arg;
    const idx_hit *h = &hr->r->hits[i];
    add_reply_keyed_hash(hr->c, h->key, h->klen, st == KS_OK ? f : NULL, st == KS_OK ? n : 0);
}

/* HASHES: the hits' hashes are read together (ks_hash_fields_many: one
 * engine view, the keys' cache misses overlapped, neighbouring keys' table
 * block read once) and the reply streams each straight from the engine's
 * memory, key and hash in one pass. idx_range has released its snapshot by
 * then, but this is still the view it read the entries in: one command
 * thread runs commands, so nothing wrote since, and the read goes through
 * ctx->batch over the latest data as idx_range does when the batch holds
 * writes (inside EXEC). A failed read takes back the partial reply, so the
 * client gets the error alone. */
static void reply_hashes(client *c, const idx_result *r)
{
    reply_mark mark;
    reply_mark_get(c, &mark);
    add_reply_map_len(c, (long)r->n);
    const char *stack_keys[128];
    size_t stack_lens[128];
    const char **keys = r->n <= 128 ? stack_keys : malloc(r->n * sizeof(*keys));
    size_t *lens = r->n <= 128 ? stack_lens : malloc(r->n * sizeof(*lens));
    if (!keys || !lens) abort(); /* as the reply writer: out of memory is fatal */
    for (size_t i = 0; i < r->n; i++) {
        keys[i] = r->hits[i].key;
        lens[i] = r->hits[i].klen;
    }
    hash_reply hr = {c, r};
    ks_status st = ks_hash_fields_many(client_ks(c), r->n, keys, lens, stream_hash, &hr);
    if (keys != stack_keys) free(keys);
    if (lens != stack_lens) free(lens);
    if (st != KS_OK) {
        reply_truncate(c, &mark);
        add_reply_ks_error(c, st, client_ks(c));
    }
}

void cmd_idx_range(client *c)
{
    idx_str eq[IDX_MAX_SCHEMA];
    idx_query q = {.name = arg_str(&c->argv[1]), .eq = eq};
    const arg *fields = NULL;
    long long nf = 0;
    int nfields = idx_nfields(dbmap_stored(c->db), c->argv[1].ptr, c->argv[1].len);
    if (nfields < 0) {
        reply_no_such_index(c, &c->argv[1]);
        return;
    }
    if (acl_refuse_idx_query(c, &c->argv[1])) return;
    if (parse_range(c, &q, eq, nfields, &fields, &nf) < 0) return;
    int hashes = q.reply == IDX_REPLY_HASHES;
    if (hashes) q.reply = IDX_REPLY_KEYS; /* the hashes are read by reply_hashes */
    idx_result r;
    ks_status st = idx_range(client_ks(c), &q, &r);
    if (st != KS_OK) {
        add_reply_ks_error(c, st, client_ks(c));
        return;
    }
    if (hashes) {
        reply_hashes(c, &r);
    } else if (q.reply == IDX_REPLY_KEYS) {
        add_reply_array_len(c, (long)r.n);
        for (size_t i = 0; i < r.n; i++)
            add_reply_bulk(c, r.hits[i].key, r.hits[i].klen);
    } else {
        add_reply_map_len(c, (long)r.n);
        for (size_t i = 0; i < r.n; i++) {
            add_reply_bulk(c, r.hits[i].key, r.hits[i].klen);
            reply_fields(c, &r.hits[i], q.reply == IDX_REPLY_FIELDS ? fields : NULL, nf);
        }
    }
    idx_result_free(&r);
}

void cmd_idx_drop(client *c)
{
    ks_status st = idx_drop(client_ks(c), c->argv[1].ptr, c->argv[1].len);
    if (st == KS_NOTFOUND)
        reply_no_such_index(c, &c->argv[1]);
    else if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else
        add_reply_ok(c);
}

typedef struct list_acc {
    client *c;
    long n;
} list_acc;

static void list_one(void *arg, const char *name, size_t nlen)
{
    list_acc *acc = arg;
    add_reply_bulk(acc->c, name, nlen);
    acc->n++;
}

void cmd_idx_list(client *c)
{
    list_acc acc = {c, 0};
    void *len = add_reply_deferred_len(c);
    idx_list(dbmap_stored(c->db), list_one, &acc);
    set_deferred_array_len(c, len, acc.n);
}

void cmd_idx_info(client *c)
{
    idx_desc d;
    ks_status st = idx_describe(client_ks(c), c->argv[1].ptr, c->argv[1].len, &d);
    if (st == KS_NOTFOUND) {
        reply_no_such_index(c, &c->argv[1]);
        return;
    }
    if (st != KS_OK) {
        add_reply_ks_error(c, st, client_ks(c));
        return;
    }
    add_reply_map_len(c, d.building ? 7 : 8); /* entries are counted once ready */
    add_reply_bulk_cstr(c, "name");
    add_reply_bulk(c, d.name.p, d.name.n);
    add_reply_bulk_cstr(c, "prefix");
    add_reply_bulk(c, d.prefix.p, d.prefix.n);
    add_reply_bulk_cstr(c, "unique");
    add_reply_long_long(c, d.unique);
    add_reply_bulk_cstr(c, "schema");
    add_reply_array_len(c, (long)d.nfields);
    for (size_t i = 0; i < d.nfields; i++) {
        add_reply_array_len(c, 3);
        add_reply_bulk(c, d.fields[i].name.p, d.fields[i].name.n);
        add_reply_bulk_cstr(c, d.fields[i].numeric ? "NUMERIC" : "TAG");
        add_reply_bulk_cstr(c, d.fields[i].desc ? "DESC" : "ASC");
    }
    add_reply_bulk_cstr(c, "state");
    add_reply_bulk_cstr(c, d.building ? "building" : "ready");
    add_reply_bulk_cstr(c, "progress");
    char pct[32];
    snprintf(pct, sizeof(pct), "%.1f%%", d.progress);
    add_reply_bulk_cstr(c, pct);
    add_reply_bulk_cstr(c, "hashes_scanned");
    add_reply_long_long(c, (long long)d.scanned);
    if (!d.building) {
        add_reply_bulk_cstr(c, "num_entries");
        add_reply_long_long(c, (long long)d.entries);
    }
}

typedef struct check_acc {
    client *c;
    long n;
} check_acc;

static void check_line(void *arg, const char *line)
{
    check_acc *acc = arg;
    add_reply_bulk_cstr(acc->c, line);
    acc->n++;
}

/* Replies an array of problem lines, empty when every index agrees with the
 * hashes. An engine failure midway still closes the array; its last line
 * says what failed. */
void cmd_idx_check(client *c)
{
    check_acc acc = {c, 0};
    void *len = add_reply_deferred_len(c);
    if (idx_check(client_ks(c), check_line, &acc) < 0)
        check_line(&acc, client_ks(c)->err ? client_ks(c)->err : "ERR index check failed");
    set_deferred_array_len(c, len, acc.n);
}
