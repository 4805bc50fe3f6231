/*
 * ks_rdb.h -- the pieces of Redis's RDB format that DUMP, RESTORE and
 * FUNCTION DUMP/RESTORE payloads are made of, as pure functions on bytes
 * (no keyspace, no locks; safe from any thread). ks_rdb.c holds the
 * primitives, ks_rdb_pack.c the packed containers (listpack, intset,
 * ziplist). The value payloads built on them are in ks_rdb_value.c
 * (ks_dump / ks_restore in keyspace.h); their grammar is in ENCODING.md,
 * "DUMP payloads".
 *
 *   payload = body rdbver:u16le crc:u64le        (crc over body and rdbver)
 *   len     = 00xxxxxx | 01xxxxxx xxxxxxxx | 0x80 u32be | 0x81 u64be
 *   string  = len bytes | 0xC0 i8 | 0xC1 i16le | 0xC2 i32le
 *           | 0xC3 clen:len ulen:len lzf[clen]
 */
#ifndef STRATA_KS_RDB_H
#define STRATA_KS_RDB_H

#include <stddef.h>
#include <stdint.h>

#define KS_RDB_VERSION 10 /* Redis 7.0's: payloads of a higher version are refused */

/* CRC-64/Jones (reflected, polynomial 0xad93d23594c935a9), Redis's crc64:
 * crc is the running value (0 to start). */
uint64_t ks_rdb_crc64(uint64_t crc, const unsigned char *p, size_t n);

/* A growing output buffer (malloc'd p, the caller frees it). oom is set
 * when an allocation failed; the bytes are then incomplete. */
typedef struct ks_rdb_out {
    unsigned char *p;
    size_t n, cap;
    int oom;
} ks_rdb_out;
void ks_rdb_put(ks_rdb_out *o, const void *p, size_t n);
void ks_rdb_put_byte(ks_rdb_out *o, unsigned b);
void ks_rdb_put_len(ks_rdb_out *o, uint64_t len);
/* A string as Redis writes it uncompressed: integer-encoded when it is the
 * canonical text of a 32-bit integer of at most 11 characters, else raw. */
void ks_rdb_put_string(ks_rdb_out *o, const char *s, size_t n);
/* Appends rdbver (KS_RDB_VERSION) and the crc of everything before. */
void ks_rdb_put_footer(ks_rdb_out *o);

/* A reader over [p, end). */
typedef struct ks_rdb_in {
    const unsigned char *p, *end;
} ks_rdb_in;
/* 0 when payload[0..n) ends with a version <= KS_RDB_VERSION and the crc
 * of the rest; then *body covers the bytes before the footer. Else -1. */
int ks_rdb_open(const unsigned char *payload, size_t n, ks_rdb_in *body);
/* Returns 0 with *len, or -1; *enc is the encoding of a 11xxxxxx length
 * (then *len is 0), else -1. */
int ks_rdb_get_len(ks_rdb_in *r, uint64_t *len, int *enc);
/* A plain length (no 11xxxxxx encoding). 0 or -1. */
int ks_rdb_get_count(ks_rdb_in *r, uint64_t *len);
/* One string, malloc'd into *s (*n bytes; the caller frees it). 0 or -1
 * (nothing to free) when it is malformed or runs past the end. */
int ks_rdb_get_string(ks_rdb_in *r, char **s, size_t *n);
/* LZF: 0 when in[0..inl) decompresses to exactly outl bytes, else -1. */
int ks_rdb_lzf_decompress(const unsigned char *in, size_t inl, char *out, size_t outl);

/* Packed containers (ks_rdb_pack.c). Each calls fn for every element in
 * order, as bytes: integers as their decimal text in a buffer valid only
 * during the call. fn returns 0 to go on, non-zero to stop with -1. They
 * return 0 when the whole blob is well formed (sizes, header counts, the
 * terminator, listpack back-lengths, intset order), else -1 -- possibly
 * after some calls. */
typedef int (*ks_rdb_elem_fn)(void *arg, const char *s, size_t n);
int ks_rdb_listpack(const unsigned char *p, size_t n, ks_rdb_elem_fn fn, void *arg);
int ks_rdb_intset(const unsigned char *p, size_t n, ks_rdb_elem_fn fn, void *arg);
int ks_rdb_ziplist(const unsigned char *p, size_t n, ks_rdb_elem_fn fn, void *arg);

#endif
