/*
 * table_builder.c -- writes a sorted table file (table.h). The format, in
 * full in table_format.md; constants in table_format.h:
 *
 *   file       = data_block* range_del_block filter_block [dictionary_block]
 *                properties_block index_block footer
 *   block      = contents type:u8 checksum:fixed32
 *                type 0: contents are the block itself; type 1: one zstd
 *                frame, magicless (no 4-byte magic), with its content size,
 *                that inflates to the block; type 2: the same, compressed
 *                with the table's dictionary (version 2 only).
 *                checksum = low 32 bits of XXH3-64 over contents and type.
 *   data block = block of (internal key -> value), keys in Invariant K1
 *                order, prefix-compressed, a restart every 16 keys
 *   range_del  = block of ((start, seq, RANGE_DELETION) -> end), K1 order
 *   filter     = bloom.h over the distinct user keys, or empty (no filter);
 *                keys the filter policy skips are left out, under prefixes
 *                listed after the bits
 *   properties = block of (name -> varint64), bytewise order, see
 *                SST_PROP_* in table_format.h
 *   index      = block of (separator -> offset:varint64 size:varint64), one
 *                entry per data block, restart at every key; separator is
 *                >= the block's last key and < the next block's first key
 *   dictionary = a zstd dictionary (ZDICT format), named by the properties
 *                strata.dictionary.offset / .size; only in version 2
 *   footer     = (offset:fixed64 size:fixed64) for range_del, filter,
 *                properties and index; version:fixed32 = 1, 2 with a
 *                dictionary;
 *                checksum:fixed32 over the 68 bytes before it;
 *                magic:fixed64 = SST_MAGIC                      (80 bytes)
 *
 * Algorithm: keys stream into the current data block; when its estimated
 * size reaches block_size it is compressed (kept raw unless zstd saves at
 * least 1/8), checksummed and appended to an output buffer flushed to the
 * file in large writes. Its index entry waits for the next key so that the
 * separator can be shortened between the two (LevelDB's
 * FindShortestSeparator). User-key hashes are collected for the filter,
 * range deletions are kept and sorted at finish. With a dictionary size
 * (sst_options.dict_size), the first data blocks are held back raw until
 * SST_DICT_SAMPLE_BYTES of them (or the end of the table), a dictionary is
 * trained from them (one fastCover pass, one sample per block), and they
 * and every later data block are compressed with it (ZSTD_CDict); their
 * index entries are added once their handles are known.
 *
 * One builder belongs to one thread at a time. The zstd compression context
 * is per thread and reused across builders.
 */
#include "table.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* for ZSTD_c_format: blocks are magicless frames (table_format.md) */
#define ZSTD_STATIC_LINKING_ONLY
/* for ZDICT_trainFromBuffer_fastCover: one training pass (train_dict) */
#define ZDICT_STATIC_LINKING_ONLY
#include <zdict.h>
#include <zstd.h>

#include "block_builder.h"
#include "bloom.h"
#include "dbformat.h"
#include "env.h"
#include "table_format.h"

#define SST_WRITE_BUFFER (256u << 10)

/* A data block held back, raw, until the dictionary is trained. */
typedef struct held_block {
    char *data;
    size_t len;
    buf sep; /* its index separator, once the next key is known */
    int has_sep;
} held_block;

typedef struct range_del {
    char *start, *end;
    size_t start_len, end_len;
    uint64_t seq;
} range_del;

struct sst_builder {
    char *path;
    int fd;
    sst_options o;
    eng_status status; /* the first error; every later call returns it */
    uint64_t offset;   /* file bytes produced, written or still in out */
    buf out;           /* bytes not yet written to fd */
    buf scratch;       /* compression output */
    block_builder data, index;
    buf last_key, first_key;
    int pending_index; /* a flushed data block awaits its index entry */
    sst_handle pending_handle;
    uint64_t *hashes;
    size_t nhashes, hashes_cap;
    /* The filter's skip list (o.filter_policy): the prefixes, ascending and
     * prefix-free, concatenated in skip_data with their lengths in
     * skip_len; and the last prefix the policy said goes in (has_inc). */
    buf skip_data;
    unsigned char skip_len[BLOOM_MAX_SKIPS];
    size_t nskips;
    buf inc;
    int has_inc;
    range_del *rdels;
    size_t nrdels, rdels_cap;
    uint64_t entries, data_blocks, raw_key_size, raw_value_size;
    uint64_t smallest_seq, largest_seq;
    /* The dictionary (o.dict_size > 0): while collecting, finished data
     * blocks wait in held (held_bytes raw) and have no handle yet; then
     * dict/cdict, or nothing when training failed. */
    int collecting;
    held_block *held;
    size_t nheld, held_cap, held_bytes;
    char *dict;
    size_t dict_len;
    ZSTD_CDict *cdict;
};

