/*
 * function_dump.c -- FUNCTION DUMP and FUNCTION RESTORE, with Redis 7.0's
 * payload, so a payload moves between strata and redis-server both ways.
 *
 * Payload grammar (Redis's RDB pieces, little-endian footer):
 *   payload  = { 0xF5 rdbstring }* rdbver:u16le crc:u64le
 *   rdbstring = len raw-bytes | 0xC0 i8 | 0xC1 i16le | 0xC2 i32le
 *             | 0xC3 clen:len ulen:len lzf-bytes[clen]
 *   len      = 00xxxxxx | 01xxxxxx xxxxxxxx | 0x80 u32be | 0x81 u64be
 * Each string is a library's whole source. 0xF6 (7.0 release candidates:
 * name, engine, has-description len, [description], body) is read too.
 * crc is CRC-64/Jones (reflected, polynomial 0xad93d23594c935a9, init 0)
 * over everything before it; rdbver must be at most 10. DUMP writes plain
 * strings, no compression.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/function.h"

#define OP_FUNCTION2 0xF5
#define OP_FUNCTION_RC 0xF6
#define RDB_VERSION 10

static uint64_t crc64(const unsigned char *p, size_t n)
{
    uint64_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ ((crc & 1) ? 0x95AC9329AC4BC9B5ULL : 0);
    }
    return crc;
}

typedef struct buf {
    unsigned char *p;
    size_t n, cap;
} buf;

static void put(buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void put_len(buf *b, uint64_t len)
{
    unsigned char h[9];
    if (len < 64) {
        h[0] = (unsigned char)len;
        put(b, h, 1);
    } else if (len < 16384) {
        h[0] = (unsigned char)(0x40 | (len >> 8));
        h[1] = (unsigned char)len;
        put(b, h, 2);
    } else if (len <= 0xFFFFFFFFULL) {
        h[0] = 0x80;
        for (int i = 0; i < 4; i++)
            h[1 + i] = (unsigned char)(len >> (24 - 8 * i));
        put(b, h, 5);
    } else {
        h[0] = 0x81;
        for (int i = 0; i < 8; i++)
            h[1 + i] = (unsigned char)(len >> (56 - 8 * i));
        put(b, h, 9);
    }
}

void function_dump_cmd(client *c)
{
    buf b = {NULL, 0, 0};
    size_t n;
    fn_lib **libs = function_libs(&n);
    for (size_t i = 0; i < n; i++) {
        unsigned char op = OP_FUNCTION2;
        put(&b, &op, 1);
        put_len(&b, libs[i]->code_len);
        put(&b, libs[i]->code, libs[i]->code_len);
    }
    unsigned char foot[10] = {RDB_VERSION & 0xff, RDB_VERSION >> 8};
    put(&b, foot, 2);
    uint64_t crc = crc64(b.p, b.n);
    for (int i = 0; i < 8; i++)
        foot[2 + i] = (unsigned char)(crc >> (8 * i));
    put(&b, foot + 2, 8);
    add_reply_bulk(c, (const char *)b.p, b.n);
    free(b.p);
}

/* ---- Reading ----------------------------------------------------------------- */

typedef struct rd {
    const unsigned char *p, *end;
} rd;

/* Returns 0 with *len, or -1; *enc is set (to the encoding) for 11xxxxxx. */
static int get_len(rd *r, uint64_t *len, int *enc)
{
    *enc = -1;
    if (r->p >= r->end) return -1;
    unsigned char b0 = *r->p++;
    int type = b0 >> 6;
    if (type == 0) {
        *len = b0 & 0x3f;
    } else if (type == 1) {
        if (r->p >= r->end) return -1;
        *len = ((uint64_t)(b0 & 0x3f) << 8) | *r->p++;
    } else if (type == 3) {
        *enc = b0 & 0x3f;
        *len = 0;
    } else {
        int k = b0 == 0x80 ? 4 : b0 == 0x81 ? 8 : 0;
        if (!k || r->end - r->p < k) return -1;
        uint64_t v = 0;
        for (int i = 0; i < k; i++)
            v = (v << 8) | *r->p++;
        *len = v;
    }
    return 0;
}

/* LZF: literal runs (ctrl < 32: ctrl+1 bytes) and back references. */
static int lzf_decompress(const unsigned char *in, size_t inl, char *out, size_t outl)
{
    const unsigned char *ip = in, *iend = in + inl;
    char *op = out, *oend = out + outl;
    while (ip < iend) {
        unsigned ctrl = *ip++;
        if (ctrl < 32) {
            ctrl++;
            if ((size_t)(oend - op) < ctrl || (size_t)(iend - ip) < ctrl) return -1;
            memcpy(op, ip, ctrl);
            op += ctrl;
            ip += ctrl;
        } else {
            unsigned len = ctrl >> 5;
            if (len == 7) {
                if (ip >= iend) return -1;
                len += *ip++;
            }
            if (ip >= iend) return -1;
            size_t back = ((ctrl & 0x1f) << 8) + *ip++ + 1;
            len += 2;
            if ((size_t)(op - out) < back || (size_t)(oend - op) < len) return -1;
            for (unsigned i = 0; i < len; i++, op++)
                *op = op[-(ptrdiff_t)back];
        }
    }
    return op == oend ? 0 : -1;
}

