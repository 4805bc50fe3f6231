/*
 * cmd_bitmap.c -- SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and
 * BITFIELD_RO. Argument parsing, checking order and error texts are
 * Redis 7.0's (bitops.c); the bit work is in src/keyspace/ks_bitops.c
 * (ks_bits.h), on strings read with ks_get (GETBIT: ks_get_part) or
 * opened ranged for a change (ks_str_open_ranged / ks_str_write): one
 * engine read and at most one write per command, of the record and, on a
 * chunked string, of the chunks the bits fall in (BITOP: one read per
 * source, one write).
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_bits.h"
#include "server/config.h"
#include "server/server.h"

#define ERR_BIT_OFFSET "bit offset is not an integer or out of range"
#define ERR_BIT_VALUE "bit is not an integer or out of range"
#define ERR_BF_TYPE                                                                                \
    "Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
#define ERR_OOM "ERR out of memory"

/* A bit offset below proto-max-bulk-len * 8; with hash and bits > 0 also
 * "#n", meaning n * bits (BITFIELD). Replies and returns -1 when bad. */
static int bit_offset_arg(client *c, const arg *a, int hash, int bits, uint64_t *off)
{
    int usehash = hash && bits > 0 && a->ptr[0] == '#';
    long long v;
    if (!ks_string2ll(a->ptr + usehash, a->len - (size_t)usehash, &v)) goto bad;
    if (usehash) v = (long long)((unsigned long long)v * (unsigned long long)bits);
    if (v < 0 || (v >> 3) >= cfg.proto_max_bulk_len) goto bad;
    *off = (uint64_t)v;
    return 0;
bad:
    add_reply_error(c, ERR_BIT_OFFSET);
    return -1;
}

/* BIT or BYTE: *isbit. Replies a syntax error and returns -1 otherwise. */
static int bit_unit_arg(client *c, const arg *a, int *isbit)
{
    if (arg_is(a, "bit") || arg_is(a, "byte")) {
        *isbit = arg_is(a, "bit");
        return 0;
    }
    add_reply_error(c, ERR_SYNTAX);
    return -1;
}

void cmd_setbit(client *c)
{
    uint64_t off;
    long long on;
    if (bit_offset_arg(c, &c->argv[2], 0, 0, &off) < 0) return;
    if (!ks_string2ll(c->argv[3].ptr, c->argv[3].len, &on) || (on & ~1)) {
        add_reply_error(c, ERR_BIT_VALUE);
        return;
    }
    ks_ctx *k = client_ks(c);
    ks_str s;
    int old = 0;
    /* Ranged: on a chunked bitmap only the chunk of the bit is read. */
    ks_status st = ks_str_open_ranged(k, c->argv[1].ptr, c->argv[1].len, &s);
    unsigned char b;
    if (st == KS_OK) st = ks_str_read(&s, off >> 3, &b, 1);
    if (st == KS_OK) {
        /* A new key, a longer string or a flipped bit is a write. */
        int grow = ks_str_len(&s) <= off >> 3;
        old = ks_bit_get(&b, 1, off & 7);
        ks_bit_set(&b, off & 7, (int)on);
        if (grow || old != on) {
            st = ks_str_update(&s, off >> 3, &b, 1);
            if (st == KS_OK) st = ks_str_write(&s);
            if (st == KS_OK) notify_arg(c, NOTIFY_STRING, "setbit", 1);
        }
    }
    ks_str_close(&s);
    if (st == KS_OK)
        add_reply_long_long(c, old);
    else
        add_reply_ks_error(c, st, k);
}

void cmd_getbit(client *c)
{
    uint64_t off;
    if (bit_offset_arg(c, &c->argv[2], 0, 0, &off) < 0) return;
    unsigned char b;
    uint64_t len;
    ks_status st =
        ks_get_part(client_ks(c), c->argv[1].ptr, c->argv[1].len, off >> 3, (char *)&b, 1, &len);
    if (st == KS_OK || st == KS_NOTFOUND)
        add_reply_long_long(c, ks_bit_get(&b, 1, off & 7));
    else
        add_reply_ks_error(c, st, client_ks(c));
}