/* ---- per-thread zstd compression context ------------------------------- */

static pthread_key_t cctx_key;
static pthread_once_t cctx_once = PTHREAD_ONCE_INIT;
static __thread ZSTD_CCtx *tls_cctx;

static void cctx_destroy(void *p)
{
    ZSTD_freeCCtx(p);
}
static void cctx_key_init(void)
{
    pthread_key_create(&cctx_key, cctx_destroy);
}

static ZSTD_CCtx *thread_cctx(void)
{
    if (!tls_cctx) {
        pthread_once(&cctx_once, cctx_key_init);
        tls_cctx = ZSTD_createCCtx();
        if (!tls_cctx) abort();
        /* the 4-byte frame magic is the same in every block: leave it out */
        ZSTD_CCtx_setParameter(tls_cctx, ZSTD_c_format, ZSTD_f_zstd1_magicless);
        ZSTD_CCtx_setParameter(tls_cctx, ZSTD_c_contentSizeFlag, 1);
        ZSTD_CCtx_setParameter(tls_cctx, ZSTD_c_checksumFlag, 0); /* the trailer has one */
        ZSTD_CCtx_setParameter(tls_cctx, ZSTD_c_dictIDFlag, 0);   /* one dictionary per table */
        pthread_setspecific(cctx_key, tls_cctx);                  /* freed when the thread exits */
    }
    return tls_cctx;
}

/* ---- writing ----------------------------------------------------------- */

static eng_status flush_out(sst_builder *b)
{
    if (b->status != ENG_OK || b->out.len == 0) return b->status;
    b->status = env_write_all(b->fd, b->out.data, b->out.len, b->path, NULL);
    b->out.len = 0;
    return b->status;
}

enum { STORE_RAW, STORE_COMPRESSED, STORE_DATA /* with the dictionary, if any */ };

/* Appends contents as a block (compressed when allowed and worth it) and
 * sets *h to where it lies. */
static eng_status write_block(sst_builder *b, slice contents, int how, sst_handle *h)
{
    char type = SST_COMPRESSION_NONE;
    if (how != STORE_RAW && b->o.compression_level != 0 && contents.size >= 64) {
        size_t bound = ZSTD_compressBound(contents.size);
        b->scratch.len = 0;
        buf_reserve(&b->scratch, bound);
        ZSTD_CCtx *cctx = thread_cctx();
        ZSTD_CDict *cd = how == STORE_DATA ? b->cdict : NULL;
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, b->o.compression_level);
        ZSTD_CCtx_refCDict(cctx, cd); /* NULL: no dictionary (the context is shared) */
        size_t n = ZSTD_compress2(cctx, b->scratch.data, bound, contents.data, contents.size);
        if (cd) ZSTD_CCtx_refCDict(cctx, NULL);
        if (!ZSTD_isError(n) && n < contents.size - contents.size / 8) {
            type = cd ? SST_COMPRESSION_ZSTD_DICT : SST_COMPRESSION_ZSTD;
            contents = slice_make(b->scratch.data, n);
        }
    }
    h->offset = b->offset;
    h->size = contents.size;
    size_t start = b->out.len;
    buf_append(&b->out, contents.data, contents.size);
    buf_append(&b->out, &type, 1);
    buf_put_fixed32(&b->out, eng_checksum(b->out.data + start, contents.size + 1));
    b->offset += contents.size + SST_BLOCK_TRAILER_SIZE;
    if (b->out.len >= SST_WRITE_BUFFER) return flush_out(b);
    return b->status;
}

static void add_pending_index(sst_builder *b, const slice *next);
static void index_key(buf *out, slice last, const slice *next);

