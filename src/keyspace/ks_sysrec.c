/*
 * ks_sysrec.c -- server-wide records: state of the server itself that
 * lives beside the databases (Redis 7 function libraries), not in one.
 *
 * On-disk format (ENCODING.md, "Server records"):
 *   'S' kind:u8 name -> value
 * kind is one byte chosen by the owner of the record ('F': a function
 * library, value = its source); name is any bytes. The records are read
 * and written through ctx->batch like every keyspace write, so a command
 * that changes them commits or rolls back with its other writes (S1), and
 * no FLUSHDB/FLUSHALL range covers them.
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_encoding.h"

/* Builds 'S' kind name into a malloc'd buffer (*n bytes). */
static char *rec_key(char kind, const char *name, size_t nl, size_t *n)
{
    char *k = malloc(nl + 2);
    if (!k) return NULL;
    k[0] = KS_SYSREC_NAMESPACE;
    k[1] = kind;
    if (nl) memcpy(k + 2, name, nl);
    *n = nl + 2;
    return k;
}

ks_status ks_sysrec_get(ks_ctx *c, char kind, const char *name, size_t nl, ks_val *out)
{
    size_t kl;
    char *k = rec_key(kind, name, nl, &kl), *v = NULL;
    size_t vl = 0;
    memset(out, 0, sizeof(*out));
    if (!k) return ks_oom(c);
    eng_status s = ks_eget(c, NULL, k, kl, &v, &vl);
    free(k);
    if (s == ENG_NOTFOUND) return KS_NOTFOUND;
    if (s != ENG_OK) return ks_engine_err(c, s, "server record read");
    out->base = v;
    out->p = v;
    out->n = vl;
    return KS_OK;
}

ks_status ks_sysrec_put(ks_ctx *c, char kind, const char *name, size_t nl, const char *v, size_t vl)
{
    size_t kl;
    char *k = rec_key(kind, name, nl, &kl);
    if (!k) return ks_oom(c);
    eng_batch_put(c->batch, k, kl, v, vl);
    free(k);
    return KS_OK;
}

ks_status ks_sysrec_delete(ks_ctx *c, char kind, const char *name, size_t nl)
{
    size_t kl;
    char *k = rec_key(kind, name, nl, &kl);
    if (!k) return ks_oom(c);
    eng_batch_delete(c->batch, k, kl);
    free(k);
    return KS_OK;
}

ks_status ks_sysrec_delete_kind(ks_ctx *c, char kind)
{
    char a[2] = {KS_SYSREC_NAMESPACE, kind}, b[2] = {KS_SYSREC_NAMESPACE, (char)(kind + 1)};
    eng_batch_delete_range(c->batch, a, 2, b, 2);
    return KS_OK;
}

ks_status ks_sysrec_iterate(ks_ctx *c, char kind, ks_sysrec_fn fn, void *arg)
{
    char a[2] = {KS_SYSREC_NAMESPACE, kind};
    eng_iter *it = eng_iter_new(c->ks->db, NULL, ks_read_batch(c));
    if (!it) return ks_oom(c);
    ks_status st = KS_OK;
    for (eng_iter_seek(it, a, 2); eng_iter_valid(it); eng_iter_next(it)) {
        size_t kl, vl;
        const char *k = eng_iter_key(it, &kl);
        if (kl < 2 || k[0] != KS_SYSREC_NAMESPACE || k[1] != kind) break;
        const char *v = eng_iter_value(it, &vl);
        if (fn(arg, k + 2, kl - 2, v, vl)) break;
    }
    eng_status s = eng_iter_status(it);
    if (s != ENG_OK) st = ks_engine_err(c, s, "server record scan");
    eng_iter_free(it);
    return st;
}
