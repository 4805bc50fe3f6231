/*
 * table_format.h -- the constants of the sorted table file format. The
 * exact grammar of a table file is written down in table_format.md; this
 * header only names its numbers. A change to any of them is a change of
 * SST_FORMAT_VERSION.
 *
 *   file    = data_block* range_del_block filter_block properties_block
 *             index_block footer
 *   block   = contents type:u8 checksum:fixed32
 *             (checksum = eng_checksum over contents and the type byte)
 *   footer  = range_del_handle filter_handle properties_handle index_handle
 *             (each offset:fixed64 size:fixed64)
 *             version:fixed32 checksum:fixed32 magic:fixed64   (80 bytes)
 */
#ifndef STRATA_TABLE_FORMAT_H
#define STRATA_TABLE_FORMAT_H

#include <stdint.h>

#include "coding.h"

/* The last 8 bytes of every table file (little-endian fixed64). */
#define SST_MAGIC UINT64_C(0x3174626c61727473) /* "stralbt1" read as bytes */

/* Bumped on any incompatible change; readers refuse other versions.
 * Version 2 is version 1 plus a compression dictionary block and blocks of
 * type SST_COMPRESSION_ZSTD_DICT; a table without a dictionary is still
 * written as version 1. */
#define SST_FORMAT_VERSION 1u
#define SST_FORMAT_VERSION_DICT 2u

/* type:u8 + checksum:fixed32 after each block's stored bytes. */
#define SST_BLOCK_TRAILER_SIZE 5u

/* Four fixed handles (16 bytes each), version, checksum, magic. */
#define SST_FOOTER_SIZE 80u
#define SST_FOOTER_VERSION_OFFSET 64u
#define SST_FOOTER_CHECKSUM_OFFSET 68u
#define SST_FOOTER_MAGIC_OFFSET 72u

/* The compression type byte of a block trailer. */
enum {
    SST_COMPRESSION_NONE = 0,
    SST_COMPRESSION_ZSTD = 1,      /* a magicless zstd frame with its content size */
    SST_COMPRESSION_ZSTD_DICT = 2, /* the same, compressed with the table's dictionary */
};

/* Raw data blocks a builder keeps to train its dictionary from: it trains
 * once this much has accumulated (or at finish), then writes them. 64
 * times the default dictionary: training on 2 MiB cost four times as much
 * for tables within 2% of the same size (samples of stream, HLL and
 * mixed hash/set/zset tables). */
#define SST_DICT_SAMPLE_BYTES (512u << 10)
/* The segment size (fastCover's k) the dictionary is trained with: the
 * middle of the range ZDICT_trainFromBuffer searched (50..2000). */
#define SST_DICT_SEGMENT 1024

/* Keys between restart points in data and range-deletion blocks; the index
 * and properties blocks restart at every key so a seek is a pure binary
 * search. */
#define SST_RESTART_INTERVAL 16
#define SST_INDEX_RESTART_INTERVAL 1

/* B4: a data block also restarts at the first entry that starts this many
 * bytes or more past the previous restart, so a point lookup in a block of
 * large entries (a 9-field hash is ~250 bytes: 16 of them fill a block)
 * binary-searches to within a few entries instead of decoding up to 16;
 * entries of small keys and values (index entries, set members) still
 * restart every 16. */
#define SST_RESTART_BYTES 1024

/* No block, stored or uncompressed, may exceed this: a larger size read
 * from disk is corruption, not a reason to allocate. The builder refuses an
 * entry that could make a block exceed it (a Redis value is at most 512 MiB). */
#define SST_MAX_BLOCK_SIZE (UINT64_C(1) << 30)

/* The longest varint-encoded block handle (two varint64). */
#define SST_MAX_HANDLE_SIZE 20

/* Properties block keys (bytewise sorted, values varint64). */
#define SST_PROP_DATA_BLOCKS "strata.data.blocks"
#define SST_PROP_DICT_OFFSET "strata.dictionary.offset" /* version 2 only */
#define SST_PROP_DICT_SIZE "strata.dictionary.size"
#define SST_PROP_FILE_NUMBER "strata.file.number"
#define SST_PROP_ENTRIES "strata.entries"
#define SST_PROP_RANGE_DELETIONS "strata.range.deletions"
#define SST_PROP_RAW_KEY_SIZE "strata.raw.key.size"
#define SST_PROP_RAW_VALUE_SIZE "strata.raw.value.size"
#define SST_PROP_SEQ_LARGEST "strata.seq.largest"
#define SST_PROP_SEQ_SMALLEST "strata.seq.smallest"

/* Where a block's stored bytes lie: [offset, offset + size), followed by
 * its SST_BLOCK_TRAILER_SIZE trailer. */
typedef struct sst_handle {
    uint64_t offset, size;
} sst_handle;

/* Index entries encode a handle as offset:varint64 size:varint64. */
static inline void sst_handle_put(buf *b, sst_handle h)
{
    buf_put_varint(b, h.offset);
    buf_put_varint(b, h.size);
}

/* Returns 1 and fills *h when [p, limit) starts with a handle, else 0. */
static inline int sst_handle_get(const char *p, const char *limit, sst_handle *h)
{
    p = dec_varint64(p, limit, &h->offset);
    return p && dec_varint64(p, limit, &h->size) != NULL;
}

#endif