/* Trains a dictionary of at most cap bytes from the n samples: one
 * fastCover pass at fixed parameters (segment SST_DICT_SEGMENT, d-mer 8,
 * fastCover's default f and accel). ZDICT_trainFromBuffer, which trained
 * here before, searches five segment sizes, training and trying out a
 * dictionary for each on a quarter of the samples: five times the work,
 * and with small tables every compaction into the bottom level trains
 * (PFADD on 10000 small HLLs: the one such compaction in 200000 requests
 * spent a third of the server's instructions training). */
static size_t train_dict(void *dict, size_t cap, const void *samples, const size_t *sizes,
                         unsigned n, int level)
{
    ZDICT_fastCover_params_t p;
    memset(&p, 0, sizeof(p));
    p.k = SST_DICT_SEGMENT;
    p.d = 8;
    p.zParams.compressionLevel = level;
    return ZDICT_trainFromBuffer_fastCover(dict, cap, samples, sizes, n, p);
}

/* Trains the dictionary from the held blocks (none when there are too few
 * or zstd cannot), then writes them and their index entries; the last one's
 * entry waits for the next key as usual. Ends collecting. */
static eng_status write_held(sst_builder *b)
{
    b->collecting = 0;
    size_t *sizes = malloc((b->nheld + 1) * sizeof(size_t));
    char *samples = malloc(b->held_bytes + 1);
    char *dict = malloc(b->o.dict_size);
    if (!sizes || !samples || !dict) abort();
    size_t off = 0;
    for (size_t i = 0; i < b->nheld; i++) {
        memcpy(samples + off, b->held[i].data, b->held[i].len);
        sizes[i] = b->held[i].len;
        off += b->held[i].len;
    }
    /* a dictionary needs many samples, several times its size */
    if (b->nheld >= 16 && b->held_bytes >= 8 * b->o.dict_size) {
        size_t n = train_dict(dict, b->o.dict_size, samples, sizes, (unsigned)b->nheld,
                              b->o.compression_level);
        if (!ZDICT_isError(n) &&
            (b->cdict = ZSTD_createCDict(dict, n, b->o.compression_level)) != NULL) {
            b->dict = dict;
            b->dict_len = n;
            dict = NULL;
        }
    }
    free(dict);
    free(samples);
    free(sizes);
    for (size_t i = 0; i < b->nheld; i++) {
        held_block *hb = &b->held[i];
        sst_handle h;
        if (write_block(b, slice_make(hb->data, hb->len), STORE_DATA, &h) == ENG_OK) {
            if (hb->has_sep) {
                buf hv = {0};
                sst_handle_put(&hv, h);
                block_builder_add(&b->index, slice_make(hb->sep.data, hb->sep.len),
                                  slice_make(hv.data, hv.len));
                buf_free(&hv);
            } else {
                b->pending_handle = h;
                b->pending_index = 1;
            }
        }
        free(hb->data);
        buf_free(&hb->sep);
    }
    free(b->held);
    b->held = NULL;
    b->nheld = b->held_cap = b->held_bytes = 0;
    return b->status;
}

/* Keeps a finished data block (copied) until the dictionary is trained. */
static eng_status hold_block(sst_builder *b, slice contents)
{
    if (b->nheld == b->held_cap) {
        b->held_cap = b->held_cap ? b->held_cap * 2 : 64;
        b->held = realloc(b->held, b->held_cap * sizeof(held_block));
        if (!b->held) abort();
    }
    held_block *hb = &b->held[b->nheld++];
    memset(hb, 0, sizeof(*hb));
    if (!(hb->data = malloc(contents.size + 1))) abort();
    memcpy(hb->data, contents.data, contents.size);
    hb->len = contents.size;
    b->held_bytes += contents.size;
    return b->held_bytes >= SST_DICT_SAMPLE_BYTES ? write_held(b) : b->status;
}

static eng_status flush_data_block(sst_builder *b)
{
    if (block_builder_empty(&b->data)) return b->status;
    slice contents = block_builder_finish(&b->data);
    if (b->collecting) {
        eng_status s = hold_block(b, contents);
        block_builder_reset(&b->data);
        b->data_blocks++;
        return s;
    }
    eng_status s = write_block(b, contents, STORE_DATA, &b->pending_handle);
    block_builder_reset(&b->data);
    b->pending_index = 1;
    b->data_blocks++;
    return s;
}

/* The index key for a block ending at `last` followed by one starting at
 * `next` (NULL: the last block): a short user key u with last <= u < next,
 * tagged (ENG_MAX_SEQUENCE, ENG_TYPE_SEEK) so it sorts before every real
 * entry of u; or `last` itself when nothing shorter fits. */
