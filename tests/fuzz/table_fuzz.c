/*
 * table_fuzz.c -- libFuzzer target for reading table files, damaged or not
 * (table_reader.c, table_builder.c, block.c, bloom.c, cache.c).
 *
 *   input = flags:u8 rest
 *   flags = bit 0 variant, bit 1 use a block cache, bit 2 iterators fill
 *           it, bit 3 built mode
 *
 * Damage mode (bit 3 clear). Once per process two small valid tables are
 * built in-process with sst_builder from a fixed model (several versions
 * per key, deletions, long values, range deletions): variant 0 with zstd
 * blocks and a bloom filter, variant 1 raw with no filter, both with small
 * blocks so there are many. The rest of the input damages a copy of one:
 *
 *   edit  = op:u8 pos:u16 (little-endian) val:u8
 *           op & 3: 0 xor val, 1 set to val, 2 truncate to pos,
 *                   3 flip bit (val & 7); op & 4: pos counts from the end
 *
 * Built mode (bit 3 set). The rest describes the entries of a table (see
 * fuzz_built), which is built with options from the input and read back
 * undamaged, so the reader's and builder's logic (index separators, the
 * index prefix search, prefix compression across blocks, the bloom
 * filter) meets arbitrary keys.
 *
 * The table is then opened and read: point lookups (present and absent
 * keys at several snapshots), full forward and backward scans, seeks with
 * next/prev, and the range deletions. Errors are fine once the file
 * differs from the original; crashes, overreads and leaks are not. And
 * wrong data is not: every answer given must be the model's -- a lookup
 * says OK or NOTFOUND exactly as the model does, a scan yields a prefix of
 * the model (all of it if it ends without an error), a seek lands on the
 * model's lower bound. The one exception is an input that forges a block:
 * when a block (or the footer) whose bytes changed still passes its
 * checksum -- libFuzzer can learn checksum values from comparisons -- or
 * the file was truncated, the file may legitimately hold other data, so
 * only the memory-safety checks apply.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "engine/block.h"
#include "engine/cache.h"
#include "engine/dbformat.h"
#include "engine/table.h"
#include "engine/table_format.h"

#define NKEYS 120
#define MAX_EDITS 64
#define MAX_KEY 600 /* longest user key, plus room to extend it */

typedef struct entry {
    buf ikey;
    buf value;
} entry;

typedef struct rdel {
    char start[16], end[16];
    uint64_t seq;
} rdel;

/* The model the table under test must match: entries in Invariant K1
 * order, and how many range deletions (rdels[] or none). */
static entry *model;
static size_t nmodel, nmodel_rdels;
/* The model of the two prebuilt tables. */
static entry base_model[NKEYS * 3];
static size_t nbase;
static const rdel rdels[] = {
    {"k0010", "k0020", 900}, {"k0050", "k0051", 901}, {"k0100", "k9999", 902}};
#define NRDELS (sizeof(rdels) / sizeof(rdels[0]))

typedef struct region {
    uint64_t off, len; /* a block with its trailer, or the footer */
    int footer;
} region;

typedef struct variant {
    char *bytes;
    size_t len;
    region regions[512];
    size_t nregions;
} variant;

static variant variants[2];
static char dir[64], path[96];
static int initialized;

static void user_key(char *out, unsigned i)
{
    snprintf(out, 16, "k%04u", i * 7);
}

static void build_model(void)
{
    uint64_t seq = 1;
    for (unsigned i = 0; i < NKEYS; i++) {
        char uk[16];
        user_key(uk, i);
        unsigned versions = 1 + i % 3;
        /* newest first (K1): give the versions descending sequences */
        uint64_t top = seq + versions - 1;
        for (unsigned v = 0; v < versions; v++) {
            entry *e = &base_model[nbase++];
            int type = (i + v) % 5 == 0 ? ENG_TYPE_DELETION : ENG_TYPE_VALUE;
            memset(e, 0, sizeof(*e));
            ikey_append(&e->ikey, slice_make(uk, strlen(uk)), top - v, type);
            if (type == ENG_TYPE_VALUE) {
                size_t vl = (i * 13 + v * 5) % 40;
                if (i % 17 == 3) vl = 300; /* a long, compressible value */
                for (size_t j = 0; j < vl; j++) {
                    char c = (char)('a' + (i + j * (v + 1)) % 26);
                    buf_append(&e->value, &c, 1);
                }
            }
        }
        seq += versions;
    }
}

