/*
 * env.h -- the few POSIX file operations the engine needs, with errors
 * turned into eng_status and a message recorded for eng_last_error().
 */
#ifndef STRATA_ENV_H
#define STRATA_ENV_H

#include <stddef.h>
#include <stdint.h>
#include "engine.h"

/* Records a formatted message for eng_last_error() on this thread and
 * returns s, so callers can write `return env_error(ENG_IOERR, ...)`. */
eng_status env_error(eng_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

eng_status env_write_all(int fd, const void *p, size_t n, const char *what);
/* pread that retries short reads; ENG_CORRUPTION when the file ends first. */
eng_status env_pread_all(int fd, void *p, size_t n, uint64_t off, const char *what);
eng_status env_fsync(int fd, const char *what);     /* fdatasync */
eng_status env_fsync_dir(const char *dir);
eng_status env_file_size(const char *path, uint64_t *size);
eng_status env_rename(const char *from, const char *to);
eng_status env_truncate(const char *path, uint64_t size);
eng_status env_mkdir_p(const char *dir);
int env_exists(const char *path);
uint64_t env_now_micros(void); /* CLOCK_MONOTONIC */

/* Calls fn for each entry name in dir (not . and ..). */
eng_status env_list_dir(const char *dir, void (*fn)(void *ctx, const char *name), void *ctx);

#endif