static void index_key(buf *out, slice last, const slice *next)
{
    slice a = ikey_user_key(last);
    out->len = 0;
    size_t i = 0;
    if (next) {
        slice n = ikey_user_key(*next);
        size_t min = a.size < n.size ? a.size : n.size;
        while (i < min && a.data[i] == n.data[i])
            i++;
        if (i < min) {
            unsigned char c = (unsigned char)a.data[i];
            if (c < 0xff && c + 1 < (unsigned char)n.data[i] && i + 1 < a.size) {
                buf_append(out, a.data, i);
                char up = (char)(c + 1);
                buf_append(out, &up, 1);
                buf_put_fixed64(out, ikey_pack_trailer(ENG_MAX_SEQUENCE, ENG_TYPE_SEEK));
                return;
            }
        }
    } else {
        for (; i < a.size; i++) {
            unsigned char c = (unsigned char)a.data[i];
            if (c != 0xff && i + 1 < a.size) {
                buf_append(out, a.data, i);
                char up = (char)(c + 1);
                buf_append(out, &up, 1);
                buf_put_fixed64(out, ikey_pack_trailer(ENG_MAX_SEQUENCE, ENG_TYPE_SEEK));
                return;
            }
        }
    }
    buf_append(out, last.data, last.size);
}

static void add_pending_index(sst_builder *b, const slice *next)
{
    buf sep = {0}, h = {0};
    index_key(&sep, slice_make(b->last_key.data, b->last_key.len), next);
    sst_handle_put(&h, b->pending_handle);
    block_builder_add(&b->index, slice_make(sep.data, sep.len), slice_make(h.data, h.len));
    buf_free(&sep);
    buf_free(&h);
    b->pending_index = 0;
}

eng_status sst_builder_new(const char *path, const sst_options *o, sst_builder **out)
{
    *out = NULL;
    sst_builder *b = calloc(1, sizeof(*b));
    char *p = strdup(path);
    if (!b || !p) {
        free(b);
        free(p);
        return env_error(ENG_NOMEM, "table builder for %s: out of memory", path);
    }
    eng_status s = env_create(path, &b->fd);
    if (s != ENG_OK) {
        free(b);
        free(p);
        return s;
    }
    b->path = p;
    b->o = *o;
    if (b->o.block_size < 64) b->o.block_size = 64;
    block_builder_init(&b->data, SST_RESTART_INTERVAL);
    block_builder_init(&b->index, SST_INDEX_RESTART_INTERVAL);
    b->smallest_seq = UINT64_MAX;
    b->collecting = b->o.dict_size > 0 && b->o.compression_level != 0;
    *out = b;
    return ENG_OK;
}

static void push_hash(sst_builder *b, slice user_key)
{
    if (b->nhashes == b->hashes_cap) {
        b->hashes_cap = b->hashes_cap ? b->hashes_cap * 2 : 1024;
        b->hashes = realloc(b->hashes, b->hashes_cap * sizeof(uint64_t));
        if (!b->hashes) abort();
    }
    b->hashes[b->nhashes++] = bloom_hash(user_key);
}

static int starts_with(slice key, const char *p, size_t n)
{
    return key.size >= n && memcmp(key.data, p, n) == 0;
}

/* Records the prefix p of the user key being added as skipped. Keys come in
 * order, so a recorded prefix that starts with p is the last one (or sits
 * right before other such ones): they are replaced by p, which keeps the
 * list ascending and prefix-free. Returns 0 when the list is full (the key
 * then goes into the filter). */
static int add_skip(sst_builder *b, const char *p, size_t n)
{
    while (b->nskips) {
        size_t l = b->skip_len[b->nskips - 1];
        const char *last = b->skip_data.data + b->skip_data.len - l;
        if (l < n || memcmp(last, p, n)) break;
        b->skip_data.len -= l;
        b->nskips--;
    }
    if (b->nskips == BLOOM_MAX_SKIPS) return 0;
    buf_append(&b->skip_data, p, n);
    b->skip_len[b->nskips++] = (unsigned char)n;
    return 1;
}

/* Puts a new user key into the filter unless the policy leaves it out under
 * a prefix recorded in the skip list (invariant: every key missing from the
 * filter starts with a recorded prefix). The last answers are remembered, so
 * the policy is asked about once per prefix run, not once per key. */