static void read_file(const char *p, variant *v)
{
    int fd = open(p, O_RDONLY);
    off_t n = fd < 0 ? -1 : lseek(fd, 0, SEEK_END);
    if (n <= 0) abort();
    v->bytes = malloc((size_t)n);
    if (!v->bytes || pread(fd, v->bytes, (size_t)n, 0) != n) abort();
    v->len = (size_t)n;
    close(fd);
}

/* Reads the stored contents of the (valid, base) block at h, inflating a
 * zstd block; the caller frees *out. */
static void base_block(const variant *v, sst_handle h, char **out, size_t *n)
{
    const char *p = v->bytes + h.offset;
    if (p[h.size] == SST_COMPRESSION_NONE) {
        *out = malloc(h.size ? h.size : 1);
        memcpy(*out, p, h.size);
        *n = h.size;
        return;
    }
    ZSTD_DCtx *d = ZSTD_createDCtx();
    ZSTD_DCtx_setParameter(d, ZSTD_d_format, ZSTD_f_zstd1_magicless);
    ZSTD_frameHeader zfh;
    if (ZSTD_getFrameHeader_advanced(&zfh, p, h.size, ZSTD_f_zstd1_magicless) != 0) abort();
    *n = (size_t)zfh.frameContentSize;
    *out = malloc(*n ? *n : 1);
    if (ZSTD_decompressDCtx(d, *out, *n, p, h.size) != *n) abort();
    ZSTD_freeDCtx(d);
}

static void add_region(variant *v, uint64_t off, uint64_t len, int footer)
{
    if (v->nregions == sizeof(v->regions) / sizeof(v->regions[0])) abort();
    v->regions[v->nregions++] = (region){off, len, footer};
}

/* Finds where every block of the base table lies: the footer's four
 * handles, and the data blocks named by the index. */
static void map_regions(variant *v)
{
    const char *f = v->bytes + v->len - SST_FOOTER_SIZE;
    add_region(v, v->len - SST_FOOTER_SIZE, SST_FOOTER_SIZE, 1);
    sst_handle hs[4];
    for (int i = 0; i < 4; i++) {
        hs[i].offset = dec_fixed64(f + 16 * i);
        hs[i].size = dec_fixed64(f + 16 * i + 8);
        add_region(v, hs[i].offset, hs[i].size + SST_BLOCK_TRAILER_SIZE, 0);
    }
    char *contents;
    size_t n;
    base_block(v, hs[3], &contents, &n);
    block b;
    if (block_parse(&b, contents, n, contents) != ENG_OK) abort();
    block_iter it;
    block_iter_init(&it, &b, BLOCK_CMP_IKEY);
    for (block_iter_seek_first(&it); block_iter_valid(&it); block_iter_next(&it)) {
        slice hv = block_iter_value(&it);
        sst_handle h;
        if (!sst_handle_get(hv.data, hv.data + hv.size, &h)) abort();
        add_region(v, h.offset, h.size + SST_BLOCK_TRAILER_SIZE, 0);
    }
    if (block_iter_status(&it) != ENG_OK) abort();
    block_iter_cleanup(&it);
    block_release(&b);
    uint64_t covered = 0; /* the regions must tile the file */
    for (size_t i = 0; i < v->nregions; i++)
        covered += v->regions[i].len;
    if (covered != v->len) abort();
}

static void build_variant(int which)
{
    sst_options o = {which ? 128 : 256, which ? 0 : 1, which ? 0 : 10};
    sst_builder *b;
    if (sst_builder_new(path, &o, &b) != ENG_OK) abort();
    for (size_t i = 0; i < nbase; i++) {
        const entry *e = &base_model[i];
        if (sst_builder_add(b, slice_make(e->ikey.data, e->ikey.len),
                            slice_make(e->value.data, e->value.len)) != ENG_OK)
            abort();
    }
    for (size_t i = 0; i < NRDELS; i++)
        sst_builder_add_range_del(b, slice_make(rdels[i].start, strlen(rdels[i].start)),
                                  slice_make(rdels[i].end, strlen(rdels[i].end)), rdels[i].seq);
    sst_file_info info;
    if (sst_builder_finish(b, &info) != ENG_OK) abort();
    sst_file_info_free(&info);
    read_file(path, &variants[which]);
    if (variants[which].len > 65535) abort(); /* edits address 16 bits */
    map_regions(&variants[which]);
}

