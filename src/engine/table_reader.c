/*
 * table_reader.c -- reads a sorted table file (table.h). The format, in
 * full in table_format.md; constants in table_format.h:
 *
 *   file       = data_block* range_del_block filter_block properties_block
 *                index_block footer
 *   block      = contents type:u8 checksum:fixed32
 *                (type 0 raw, 1 magicless zstd frame, 2 the same with the
 *                table's dictionary; checksum = low 32 bits of XXH3-64 over
 *                contents and type)
 *   index      = block of (separator -> offset:varint64 size:varint64)
 *   footer     = four (offset:fixed64 size:fixed64) handles: range_del,
 *                filter, properties, index; version:fixed32 = 1, or 2
 *                (properties name a dictionary block);
 *                checksum:fixed32 over the 68 bytes before it;
 *                magic:fixed64 = SST_MAGIC                      (80 bytes)
 *
 * Algorithm: open reads and checks the footer, then reads the index, the
 * filter, the range deletions, the properties and (version 2) the
 * dictionary, prepared as a ZSTD_DDict, once and keeps them.
 * Data blocks are read on demand with pread (no shared file offset, so
 * threads share a reader freely), their checksum verified on every read
 * from disk, inflated with a per-thread zstd context, and shared through
 * the block cache keyed by (file number, block offset). The table iterator
 * lives in table_iter.c; iterators that do not fill the cache (compaction
 * inputs) read ahead there: one pread of up to READAHEAD_MAX bytes serves
 * the blocks that follow (ra_get_block), each still checksummed. What the
 * two files share is in table_internal.h.
 *
 * Trust: nothing read from the file is used before it is checked. A handle
 * must lie inside the file before the footer; a block must pass its
 * checksum, inflate to exactly its declared size (at most
 * SST_MAX_BLOCK_SIZE) and pass block_parse; block iterators bound-check
 * every entry. Any failure is ENG_CORRUPTION with a message naming the file
 * and offset, never a wrong answer.
 */
#include "table_internal.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
/* for the magicless frame format of compressed blocks (table_format.md) */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "bloom.h"
#include "dbformat.h"
#include "env.h"
#include "table_format.h"

/* ---- per-thread zstd decompression context ----------------------------- */

static pthread_key_t dctx_key;
static pthread_once_t dctx_once = PTHREAD_ONCE_INIT;
static __thread ZSTD_DCtx *tls_dctx;

static void dctx_destroy(void *p)
{
    ZSTD_freeDCtx(p);
}
static void dctx_key_init(void)
{
    pthread_key_create(&dctx_key, dctx_destroy);
}

static ZSTD_DCtx *thread_dctx(void)
{
    if (!tls_dctx) {
        pthread_once(&dctx_once, dctx_key_init);
        tls_dctx = ZSTD_createDCtx();
        if (!tls_dctx) abort();
        ZSTD_DCtx_setParameter(tls_dctx, ZSTD_d_format, ZSTD_f_zstd1_magicless);
        pthread_setspecific(dctx_key, tls_dctx); /* freed when the thread exits */
    }
    return tls_dctx;
}

/* ---- reading blocks ---------------------------------------------------- */

eng_status sst_corrupt(const sst_reader *r, uint64_t off, const char *what)
{
    return env_error(ENG_CORRUPTION, "table %s: %s at offset %llu", r->path, what,
                     (unsigned long long)off);
}

/* Whether h lies inside the file before the footer with a sane size. */
eng_status sst_check_handle(const sst_reader *r, sst_handle h)
{
    if (h.size > SST_MAX_BLOCK_SIZE || h.offset > r->data_end ||
        h.size + SST_BLOCK_TRAILER_SIZE > r->data_end - h.offset)
        return sst_corrupt(r, h.offset, "block handle out of range");
    return ENG_OK;
}

/* Checks the stored bytes and trailer of the block at h, found at raw
 * (h.size + SST_BLOCK_TRAILER_SIZE bytes), and returns its contents in *out
 * (malloc'd, owned by the caller) and their size in *len. raw_owned is raw
 * when the caller hands the malloc'd bytes over (they are freed or become
 * *out), or NULL when raw is borrowed (then a raw block is copied). */
