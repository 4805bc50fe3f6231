/*
 * cmd_idx.c -- the IDX.* command handlers: argument parsing and replies.
 * The work is done by the index layer (src/index/index.h).
 *
 *   IDX.CREATE <index> PREFIX <prefix> [UNIQUE] SCHEMA <field> TAG|NUMERIC [DESC] ...
 *   IDX.RANGE <index> [EQ <value> ...] [MIN <bound>] [MAX <bound>] [REV]
 *             [LIMIT <offset> <count>] [HASHES | FIELDS <n> <field> ... | VALUES <n> <field> ...]
 *   IDX.DROP <index>     IDX.LIST     IDX.INFO <index>     IDX.CHECK
 *
 * EQ takes at most as many values as the index has fields and stops early at
 * the next option word (MIN, MAX, REV, LIMIT, HASHES, FIELDS, VALUES, EQ).
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

/* arg_is for a word known at compile time: the length decides most
 * mismatches before any case folding. Every IDX.RANGE tests each EQ value
 * and option against up to eight words. */
#define WORD_IS(a, w) ((a)->len == sizeof(w) - 1 && strncasecmp((a)->ptr, w, sizeof(w) - 1) == 0)

static int is_range_option(const arg *a)
{
    return WORD_IS(a, "eq") || WORD_IS(a, "min") || WORD_IS(a, "max") || WORD_IS(a, "rev") ||
           WORD_IS(a, "limit") || WORD_IS(a, "hashes") || WORD_IS(a, "fields") ||
           WORD_IS(a, "values");
}

/* What IDX.RANGE replies for each hit. */
enum { OUT_KEYS, OUT_HASHES, OUT_FIELDS, OUT_VALUES };

/* Parses IDX.RANGE's options into q and *out (eq and fields point into
 * c->argv). Returns 0, or -1 after replying the error. */
