/*
 * version_edit.h -- a change to the set of live table files, as recorded in
 * the manifest: files added and deleted per level plus the counters that
 * recovery needs. The record grammar is in manifest_format.md.
 */
#ifndef STRATA_VERSION_EDIT_H
#define STRATA_VERSION_EDIT_H

#include "coding.h"
#include "engine.h"

#define MANIFEST_FORMAT_VERSION 1

/* Field tags of an encoded edit (manifest_format.md). */
enum {
    VE_TAG_FORMAT = 1,
    VE_TAG_LOG_NUMBER = 2,
    VE_TAG_NEXT_FILE = 3,
    VE_TAG_LAST_SEQUENCE = 4,
    VE_TAG_DELETED_FILE = 5,
    VE_TAG_NEW_FILE = 6,
};

struct file_meta;

typedef struct ve_deleted {
    int level;
    uint64_t number;
} ve_deleted;

typedef struct ve_added {
    int level;
    struct file_meta *f; /* the edit holds one reference */
} ve_added;

typedef struct version_edit {
    int has_log_number, has_next_file, has_last_seq;
    uint64_t log_number; /* logs numbered below this are obsolete */
    uint64_t next_file;  /* the next file number to hand out */
    uint64_t last_seq;   /* >= every sequence number in a table */
    int ndeleted, nadded;
    int cap_deleted, cap_added;
    ve_deleted *deleted;
    ve_added *added;
} version_edit;

void edit_init(version_edit *e);
/* Drops the edit's references to its added files. */
void edit_clear(version_edit *e);

void edit_delete_file(version_edit *e, int level, uint64_t number);
/* Adds f at level; takes over the caller's reference to f. */
void edit_add_file(version_edit *e, int level, struct file_meta *f);

/* Appends the encoding of e to out (which the caller owns). */
void edit_encode(const version_edit *e, buf *out);

/* Parses one encoded edit into e (initialized by the caller). On failure
 * returns ENG_CORRUPTION with a message for eng_last_error(); e is then
 * cleared. Added files get refs = 1 held by e. */
eng_status edit_decode(slice in, version_edit *e);

#endif