eng_status sst_decode_contents(const sst_reader *r, sst_handle h, const char *raw, char *raw_owned,
                               char **out, size_t *len)
{
    size_t n = (size_t)h.size;
    eng_status s;
    *out = NULL;
    if (eng_checksum(raw, n + 1) != dec_fixed32(raw + n + 1)) {
        s = sst_corrupt(r, h.offset, "block checksum mismatch");
        goto fail;
    }
    int type = (unsigned char)raw[n];
    if (type == SST_COMPRESSION_NONE) {
        if (!raw_owned) {
            if (!(raw_owned = malloc(n + 1)))
                return env_error(ENG_NOMEM, "table %s: out of memory", r->path);
            memcpy(raw_owned, raw, n);
        }
        *out = raw_owned;
        *len = n;
        return ENG_OK;
    }
    if (type != SST_COMPRESSION_ZSTD && !(type == SST_COMPRESSION_ZSTD_DICT && r->ddict)) {
        s = sst_corrupt(r, h.offset, "unknown block compression type");
        goto fail;
    }
    ZSTD_frameHeader zfh;
    if (ZSTD_getFrameHeader_advanced(&zfh, raw, n, ZSTD_f_zstd1_magicless) != 0 ||
        zfh.frameType != ZSTD_frame || zfh.frameContentSize > SST_MAX_BLOCK_SIZE) {
        s = sst_corrupt(r, h.offset, "bad zstd frame header");
        goto fail;
    }
    unsigned long long full = zfh.frameContentSize; /* UNKNOWN is above the maximum */
    char *plain = malloc((size_t)full + 1);
    if (!plain) {
        s = env_error(ENG_NOMEM, "table %s: out of memory", r->path);
        goto fail;
    }
    size_t got =
        type == SST_COMPRESSION_ZSTD
            ? ZSTD_decompressDCtx(thread_dctx(), plain, (size_t)full, raw, n)
            : ZSTD_decompress_usingDDict(thread_dctx(), plain, (size_t)full, raw, n, r->ddict);
    free(raw_owned);
    if (ZSTD_isError(got) || got != full) {
        free(plain);
        return sst_corrupt(r, h.offset, "bad zstd frame");
    }
    *out = plain;
    *len = (size_t)full;
    return ENG_OK;
fail:
    free(raw_owned);
    return s;
}

/* Reads the stored bytes and trailer at h, checks them and returns the
 * block contents in *out (malloc'd, owned by the caller) and *len. */
static eng_status read_contents(const sst_reader *r, sst_handle h, char **out, size_t *len)
{
    *out = NULL;
    eng_status s = sst_check_handle(r, h);
    if (s != ENG_OK) return s;
    size_t n = (size_t)h.size;
    char *raw = malloc(n + SST_BLOCK_TRAILER_SIZE);
    if (!raw) return env_error(ENG_NOMEM, "table %s: out of memory", r->path);
    s = env_pread_all(r->fd, raw, n + SST_BLOCK_TRAILER_SIZE, h.offset, r->path);
    if (s != ENG_OK) {
        free(raw);
        return s;
    }
    return sst_decode_contents(r, h, raw, raw, out, len);
}

/* Reads and parses the block at h into *b (which then owns its bytes). */
static eng_status read_block(const sst_reader *r, sst_handle h, block *b)
{
    char *data;
    size_t len;
    eng_status s = read_contents(r, h, &data, &len);
    if (s != ENG_OK) return s;
    if (block_parse(b, data, len, data) != ENG_OK)
        return sst_corrupt(r, h.offset, "bad block restart array");
    return ENG_OK;
}

void sst_block_ref_release(const sst_reader *r, block_ref *br)
{
    if (br->h) cache_release(r->cache, br->h);
    if (br->owned) block_free(br->owned);
    br->b = NULL;
    br->h = NULL;
    br->owned = NULL;
}

eng_status sst_get_data_block(const sst_reader *r, sst_handle h, int fill_cache, block_ref *br)
{
    br->h = NULL;
    br->owned = NULL;
    if (r->cache) {
        br->h = cache_lookup(r->cache, r->file_number, h.offset);
        if (br->h) {
            br->b = cache_value(br->h);
            return ENG_OK;
        }
    }
    block *b = malloc(sizeof(*b));
    if (!b) return env_error(ENG_NOMEM, "table %s: out of memory", r->path);
    eng_status s = read_block(r, h, b);
    if (s != ENG_OK) {
        free(b);
        return s;
    }
    if (r->cache && fill_cache)
        br->h = cache_insert(r->cache, r->file_number, h.offset, b, block_charge(b), block_free);
    else
        br->owned = b;
    br->b = b;
    return ENG_OK;
}

