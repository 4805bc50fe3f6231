/*
 * ks_usage.c -- what one key costs in the engine (MEMORY USAGE, DEBUG
 * OBJECT): its records as ENCODING.md lays them out, measured as written
 * (engine key and value bytes, before table compression) plus the
 * engine's per-record overhead.
 *
 * Reads the metadata record 'm' db key and, for a big value, walks its
 * member records 'd' db be64(version) suffix -- at most `samples` of them,
 * the rest extrapolated from their average as Redis's MEMORY USAGE samples
 * aggregate values.
 */
#include <string.h>

#include "keyspace/ks_type.h"

/* Per record: the engine's 8-byte sequence/type trailer on every internal
 * key, and about 4 bytes of varint lengths in a block entry. */
#define RECORD_OVERHEAD 12

/* Sums the member records of a big value, reading at most samples of
 * them (0: all); *seen gets how many were read. */
static ks_status members_bytes(ks_ctx *c, uint64_t version, uint64_t samples, uint64_t *bytes,
                               uint64_t *seen)
{
    ks_ekey pre;
    ks_ekey_members(&pre, c->db, version);
    eng_iter *it = eng_iter_new(c->ks->db, NULL, ks_read_batch(c));
    *bytes = *seen = 0;
    for (eng_iter_seek(it, pre.p, pre.n); eng_iter_valid(it); eng_iter_next(it)) {
        size_t kl, vl;
        const char *k = eng_iter_key(it, &kl);
        eng_iter_value(it, &vl);
        if (kl < pre.n || memcmp(k, pre.p, pre.n) != 0) break;
        *bytes += kl + vl + RECORD_OVERHEAD;
        if (++*seen == samples) break;
    }
    ks_status st =
        eng_iter_status(it) == ENG_OK ? KS_OK : ks_engine_err(c, eng_iter_status(it), "read");
    eng_iter_free(it);
    ks_ekey_free(&pre);
    return st;
}

ks_status ks_key_info(ks_ctx *c, const char *key, size_t klen, uint64_t samples, ks_key_stat *out)
{
    ks_meta m;
    memset(out, 0, sizeof(*out));
    ks_status st = ks_meta_read(c, NULL, c->db, key, klen, &m);
    if (st != KS_OK) return st;
    if (m.type == KS_NONE) {
        ks_meta_free(&m);
        return KS_NOTFOUND;
    }
    ks_ekey k;
    ks_ekey_meta(&k, c->db, key, klen);
    out->type = (ks_type)m.type;
    out->big = m.big;
    out->expire_ms = m.expire;
    out->payload_bytes = m.plen;
    out->usage = k.n + m.rawlen + RECORD_OVERHEAD;
    ks_ekey_free(&k);
    if (m.expire) out->usage += 10 + klen + (m.big ? 9 : 0) + RECORD_OVERHEAD; /* 'e' entry */
    const ks_type_ops *row = ks_type_row(m.stored);
    uint64_t count = 0;
    if (row && row->count(&m, &count) == 0) out->count = count;
    if (m.big) {
        uint64_t bytes, seen;
        st = members_bytes(c, m.version, samples, &bytes, &seen);
        /* a chunked string's count is its length: at most one member per 1 KiB */
        uint64_t members = m.stored == KS_STRING ? (m.count + 1023) / 1024 : m.count;
        if (st == KS_OK && seen) out->usage += seen < members ? bytes / seen * members : bytes;
    }
    ks_meta_free(&m);
    return st;
}
