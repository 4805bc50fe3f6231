/*
 * ks_type.c -- the type table: one row of operations per value type (the
 * rows live in their types' files), type names, and the generic row
 * operations most types use. Adding a type is its file plus one line in
 * ks_type_rows[] below (ks_type.h says what a row holds).
 *
 * On-disk format: the row operations here touch the members of big values
 * ('d' db be64(version) ...) and read metadata records ('m' db key ->
 * flags [expire le64] body); ENCODING.md has both.
 */
#include <strings.h>
#include <time.h>

#include "keyspace/ks_type.h"

const ks_type_ops *const ks_type_rows[KS_TYPE_MAX] = {
    [KS_STRING] = &ks_string_type, [KS_HASH] = &ks_hash_type, [KS_LIST] = &ks_list_type,
    [KS_STREAM] = &ks_stream_type, [KS_SET] = &ks_set_type,   [KS_ZSET] = &ks_zset_type,
};

/* TYPE names of every type, also those without a row yet (SCAN TYPE list
 * is valid and matches nothing). */
static const char *const names[KS_TYPE_MAX] = {"none", "string", "hash",  "list",
                                               "set",  "zset",   "stream"};

const char *ks_type_name(ks_type t)
{
    return (int)t >= 0 && t < KS_TYPE_MAX ? names[t] : "none";
}

ks_type ks_type_by_name(const char *name, size_t len)
{
    for (int t = 1; t < KS_TYPE_MAX; t++)
        if (strlen(names[t]) == len && strncasecmp(names[t], name, len) == 0) return (ks_type)t;
    return KS_NONE;
}

void ks_drop_generic(ks_ctx *c, int db, const ks_meta *m)
{
    if (m->big) ks_members_drop(c, db, m->version);
}

void ks_repair_generic(ks_ctx *c, int db, uint64_t version)
{
    ks_members_drop(c, db, version);
}

int ks_filter_generic(const char *v, size_t vl, int64_t now_ms)
{
    if (vl < 9 || !((unsigned char)v[0] & KS_F_EXPIRE)) return 0;
    int64_t when = (int64_t)ks_get_le64(v + 1);
    return when > 0 && when <= now_ms;
}

int ks_check_no_ext(const ks_meta *m)
{
    return m->big && m->extlen ? -1 : 0;
}