eng_status sst_reader_load_block(const sst_reader *r, uint64_t offset, uint64_t size, int *loaded)
{
    *loaded = 0;
    if (!r->cache) return ENG_OK;
    cache_handle *ch = cache_lookup_quiet(r->cache, r->file_number, offset);
    if (ch) {
        cache_release(r->cache, ch);
        return ENG_OK;
    }
    block *b = malloc(sizeof(*b));
    if (!b) return env_error(ENG_NOMEM, "table %s: out of memory", r->path);
    sst_handle h = {offset, size};
    eng_status s = read_block(r, h, b);
    if (s != ENG_OK) {
        free(b);
        return s;
    }
    cache_release(r->cache,
                  cache_insert(r->cache, r->file_number, offset, b, block_charge(b), block_free));
    *loaded = 1;
    return ENG_OK;
}

/* Decodes the handle the index iterator points at. */
eng_status sst_index_handle(const sst_reader *r, const block_iter *ii, sst_handle *h)
{
    slice v = block_iter_value(ii);
    if (!sst_handle_get(v.data, v.data + v.size, h))
        return sst_corrupt(r, r->index.size, "bad block handle in index");
    return ENG_OK;
}

/* ---- the index search array --------------------------------------------- */

/* Up to 8 bytes of uk after its first lcp bytes, zero-padded, big-endian.
 * If two user keys share their first lcp bytes and pa < pb, then a < b
 * bytewise (a zero pad only ever stands where the shorter key has ended). */
static inline uint64_t key_prefix(slice uk, size_t lcp)
{
    size_t n = uk.size > lcp ? uk.size - lcp : 0;
    const unsigned char *p = (const unsigned char *)uk.data + lcp;
    if (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        return __builtin_bswap64(v);
    }
    uint64_t v = 0;
    for (size_t j = 0; j < n; j++)
        v |= (uint64_t)p[j] << (56 - 8 * j);
    return v;
}

/* Builds the search array when the index has one entry per restart point
 * (as table_builder.c writes it); otherwise leaves ix_prefix NULL and
 * lookups binary-search the block itself. Binary search over a dense array
 * of integers touches far fewer cache lines than over the block's entries. */
static void build_index_prefixes(sst_reader *r)
{
    const block *ix = &r->index;
    uint32_t n = ix->num_restarts;
    slice first, last, k;
    if (ix->restart_offset == 0 || !block_restart_key(ix, 0, BLOCK_CMP_IKEY, &first) ||
        !block_restart_key(ix, n - 1, BLOCK_CMP_IKEY, &last))
        return;
    block_iter it;
    uint32_t entries = 0;
    block_iter_init(&it, ix, BLOCK_CMP_IKEY);
    for (block_iter_seek_first(&it); block_iter_valid(&it); block_iter_next(&it))
        entries++;
    int ok = block_iter_status(&it) == ENG_OK && entries == n;
    block_iter_cleanup(&it);
    if (!ok || !(r->ix_prefix = malloc((size_t)n * 2 * sizeof(uint64_t)))) return;
    slice a = ikey_user_key(first), b = ikey_user_key(last);
    size_t lcp = 0;
    while (lcp < a.size && lcp < b.size && a.data[lcp] == b.data[lcp])
        lcp++;
    for (uint32_t i = 0; i < n; i++) {
        if (!block_restart_key(ix, i, BLOCK_CMP_IKEY, &k)) {
            free(r->ix_prefix);
            r->ix_prefix = NULL;
            return;
        }
        r->ix_prefix[2 * i] = key_prefix(ikey_user_key(k), lcp);
        r->ix_prefix[2 * i + 1] = key_prefix(ikey_user_key(k), lcp + 8);
    }
    r->ix_n = n;
    r->ix_lcp = lcp;
    r->ix_lcp_data = a.data;
}

/* Whether index entry i is < target: by its 16 prefix bytes (p, p2:
 * target's) alone unless they tie, then by the whole key. Two words, not
 * one: a table holding hashes and index entries shares no prefix (ix_lcp
 * 0), and 8 bytes ("k" db "user:1") tied in three comparisons of four.
 * REQUIRES: ix_prefix. */
