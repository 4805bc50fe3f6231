/*
 * env.c -- POSIX file helpers; see env.h.
 */
#include "env.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

static __thread char last_error[512];

const char *eng_last_error(void) { return last_error; }

eng_status env_error(eng_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof(last_error), fmt, ap);
    va_end(ap);
    return s;
}

eng_status env_write_all(int fd, const void *p, size_t n, const char *what)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return env_error(ENG_IOERR, "write %s: %s", what, strerror(errno));
        }
        c += w;
        n -= (size_t)w;
    }
    return ENG_OK;
}

eng_status env_pread_all(int fd, void *p, size_t n, uint64_t off, const char *what)
{
    char *c = p;
    while (n > 0) {
        ssize_t r = pread(fd, c, n, (off_t)off);
        if (r < 0) {
            if (errno == EINTR) continue;
            return env_error(ENG_IOERR, "read %s: %s", what, strerror(errno));
        }
        if (r == 0) return env_error(ENG_CORRUPTION, "read %s: file ends early at %llu", what,
                                     (unsigned long long)off);
        c += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return ENG_OK;
}

eng_status env_fsync(int fd, const char *what)
{
    if (fdatasync(fd) != 0) return env_error(ENG_IOERR, "fsync %s: %s", what, strerror(errno));
    return ENG_OK;
}

eng_status env_fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return env_error(ENG_IOERR, "open dir %s: %s", dir, strerror(errno));
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    if (rc != 0) return env_error(ENG_IOERR, "fsync dir %s: %s", dir, strerror(e));
    return ENG_OK;
}

eng_status env_file_size(const char *path, uint64_t *size)
{
    struct stat st;
    if (stat(path, &st) != 0) return env_error(ENG_IOERR, "stat %s: %s", path, strerror(errno));
    *size = (uint64_t)st.st_size;
    return ENG_OK;
}

eng_status env_rename(const char *from, const char *to)
{
    if (rename(from, to) != 0)
        return env_error(ENG_IOERR, "rename %s -> %s: %s", from, to, strerror(errno));
    return ENG_OK;
}

eng_status env_truncate(const char *path, uint64_t size)
{
    if (truncate(path, (off_t)size) != 0)
        return env_error(ENG_IOERR, "truncate %s: %s", path, strerror(errno));
    return ENG_OK;
}

eng_status env_mkdir_p(const char *dir)
{
    char tmp[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof(tmp)) return env_error(ENG_INVALID, "bad directory name");
    memcpy(tmp, dir, n + 1);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            return env_error(ENG_IOERR, "mkdir %s: %s", tmp, strerror(errno));
        *p = '/';
    }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
        return env_error(ENG_IOERR, "mkdir %s: %s", tmp, strerror(errno));
    return ENG_OK;
}

int env_exists(const char *path) { return access(path, F_OK) == 0; }

uint64_t env_now_micros(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

eng_status env_list_dir(const char *dir, void (*fn)(void *ctx, const char *name), void *ctx)
{
    DIR *d = opendir(dir);
    if (!d) return env_error(ENG_IOERR, "opendir %s: %s", dir, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        fn(ctx, e->d_name);
    }
    closedir(d);
    return ENG_OK;
}