static void filter_add(sst_builder *b, slice uk)
{
    if (b->nskips) {
        size_t l = b->skip_len[b->nskips - 1];
        if (starts_with(uk, b->skip_data.data + b->skip_data.len - l, l)) return;
    }
    const eng_filter_policy *p = b->o.filter_policy;
    if (p && !(b->has_inc && starts_with(uk, b->inc.data, b->inc.len))) {
        size_t plen = 0;
        int skip = p->skip(p->ctx, uk.data, uk.size, &plen);
        if (skip && plen >= 1 && plen <= uk.size && plen <= ENG_FILTER_MAX_SKIP_PREFIX &&
            add_skip(b, uk.data, plen))
            return;
        b->has_inc = !skip && plen > 0 && plen <= uk.size;
        b->inc.len = 0;
        if (b->has_inc) buf_append(&b->inc, uk.data, plen);
    }
    push_hash(b, uk);
}

static void note_seq(sst_builder *b, uint64_t seq)
{
    if (seq < b->smallest_seq) b->smallest_seq = seq;
    if (seq > b->largest_seq) b->largest_seq = seq;
}

eng_status sst_builder_add(sst_builder *b, slice ikey, slice value)
{
    if (b->status != ENG_OK) return b->status;
    if (ikey.size < 8)
        return b->status = env_error(ENG_INVALID, "%s: internal key shorter than 8 bytes", b->path);
    /* the pending block is under block_size, its restarts under another */
    if ((uint64_t)ikey.size + value.size + 2 * b->o.block_size + 64 > SST_MAX_BLOCK_SIZE)
        return b->status = env_error(ENG_INVALID, "%s: entry of %zu bytes is too large for a table",
                                     b->path, ikey.size + value.size);
    if (ikey_type(ikey) != ENG_TYPE_VALUE && ikey_type(ikey) != ENG_TYPE_DELETION)
        return b->status = env_error(ENG_INVALID,
                                     "%s: point entry of type %d (range deletions "
                                     "go through sst_builder_add_range_del)",
                                     b->path, ikey_type(ikey));
    slice last = slice_make(b->last_key.data, b->last_key.len);
    int new_user_key = 1;
    if (b->entries > 0) {
        if (ikey_compare(last, ikey) >= 0)
            return b->status = env_error(ENG_INVALID, "%s: keys added out of order", b->path);
        new_user_key = slice_compare(ikey_user_key(last), ikey_user_key(ikey)) != 0;
    } else {
        buf_append(&b->first_key, ikey.data, ikey.size);
    }
    if (b->nheld && !b->held[b->nheld - 1].has_sep) {
        held_block *hb = &b->held[b->nheld - 1];
        index_key(&hb->sep, last, &ikey);
        hb->has_sep = 1;
    } else if (b->pending_index) {
        add_pending_index(b, &ikey);
    }
    if (b->o.bloom_bits_per_key > 0 && new_user_key) filter_add(b, ikey_user_key(ikey));
    note_seq(b, ikey_sequence(ikey));

    block_builder_add(&b->data, ikey, value);
    b->last_key.len = 0;
    buf_append(&b->last_key, ikey.data, ikey.size);
    b->entries++;
    b->raw_key_size += ikey.size;
    b->raw_value_size += value.size;
    if (block_builder_size_estimate(&b->data) >= b->o.block_size) return flush_data_block(b);
    return ENG_OK;
}

void sst_builder_add_range_del(sst_builder *b, slice start, slice end, uint64_t seq)
{
    if (b->nrdels == b->rdels_cap) {
        b->rdels_cap = b->rdels_cap ? b->rdels_cap * 2 : 16;
        b->rdels = realloc(b->rdels, b->rdels_cap * sizeof(range_del));
        if (!b->rdels) abort();
    }
    range_del *r = &b->rdels[b->nrdels++];
    r->start = malloc(start.size + 1);
    r->end = malloc(end.size + 1);
    if (!r->start || !r->end) abort();
    if (start.size) memcpy(r->start, start.data, start.size);
    if (end.size) memcpy(r->end, end.data, end.size);
    r->start_len = start.size;
    r->end_len = end.size;
    r->seq = seq;
    note_seq(b, seq);
}

uint64_t sst_builder_file_size(const sst_builder *b)
{
    return b->offset + b->held_bytes / 2 + block_builder_size_estimate(&b->data);
}