static void cleanup(void)
{
    unlink(path);
    rmdir(dir);
}

static void init(void)
{
    if (initialized) return;
    initialized = 1;
    int n = snprintf(dir, sizeof(dir), "%s/table_fuzz_",
                     access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    memset(dir + n, 'X', 6); /* the mkdtemp template */
    dir[n + 6] = 0;
    if (!mkdtemp(dir)) abort();
    snprintf(path, sizeof(path), "%s/000001.sst", dir);
    atexit(cleanup);
    build_model();
    build_variant(0);
    build_variant(1);
}

/* ---- the checks ------------------------------------------------------------ */

static uint64_t rng_state;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

typedef struct ctx {
    int strict;    /* answers must match the model */
    int unchanged; /* the file is the original: no errors allowed either */
} ctx;

static void check_error(const ctx *c, eng_status s)
{
    if (s != ENG_CORRUPTION || c->unchanged) abort();
}

static size_t lower_bound(slice t)
{
    size_t lo = 0, hi = nmodel;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ikey_compare(slice_make(model[mid].ikey.data, model[mid].ikey.len), t) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Sets t to the internal key (uk, seq, type); t holds uk.size + 8 bytes. */
static slice make_ikey(char *t, slice uk, uint64_t seq, int type)
{
    if (uk.size) memcpy(t, uk.data, uk.size);
    enc_fixed64(t + uk.size, ikey_pack_trailer(seq, type));
    return slice_make(t, uk.size + 8);
}

/* The model's answer to a lookup of uk at seq: index or -1. */
static long model_get(slice uk, uint64_t seq)
{
    char t[MAX_KEY + 8];
    size_t i = lower_bound(make_ikey(t, uk, seq, ENG_TYPE_SEEK));
    if (i == nmodel) return -1;
    slice k = slice_make(model[i].ikey.data, model[i].ikey.len);
    return slice_compare(ikey_user_key(k), uk) == 0 ? (long)i : -1;
}

/* A user key to look for: a model key, or now and then one next to it. */
static slice pick_user_key(char *out)
{
    size_t n = 0;
    if (nmodel) {
        const entry *e = &model[rnd() % nmodel];
        n = e->ikey.len - 8;
        memcpy(out, e->ikey.data, n);
    }
    switch (rnd() % 8) {
    case 0:
        out[n++] = '0';
        break; /* between two keys */
    case 1:
        out[n++] = (char)0xff;
        break;
    case 2:
        n -= n > 0;
        break;
    case 3:
        if (n && (unsigned char)out[n - 1] < 0xff) out[n - 1]++;
        break;
    default:
        break;
    }
    return slice_make(out, n);
}

static void check_get(sst_reader *r, const ctx *c, slice uk, uint64_t seq)
{
    int type = -1;
    uint64_t fseq = 0;
    char *val = NULL;
    size_t vlen = 0;
    eng_status s = sst_reader_get(r, uk, seq, &type, &fseq, &val, &vlen);
    if (s != ENG_OK && s != ENG_NOTFOUND) {
        check_error(c, s);
        return;
    }
    long want = model_get(uk, seq);
    if (c->strict) {
        if ((s == ENG_OK) != (want >= 0)) abort();
        if (s == ENG_OK) {
            slice k = slice_make(model[want].ikey.data, model[want].ikey.len);
            if (type != ikey_type(k) || fseq != ikey_sequence(k)) abort();
            if (type == ENG_TYPE_VALUE) {
                if (!val || vlen != model[want].value.len) abort();
                if (vlen && memcmp(val, model[want].value.data, vlen) != 0) abort();
            } else if (val) {
                abort();
            }
        }
    }
    free(val);
}

static int at_model(const iter *it, size_t i)
{
    slice k = iter_key(it), v = iter_value(it);
    const entry *e = &model[i];
    return k.size == e->ikey.len && memcmp(k.data, e->ikey.data, k.size) == 0 &&
           v.size == e->value.len && (v.size == 0 || memcmp(v.data, e->value.data, v.size) == 0);
}

/* After a move that should land on model entry `want` (nmodel: past the
 * end / before the start). Returns 0 when the iterator is invalid. */
static int check_pos(const iter *it, const ctx *c, size_t want)
{
    if (!iter_valid(it)) {
        eng_status s = iter_status(it);
        if (s != ENG_OK)
            check_error(c, s);
        else if (c->strict && want != nmodel)
            abort(); /* an entry went missing without an error */
        return 0;
    }
    if (iter_status(it) != ENG_OK) abort();
    slice k = iter_key(it);
    volatile unsigned sum = 0; /* touch the bytes: ASan checks them */
    for (size_t i = 0; i < k.size; i++)
        sum += (unsigned char)k.data[i];
    slice v = iter_value(it);
    for (size_t i = 0; i < v.size; i++)
        sum += (unsigned char)v.data[i];
    if (c->strict && (want == nmodel || !at_model(it, want))) abort();
    return 1;
}

static void check_scans(sst_reader *r, const ctx *c, int fill)
{
    iter *it = sst_reader_iter(r, fill);
    size_t i = 0;
    for (iter_seek_first(it); check_pos(it, c, i); iter_next(it))
        i++;
    iter_free(it);

    it = sst_reader_iter(r, fill);
    i = nmodel;
    iter_seek_last(it);
    while (check_pos(it, c, i ? i - 1 : nmodel)) {
        i--;
        iter_prev(it);
    }
    iter_free(it);
}

static void check_seeks(sst_reader *r, const ctx *c, int fill)
{
    iter *it = sst_reader_iter(r, fill);
    for (int n = 0; n < 8; n++) {
        char uk[MAX_KEY], t[MAX_KEY + 8];
        uint64_t seq = rnd() % 2 ? ENG_MAX_SEQUENCE : rnd() % 400;
        slice target = make_ikey(t, pick_user_key(uk), seq, ENG_TYPE_SEEK);
        size_t want = lower_bound(target);
        iter_seek(it, target);
        if (!check_pos(it, c, want)) continue;
        if (rnd() & 1) {
            iter_next(it);
            check_pos(it, c, want + 1);
        } else {
            iter_prev(it);
            check_pos(it, c, want ? want - 1 : nmodel);
        }
    }
    iter_free(it);
}

typedef struct rd_ctx {
    const ctx *c;
    size_t n;
} rd_ctx;

static void check_rdel(void *arg, slice start, slice end, uint64_t seq)
{
    rd_ctx *rc = arg;
    size_t i = rc->n++;
    volatile unsigned sum = 0;
    for (size_t j = 0; j < start.size; j++)
        sum += (unsigned char)start.data[j];
    for (size_t j = 0; j < end.size; j++)
        sum += (unsigned char)end.data[j];
    if (!rc->c->strict) return;
    /* rdels[] is already in K1 order of its start keys */
    if (i >= nmodel_rdels || seq != rdels[i].seq) abort();
    if (slice_compare(start, slice_make(rdels[i].start, strlen(rdels[i].start))) != 0) abort();
    if (slice_compare(end, slice_make(rdels[i].end, strlen(rdels[i].end))) != 0) abort();
}

static void check_table(sst_reader *r, const ctx *c, int fill)
{
    rd_ctx rc = {c, 0};
    sst_reader_range_dels(r, check_rdel, &rc);
    if (c->strict && rc.n != nmodel_rdels) abort();
    for (int n = 0; n < 40; n++) {
        char uk[MAX_KEY];
        slice k = pick_user_key(uk);
        check_get(r, c, k, rnd() % 3 ? rnd() % 400 : ENG_MAX_SEQUENCE);
    }
    check_scans(r, c, fill);
    check_seeks(r, c, fill);
}

/* ---- the damage ---------------------------------------------------------- */

/* Whether a changed region of the damaged file m (len n) still passes its
 * checksum: then the input forged it. */
static int forged(const variant *v, const char *m, size_t n)
{
    for (size_t i = 0; i < v->nregions; i++) {
        const region *g = &v->regions[i];
        if (g->off + g->len > n) continue;
        if (memcmp(m + g->off, v->bytes + g->off, g->len) == 0) continue;
        const char *p = m + g->off;
        if (g->footer) {
            if (eng_checksum(p, SST_FOOTER_CHECKSUM_OFFSET) ==
                dec_fixed32(p + SST_FOOTER_CHECKSUM_OFFSET))
                return 1;
        } else if (eng_checksum(p, g->len - 4) == dec_fixed32(p + g->len - 4)) {
            return 1;
        }
    }
    return 0;
}

static void write_file(const char *m, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || (n && write(fd, m, n) != (ssize_t)n)) abort();
    close(fd);
}

static void seed_rng(const uint8_t *data, size_t size)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 1099511628211ULL;
    rng_state = h | 1;
}