/* One string: malloc'd into *s (*n bytes). Returns 0 or -1. */
static int get_string(rd *r, char **s, size_t *n)
{
    uint64_t len;
    int enc;
    *s = NULL;
    if (get_len(r, &len, &enc) < 0) return -1;
    if (enc >= 0 && enc <= 2) {
        int k = 1 << enc;
        if (r->end - r->p < k) return -1;
        int64_t v = enc == 0   ? (int8_t)r->p[0]
                    : enc == 1 ? (int16_t)(r->p[0] | r->p[1] << 8)
                               : (int32_t)((uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 |
                                           (uint32_t)r->p[2] << 16 | (uint32_t)r->p[3] << 24);
        r->p += k;
        *s = malloc(24);
        if (!*s) return -1;
        *n = (size_t)snprintf(*s, 24, "%lld", (long long)v);
        return 0;
    }
    if (enc == 3) {
        uint64_t clen, ulen;
        int e2;
        if (get_len(r, &clen, &e2) < 0 || e2 >= 0 || get_len(r, &ulen, &e2) < 0 || e2 >= 0)
            return -1;
        if (clen > (uint64_t)(r->end - r->p) || ulen > (1ULL << 32)) return -1;
        *s = malloc(ulen ? ulen : 1);
        if (!*s || lzf_decompress(r->p, clen, *s, ulen) < 0) return free(*s), *s = NULL, -1;
        r->p += clen;
        *n = ulen;
        return 0;
    }
    if (enc >= 0 || len > (uint64_t)(r->end - r->p)) return -1;
    *s = malloc(len ? len : 1);
    if (!*s) return -1;
    memcpy(*s, r->p, len);
    r->p += len;
    *n = len;
    return 0;
}

/* A 7.0-rc library record into "#!<engine> name=<name>\n<body>". */
static int get_rc_library(rd *r, char **code, size_t *n)
{
    char *name = NULL, *engine = NULL, *desc = NULL, *body = NULL;
    size_t nl, el, dl, bl;
    uint64_t has_desc;
    int enc, rc = -1;
    if (get_string(r, &name, &nl) < 0 || get_string(r, &engine, &el) < 0 ||
        get_len(r, &has_desc, &enc) < 0 || enc >= 0 ||
        (has_desc && get_string(r, &desc, &dl) < 0) || get_string(r, &body, &bl) < 0)
        goto done;
    *n = 2 + el + 6 + nl + 1 + bl;
    *code = malloc(*n + 1);
    if (!*code) goto done;
    snprintf(*code, *n + 1, "#!%.*s name=%.*s\n", (int)el, engine, (int)nl, name);
    memcpy(*code + *n - bl, body, bl);
    rc = 0;
done:
    free(name);
    free(engine);
    free(desc);
    free(body);
    return rc;
}

typedef struct pending {
    char **code;
    size_t *len;
    int n, cap;
} pending;

static void pending_free(pending *p)
{
    for (int i = 0; i < p->n; i++)
        free(p->code[i]);
    free(p->code);
    free(p->len);
}

/* Parses every library of the payload into p. Returns NULL or the error. */
static const char *parse_payload(const unsigned char *data, size_t n, pending *p)
{
    if (n < 10) return "payload version or checksum are wrong";
    unsigned ver = data[n - 10] | (unsigned)data[n - 9] << 8;
    uint64_t want = 0;
    for (int i = 0; i < 8; i++)
        want |= (uint64_t)data[n - 8 + i] << (8 * i);
    if (ver > RDB_VERSION || crc64(data, n - 8) != want)
        return "payload version or checksum are wrong";
    rd r = {data, data + n - 10};
    while (r.p < r.end) {
        unsigned char op = *r.p++;
        if (op != OP_FUNCTION2 && op != OP_FUNCTION_RC) return "given type is not a function";
        char *code;
        size_t len;
        int bad =
            op == OP_FUNCTION2 ? get_string(&r, &code, &len) : get_rc_library(&r, &code, &len);
        if (bad < 0) return "failed loading the given functions payload";
        if (p->n == p->cap) {
            p->cap = p->cap ? p->cap * 2 : 4;
            p->code = realloc(p->code, (size_t)p->cap * sizeof(char *));
            p->len = realloc(p->len, (size_t)p->cap * sizeof(size_t));
            if (!p->code || !p->len) abort();
        }
        p->code[p->n] = code;
        p->len[p->n++] = len;
    }
    return NULL;
}

enum { POLICY_APPEND, POLICY_REPLACE, POLICY_FLUSH };

void function_restore_cmd(client *c)
{
    if (c->argc > 4) {
        add_reply_error_fmt(c,
                            "unknown subcommand or wrong number of arguments for '%s'. Try "
                            "FUNCTION HELP.",
                            c->argv[1].ptr);
        return;
    }
    int policy = POLICY_APPEND;
    if (c->argc == 4) {
        if (arg_is(&c->argv[3], "append"))
            policy = POLICY_APPEND;
        else if (arg_is(&c->argv[3], "replace"))
            policy = POLICY_REPLACE;
        else if (arg_is(&c->argv[3], "flush"))
            policy = POLICY_FLUSH;
        else {
            add_reply_error(c, "Wrong restore policy given, value should be either FLUSH, APPEND "
                               "or REPLACE.");
            return;
        }
    }
    pending p = {NULL, NULL, 0, 0};
    const char *why = parse_payload((const unsigned char *)c->argv[2].ptr, c->argv[2].len, &p);
    if (why) {
        add_reply_error(c, strcmp(why, "payload version or checksum are wrong") == 0
                               ? "DUMP payload version or checksum are wrong"
                               : why);
        pending_free(&p);
        return;
    }
    char *err = NULL;
    if (function_restore_libraries(c, p.code, p.len, p.n, policy == POLICY_FLUSH,
                                   policy == POLICY_REPLACE, &err) < 0) {
        add_reply_error(c, err ? err : "failed loading the given functions payload");
        free(err);
    } else {
        add_reply_ok(c);
    }
    pending_free(&p);
}