uint64_t sst_builder_entries(const sst_builder *b)
{
    return b->entries;
}

static void free_builder(sst_builder *b)
{
    for (size_t i = 0; i < b->nrdels; i++)
        free(b->rdels[i].start), free(b->rdels[i].end);
    free(b->rdels);
    free(b->hashes);
    buf_free(&b->skip_data);
    buf_free(&b->inc);
    for (size_t i = 0; i < b->nheld; i++)
        free(b->held[i].data), buf_free(&b->held[i].sep);
    free(b->held);
    free(b->dict);
    ZSTD_freeCDict(b->cdict);
    block_builder_free(&b->data);
    block_builder_free(&b->index);
    buf_free(&b->out);
    buf_free(&b->scratch);
    buf_free(&b->last_key);
    buf_free(&b->first_key);
    free(b->path);
    free(b);
}

void sst_builder_abandon(sst_builder *b)
{
    if (!b) return;
    env_close(b->fd, b->path);
    env_unlink(b->path);
    free_builder(b);
}

static int rdel_cmp(const void *x, const void *y)
{
    const range_del *a = x, *b = y;
    int r = slice_compare(slice_make(a->start, a->start_len), slice_make(b->start, b->start_len));
    if (r) return r;
    return a->seq > b->seq ? -1 : a->seq < b->seq ? 1 : 0; /* K1: newest first */
}

/* Writes the range deletions (sorted) as a block and widens info's bounds. */
static eng_status write_range_dels(sst_builder *b, sst_file_info *info, sst_handle *h)
{
    if (b->nrdels) qsort(b->rdels, b->nrdels, sizeof(range_del), rdel_cmp);
    block_builder bb;
    block_builder_init(&bb, SST_RESTART_INTERVAL);
    buf k = {0};
    for (size_t i = 0; i < b->nrdels; i++) {
        range_del *r = &b->rdels[i];
        k.len = 0;
        ikey_append(&k, slice_make(r->start, r->start_len), r->seq, ENG_TYPE_RANGE_DELETION);
        slice ks = slice_make(k.data, k.len);
        block_builder_add(&bb, ks, slice_make(r->end, r->end_len));
        if (info->smallest.len == 0 ||
            ikey_compare(ks, slice_make(info->smallest.data, info->smallest.len)) < 0) {
            info->smallest.len = 0;
            buf_append(&info->smallest, ks.data, ks.size);
        }
        k.len = 0;
        ikey_append(&k, slice_make(r->end, r->end_len), ENG_MAX_SEQUENCE, ENG_TYPE_RANGE_DELETION);
        ks = slice_make(k.data, k.len);
        if (info->largest.len == 0 ||
            ikey_compare(ks, slice_make(info->largest.data, info->largest.len)) > 0) {
            info->largest.len = 0;
            buf_append(&info->largest, ks.data, ks.size);
        }
    }
    eng_status s = write_block(b, block_builder_finish(&bb), STORE_COMPRESSED, h);
    buf_free(&k);
    block_builder_free(&bb);
    return s;
}

static void prop(block_builder *bb, buf *tmp, const char *name, uint64_t v)
{
    tmp->len = 0;
    buf_put_varint(tmp, v);
    block_builder_add(bb, slice_make(name, strlen(name)), slice_make(tmp->data, tmp->len));
}

static eng_status write_properties(sst_builder *b, const sst_handle *dict_h, sst_handle *h)
{
    block_builder bb;
    block_builder_init(&bb, SST_INDEX_RESTART_INTERVAL);
    buf tmp = {0};
    /* bytewise order of the names */
    prop(&bb, &tmp, SST_PROP_DATA_BLOCKS, b->data_blocks);
    if (b->dict_len) {
        prop(&bb, &tmp, SST_PROP_DICT_OFFSET, dict_h->offset);
        prop(&bb, &tmp, SST_PROP_DICT_SIZE, dict_h->size);
    }
    prop(&bb, &tmp, SST_PROP_ENTRIES, b->entries);
    if (b->o.file_number) prop(&bb, &tmp, SST_PROP_FILE_NUMBER, b->o.file_number);
    prop(&bb, &tmp, SST_PROP_RANGE_DELETIONS, b->nrdels);
    prop(&bb, &tmp, SST_PROP_RAW_KEY_SIZE, b->raw_key_size);
    prop(&bb, &tmp, SST_PROP_RAW_VALUE_SIZE, b->raw_value_size);
    prop(&bb, &tmp, SST_PROP_SEQ_LARGEST, b->largest_seq);
    prop(&bb, &tmp, SST_PROP_SEQ_SMALLEST, b->smallest_seq == UINT64_MAX ? 0 : b->smallest_seq);
    eng_status s = write_block(b, block_builder_finish(&bb), STORE_RAW, h);
    buf_free(&tmp);
    block_builder_free(&bb);
    return s;
}

