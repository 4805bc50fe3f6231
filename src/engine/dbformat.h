/*
 * dbformat.h -- internal keys: how the engine tags each user key with the
 * sequence number and kind of the write that made it.
 *
 *   internal key = user_key | trailer (8 bytes, little-endian)
 *   trailer      = (sequence << 8) | type
 *
 * Order (Invariant K1): user key ascending (bytewise), then sequence
 * descending, then type descending. So for one user key the newest version
 * comes first, and seeking to (key, snapshot_seq, ENG_TYPE_SEEK) lands on the
 * newest version a snapshot at snapshot_seq may see.
 */
#ifndef STRATA_DBFORMAT_H
#define STRATA_DBFORMAT_H

#include "coding.h"

enum {
    ENG_TYPE_DELETION = 0,
    ENG_TYPE_VALUE = 1,
    ENG_TYPE_RANGE_DELETION = 2, /* key = range start, value = range end (exclusive) */
    ENG_TYPE_SEEK = 2,           /* the highest type: sorts first among equal seqs */
};

#define ENG_MAX_SEQUENCE ((UINT64_C(1) << 56) - 1)

/* Sequence numbers at or above this value are never written to disk: an
 * indexed batch numbers its pending entries from here so that they shadow
 * every committed version (see eng_get_batch). */
#define ENG_BATCH_SEQ_BASE (UINT64_C(1) << 55)

static inline uint64_t ikey_pack_trailer(uint64_t seq, int type)
{
    return (seq << 8) | (uint64_t)type;
}

/* REQUIRES: ik.size >= 8 for the three accessors below. */
static inline slice ikey_user_key(slice ik)
{
    return slice_make(ik.data, ik.size - 8);
}
static inline uint64_t ikey_trailer(slice ik)
{
    return dec_fixed64(ik.data + ik.size - 8);
}
static inline uint64_t ikey_sequence(slice ik)
{
    return ikey_trailer(ik) >> 8;
}
static inline int ikey_type(slice ik)
{
    return (int)(ikey_trailer(ik) & 0xff);
}

/* Appends user_key | trailer to b. */
static inline void ikey_append(buf *b, slice user_key, uint64_t seq, int type)
{
    buf_append(b, user_key.data, user_key.size);
    buf_put_fixed64(b, ikey_pack_trailer(seq, type));
}

/* Invariant K1 order. */
static inline int ikey_compare(slice a, slice b)
{
    int r = slice_compare(ikey_user_key(a), ikey_user_key(b));
    if (r) return r;
    uint64_t ta = ikey_trailer(a), tb = ikey_trailer(b);
    return ta > tb ? -1 : ta < tb ? 1 : 0;
}

#endif
