/*
 * env.h -- every file-system operation of the engine, behind one table of
 * operations, with errors turned into eng_status and a message recorded for
 * eng_last_error().
 *
 * Invariant E1: no engine file calls open, close, write, pread, fsync,
 * fdatasync, rename, unlink, truncate, mkdir, flock or readdir itself; they
 * all go through env_ops (env.c), so that a test can install another table
 * (env_fault.c: fail the Nth call with ENOSPC or EIO, or simulate a power
 * loss that drops everything not fsynced). tests/test_env_only.sh checks E1.
 *
 * Error messages name the file and, for reads and writes, the offset; the
 * errno of the last failing operation is kept per thread (env_last_errno),
 * so that a caller can say "No space left on device" without parsing text.
 */
#ifndef STRATA_ENV_H
#define STRATA_ENV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine.h"

/* The raw operations, POSIX-style: a negative (or -1) return sets errno.
 * Implementations must be thread-safe. */
typedef struct env_ops {
    int (*open)(const char *path, int flags, mode_t mode); /* returns an fd */
    int (*close)(int fd);
    int (*dup)(int fd);
    ssize_t (*write)(int fd, const void *p, size_t n); /* at the file position */
    ssize_t (*pread)(int fd, void *p, size_t n, off_t off);
    int (*fdatasync)(int fd);
    int (*fsync_dir)(const char *dir);
    int (*fd_size)(int fd, uint64_t *size);
    int (*path_size)(const char *path, uint64_t *size); /* ENOENT when absent */
    int (*truncate)(const char *path, off_t size);
    int (*rename)(const char *from, const char *to);
    int (*unlink)(const char *path);
    int (*mkdir)(const char *path, mode_t mode);
    int (*lock)(int fd); /* exclusive, non-blocking flock; EWOULDBLOCK when held */
    /* Calls fn for each entry name of dir (not . and ..). */
    int (*list_dir)(const char *dir, void (*fn)(void *ctx, const char *name), void *ctx);
    int (*link)(const char *from, const char *to); /* a hard link; EXDEV across file systems */
    int (*rmdir)(const char *dir);                 /* an empty directory */
} env_ops;

/* The POSIX implementation. */
const env_ops *env_posix(void);

/* Replaces the operations every engine file uses (NULL: POSIX again). Not
 * synchronized with running engines: install before eng_open and restore
 * after eng_close. Returns the previous table. */
const env_ops *env_install(const env_ops *ops);

/* Records a formatted message for eng_last_error() on this thread and
 * returns s, so callers can write `return env_error(ENG_IOERR, ...)`. */
eng_status env_error(eng_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The errno of the last failing env operation on this thread (0: none);
 * set_last_errno lets a caller repeat an earlier failure's errno with its
 * own message. */
int env_last_errno(void);
void env_set_last_errno(int e);

/* ---- Files ---------------------------------------------------------------
 * `what` is the path (or a description) used in messages. */

/* Opens path for reading. ENG_NOTFOUND (with a message) when it does not exist. */
eng_status env_open_read(const char *path, int *fd);
/* Creates path for writing, truncating any file there. */
eng_status env_create(const char *path, int *fd);
/* Opens (creating) path and takes an exclusive lock on it: ENG_BUSY when
 * another process holds it. */
eng_status env_open_locked(const char *path, int *fd);
/* Closes fd; a failing close is ENG_IOERR (for a written file it can be
 * the report of a failed write-back). fd < 0 is a no-op. */
eng_status env_close(int fd, const char *what);
eng_status env_dup(int fd, int *out, const char *what);

/* Appends all n bytes at the file position; *written (may be NULL) gets the
 * bytes that reached the file before an error. */
eng_status env_write_all(int fd, const void *p, size_t n, const char *what, size_t *written);
/* pread that retries short reads; ENG_CORRUPTION when the file ends first. */
eng_status env_pread_all(int fd, void *p, size_t n, uint64_t off, const char *what);
eng_status env_fsync(int fd, const char *what); /* fdatasync */
eng_status env_fsync_dir(const char *dir);
/* fsyncs the directory holding path (its name becomes durable). */
eng_status env_fsync_parent(const char *path);
eng_status env_fd_size(int fd, uint64_t *size, const char *what);

/* ---- Names --------------------------------------------------------------- */

/* ENG_NOTFOUND (with a message) when path does not exist. */
eng_status env_file_size(const char *path, uint64_t *size);
int env_exists(const char *path);
eng_status env_rename(const char *from, const char *to);
/* ENG_NOTFOUND when path does not exist. */
eng_status env_unlink(const char *path);
eng_status env_truncate(const char *path, uint64_t size);
eng_status env_mkdir_p(const char *dir);
/* Calls fn for each entry name in dir (not . and ..). */
eng_status env_list_dir(const char *dir, void (*fn)(void *ctx, const char *name), void *ctx);
/* Reads a whole small file (at most cap - 1 bytes; longer is ENG_CORRUPTION)
 * into buf, NUL-terminated; *n gets its length. ENG_NOTFOUND when absent. */
eng_status env_read_small(const char *path, char *buf, size_t cap, size_t *n);
/* Copies from into a new file to (created, synced). */
eng_status env_copy_file(const char *from, const char *to);
/* As env_copy_file, but only the first n bytes of from (UINT64_MAX: all);
 * ENG_CORRUPTION when from is shorter. */
eng_status env_copy_prefix(const char *from, const char *to, uint64_t n);
/* A second name `to` for the file `from` (a hard link). The errno of a
 * failure (EXDEV when they are on different file systems) is in
 * env_last_errno(). */
eng_status env_link(const char *from, const char *to);
/* Removes the empty directory dir. ENG_NOTFOUND when it does not exist. */
eng_status env_rmdir(const char *dir);

uint64_t env_now_micros(void); /* CLOCK_MONOTONIC */
int64_t env_unix_ms(void);     /* CLOCK_REALTIME, for reports */

#endif