static int index_entry_lt(const sst_reader *r, uint32_t i, uint64_t p, uint64_t p2, slice target)
{
    uint64_t q = r->ix_prefix[2 * i], q2 = r->ix_prefix[2 * i + 1];
    slice k;
    if (q != p) return q < p;
    if (q2 != p2) return q2 < p2;
    return block_restart_key(&r->index, i, BLOCK_CMP_IKEY, &k) && ikey_compare(k, target) < 0;
}

/* The position of the first index entry >= target, ix_n when there is
 * none. REQUIRES: ix_prefix. A binary search for the last entry < target
 * over the prefix array, comparing full keys only where prefixes tie. */
static uint32_t index_find(const sst_reader *r, slice target)
{
    slice tu = ikey_user_key(target);
    size_t m = tu.size < r->ix_lcp ? tu.size : r->ix_lcp;
    int c = m ? memcmp(tu.data, r->ix_lcp_data, m) : 0;
    if (c == 0 && tu.size < r->ix_lcp) c = -1;
    if (c != 0) /* below or above every index key */
        return c < 0 ? 0 : r->ix_n;
    uint64_t p = key_prefix(tu, r->ix_lcp), p2 = key_prefix(tu, r->ix_lcp + 8);
    uint32_t left = 0, right = r->ix_n - 1;
    while (left < right) {
        uint32_t mid = left + (right - left + 1) / 2;
        if (index_entry_lt(r, mid, p, p2, target))
            left = mid;
        else
            right = mid - 1;
    }
    return index_entry_lt(r, left, p, p2, target) ? left + 1 : left;
}

/* Positions ii (over r->index) at the first index entry >= target. */
void sst_index_seek(const sst_reader *r, block_iter *ii, slice target)
{
    if (!r->ix_prefix) {
        block_iter_seek(ii, target);
        return;
    }
    uint32_t i = index_find(r, target);
    if (i == 0) {
        block_iter_seek_first(ii);
    } else {
        /* entry i - 1 is < target: the scan from it stops at entry i */
        block_iter_seek_from(ii, i - 1, target);
    }
}

/* ---- open and close ---------------------------------------------------- */

static eng_status read_footer(sst_reader *r, sst_handle hs[4])
{
    if (r->file_size < SST_FOOTER_SIZE) return sst_corrupt(r, 0, "file too short for a footer");
    char f[SST_FOOTER_SIZE];
    uint64_t off = r->file_size - SST_FOOTER_SIZE;
    eng_status s = env_pread_all(r->fd, f, sizeof(f), off, r->path);
    if (s != ENG_OK) return s;
    if (dec_fixed64(f + SST_FOOTER_MAGIC_OFFSET) != SST_MAGIC)
        return sst_corrupt(r, off + SST_FOOTER_MAGIC_OFFSET, "bad magic number (not a table file)");
    if (eng_checksum(f, SST_FOOTER_CHECKSUM_OFFSET) != dec_fixed32(f + SST_FOOTER_CHECKSUM_OFFSET))
        return sst_corrupt(r, off, "footer checksum mismatch");
    uint32_t version = dec_fixed32(f + SST_FOOTER_VERSION_OFFSET);
    if (version != SST_FORMAT_VERSION && version != SST_FORMAT_VERSION_DICT)
        return sst_corrupt(r, off + SST_FOOTER_VERSION_OFFSET, "unsupported table format version");
    r->props.format_version = version;
    for (int i = 0; i < 4; i++) {
        hs[i].offset = dec_fixed64(f + 16 * i);
        hs[i].size = dec_fixed64(f + 16 * i + 8);
    }
    r->data_end = off;
    return ENG_OK;
}

