/*
 * env.c -- the engine's file operations (env.h): the POSIX table, the
 * installed table every helper calls through (Invariant E1), and the
 * helpers that turn errno into eng_status with a message naming the file
 * and offset.
 */
#include "env.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static __thread char last_error[512];
static __thread int last_errno;

const char *eng_last_error(void)
{
    return last_error;
}
int env_last_errno(void)
{
    return last_errno;
}

void env_set_last_errno(int e)
{
    last_errno = e;
}

eng_status env_error(eng_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof(last_error), fmt, ap);
    va_end(ap);
    return s;
}

/* Records errno e of a failed operation and returns ENG_IOERR with the
 * message "<op> <what>: <strerror>". */
static eng_status io_fail(int e, const char *op, const char *what)
{
    last_errno = e;
    return env_error(ENG_IOERR, "%s %s: %s", op, what, strerror(e));
}

/* ---- The POSIX table ------------------------------------------------------ */

static int px_open(const char *path, int flags, mode_t mode)
{
    return open(path, flags, mode);
}
static int px_close(int fd)
{
    return close(fd);
}
static int px_dup(int fd)
{
    return fcntl(fd, F_DUPFD_CLOEXEC, 0);
}
static ssize_t px_write(int fd, const void *p, size_t n)
{
    return write(fd, p, n);
}
static ssize_t px_pread(int fd, void *p, size_t n, off_t off)
{
    return pread(fd, p, n, off);
}
static int px_fdatasync(int fd)
{
    return fdatasync(fd);
}

static int px_fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

static int px_fd_size(int fd, uint64_t *size)
{
    struct stat st;
    if (fstat(fd, &st) != 0) return -1;
    *size = (uint64_t)st.st_size;
    return 0;
}

static int px_path_size(const char *path, uint64_t *size)
{
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    *size = (uint64_t)st.st_size;
    return 0;
}

static int px_truncate(const char *path, off_t size)
{
    return truncate(path, size);
}
static int px_rename(const char *from, const char *to)
{
    return rename(from, to);
}
static int px_unlink(const char *path)
{
    return unlink(path);
}
static int px_mkdir(const char *path, mode_t mode)
{
    return mkdir(path, mode);
}
static int px_lock(int fd)
{
    return flock(fd, LOCK_EX | LOCK_NB);
}

static int px_list_dir(const char *dir, void (*fn)(void *ctx, const char *name), void *ctx)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        fn(ctx, e->d_name);
    }
    closedir(d);
    return 0;
}

static int px_link(const char *from, const char *to)
{
    return link(from, to);
}
static int px_rmdir(const char *dir)
{
    return rmdir(dir);
}

static const env_ops posix_ops = {
    px_open,      px_close,   px_dup,       px_write,    px_pread,  px_fdatasync,
    px_fsync_dir, px_fd_size, px_path_size, px_truncate, px_rename, px_unlink,
    px_mkdir,     px_lock,    px_list_dir,  px_link,     px_rmdir,
};

static const env_ops *E = &posix_ops;

const env_ops *env_posix(void)
{
    return &posix_ops;
}

const env_ops *env_install(const env_ops *ops)
{
    const env_ops *old = E;
    E = ops ? ops : &posix_ops;
    return old;
}

/* ---- Files ------------------------------------------------------------------ */

eng_status env_open_read(const char *path, int *fd)
{
    *fd = E->open(path, O_RDONLY | O_CLOEXEC, 0);
    if (*fd >= 0) return ENG_OK;
    int e = errno;
    eng_status s = io_fail(e, "open", path);
    return e == ENOENT ? ENG_NOTFOUND : s;
}

eng_status env_create(const char *path, int *fd)
{
    *fd = E->open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    return *fd >= 0 ? ENG_OK : io_fail(errno, "create", path);
}

eng_status env_open_locked(const char *path, int *fd)
{
    *fd = E->open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (*fd < 0) return io_fail(errno, "open", path);
    if (E->lock(*fd) == 0) return ENG_OK;
    int e = errno;
    E->close(*fd);
    *fd = -1;
    if (e == EWOULDBLOCK)
        return env_error(ENG_BUSY, "%s: the database is in use by another process", path);
    return io_fail(e, "lock", path);
}

eng_status env_close(int fd, const char *what)
{
    if (fd < 0) return ENG_OK;
    return E->close(fd) == 0 ? ENG_OK : io_fail(errno, "close", what);
}

eng_status env_dup(int fd, int *out, const char *what)
{
    *out = E->dup(fd);
    return *out >= 0 ? ENG_OK : io_fail(errno, "dup", what);
}

eng_status env_write_all(int fd, const void *p, size_t n, const char *what, size_t *written)
{
    const char *c = p;
    size_t done = 0;
    eng_status s = ENG_OK;
    while (done < n) {
        ssize_t w = E->write(fd, c + done, n - done);
        if (w < 0) {
            if (errno == EINTR) continue;
            s = io_fail(errno, "write", what);
            break;
        }
        if (w == 0) { /* should not happen for a regular file; do not spin */
            s = io_fail(ENOSPC, "write", what);
            break;
        }
        done += (size_t)w;
    }
    if (written) *written = done;
    return s;
}

