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
 * strings, no compression. The RDB pieces are the keyspace's (ks_rdb.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_rdb.h"
#include "server/function.h"

#define OP_FUNCTION2 0xF5
#define OP_FUNCTION_RC 0xF6

void function_dump_cmd(client *c)
{
    ks_rdb_out b = {NULL, 0, 0, 0};
    size_t n;
    fn_lib **libs = function_libs(&n);
    for (size_t i = 0; i < n; i++) {
        ks_rdb_put_byte(&b, OP_FUNCTION2);
        ks_rdb_put_len(&b, libs[i]->code_len);
        ks_rdb_put(&b, libs[i]->code, libs[i]->code_len);
    }
    ks_rdb_put_footer(&b);
    if (b.oom)
        add_reply_error(c, "ERR out of memory");
    else
        add_reply_bulk(c, (const char *)b.p, b.n);
    free(b.p);
}

/* ---- Reading ----------------------------------------------------------------- */

/* A 7.0-rc library record into "#!<engine> name=<name>\n<body>". */
static int get_rc_library(ks_rdb_in *r, char **code, size_t *n)
{
    char *name = NULL, *engine = NULL, *desc = NULL, *body = NULL;
    size_t nl, el, dl, bl;
    uint64_t has_desc;
    int rc = -1;
    if (ks_rdb_get_string(r, &name, &nl) < 0 || ks_rdb_get_string(r, &engine, &el) < 0 ||
        ks_rdb_get_count(r, &has_desc) < 0 || (has_desc && ks_rdb_get_string(r, &desc, &dl) < 0) ||
        ks_rdb_get_string(r, &body, &bl) < 0)
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
    ks_rdb_in r;
    if (ks_rdb_open(data, n, &r) < 0) return "payload version or checksum are wrong";
    while (r.p < r.end) {
        unsigned char op = *r.p++;
        if (op != OP_FUNCTION2 && op != OP_FUNCTION_RC) return "given type is not a function";
        char *code;
        size_t len;
        int bad = op == OP_FUNCTION2 ? ks_rdb_get_string(&r, &code, &len)
                                     : get_rc_library(&r, &code, &len);
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