static eng_status read_properties(sst_reader *r, sst_handle h)
{
    block b;
    eng_status s = read_block(r, h, &b);
    if (s != ENG_OK) return s;
    block_iter it;
    block_iter_init(&it, &b, BLOCK_CMP_BYTEWISE);
    for (block_iter_seek_first(&it); block_iter_valid(&it); block_iter_next(&it)) {
        slice k = block_iter_key(&it), v = block_iter_value(&it);
        uint64_t x;
        if (!dec_varint64(v.data, v.data + v.size, &x)) {
            s = sst_corrupt(r, h.offset, "bad properties block");
            break;
        }
        static const struct {
            const char *name;
            size_t off;
        } known[] = {
            {SST_PROP_DATA_BLOCKS, offsetof(sst_props, data_blocks)},
            {SST_PROP_DICT_OFFSET, offsetof(sst_props, dict_offset)},
            {SST_PROP_DICT_SIZE, offsetof(sst_props, dict_size)},
            {SST_PROP_ENTRIES, offsetof(sst_props, entries)},
            {SST_PROP_FILE_NUMBER, offsetof(sst_props, file_number)},
            {SST_PROP_RANGE_DELETIONS, offsetof(sst_props, range_deletions)},
            {SST_PROP_SEQ_LARGEST, offsetof(sst_props, largest_seq)},
            {SST_PROP_SEQ_SMALLEST, offsetof(sst_props, smallest_seq)},
        };
        for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
            if (slice_compare(k, slice_make(known[i].name, strlen(known[i].name))) == 0)
                memcpy((char *)&r->props + known[i].off, &x, sizeof(x));
    }
    if (s == ENG_OK && block_iter_status(&it) != ENG_OK)
        s = sst_corrupt(r, h.offset, "bad properties block");
    r->entries = r->props.entries;
    r->range_deletion_count = r->props.range_deletions;
    block_iter_cleanup(&it);
    block_release(&b);
    return s;
}

/* Reads the dictionary a version 2 table names in its properties: a raw
 * block that zstd accepts as a dictionary. */
static eng_status read_dict(sst_reader *r)
{
    if (r->props.format_version != SST_FORMAT_VERSION_DICT) return ENG_OK;
    sst_handle h = {r->props.dict_offset, r->props.dict_size};
    if (h.size == 0) return sst_corrupt(r, r->data_end, "version 2 table without a dictionary");
    eng_status s = sst_check_handle(r, h);
    if (s != ENG_OK) return s;
    char *raw = malloc(h.size + SST_BLOCK_TRAILER_SIZE);
    if (!raw) return env_error(ENG_NOMEM, "table %s: out of memory", r->path);
    s = env_pread_all(r->fd, raw, h.size + SST_BLOCK_TRAILER_SIZE, h.offset, r->path);
    if (s == ENG_OK && eng_checksum(raw, h.size + 1) != dec_fixed32(raw + h.size + 1))
        s = sst_corrupt(r, h.offset, "dictionary checksum mismatch");
    if (s == ENG_OK && raw[h.size] != SST_COMPRESSION_NONE)
        s = sst_corrupt(r, h.offset, "compressed dictionary block");
    /* a trained dictionary (its magic, then entropy tables zstd checks) */
    if (s == ENG_OK &&
        (ZSTD_getDictID_fromDict(raw, h.size) == 0 || !(r->ddict = ZSTD_createDDict(raw, h.size))))
        s = sst_corrupt(r, h.offset, "bad compression dictionary");
    free(raw);
    return s;
}

/* Checks every range deletion once so sst_reader_range_dels cannot fail. */
static eng_status check_range_dels(sst_reader *r, sst_handle h)
{
    block_iter it;
    block_iter_init(&it, &r->range_dels, BLOCK_CMP_IKEY);
    uint64_t n = 0;
    int bad = 0;
    for (block_iter_seek_first(&it); block_iter_valid(&it); block_iter_next(&it), n++)
        bad |= ikey_type(block_iter_key(&it)) != ENG_TYPE_RANGE_DELETION;
    bad |= block_iter_status(&it) != ENG_OK || n != r->range_deletion_count;
    block_iter_cleanup(&it);
    return bad ? sst_corrupt(r, h.offset, "bad range deletion block") : ENG_OK;
}

eng_status sst_reader_open(const char *path, uint64_t file_number, block_cache *cache,
                           sst_reader **out)
{
    *out = NULL;
    sst_reader *r = calloc(1, sizeof(*r));
    if (!r || !(r->path = strdup(path))) {
        free(r);
        return env_error(ENG_NOMEM, "open table %s: out of memory", path);
    }
    r->file_number = file_number;
    r->cache = cache;
    eng_status s = env_open_read(path, &r->fd);
    if (s != ENG_OK) {
        free(r->path);
        free(r);
        return s == ENG_NOTFOUND ? env_error(ENG_CORRUPTION, "table %s is missing", path) : s;
    }
    sst_handle hs[4]; /* range_del, filter, properties, index */
    /* the size of the file we hold open, not of whatever is at path now */
    s = env_fd_size(r->fd, &r->file_size, path);
    if (s == ENG_OK) s = read_footer(r, hs);
    if (s == ENG_OK) s = read_block(r, hs[3], &r->index);
    if (s == ENG_OK) build_index_prefixes(r);
    if (s == ENG_OK) s = read_properties(r, hs[2]);
    if (s == ENG_OK) s = read_dict(r);
    if (s == ENG_OK) s = read_block(r, hs[0], &r->range_dels);
    if (s == ENG_OK) s = check_range_dels(r, hs[0]);
    if (s == ENG_OK) s = read_contents(r, hs[1], &r->filter, &r->filter_len);
    /* a skip list that does not parse (it passed its checksum, so a writer
     * bug) would leave keys unaccounted for: no filter then */
    if (s == ENG_OK && bloom_split(r->filter, r->filter_len, &r->filter_len, &r->skips, &r->nskips))
        r->filter_len = 0;
    if (s != ENG_OK) {
        sst_reader_close(r);
        return s;
    }
    *out = r;
    return ENG_OK;
}