eng_status env_pread_all(int fd, void *p, size_t n, uint64_t off, const char *what)
{
    char *c = p;
    while (n > 0) {
        ssize_t r = E->pread(fd, c, n, (off_t)off);
        if (r < 0) {
            if (errno == EINTR) continue;
            last_errno = errno;
            return env_error(ENG_IOERR, "read %s at offset %llu: %s", what, (unsigned long long)off,
                             strerror(errno));
        }
        if (r == 0)
            return env_error(ENG_CORRUPTION, "read %s: file ends early at offset %llu", what,
                             (unsigned long long)off);
        c += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return ENG_OK;
}

eng_status env_fsync(int fd, const char *what)
{
    return E->fdatasync(fd) == 0 ? ENG_OK : io_fail(errno, "fsync", what);
}

eng_status env_fsync_dir(const char *dir)
{
    return E->fsync_dir(dir) == 0 ? ENG_OK : io_fail(errno, "fsync directory", dir);
}

eng_status env_fsync_parent(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return env_fsync_dir(".");
    if (slash == path) return env_fsync_dir("/");
    size_t n = (size_t)(slash - path);
    char *dir = malloc(n + 1);
    if (!dir) return env_error(ENG_NOMEM, "out of memory");
    memcpy(dir, path, n);
    dir[n] = 0;
    eng_status s = env_fsync_dir(dir);
    free(dir);
    return s;
}

eng_status env_fd_size(int fd, uint64_t *size, const char *what)
{
    return E->fd_size(fd, size) == 0 ? ENG_OK : io_fail(errno, "stat", what);
}

/* ---- Names -------------------------------------------------------------------- */

eng_status env_file_size(const char *path, uint64_t *size)
{
    if (E->path_size(path, size) == 0) return ENG_OK;
    int e = errno;
    eng_status s = io_fail(e, "stat", path);
    return e == ENOENT ? ENG_NOTFOUND : s;
}

int env_exists(const char *path)
{
    uint64_t size;
    return E->path_size(path, &size) == 0;
}

eng_status env_rename(const char *from, const char *to)
{
    if (E->rename(from, to) == 0) return ENG_OK;
    last_errno = errno;
    return env_error(ENG_IOERR, "rename %s -> %s: %s", from, to, strerror(errno));
}

eng_status env_unlink(const char *path)
{
    if (E->unlink(path) == 0) return ENG_OK;
    int e = errno;
    eng_status s = io_fail(e, "unlink", path);
    return e == ENOENT ? ENG_NOTFOUND : s;
}

eng_status env_truncate(const char *path, uint64_t size)
{
    return E->truncate(path, (off_t)size) == 0 ? ENG_OK : io_fail(errno, "truncate", path);
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
        if (E->mkdir(tmp, 0755) != 0 && errno != EEXIST) return io_fail(errno, "mkdir", tmp);
        *p = '/';
    }
    if (E->mkdir(tmp, 0755) != 0 && errno != EEXIST) return io_fail(errno, "mkdir", tmp);
    return ENG_OK;
}

eng_status env_link(const char *from, const char *to)
{
    return E->link(from, to) == 0 ? ENG_OK : io_fail(errno, "link", to);
}

eng_status env_rmdir(const char *dir)
{
    if (E->rmdir(dir) == 0) return ENG_OK;
    int e = errno;
    eng_status s = io_fail(e, "rmdir", dir);
    return e == ENOENT ? ENG_NOTFOUND : s;
}

eng_status env_list_dir(const char *dir, void (*fn)(void *ctx, const char *name), void *ctx)
{
    return E->list_dir(dir, fn, ctx) == 0 ? ENG_OK : io_fail(errno, "list directory", dir);
}

eng_status env_read_small(const char *path, char *buf, size_t cap, size_t *n)
{
    int fd;
    eng_status s = env_open_read(path, &fd);
    if (s != ENG_OK) return s;
    uint64_t size = 0;
    s = env_fd_size(fd, &size, path);
    if (s == ENG_OK && size >= cap)
        s = env_error(ENG_CORRUPTION, "%s: %llu bytes is too long", path, (unsigned long long)size);
    if (s == ENG_OK && size) s = env_pread_all(fd, buf, (size_t)size, 0, path);
    if (s == ENG_CORRUPTION && size < cap) s = ENG_IOERR; /* it shrank under us */
    env_close(fd, path);
    if (s != ENG_OK) return s;
    buf[size] = 0;
    *n = (size_t)size;
    return ENG_OK;
}

eng_status env_copy_file(const char *from, const char *to)
{
    return env_copy_prefix(from, to, UINT64_MAX);
}

eng_status env_copy_prefix(const char *from, const char *to, uint64_t limit)
{
    int in, out = -1;
    eng_status s = env_open_read(from, &in);
    if (s != ENG_OK) return s;
    uint64_t size = 0, off = 0;
    char *b = malloc(1 << 20);
    if (!b) s = env_error(ENG_NOMEM, "out of memory");
    if (s == ENG_OK) s = env_fd_size(in, &size, from);
    if (s == ENG_OK && limit != UINT64_MAX) {
        if (size < limit)
            s = env_error(ENG_CORRUPTION, "%s: %llu bytes, shorter than the %llu to copy", from,
                          (unsigned long long)size, (unsigned long long)limit);
        size = limit;
    }
    if (s == ENG_OK) s = env_create(to, &out);
    while (s == ENG_OK && off < size) {
        size_t n = size - off < (1u << 20) ? (size_t)(size - off) : (1u << 20);
        s = env_pread_all(in, b, n, off, from);
        if (s == ENG_OK) s = env_write_all(out, b, n, to, NULL);
        off += n;
    }
    if (s == ENG_OK) s = env_fsync(out, to);
    eng_status c = env_close(out, to);
    if (s == ENG_OK) s = c;
    env_close(in, from);
    free(b);
    if (s != ENG_OK && out >= 0) env_unlink(to);
    return s;
}

uint64_t env_now_micros(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int64_t env_unix_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