/* Opens the table at path and runs every check; frees nothing of c's. */
static void open_and_check(const ctx *c, uint8_t flags, size_t n)
{
    block_cache *cache = flags & 2 ? cache_new(64 << 10) : NULL;
    sst_reader *r;
    eng_status s = sst_reader_open(path, 1, cache, &r);
    if (s != ENG_OK) {
        check_error(c, s);
    } else {
        if (sst_reader_file_size(r) != n) abort();
        check_table(r, c, (flags >> 2) & 1);
        sst_reader_close(r);
    }
    if (cache) cache_free(cache);
}

static void fuzz_edits(const uint8_t *data, size_t size)
{
    const variant *v = &variants[data[0] & 1];
    model = base_model;
    nmodel = nbase;
    nmodel_rdels = NRDELS;
    char *m = malloc(v->len);
    if (!m) abort();
    memcpy(m, v->bytes, v->len);
    size_t n = v->len;
    for (size_t e = 1; e + 4 <= size && e < 1 + 4 * MAX_EDITS && n > 0; e += 4) {
        uint8_t op = data[e], val = data[e + 3];
        size_t pos = ((size_t)data[e + 1] | (size_t)data[e + 2] << 8) % n;
        if (op & 4) pos = n - 1 - pos;
        switch (op & 3) {
        case 0:
            m[pos] ^= (char)val;
            break;
        case 1:
            m[pos] = (char)val;
            break;
        case 2:
            n = pos;
            break;
        default:
            m[pos] ^= (char)(1u << (val & 7));
            break;
        }
    }
    ctx c;
    c.unchanged = n == v->len && memcmp(m, v->bytes, n) == 0;
    c.strict = n == v->len && !forged(v, m, n);
    write_file(m, n);
    open_and_check(&c, data[0], n);
    free(m);
}