void sst_reader_close(sst_reader *r)
{
    if (!r) return;
    env_close(r->fd, r->path);
    block_release(&r->index);
    free(r->ix_prefix);
    block_release(&r->range_dels);
    free(r->filter);
    free(r->skips);
    ZSTD_freeDDict(r->ddict);
    free(r->path);
    free(r);
}

uint64_t sst_reader_file_size(const sst_reader *r)
{
    return r->file_size;
}

void sst_reader_props(const sst_reader *r, sst_props *out)
{
    *out = r->props;
}

uint64_t sst_reader_bloom_useful(const sst_reader *r)
{
    return __atomic_load_n(&r->bloom_useful, __ATOMIC_RELAXED);
}

void sst_reader_range_dels(sst_reader *r,
                           void (*fn)(void *ctx, slice start, slice end, uint64_t seq), void *ctx)
{
    block_iter it;
    block_iter_init(&it, &r->range_dels, BLOCK_CMP_IKEY);
    for (block_iter_seek_first(&it); block_iter_valid(&it); block_iter_next(&it)) {
        slice k = block_iter_key(&it);
        fn(ctx, ikey_user_key(k), block_iter_value(&it), ikey_sequence(k));
    }
    block_iter_cleanup(&it);
}

/* ---- point lookups ----------------------------------------------------- */

/* The outputs of a point lookup (sst_reader_get). */
typedef struct get_out {
    int *type;
    uint64_t *found_seq;
    char **value;
    size_t *vlen;
} get_out;

eng_status sst_search_block(const sst_reader *r, sst_handle h, const block *b, slice key,
                            slice target, int *type, uint64_t *found_seq, slice *value,
                            int *past_end)
{
    return sst_search_block_from(r, h, b, key, target, SST_NO_RESTART, type, found_seq, value,
                                 past_end);
}

eng_status sst_search_block_from(const sst_reader *r, sst_handle h, const block *b, slice key,
                                 slice target, uint32_t restart, int *type, uint64_t *found_seq,
                                 slice *value, int *past_end)
{
    block_iter bi;
    block_iter_init(&bi, b, BLOCK_CMP_IKEY);
    if (restart == SST_NO_RESTART)
        block_iter_seek(&bi, target);
    else
        block_iter_seek_from(&bi, restart, target);
    eng_status s = ENG_NOTFOUND;
    *past_end = 0;
    if (block_iter_valid(&bi)) {
        slice k = block_iter_key(&bi);
        int t = ikey_type(k);
        if (slice_compare(ikey_user_key(k), key) != 0) {
            /* the newest visible version would have been here */
        } else if (t != ENG_TYPE_VALUE && t != ENG_TYPE_DELETION) {
            s = sst_corrupt(r, h.offset, "bad entry type in data block");
        } else {
            *type = t;
            *found_seq = ikey_sequence(k);
            *value = t == ENG_TYPE_VALUE ? block_iter_value(&bi) : slice_make(NULL, 0);
            s = ENG_OK;
        }
    } else if (block_iter_status(&bi) != ENG_OK) {
        s = sst_corrupt(r, h.offset, "bad entry in data block");
    } else {
        *past_end = 1;
    }
    block_iter_cleanup(&bi);
    return s;
}