static void put_handle_fixed(char *p, sst_handle h)
{
    enc_fixed64(p, h.offset);
    enc_fixed64(p + 8, h.size);
}

/* Everything after the last data block, up to and including the footer. */
static eng_status write_tail(sst_builder *b, sst_file_info *info)
{
    sst_handle rdel_h, filter_h, props_h, index_h, dict_h = {0, 0};
    if (b->pending_index) add_pending_index(b, NULL);
    if (b->entries > 0) {
        buf_append(&info->smallest, b->first_key.data, b->first_key.len);
        buf_append(&info->largest, b->last_key.data, b->last_key.len);
    }
    eng_status s = write_range_dels(b, info, &rdel_h);
    if (s != ENG_OK) return s;

    buf filter = {0};
    if (b->o.bloom_bits_per_key > 0) {
        bloom_build(&filter, b->hashes, b->nhashes, b->o.bloom_bits_per_key);
        if (b->nskips) {
            slice sk[BLOOM_MAX_SKIPS];
            for (size_t i = 0, off = 0; i < b->nskips; off += b->skip_len[i++])
                sk[i] = slice_make(b->skip_data.data + off, b->skip_len[i]);
            bloom_append_skips(&filter, sk, b->nskips);
        }
    }
    s = write_block(b, slice_make(filter.data, filter.len), STORE_RAW, &filter_h);
    buf_free(&filter);
    if (s != ENG_OK) return s;
    if (b->dict_len &&
        (s = write_block(b, slice_make(b->dict, b->dict_len), STORE_RAW, &dict_h)) != ENG_OK)
        return s;
    if ((s = write_properties(b, &dict_h, &props_h)) != ENG_OK) return s;
    s = write_block(b, block_builder_finish(&b->index), STORE_COMPRESSED, &index_h);
    if (s != ENG_OK) return s;

    char footer[SST_FOOTER_SIZE];
    put_handle_fixed(footer, rdel_h);
    put_handle_fixed(footer + 16, filter_h);
    put_handle_fixed(footer + 32, props_h);
    put_handle_fixed(footer + 48, index_h);
    enc_fixed32(footer + SST_FOOTER_VERSION_OFFSET,
                b->dict_len ? SST_FORMAT_VERSION_DICT : SST_FORMAT_VERSION);
    enc_fixed32(footer + SST_FOOTER_CHECKSUM_OFFSET,
                eng_checksum(footer, SST_FOOTER_CHECKSUM_OFFSET));
    enc_fixed64(footer + SST_FOOTER_MAGIC_OFFSET, SST_MAGIC);
    buf_append(&b->out, footer, sizeof(footer));
    b->offset += sizeof(footer);
    if ((s = flush_out(b)) != ENG_OK) return s;
    return env_fsync(b->fd, b->path);
}

eng_status sst_builder_finish(sst_builder *b, sst_file_info *info)
{
    memset(info, 0, sizeof(*info));
    eng_status s = b->status;
    if (s == ENG_OK) s = flush_data_block(b);
    if (s == ENG_OK && b->collecting) s = write_held(b);
    if (s == ENG_OK) s = write_tail(b, info);
    eng_status c = env_close(b->fd, b->path);
    if (s == ENG_OK) s = c;
    if (s != ENG_OK) {
        env_unlink(b->path);
        sst_file_info_free(info);
        free_builder(b);
        return s;
    }
    info->file_size = b->offset;
    info->entries = b->entries;
    info->range_deletions = b->nrdels;
    info->smallest_seq = b->smallest_seq == UINT64_MAX ? 0 : b->smallest_seq;
    info->largest_seq = b->largest_seq;
    free_builder(b);
    return ENG_OK;
}

void sst_file_info_free(sst_file_info *fi)
{
    buf_free(&fi->smallest);
    buf_free(&fi->largest);
}