static int parse_range(client *c, idx_query *q, idx_str *eq, int nfields, int *out,
                       const arg **fields, long long *nf)
{
    int seen_eq = 0, seen_out = 0;
    q->count = -1;
    for (int i = 2; i < c->argc;) {
        const arg *a = &c->argv[i];
        int left = c->argc - i - 1;
        if (WORD_IS(a, "eq") && !seen_eq) {
            seen_eq = 1;
            for (i++; i < c->argc && (int)q->neq < nfields && !is_range_option(&c->argv[i]); i++)
                eq[q->neq++] = arg_str(&c->argv[i]);
            if (q->neq == 0) goto syntax;
        } else if (WORD_IS(a, "min") && !q->has_min && left >= 1) {
            q->has_min = 1, q->min = arg_str(&c->argv[i + 1]), i += 2;
        } else if (WORD_IS(a, "max") && !q->has_max && left >= 1) {
            q->has_max = 1, q->max = arg_str(&c->argv[i + 1]), i += 2;
        } else if (WORD_IS(a, "rev")) {
            q->rev = 1, i++;
        } else if (WORD_IS(a, "limit") && left >= 2) {
            if (arg_to_ll(c, &c->argv[i + 1], &q->offset) < 0) return -1;
            if (arg_to_ll(c, &c->argv[i + 2], &q->count) < 0) return -1;
            i += 3;
        } else if (WORD_IS(a, "hashes") && !seen_out) {
            seen_out = 1, *out = OUT_HASHES, i++;
        } else if ((WORD_IS(a, "fields") || WORD_IS(a, "values")) && !seen_out && left >= 2) {
            if (arg_to_ll(c, &c->argv[i + 1], nf) < 0) return -1;
            if (*nf < 1 || *nf > left - 1) goto syntax;
            seen_out = 1, *out = WORD_IS(a, "fields") ? OUT_FIELDS : OUT_VALUES;
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

typedef struct hash_reply {
    client *c;
    const idx_result *r;
    int out;              /* OUT_HASHES, OUT_FIELDS or OUT_VALUES */
    const arg *want;      /* FIELDS / VALUES: the requested fields ... */
    size_t nwant;         /* ... and their count */
    const ks_field **sel; /* nwant slots: the hash's pair of each, or NULL */
    ks_field *pairs;      /* FIELDS: the pairs found, in the requested order */
} hash_reply;

/* Points hr->sel[w] at the hash's pair named want[w], or NULL. The stored
 * order of a hash is usually the order its fields were written, and a
 * client asking for several fields usually names them in that order, so
 * the pair after the last one found is tried before a search. */
static void select_fields(hash_reply *hr, const ks_field *f, size_t n)
{
    size_t next = 0;
    for (size_t w = 0; w < hr->nwant; w++) {
        const arg *a = &hr->want[w];
        size_t j = next;
        if (j >= n || f[j].fl != a->len || memcmp(f[j].f, a->ptr, a->len) != 0)
            for (j = 0; j < n; j++)
                if (f[j].fl == a->len && memcmp(f[j].f, a->ptr, a->len) == 0) break;
        hr->sel[w] = j < n ? &f[j] : NULL;
        if (j < n) next = j + 1;
    }
}

/* One hit's key and hash (no fields when it is gone or is not a hash):
 * every pair (HASHES), the requested pairs that exist (FIELDS), or the
 * requested values with nulls for the missing ones (VALUES). */
static void stream_hash(void *arg, size_t i, ks_status st, const ks_field *f, size_t n)
{
    hash_reply *hr = arg;
    const idx_hit *h = &hr->r->hits[i];
    if (st != KS_OK) f = NULL, n = 0;
    if (hr->out == OUT_HASHES) {
        add_reply_keyed_hash(hr->c, h->key, h->klen, f, n);
        return;
    }
    select_fields(hr, f, n);
    if (hr->out == OUT_VALUES) {
        add_reply_keyed_values(hr->c, h->key, h->klen, hr->sel, hr->nwant);
        return;
    }
    size_t k = 0;
    for (size_t w = 0; w < hr->nwant; w++)
        if (hr->sel[w]) hr->pairs[k++] = *hr->sel[w];
    add_reply_keyed_hash(hr->c, h->key, h->klen, hr->pairs, k);
}

/* HASHES, FIELDS and VALUES: the hits' hashes are read together
 * (ks_hash_fields_many: one engine view, the keys' cache misses
 * overlapped, neighbouring keys' table block read once) and the reply
 * streams each straight from the engine's memory, key and hash in one
 * pass. idx_range has released its snapshot by then, but this is still the
 * view it read the entries in: one command thread runs commands, so
 * nothing wrote since, and the read goes through ctx->batch over the
 * latest data as idx_range does when the batch holds writes (inside EXEC).
 * A failed read takes back the partial reply, so the client gets the error
 * alone. */
static void reply_hashes(client *c, const idx_result *r, int out, const arg *want, size_t nwant)
{
    reply_mark mark;
    reply_mark_get(c, &mark);
    add_reply_map_len(c, (long)r->n);
    const char *stack_keys[128];
    size_t stack_lens[128];
    const ks_field *stack_sel[32];
    ks_field stack_pairs[32];
    const char **keys = r->n <= 128 ? stack_keys : malloc(r->n * sizeof(*keys));
    size_t *lens = r->n <= 128 ? stack_lens : malloc(r->n * sizeof(*lens));
    const ks_field **sel = nwant <= 32 ? stack_sel : malloc(nwant * sizeof(*sel));
    ks_field *pairs = nwant <= 32 ? stack_pairs : malloc(nwant * sizeof(*pairs));
    /* as the reply writer: out of memory is fatal */
    if (!keys || !lens || !sel || !pairs) abort();
    for (size_t i = 0; i < r->n; i++) {
        keys[i] = r->hits[i].key;
        lens[i] = r->hits[i].klen;
    }
    hash_reply hr = {c, r, out, want, nwant, sel, pairs};
    ks_status st = ks_hash_fields_many(client_ks(c), r->n, keys, lens, stream_hash, &hr);
    if (keys != stack_keys) free(keys);
    if (lens != stack_lens) free(lens);
    if (sel != stack_sel) free(sel);
    if (pairs != stack_pairs) free(pairs);
    if (st != KS_OK) {
        reply_truncate(c, &mark);
        add_reply_ks_error(c, st, client_ks(c));
    }
}

/* The hits' keys as one array, written in one pass (add_reply_hash's
 * REPLY_HASH_FIELDS over the keys as field names): the same bytes as an
 * array header and an add_reply_bulk per key, without a call and a
 * general length formatter per key. */
static void reply_keys(client *c, const idx_result *r)
{
    ks_field stack_keys[128];
    ks_field *k = r->n <= 128 ? stack_keys : malloc(r->n * sizeof(*k));
    if (!k) abort(); /* as the reply writer: out of memory is fatal */
    for (size_t i = 0; i < r->n; i++)
        k[i] = (ks_field){r->hits[i].key, r->hits[i].klen, NULL, 0};
    add_reply_hash(c, k, r->n, REPLY_HASH_FIELDS);
    if (k != stack_keys) free(k);
}

void cmd_idx_range(client *c)
{
    idx_str eq[IDX_MAX_SCHEMA];
    idx_query q = {.name = arg_str(&c->argv[1]), .eq = eq};
    const arg *fields = NULL;
    long long nf = 0;
    int out = OUT_KEYS;
    int nfields = idx_nfields(dbmap_stored(c->db), c->argv[1].ptr, c->argv[1].len);
    if (nfields < 0) {
        reply_no_such_index(c, &c->argv[1]);
        return;
    }
    if (acl_refuse_idx_query(c, &c->argv[1])) return;
    if (parse_range(c, &q, eq, nfields, &out, &fields, &nf) < 0) return;
    q.reply = IDX_REPLY_KEYS; /* the hashes are read by reply_hashes */
    idx_result r;
    ks_status st = idx_range(client_ks(c), &q, &r);
    if (st != KS_OK) {
        add_reply_ks_error(c, st, client_ks(c));
        return;
    }
    if (out != OUT_KEYS)
        reply_hashes(c, &r, out, fields, (size_t)nf);
    else
        reply_keys(c, &r);
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

void cmd_idx_list(client *c)
{
    reply_names rn;
    reply_names_begin(c, &rn);
    idx_list(dbmap_stored(c->db), reply_names_add, &rn);
    reply_names_end(&rn);
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
