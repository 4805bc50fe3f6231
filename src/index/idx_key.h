/*
 * idx_key.h -- the order-preserving encoding of index entry keys.
 *
 * An index entry's engine key is
 *     'x' 'E' <index id: 4 bytes big-endian> <field 1> ... <field n> [<hash key>]
 * where each field is encoded so that comparing the concatenated bytes with
 * memcmp gives the index order: field 1 first, each ascending or DESC, then
 * the hash key ascending. The exact bytes are in src/index/FORMAT.md.
 *
 * Invariant K1: every field encoding is prefix-free (no encoded value is a
 * proper prefix of another of the same type and direction), so the first
 * differing byte of two encoded tuples decides their order and whatever
 * follows (later fields, the hash key) only breaks ties.
 *
 * All functions here are pure; none allocates except through idx_buf.
 */
#ifndef STRATA_IDX_KEY_H
#define STRATA_IDX_KEY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define IDX_NS_BYTE 'x'     /* KS_INDEX_NAMESPACE */
#define IDX_TAG_CATALOG 'C' /* 'x' 'C' <db> <name> -> index definition */
#define IDX_TAG_NEXTID 'N'  /* 'x' 'N' -> next index id */
#define IDX_TAG_ENTRY 'E'   /* 'x' 'E' <id> <fields> [<key>] -> entry value */
#define IDX_ENTRY_PREFIX_LEN 6
#define IDX_EXPIRE_LEN 8 /* entry values start with the hash's expiry */

/* A growable byte buffer. Owns data (malloc'd); reused across calls so the
 * write path does not allocate once warm. */
typedef struct idx_buf {
    char *data;
    size_t len, cap;
} idx_buf;

/* Grows b to hold extra more bytes; aborts on OOM, as the allocator does.
 * idx_buf_reserve is its inline check: the hook reserves a few bytes per
 * encoded field, almost always within the capacity it has. */
void idx_buf_grow(idx_buf *b, size_t extra);
static inline void idx_buf_reserve(idx_buf *b, size_t extra)
{
    if (b->len + extra > b->cap) idx_buf_grow(b, extra);
}
static inline void idx_buf_append(idx_buf *b, const void *p, size_t n)
{
    if (!n) return;
    idx_buf_reserve(b, n);
    memcpy(b->data + b->len, p, n);
    b->len += n;
}
static inline void idx_buf_byte(idx_buf *b, unsigned char c)
{
    if (b->len == b->cap) idx_buf_reserve(b, 1);
    b->data[b->len++] = (char)c;
}
void idx_buf_free(idx_buf *b);

void idx_put_u32(char *p, uint32_t v); /* big-endian */
uint32_t idx_get_u32(const char *p);
void idx_put_u64(char *p, uint64_t v);
uint64_t idx_get_u64(const char *p);

/* Bytewise order, shorter first on a common prefix (the engine's order). */
static inline int idx_key_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    size_t n = al < bl ? al : bl;
    int c = n ? memcmp(a, b, n) : 0;
    return c ? c : al < bl ? -1 : al > bl;
}

/* Appends 'x' 'E' <id> to b. Inline, as idx_key_put_num: the write hook
 * builds every entry key of an HSET from these. */
static inline void idx_key_entry_prefix(idx_buf *b, uint32_t id)
{
    idx_buf_reserve(b, IDX_ENTRY_PREFIX_LEN);
    uint32_t be = __builtin_bswap32(id); /* big-endian on the little-endian hosts we build for */
    b->data[b->len] = IDX_NS_BYTE;
    b->data[b->len + 1] = IDX_TAG_ENTRY;
    memcpy(b->data + b->len + 2, &be, 4);
    b->len += IDX_ENTRY_PREFIX_LEN;
}

/* Appends the TAG encoding of v (ascending, or DESC when desc != 0). */
void idx_key_put_tag(idx_buf *b, const char *v, size_t n, int desc);

/* Appends the NUMERIC encoding of d (8 bytes). REQUIRES: d is not NaN.
 * -0.0 encodes as +0.0 so that the two compare equal, as numbers do. */
static inline void idx_key_put_num(idx_buf *b, double d, int desc)
{
    uint64_t u;
    if (d == 0) d = 0.0; /* folds -0.0 into +0.0 */
    memcpy(&u, &d, 8);
    u = (u >> 63) ? ~u : u ^ (1ULL << 63);
    if (desc) u = ~u;
    idx_buf_reserve(b, 8);
    u = __builtin_bswap64(u);
    memcpy(b->data + b->len, &u, 8);
    b->len += 8;
}

/* Parses a NUMERIC field value the way Redis parses a float argument: the
 * whole string, no leading space, not NaN, no overflow or underflow to 0
 * (inf and -inf written out are numbers).
 * Returns 0 and sets *d, or -1. */
int idx_parse_num(const char *v, size_t n, double *d);
/* idx_parse_num that also sets *canonical to idx_key_num_text_canonical(v,
 * n), from the same pass over the digits when v is a short integer (the
 * hook needs both for the last field of an implied-key index). */
int idx_parse_num_canon(const char *v, size_t n, double *d, int *canonical);

/* Returns the length of the encoded field that starts at p (n bytes left),
 * or 0 when the bytes are not a complete encoded field (corruption). */
size_t idx_key_skip_field(const char *p, size_t n, int numeric, int desc);