/* ---- tables built from the input ------------------------------------------ */

typedef struct item {
    char *uk, *val;
    size_t ul, vl;
    uint8_t meta;
    uint64_t top_seq; /* the newest version's sequence */
} item;

static int item_order(const void *a, const void *b)
{
    const item *x = a, *y = b;
    return slice_compare(slice_make(x->uk, x->ul), slice_make(y->uk, y->ul));
}

/* Reads a length byte and that many bytes (or a long filler key). */
static char *take(const uint8_t **p, const uint8_t *end, size_t *len, size_t mod, int allow_long)
{
    size_t n = *p < end ? *(*p)++ : 0;
    char *s;
    if (allow_long && n >= 0xc0) {
        n = (n - 0xc0) * 8 + 1;
        s = malloc(n);
        if (!s) abort();
        memset(s, 'u', n);
        s[n - 1] = *p < end ? (char)*(*p)++ : 0;
    } else {
        n %= mod;
        if (n > (size_t)(end - *p)) n = (size_t)(end - *p);
        s = malloc(n + 1);
        if (!s) abort();
        if (n) memcpy(s, *p, n);
        *p += n;
    }
    *len = n;
    return s;
}

/* Parses the per-key descriptions in [p, end) into *n items, sorted by
 * user key; sequences are handed out in input order. */
static item *parse_items(const uint8_t *p, const uint8_t *end, size_t *n)
{
    item *items = NULL;
    size_t ni = 0, cap = 0;
    uint64_t seq = 1;
    while (p < end) {
        item it;
        it.uk = take(&p, end, &it.ul, 24, 1);
        it.meta = p < end ? *p++ : 0;
        it.val = take(&p, end, &it.vl, 48, 0);
        it.top_seq = seq + it.meta % 3;
        seq += 1 + it.meta % 3;
        if (ni == cap) {
            cap = cap ? 2 * cap : 32;
            items = realloc(items, cap * sizeof(item));
            if (!items) abort();
        }
        items[ni++] = it;
    }
    if (ni) qsort(items, ni, sizeof(item), item_order);
    *n = ni;
    return items;
}