/* Reads the string at argv[1] for BITCOUNT / BITPOS. Returns 1 with *v
 * set, or 0 when the reply is already made (missing key: missing_reply). */
static int read_bitmap(client *c, ks_val *v, long long missing_reply)
{
    ks_status st = ks_get(client_ks(c), c->argv[1].ptr, c->argv[1].len, v);
    if (st == KS_OK) return 1;
    if (st == KS_NOTFOUND)
        add_reply_long_long(c, missing_reply);
    else
        add_reply_ks_error(c, st, client_ks(c));
    return 0;
}

void cmd_bitcount(client *c)
{
    ks_val v;
    ks_bit_range r = {0};
    /* As Redis: the key first (a missing key is 0 whatever the range). */
    if (!read_bitmap(c, &v, 0)) return;
    if (c->argc == 4 || c->argc == 5) {
        if (arg_to_ll(c, &c->argv[2], &r.start) < 0 || arg_to_ll(c, &c->argv[3], &r.end) < 0)
            goto out;
        if (r.start < 0 && r.end < 0 && r.start > r.end) {
            add_reply_long_long(c, 0);
            goto out;
        }
        if (c->argc == 5 && bit_unit_arg(c, &c->argv[4], &r.isbit) < 0) goto out;
        r.has_range = r.end_given = 1;
    } else if (c->argc != 2) {
        add_reply_error(c, ERR_SYNTAX);
        goto out;
    }
    add_reply_long_long(c, (long long)ks_bitcount((const unsigned char *)v.p, v.n, &r));
out:
    ks_val_free(&v);
}

void cmd_bitpos(client *c)
{
    long long bit;
    ks_val v;
    ks_bit_range r = {0};
    if (arg_to_ll(c, &c->argv[2], &bit) < 0) return;
    if (bit != 0 && bit != 1) {
        add_reply_error(c, "The bit argument must be 1 or 0.");
        return;
    }
    /* A missing key is an endless run of zeros. */
    if (!read_bitmap(c, &v, bit ? -1 : 0)) return;
    if (c->argc >= 4 && c->argc <= 6) {
        if (arg_to_ll(c, &c->argv[3], &r.start) < 0) goto out;
        if (c->argc == 6 && bit_unit_arg(c, &c->argv[5], &r.isbit) < 0) goto out;
        if (c->argc >= 5 && arg_to_ll(c, &c->argv[4], &r.end) < 0) goto out;
        r.has_range = 1;
        r.end_given = c->argc >= 5;
    } else if (c->argc != 3) {
        add_reply_error(c, ERR_SYNTAX);
        goto out;
    }
    add_reply_long_long(c, ks_bitpos((const unsigned char *)v.p, v.n, (int)bit, &r));
out:
    ks_val_free(&v);
}

void cmd_bitop(client *c)
{
    static const char *names[] = {"and", "or", "xor", "not"};
    int op = -1;
    for (int i = 0; i < 4 && op < 0; i++)
        if (arg_is(&c->argv[1], names[i])) op = i;
    if (op < 0) {
        add_reply_error(c, ERR_SYNTAX);
        return;
    }
    if (op == KS_BITOP_NOT && c->argc != 4) {
        add_reply_error(c, "BITOP NOT must be called with a single source key.");
        return;
    }
    ks_ctx *k = client_ks(c);
    size_t n = (size_t)c->argc - 3, maxlen = 0;
    ks_val *v = calloc(n, sizeof(*v));
    const unsigned char **src = calloc(n, sizeof(*src));
    size_t *len = calloc(n, sizeof(*len));
    unsigned char *out = NULL;
    ks_status st = v && src && len ? KS_OK : ks_oom(k);
    for (size_t j = 0; j < n && st == KS_OK; j++) {
        st = ks_get(k, c->argv[3 + j].ptr, c->argv[3 + j].len, &v[j]);
        if (st == KS_NOTFOUND) st = KS_OK; /* a missing key is an empty string */
        src[j] = (const unsigned char *)v[j].p;
        len[j] = v[j].n;
        if (v[j].n > maxlen) maxlen = v[j].n;
    }
    if (st == KS_OK && maxlen && !(out = malloc(maxlen))) st = ks_oom(k);
    if (st == KS_OK && maxlen) {
        ks_bitop((ks_bitop_kind)op, src, len, n, out, maxlen);
        ks_set_opts o = {.raw = 1}; /* as SET: replaces any type, clears the TTL */
        int done;
        st = ks_set(k, c->argv[2].ptr, c->argv[2].len, (const char *)out, maxlen, &o, &done, NULL);
        if (st == KS_OK) notify_arg(c, NOTIFY_STRING, "set", 2);
    } else if (st == KS_OK) {
        int deleted;
        st = ks_del(k, c->argv[2].ptr, c->argv[2].len, &deleted);
        if (st == KS_OK && deleted) notify_arg(c, NOTIFY_GENERIC, "del", 2);
    }
    for (size_t j = 0; v && j < n; j++)
        ks_val_free(&v[j]);
    free(v);
    free(src);
    free(len);
    free(out);
    if (st == KS_OK)
        add_reply_long_long(c, (long long)maxlen);
    else
        add_reply_ks_error(c, st, k);
}