/* Decodes an encoded TAG (as returned by idx_key_skip_field) into out
 * (appended). Returns 0, or -1 on malformed input. */
int idx_key_get_tag(const char *p, size_t n, int desc, idx_buf *out);
/* Decodes an encoded NUMERIC. REQUIRES: n >= 8. */
double idx_key_get_num(const char *p, int desc);

/* ---- the hash key of a non-UNIQUE entry, implied-key format ------------
 *
 * An index created with the implied-key format (catalog flag bit 1) ends
 * its non-UNIQUE entry keys, after the fields, not with the hash key K but
 * with a suffix that names K relative to the key the tuple implies,
 * I = <index prefix> <text of the last field> (TAG: its value; NUMERIC:
 * the decimal integer, when the value is one below 2^53 in magnitude;
 * otherwise there is no I):
 *     0x01          K == I  (the profile case: "user:42" with user_id 42)
 *     0x00 <K>      K <  I, or there is no I
 *     0x02 <K>      K >  I
 * For one tuple I is fixed, so the suffixes order as the hash keys do
 * (Invariant K1 continues to hold), and a hash whose key the tuple names
 * costs one byte instead of its key. */
#define IDX_HK_BELOW 0x00
#define IDX_HK_IMPLIED 0x01
#define IDX_HK_ABOVE 0x02

/* Sets out to the implied key of the encoded last field f (n bytes, as
 * idx_key_skip_field delimits it) under prefix. Returns 1, or 0 when the
 * field implies no key (out is then empty). */
int idx_key_implied(idx_buf *out, const char *prefix, size_t plen, const char *f, size_t n,
                    int numeric, int desc);

/* idx_key_implied of a NUMERIC last field f (8 bytes), written at out,
 * which has room for plen + IDX_IMPLIED_NUM_MAX bytes, with no idx_buf: a
 * scan writes each hit's key straight into its result. Returns the key's
 * length (at least plen + 1), or 0 when the value implies no key. */
#define IDX_IMPLIED_NUM_MAX 21 /* a sign and 16 digits at most (< 2^53), with room to spare */
size_t idx_key_implied_num(char *out, const char *prefix, size_t plen, const char *f, int desc);

/* Appends the suffix naming key k (kl bytes) given the implied key i (il
 * bytes; has_i 0: none). */
void idx_key_put_hash_key(idx_buf *b, const char *k, size_t kl, const char *i, size_t il,
                          int has_i);

/* idx_key_put_hash_key with the implied key given in two parts, I = <i1>
 * <i2> (the index prefix and the field's text, as the hash holds it), so
 * the write path need not build I. */
void idx_key_put_hash_key2(idx_buf *b, const char *k, size_t kl, const char *i1, size_t l1,
                           const char *i2, size_t l2);
/* idx_key_put_hash_key2 for a key the caller knows to start with i1:
 * REQUIRES kl >= l1 and k[0, l1) == i1, so only the rest of k is compared
 * with i2. */
void idx_key_put_hash_key_after(idx_buf *b, const char *k, size_t kl, size_t l1, const char *i2,
                                size_t l2);

/* Is v (n bytes) exactly the text idx_key_implied gives a NUMERIC value:
 * a decimal integer below 2^53 in magnitude, no '+', no leading zeros, not
 * "-0"? Then the hash's own bytes are the implied key's last part. */
int idx_key_num_text_canonical(const char *v, size_t n);

/* Decodes a suffix (p, n bytes): sets *k, *kl to the hash key (pointing
 * into p, or to i for IDX_HK_IMPLIED). Returns 0, or -1 when malformed (an
 * unknown marker, an implied marker where there is no implied key, or a key
 * on the wrong side of it). */
int idx_key_get_hash_key(const char *p, size_t n, const char *i, size_t il, int has_i,
                         const char **k, size_t *kl);

/* Replaces b's content with the smallest byte string greater than every
 * string that starts with it (strip trailing 0xFF, add one to the last
 * byte). Returns -1 if b is empty or all 0xFF (no such string). */
int idx_key_prefix_successor(idx_buf *b);

/* ---- which entries the engine's bloom filters leave out ----------------
 *
 * Only UNIQUE entries are point-read (the uniqueness check, EQ queries);
 * the entries of every other index are reached by iterators alone, so
 * their bits in the table filters are wasted. The index layer tells the
 * engine (eng_filter_policy in engine/engine.h) to leave out the keys
 * 'x' 'E' <id> of the ids noted here as skip = 1. Ids are never reused and
 * an index keeps its kind, so a note stays true; an id not noted goes in
 * (the safe side). Ids up to IDX_FILTER_MAX_ID are tracked. Thread-safe
 * (relaxed atomic bits): the engine asks from its background threads. */
#define IDX_FILTER_MAX_ID 65535
void idx_filter_note(uint32_t id, int skip);
/* Forgets every note (a new catalog is about to be loaded). */
void idx_filter_reset(void);
/* eng_filter_policy.skip: 1 and *plen = 6 for 'x' 'E' <id> of a noted id;
 * else 0 with *plen the prefix whose keys answer 0 as well ('x' 'E' <id>,
 * the namespace byte of keyspace keys). */
int idx_filter_skip(void *ctx, const char *key, size_t klen, size_t *plen);

#endif