/* sst_search_block in the data block at h, the value copied out. */
static eng_status get_in_block(sst_reader *r, sst_handle h, slice key, slice target,
                               uint32_t restart, get_out o, int *past_end)
{
    block_ref br;
    eng_status s = sst_get_data_block(r, h, 1, &br);
    *past_end = 0;
    if (s != ENG_OK) return s;
    slice v;
    s = sst_search_block_from(r, h, br.b, key, target, restart, o.type, o.found_seq, &v, past_end);
    if (s == ENG_OK) {
        *o.value = NULL;
        *o.vlen = 0;
        if (*o.type == ENG_TYPE_VALUE) {
            *o.value = malloc(v.size ? v.size : 1);
            if (!*o.value) abort();
            if (v.size) memcpy(*o.value, v.data, v.size);
            *o.vlen = v.size;
        }
    }
    sst_block_ref_release(r, &br);
    return s;
}

/* The lookup through the index block: the block the index iterator points
 * at, or should it end first, the blocks after it. */
static eng_status get_from_blocks(sst_reader *r, block_iter *ii, slice key, slice target, get_out o)
{
    for (; block_iter_valid(ii); block_iter_next(ii)) {
        sst_handle h;
        int past_end = 0;
        eng_status s = sst_index_handle(r, ii, &h);
        if (s == ENG_OK) s = get_in_block(r, h, key, target, SST_NO_RESTART, o, &past_end);
        if (!past_end) return s;
    }
    if (block_iter_status(ii) != ENG_OK) return sst_corrupt(r, r->index.size, "bad index block");
    return ENG_NOTFOUND;
}

int sst_reader_filter_may_match(const sst_reader *r, slice key, uint64_t hash)
{
    if (!r->filter_len || bloom_may_match(r->filter, r->filter_len, hash)) return 1;
    return r->nskips && bloom_skipped(r->skips, r->nskips, key); /* not in the bits */
}

int sst_reader_may_match(sst_reader *r, slice key, uint64_t hash)
{
    if (sst_reader_filter_may_match(r, key, hash)) return 1;
    __atomic_fetch_add(&r->bloom_useful, 1, __ATOMIC_RELAXED);
    return 0;
}

eng_status sst_reader_get(sst_reader *r, slice key, uint64_t seq, int *type, uint64_t *found_seq,
                          char **value, size_t *vlen)
{
    if (!sst_reader_may_match(r, key, bloom_hash(key))) return ENG_NOTFOUND;
    return sst_reader_get_unfiltered(r, key, seq, type, found_seq, value, vlen);
}

eng_status sst_reader_get_located(sst_reader *r, slice key, uint64_t hash, uint64_t seq, int *type,
                                  uint64_t *found_seq, char **value, size_t *vlen)
{
    sst_handle h;
    uint32_t restart;
    char stack[256];
    if (key.size + 8 > sizeof(stack) || !sst_hint_take(r, key, hash, &h, &restart))
        return sst_reader_get_unfiltered(r, key, seq, type, found_seq, value, vlen);
    if (seq > ENG_MAX_SEQUENCE) seq = ENG_MAX_SEQUENCE;
    memcpy(stack, key.data, key.size);
    enc_fixed64(stack + key.size, ikey_pack_trailer(seq, ENG_TYPE_SEEK));
    get_out o = {type, found_seq, value, vlen};
    int past_end = 0;
    eng_status s = get_in_block(r, h, key, slice_make(stack, key.size + 8), restart, o, &past_end);
    if (!past_end) return s;
    /* Every entry of the block is below (key, seq): an older version in a
     * later block, or the key absent. */
    return sst_reader_get_unfiltered(r, key, seq, type, found_seq, value, vlen);
}

eng_status sst_reader_get_unfiltered(sst_reader *r, slice key, uint64_t seq, int *type,
                                     uint64_t *found_seq, char **value, size_t *vlen)
{
    if (seq > ENG_MAX_SEQUENCE) seq = ENG_MAX_SEQUENCE;
    char stack[256];
    char *t = key.size + 8 <= sizeof(stack) ? stack : malloc(key.size + 8);
    if (!t) abort();
    if (key.size) memcpy(t, key.data, key.size);
    enc_fixed64(t + key.size, ikey_pack_trailer(seq, ENG_TYPE_SEEK));
    slice target = slice_make(t, key.size + 8);
    get_out o = {type, found_seq, value, vlen};
    block_iter ii;
    block_iter_init(&ii, &r->index, BLOCK_CMP_IKEY);
    sst_index_seek(r, &ii, target);
    eng_status s = get_from_blocks(r, &ii, key, target, o);
    block_iter_cleanup(&ii);
    if (t != stack) free(t);
    return s;
}