/* ---- BITFIELD ----------------------------------------------------------- */

/* Parses i<1..64> or u<1..63>. Replies and returns -1 when bad. */
static int bf_type_arg(client *c, const arg *a, int *sign, int *bits)
{
    long long b;
    *sign = a->ptr[0] == 'i';
    if ((a->ptr[0] != 'i' && a->ptr[0] != 'u') ||
        !ks_string2ll(a->ptr + 1, strlen(a->ptr + 1), &b) || b < 1 || b > (*sign ? 64 : 63)) {
        add_reply_error(c, ERR_BF_TYPE);
        return -1;
    }
    *bits = (int)b;
    return 0;
}

/* Parses the subcommands from argv[2] into ops (malloc'd, c->argc of
 * room). *writes = 1 when some op is not GET; *top is then the highest
 * bit they write. Replies and returns -1 on an error. */
static int bf_parse(client *c, ks_bf_op *ops, int *nops, int *writes, uint64_t *top)
{
    int overflow = KS_BF_WRAP;
    *nops = *writes = 0;
    *top = 0;
    for (int j = 2; j < c->argc; j++) {
        int rem = c->argc - j - 1;
        const arg *a = &c->argv[j];
        ks_bf_op op = {0};
        if (arg_is(a, "get") && rem >= 2) {
            op.opcode = KS_BF_GET;
        } else if (arg_is(a, "set") && rem >= 3) {
            op.opcode = KS_BF_SET;
        } else if (arg_is(a, "incrby") && rem >= 3) {
            op.opcode = KS_BF_INCRBY;
        } else if (arg_is(a, "overflow") && rem >= 1) {
            const arg *t = &c->argv[++j];
            overflow = arg_is(t, "wrap")   ? KS_BF_WRAP
                       : arg_is(t, "sat")  ? KS_BF_SAT
                       : arg_is(t, "fail") ? KS_BF_FAIL
                                           : -1;
            if (overflow < 0) {
                add_reply_error(c, "Invalid OVERFLOW type specified");
                return -1;
            }
            continue;
        } else {
            add_reply_error(c, ERR_SYNTAX);
            return -1;
        }
        if (bf_type_arg(c, &c->argv[j + 1], &op.sign, &op.bits) < 0) return -1;
        if (bit_offset_arg(c, &c->argv[j + 2], 1, op.bits, &op.off) < 0) return -1;
        if (op.opcode != KS_BF_GET) {
            long long v;
            *writes = 1;
            if (op.off + (uint64_t)op.bits - 1 > *top) *top = op.off + (uint64_t)op.bits - 1;
            if (arg_to_ll(c, &c->argv[j + 3], &v) < 0) return -1;
            op.arg = v;
        }
        op.overflow = overflow;
        ops[(*nops)++] = op;
        j += op.opcode == KS_BF_GET ? 2 : 3;
    }
    return 0;
}

/* The outcome of each op: its reply value, or nil (OVERFLOW FAIL). */
typedef struct bf_result {
    long long v;
    int nil;
} bf_result;