/* The entries of the items in Invariant K1 order (a repeated user key
 * keeps its first item). */
static entry *make_entries(const item *items, size_t ni, size_t *n)
{
    entry *ents = calloc(3 * ni + 1, sizeof(entry));
    size_t nent = 0;
    if (!ents) abort();
    for (size_t i = 0; i < ni; i++) {
        if (i && item_order(&items[i - 1], &items[i]) == 0) continue;
        for (unsigned v = 0; v <= items[i].meta % 3u; v++) {
            entry *e = &ents[nent++];
            int type = (items[i].meta >> (2 + v)) & 1 ? ENG_TYPE_DELETION : ENG_TYPE_VALUE;
            ikey_append(&e->ikey, slice_make(items[i].uk, items[i].ul), items[i].top_seq - v, type);
            if (type == ENG_TYPE_VALUE) {
                buf_append(&e->value, items[i].val, items[i].vl);
                char tag = (char)('0' + v); /* versions differ */
                buf_append(&e->value, &tag, 1);
            }
        }
    }
    *n = nent;
    return ents;
}

static int same_buf(const buf *a, const buf *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

/* Writes the entries to a table at path and checks what finish reports. */
static void build_table(const sst_options *o, const entry *ents, size_t nent)
{
    sst_builder *b;
    if (sst_builder_new(path, o, &b) != ENG_OK) abort();
    for (size_t i = 0; i < nent; i++)
        if (sst_builder_add(b, slice_make(ents[i].ikey.data, ents[i].ikey.len),
                            slice_make(ents[i].value.data, ents[i].value.len)) != ENG_OK)
            abort();
    sst_file_info info;
    if (sst_builder_finish(b, &info) != ENG_OK) abort();
    if (info.entries != nent || info.range_deletions != 0) abort();
    if (nent && (!same_buf(&info.smallest, &ents[0].ikey) ||
                 !same_buf(&info.largest, &ents[nent - 1].ikey)))
        abort();
    sst_file_info_free(&info);
}

/* Input (after the flags byte): options:u8 (block size 32 + (o & 7) * 48,
 * bit 3 zstd, bits 4..7 bloom bits per key), then per user key: key length
 * (>= 0xc0: a long key), key, meta:u8 (versions = 1 + meta % 3; bit 2 + v
 * makes version v a deletion), value length, value. Builds the table and
 * checks it undamaged: every answer must be exact and no error is allowed. */
static void fuzz_built(const uint8_t *data, size_t size)
{
    if (size < 2) return;
    uint8_t opt = data[1];
    sst_options o = {32 + (opt & 7) * 48, (opt >> 3) & 1, opt >> 4};
    size_t ni, nent;
    item *items = parse_items(data + 2, data + size, &ni);
    entry *ents = make_entries(items, ni, &nent);
    build_table(&o, ents, nent);

    model = ents;
    nmodel = nent;
    nmodel_rdels = 0;
    ctx c = {1, 1};
    block_cache *cache = data[0] & 2 ? cache_new(64 << 10) : NULL;
    sst_reader *r;
    if (sst_reader_open(path, 1, cache, &r) != ENG_OK) abort();
    for (size_t i = 0; i < nent; i++) { /* every version, and just below it */
        slice k = slice_make(ents[i].ikey.data, ents[i].ikey.len);
        check_get(r, &c, ikey_user_key(k), ikey_sequence(k));
        check_get(r, &c, ikey_user_key(k), ikey_sequence(k) - 1);
        check_get(r, &c, ikey_user_key(k), ENG_MAX_SEQUENCE);
    }
    check_table(r, &c, (data[0] >> 2) & 1);
    sst_reader_close(r);
    if (cache) cache_free(cache);

    for (size_t i = 0; i < nent; i++) {
        buf_free(&ents[i].ikey);
        buf_free(&ents[i].value);
    }
    free(ents);
    for (size_t i = 0; i < ni; i++) {
        free(items[i].uk);
        free(items[i].val);
    }
    free(items);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init();
    if (size == 0) return 0;
    seed_rng(data, size);
    if (data[0] & 8)
        fuzz_built(data, size);
    else
        fuzz_edits(data, size);
    return 0;
}
