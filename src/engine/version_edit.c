/*
 * version_edit.c -- encoding and decoding of manifest edits. The exact
 * grammar is in manifest_format.md; in short an edit is a sequence of
 * (varint tag, fields) pairs, each tag at most once except the file lists.
 */
#include "version_edit.h"

#include "env.h"
#include "version.h"

#include <stdlib.h>

void edit_init(version_edit *e)
{
    memset(e, 0, sizeof(*e));
}

void edit_clear(version_edit *e)
{
    for (int i = 0; i < e->nadded; i++)
        file_unref(e->added[i].f);
    free(e->added);
    free(e->deleted);
    edit_init(e);
}

void edit_delete_file(version_edit *e, int level, uint64_t number)
{
    if (e->ndeleted == e->cap_deleted) {
        e->cap_deleted = e->cap_deleted ? e->cap_deleted * 2 : 8;
        e->deleted = realloc(e->deleted, sizeof(ve_deleted) * (size_t)e->cap_deleted);
        if (!e->deleted) abort();
    }
    e->deleted[e->ndeleted].level = level;
    e->deleted[e->ndeleted].number = number;
    e->ndeleted++;
}

void edit_add_file(version_edit *e, int level, struct file_meta *f)
{
    if (e->nadded == e->cap_added) {
        e->cap_added = e->cap_added ? e->cap_added * 2 : 8;
        e->added = realloc(e->added, sizeof(ve_added) * (size_t)e->cap_added);
        if (!e->added) abort();
    }
    e->added[e->nadded].level = level;
    e->added[e->nadded].f = f;
    e->nadded++;
}

void edit_encode(const version_edit *e, buf *out)
{
    buf_put_varint(out, VE_TAG_FORMAT);
    buf_put_varint(out, MANIFEST_FORMAT_VERSION);
    if (e->has_log_number) {
        buf_put_varint(out, VE_TAG_LOG_NUMBER);
        buf_put_varint(out, e->log_number);
    }
    if (e->has_next_file) {
        buf_put_varint(out, VE_TAG_NEXT_FILE);
        buf_put_varint(out, e->next_file);
    }
    if (e->has_last_seq) {
        buf_put_varint(out, VE_TAG_LAST_SEQUENCE);
        buf_put_varint(out, e->last_seq);
    }
    for (int i = 0; i < e->ndeleted; i++) {
        buf_put_varint(out, VE_TAG_DELETED_FILE);
        buf_put_varint(out, (uint64_t)e->deleted[i].level);
        buf_put_varint(out, e->deleted[i].number);
    }
    for (int i = 0; i < e->nadded; i++) {
        const file_meta *f = e->added[i].f;
        buf_put_varint(out, VE_TAG_NEW_FILE);
        buf_put_varint(out, (uint64_t)e->added[i].level);
        buf_put_varint(out, f->number);
        buf_put_varint(out, f->file_size);
        buf_put_varint(out, f->entries);
        buf_put_varint(out, f->range_dels);
        buf_put_varint(out, f->smallest_seq);
        buf_put_varint(out, f->largest_seq);
        buf_put_slice(out, slice_make(f->smallest.data, f->smallest.len));
        buf_put_slice(out, slice_make(f->largest.data, f->largest.len));
    }
}

static const char *get_slice(const char *p, const char *end, slice *s)
{
    uint64_t n;
    p = dec_varint64(p, end, &n);
    if (!p || n > (uint64_t)(end - p)) return NULL;
    *s = slice_make(p, (size_t)n);
    return p + n;
}

static const char *decode_new_file(const char *p, const char *end, version_edit *e)
{
    uint64_t level, v[6];
    p = dec_varint64(p, end, &level);
    for (int i = 0; p && i < 6; i++)
        p = dec_varint64(p, end, &v[i]);
    slice sm, lg;
    if (p) p = get_slice(p, end, &sm);
    if (p) p = get_slice(p, end, &lg);
    if (!p || level >= ENG_MAX_LEVELS || sm.size < 8 || lg.size < 8) return NULL;
    file_meta *f = file_meta_new(NULL);
    f->number = v[0];
    f->file_size = v[1];
    f->entries = v[2];
    f->range_dels = v[3];
    f->smallest_seq = v[4];
    f->largest_seq = v[5];
    buf_append(&f->smallest, sm.data, sm.size);
    buf_append(&f->largest, lg.data, lg.size);
    edit_add_file(e, (int)level, f);
    return p;
}

eng_status edit_decode(slice in, version_edit *e)
{
    const char *p = in.data, *end = in.data + in.size;
    const char *why = NULL;
    while (p < end && !why) {
        uint64_t tag, a, b;
        p = dec_varint64(p, end, &tag);
        if (!p) {
            why = "bad tag";
            break;
        }
        switch (tag) {
        case VE_TAG_FORMAT:
            p = dec_varint64(p, end, &a);
            if (!p || a != MANIFEST_FORMAT_VERSION) why = "unknown manifest format version";
            break;
        case VE_TAG_LOG_NUMBER:
            p = dec_varint64(p, end, &e->log_number);
            e->has_log_number = 1;
            break;
        case VE_TAG_NEXT_FILE:
            p = dec_varint64(p, end, &e->next_file);
            e->has_next_file = 1;
            break;
        case VE_TAG_LAST_SEQUENCE:
            p = dec_varint64(p, end, &e->last_seq);
            e->has_last_seq = 1;
            break;
        case VE_TAG_DELETED_FILE:
            p = dec_varint64(p, end, &a);
            if (p) p = dec_varint64(p, end, &b);
            if (p && a < ENG_MAX_LEVELS)
                edit_delete_file(e, (int)a, b);
            else
                why = "bad deleted-file field";
            break;
        case VE_TAG_NEW_FILE:
            p = decode_new_file(p, end, e);
            if (!p) why = "bad new-file field";
            break;
        default:
            why = "unknown tag";
        }
        if (!p && !why) why = "truncated field";
    }
    if (!why) return ENG_OK;
    edit_clear(e);
    return env_error(ENG_CORRUPTION, "manifest edit: %s", why);
}