/* Runs ops on p[0..n) into res; returns 1 when the bytes changed. */
static int bf_run(unsigned char *p, size_t n, const ks_bf_op *ops, int nops, bf_result *res)
{
    int changed = 0;
    for (int i = 0; i < nops; i++) {
        int ch;
        res[i].nil = !ks_bf_apply(p, n, &ops[i], &res[i].v, &ch);
        changed |= ch;
    }
    return changed;
}

static void bf_reply(client *c, const bf_result *res, int nops)
{
    add_reply_array_len(c, nops);
    for (int i = 0; i < nops; i++) {
        if (res[i].nil)
            add_reply_null(c);
        else
            add_reply_long_long(c, res[i].v);
    }
}

/* One op with a write on s: its bytes (at most 9) read, changed and
 * written back when they changed. */
static ks_status bf_apply_at(ks_str *s, const ks_bf_op *op, bf_result *res, int *changed)
{
    unsigned char b[9];
    uint64_t w0 = op->off >> 3;
    size_t n = (size_t)(((op->off + (uint64_t)op->bits - 1) >> 3) - w0 + 1);
    ks_bf_op lop = *op;
    lop.off -= w0 * 8;
    int ch = 0;
    ks_status st = ks_str_read(s, w0, b, n);
    if (st == KS_OK) res->nil = !ks_bf_apply(b, n, &lop, &res->v, &ch);
    if (st == KS_OK && ch) st = ks_str_update(s, w0, b, n);
    *changed |= ch;
    return st;
}

/* The ops with a write: the string grows to hold the highest bit written
 * (creating the key), and is written back when it grew or changed. Ranged:
 * on a chunked string only the chunks of the fields are read. */
static ks_status bf_write(ks_ctx *k, const arg *key, const ks_bf_op *ops, int nops, uint64_t top,
                          bf_result *res, int *written)
{
    ks_str s;
    unsigned char zero = 0;
    ks_status st = ks_str_open_ranged(k, key->ptr, key->len, &s);
    int grow = st == KS_OK && ks_str_len(&s) <= top >> 3, changed = 0;
    if (grow) st = ks_str_update(&s, top >> 3, &zero, 1);
    for (int i = 0; i < nops && st == KS_OK; i++)
        st = bf_apply_at(&s, &ops[i], &res[i], &changed);
    *written = 0;
    if (st == KS_OK && (changed || grow)) {
        st = ks_str_write(&s);
        *written = st == KS_OK; /* Redis's "changes": a value changed, or the string grew */
    }
    ks_str_close(&s);
    return st;
}

static void bitfield_generic(client *c, int ro)
{
    ks_ctx *k = client_ks(c);
    ks_bf_op *ops = malloc((size_t)c->argc * sizeof(*ops));
    bf_result *res = malloc((size_t)c->argc * sizeof(*res));
    int nops, writes;
    uint64_t top;
    ks_status st = KS_OK;
    if (!ops || !res) {
        add_reply_error(c, ERR_OOM);
    } else if (bf_parse(c, ops, &nops, &writes, &top) == 0) {
        if (!writes) { /* GETs only: a plain read */
            ks_val v;
            st = ks_get(k, c->argv[1].ptr, c->argv[1].len, &v);
            if (st == KS_OK || st == KS_NOTFOUND) {
                bf_run((unsigned char *)v.p, v.n, ops, nops, res);
                st = KS_OK;
            }
            ks_val_free(&v);
        } else if (ro) {
            add_reply_error(c, "BITFIELD_RO only supports the GET subcommand");
            nops = -1;
        } else {
            int written;
            st = bf_write(k, &c->argv[1], ops, nops, top, res, &written);
            if (written) notify_arg(c, NOTIFY_STRING, "setbit", 1);
        }
        if (st != KS_OK)
            add_reply_ks_error(c, st, k);
        else if (nops >= 0)
            bf_reply(c, res, nops);
    }
    free(ops);
    free(res);
}

void cmd_bitfield(client *c)
{
    bitfield_generic(c, 0);
}

void cmd_bitfield_ro(client *c)
{
    bitfield_generic(c, 1);
}
