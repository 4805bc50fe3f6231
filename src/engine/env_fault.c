/*
 * env_fault.c -- the fault-injecting env; see env_fault.h for what it
 * simulates.
 *
 * Bookkeeping (under one mutex):
 *   - a record per file created or written since install: its current name
 *     (a trash name once unlinked or replaced), whether that name survives
 *     a power loss, and the bytes durable at its last fdatasync;
 *   - a map from open descriptors to records (dup shares the record);
 *   - the list of directory operations not yet covered by an fsync of
 *     their directory, each of which a power loss undoes, newest first.
 * Invariant F1: a record's `synced` never exceeds the bytes of the file
 * that were written before the last successful fdatasync of any of its
 * descriptors; a power loss cuts the file back to it.
 */
#include "env_fault.h"

#include "env.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct frec {
    char *path;      /* current name; NULL once gone for good */
    int durable;     /* the name survives a power loss */
    uint64_t synced; /* F1 */
} frec;

enum { OP_CREATE, OP_RENAME, OP_UNLINK };

typedef struct dirop {
    int type;
    frec *f;     /* the file created, renamed or unlinked */
    char *a, *b; /* create: a; rename: a -> b; unlink: a (moved to b, the trash) */
    frec *old;   /* rename over an existing file: it, now in the trash */
} dirop;

static struct {
    pthread_mutex_t mu;
    const env_ops *base, *prev;
    frec **files;
    size_t nfiles, capfiles;
    frec **fds; /* by descriptor */
    size_t capfds;
    dirop *ops;
    size_t nops, capops;
    uint64_t calls, counted, injected, trash_seq;
    int mode, err, fired, dead, fake_sync;
    unsigned kinds;
    uint64_t nth;
    char suffix[32]; /* only calls on files whose name ends so count ("": all) */
    void (*trace)(unsigned kind, const char *path, int err, int dead);
} F = {PTHREAD_MUTEX_INITIALIZER};

#define TRASH_PREFIX ".fault-trash-"

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) abort();
    return q;
}

static char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p) abort();
    return p;
}

/* Whether a call on path (NULL: unknown) is one the armed fault counts. */
static int matches(const char *path)
{
    if (!F.suffix[0]) return 1;
    size_t n = path ? strlen(path) : 0, m = strlen(F.suffix);
    return n >= m && !strcmp(path + n - m, F.suffix);
}

/* Decides whether a call of `kind` on path fails. REQUIRES: F.mu. Returns
 * the errno to fail with, or 0. */
static int decide(unsigned kind, const char *path);

static int inject_on(unsigned kind, const char *path)
{
    int e = decide(kind, path);
    if (F.trace) F.trace(kind, path, e, F.dead);
    return e;
}

static int decide(unsigned kind, const char *path)
{
    F.calls++;
    if (F.dead) return (kind & FAULT_MUTATING) ? EIO : 0;
    if (!F.mode) return 0;
    if (!F.fired) F.counted++;
    if (!(kind & F.kinds) || !matches(path)) return 0;
    if (F.fired) { /* a sticky fault goes on */
        if (F.mode != FAULT_STICKY) return 0;
        F.injected++;
        return F.err;
    }
    if (F.counted < F.nth) return 0;
    F.fired = 1;
    F.injected++;
    if (F.mode == FAULT_POWER_LOSS) {
        F.dead = 1;
        return EIO;
    }
    return F.err;
}

static frec *fd_rec(int fd);

/* inject() for a call on descriptor fd. */
static int inject_fd(unsigned kind, int fd)
{
    frec *f = fd_rec(fd);
    return inject_on(kind, f ? f->path : NULL);
}

static frec *find_path(const char *path)
{
    for (size_t i = F.nfiles; i-- > 0;)
        if (F.files[i]->path && !strcmp(F.files[i]->path, path)) return F.files[i];
    return NULL;
}

static frec *new_rec(const char *path, int durable, uint64_t synced)
{
    if (F.nfiles == F.capfiles) {
        F.capfiles = F.capfiles ? F.capfiles * 2 : 64;
        F.files = xrealloc(F.files, F.capfiles * sizeof(frec *));
    }
    frec *f = calloc(1, sizeof(*f));
    if (!f) abort();
    f->path = xstrdup(path);
    f->durable = durable;
    f->synced = synced;
    F.files[F.nfiles++] = f;
    return f;
}

static void map_fd(int fd, frec *f)
{
    if (fd < 0) return;
    if ((size_t)fd >= F.capfds) {
        size_t cap = F.capfds ? F.capfds : 256;
        while (cap <= (size_t)fd)
            cap *= 2;
        F.fds = xrealloc(F.fds, cap * sizeof(frec *));
        memset(F.fds + F.capfds, 0, (cap - F.capfds) * sizeof(frec *));
        F.capfds = cap;
    }
    F.fds[fd] = f;
}

static frec *fd_rec(int fd)
{
    return fd >= 0 && (size_t)fd < F.capfds ? F.fds[fd] : NULL;
}

static void push_op(int type, frec *f, const char *a, const char *b, frec *old)
{
    if (F.nops == F.capops) {
        F.capops = F.capops ? F.capops * 2 : 64;
        F.ops = xrealloc(F.ops, F.capops * sizeof(dirop));
    }
    F.ops[F.nops++] = (dirop){type, f, xstrdup(a), b ? xstrdup(b) : NULL, old};
}

/* The directory part of path, in out (PATH_MAX). */
static void dir_of(const char *path, char *out, size_t cap)
{
    const char *s = strrchr(path, '/');
    size_t n = s ? (size_t)(s - path) : 1;
    if (!s) path = ".";
    if (n >= cap) n = cap - 1;
    memcpy(out, path, n);
    out[n] = 0;
}

/* A trash name next to path. REQUIRES: F.mu. */
static void trash_name(const char *path, char *out, size_t cap)
{
    char dir[3072];
    dir_of(path, dir, sizeof(dir));
    snprintf(out, cap, "%s/" TRASH_PREFIX "%llu", dir, (unsigned long long)++F.trash_seq);
}

static void free_op(dirop *o)
{
    free(o->a);
    free(o->b);
}

/* ---- the operations ------------------------------------------------------- */

static int ft_open(const char *path, int flags, mode_t mode)
{
    pthread_mutex_lock(&F.mu);
    int creating = (flags & O_CREAT) != 0;
    int e = inject_on(creating ? FAULT_CREATE : FAULT_READ, path);
    int fd = -1;
    if (e) {
        errno = e;
    } else {
        uint64_t size;
        int existed = F.base->path_size(path, &size) == 0;
        fd = F.base->open(path, flags, mode);
        e = errno;
        if (fd >= 0) {
            frec *f = find_path(path);
            if (creating && !existed) {
                f = new_rec(path, 0, 0);
                push_op(OP_CREATE, f, path, NULL, NULL);
            } else if (!f && (flags & (O_WRONLY | O_RDWR))) {
                f = new_rec(path, 1, size);
            }
            if (f && (flags & O_TRUNC)) f->synced = 0;
            map_fd(fd, f);
        }
        errno = e;
    }
    pthread_mutex_unlock(&F.mu);
    return fd;
}

static int ft_close(int fd)
{
    pthread_mutex_lock(&F.mu);
    F.calls++;
    map_fd(fd, NULL);
    pthread_mutex_unlock(&F.mu);
    return F.base->close(fd);
}

static int ft_dup(int fd)
{
    pthread_mutex_lock(&F.mu);
    int e = inject_fd(FAULT_OTHER, fd), nfd = -1;
    if (e) {
        errno = e;
    } else {
        nfd = F.base->dup(fd);
        e = errno;
        if (nfd >= 0) map_fd(nfd, fd_rec(fd));
        errno = e;
    }
    pthread_mutex_unlock(&F.mu);
    return nfd;
}

static ssize_t ft_write(int fd, const void *p, size_t n)
{
    pthread_mutex_lock(&F.mu);
    int e = inject_fd(FAULT_WRITE, fd);
    pthread_mutex_unlock(&F.mu);
    if (e) {
        errno = e;
        return -1;
    }
    return F.base->write(fd, p, n);
}

static ssize_t ft_pread(int fd, void *p, size_t n, off_t off)
{
    pthread_mutex_lock(&F.mu);
    int e = inject_fd(FAULT_READ, fd);
    pthread_mutex_unlock(&F.mu);
    if (e) {
        errno = e;
        return -1;
    }
    return F.base->pread(fd, p, n, off);
}

static int ft_fdatasync(int fd)
{
    pthread_mutex_lock(&F.mu);
    int e = inject_fd(FAULT_SYNC, fd), rc = 0;
    if (e) {
        errno = e;
        rc = -1;
    } else {
        if (!F.fake_sync) rc = F.base->fdatasync(fd);
        uint64_t size;
        frec *f = fd_rec(fd);
        if (rc == 0 && f && F.base->fd_size(fd, &size) == 0) f->synced = size; /* F1 */
    }
    pthread_mutex_unlock(&F.mu);
    return rc;
}

static int ft_fsync_dir(const char *dir)
{
    pthread_mutex_lock(&F.mu);
    int e = inject_on(FAULT_DIRSYNC, dir), rc = 0;
    if (e) {
        errno = e;
        rc = -1;
    } else if (!F.fake_sync) {
        rc = F.base->fsync_dir(dir);
    }
    if (rc == 0) {
        /* Every pending operation in dir is now durable: the trash goes. */
        size_t keep = 0;
        for (size_t i = 0; i < F.nops; i++) {
            dirop *o = &F.ops[i];
            char d[4096];
            dir_of(o->a, d, sizeof(d));
            if (strcmp(d, dir) != 0) {
                F.ops[keep++] = *o;
                continue;
            }
            if (o->type == OP_UNLINK) {
                F.base->unlink(o->b);
                free(o->f->path);
                o->f->path = NULL;
            } else if (o->type == OP_RENAME && o->old) {
                F.base->unlink(o->old->path);
                free(o->old->path);
                o->old->path = NULL;
            }
            if (o->f->path) o->f->durable = 1;
            free_op(o);
        }
        F.nops = keep;
    }
    pthread_mutex_unlock(&F.mu);
    return rc;
}

static int ft_fd_size(int fd, uint64_t *size)
{
    pthread_mutex_lock(&F.mu);
    F.calls++;
    pthread_mutex_unlock(&F.mu);
    return F.base->fd_size(fd, size);
}

static int ft_path_size(const char *path, uint64_t *size)
{
    pthread_mutex_lock(&F.mu);
    F.calls++;
    pthread_mutex_unlock(&F.mu);
    return F.base->path_size(path, size);
}

static int ft_truncate(const char *path, off_t size)
{
    pthread_mutex_lock(&F.mu);
    int e = inject_on(FAULT_TRUNCATE, path), rc = -1;
    if (e) {
        errno = e;
    } else {
        rc = F.base->truncate(path, size);
        frec *f = find_path(path);
        if (rc == 0 && f && f->synced > (uint64_t)size) f->synced = (uint64_t)size;
    }
    pthread_mutex_unlock(&F.mu);
    return rc;
}

static int ft_rename(const char *from, const char *to)
{
    pthread_mutex_lock(&F.mu);
    int e = inject_on(FAULT_RENAME, to), rc = -1;
    if (e) {
        errno = e;
        goto out;
    }
    uint64_t size;
    frec *src = find_path(from);
    if (F.base->path_size(from, &size) != 0) goto out; /* errno from the stat */
    if (!src) src = new_rec(from, 1, size);
    frec *old = NULL;
    if (F.base->path_size(to, &size) == 0) { /* keep what it replaces */
        char t[4096];
        trash_name(to, t, sizeof(t));
        old = find_path(to);
        if (!old) old = new_rec(to, 1, size);
        if (F.base->rename(to, t) != 0) goto out;
        free(old->path);
        old->path = xstrdup(t);
    }
    rc = F.base->rename(from, to);
    e = errno;
    if (rc == 0) {
        free(src->path);
        src->path = xstrdup(to);
        push_op(OP_RENAME, src, from, to, old);
    } else if (old) {
        F.base->rename(old->path, to);
        free(old->path);
        old->path = xstrdup(to);
    }
    errno = e;
out:
    pthread_mutex_unlock(&F.mu);
    return rc;
}

static int ft_unlink(const char *path)
{
    pthread_mutex_lock(&F.mu);
    int e = inject_on(FAULT_UNLINK, path), rc = -1;
    uint64_t size;
    if (e) {
        errno = e;
    } else if (F.base->path_size(path, &size) == 0) {
        char t[4096];
        trash_name(path, t, sizeof(t));
        frec *f = find_path(path);
        if (!f) f = new_rec(path, 1, size);
        rc = F.base->rename(path, t);
        if (rc == 0) {
            free(f->path);
            f->path = xstrdup(t);
            push_op(OP_UNLINK, f, path, t, NULL);
        }
    }
    pthread_mutex_unlock(&F.mu);
    return rc;
}

static int ft_mkdir(const char *path, mode_t mode)
{
    pthread_mutex_lock(&F.mu);
    int e = inject_on(FAULT_OTHER, path);
    pthread_mutex_unlock(&F.mu);
    if (e) {
        errno = e;
        return -1;
    }
    return F.base->mkdir(path, mode);
}

static int ft_lock(int fd)
{
    pthread_mutex_lock(&F.mu);
    int e = inject_fd(FAULT_OTHER, fd);
    pthread_mutex_unlock(&F.mu);
    if (e) {
        errno = e;
        return -1;
    }
    return F.base->lock(fd);
}

typedef struct list_ctx {
    void (*fn)(void *ctx, const char *name);
    void *ctx;
} list_ctx;

static void list_filter(void *ctx, const char *name)
{
    list_ctx *l = ctx;
    if (strncmp(name, TRASH_PREFIX, strlen(TRASH_PREFIX)) != 0) l->fn(l->ctx, name);
}

static int ft_list_dir(const char *dir, void (*fn)(void *ctx, const char *name), void *ctx)
{
    pthread_mutex_lock(&F.mu);
    int e = inject_on(FAULT_OTHER, dir);
    pthread_mutex_unlock(&F.mu);
    if (e) {
        errno = e;
        return -1;
    }
    list_ctx l = {fn, ctx};
    return F.base->list_dir(dir, list_filter, &l);
}

/* A new name is a create: it fails as one. The power loss model does not
 * undo links (the checkpoint tests that link do not simulate one). */
static int ft_link(const char *from, const char *to)
{
    pthread_mutex_lock(&F.mu);
    int e = inject_on(FAULT_CREATE, to);
    pthread_mutex_unlock(&F.mu);
    if (e) {
        errno = e;
        return -1;
    }
    return F.base->link(from, to);
}

static void purge_trash(void *ctx, const char *name)
{
    if (strncmp(name, TRASH_PREFIX, strlen(TRASH_PREFIX)) != 0) return;
    char p[4096];
    snprintf(p, sizeof(p), "%s/%s", (const char *)ctx, name);
    F.base->unlink(p);
}

/* The files unlinked in dir wait under trash names there (for a power
 * loss to bring back); a directory removed goes with them for good. */
static int ft_rmdir(const char *dir)
{
    pthread_mutex_lock(&F.mu);
    int e = inject_on(FAULT_UNLINK, dir);
    if (!e) F.base->list_dir(dir, purge_trash, (void *)dir);
    pthread_mutex_unlock(&F.mu);
    if (e) {
        errno = e;
        return -1;
    }
    return F.base->rmdir(dir);
}

static const env_ops fault_ops = {
    ft_open,      ft_close,   ft_dup,       ft_write,    ft_pread,  ft_fdatasync,
    ft_fsync_dir, ft_fd_size, ft_path_size, ft_truncate, ft_rename, ft_unlink,
    ft_mkdir,     ft_lock,    ft_list_dir,  ft_link,     ft_rmdir,
};

/* ---- control ---------------------------------------------------------------- */

static void reset_state(void)
{
    for (size_t i = 0; i < F.nfiles; i++) {
        free(F.files[i]->path);
        free(F.files[i]);
    }
    for (size_t i = 0; i < F.nops; i++)
        free_op(&F.ops[i]);
    free(F.files);
    free(F.fds);
    free(F.ops);
    F.files = NULL;
    F.fds = NULL;
    F.ops = NULL;
    F.nfiles = F.capfiles = F.capfds = F.nops = F.capops = 0;
    F.calls = F.counted = F.injected = 0;
    F.mode = F.fired = F.dead = 0;
    F.suffix[0] = 0;
}

void fault_env_install(void)
{
    pthread_mutex_lock(&F.mu);
    reset_state();
    F.base = env_posix();
    F.fake_sync = 0;
    pthread_mutex_unlock(&F.mu);
    F.prev = env_install(&fault_ops);
}

void fault_env_uninstall(void)
{
    env_install(F.prev);
    pthread_mutex_lock(&F.mu);
    /* What no power loss undid stays done: unlinked files go for good. */
    for (size_t i = 0; i < F.nops; i++) {
        dirop *o = &F.ops[i];
        if (o->type == OP_UNLINK && o->f->path) F.base->unlink(o->f->path);
        if (o->type == OP_RENAME && o->old && o->old->path) F.base->unlink(o->old->path);
    }
    reset_state();
    pthread_mutex_unlock(&F.mu);
}

void fault_env_set_fake_sync(int on)
{
    pthread_mutex_lock(&F.mu);
    F.fake_sync = on;
    pthread_mutex_unlock(&F.mu);
}

void fault_env_arm(int mode, uint64_t nth, unsigned kinds, int err)
{
    pthread_mutex_lock(&F.mu);
    F.mode = mode;
    F.nth = nth ? nth : 1;
    F.kinds = kinds ? kinds : FAULT_ALL;
    F.err = mode == FAULT_POWER_LOSS ? EIO : err;
    F.counted = 0;
    F.fired = 0;
    pthread_mutex_unlock(&F.mu);
}

void fault_env_trace(void (*fn)(unsigned kind, const char *path, int err, int dead))
{
    pthread_mutex_lock(&F.mu);
    F.trace = fn;
    pthread_mutex_unlock(&F.mu);
}

void fault_env_only(const char *suffix)
{
    pthread_mutex_lock(&F.mu);
    snprintf(F.suffix, sizeof(F.suffix), "%s", suffix ? suffix : "");
    pthread_mutex_unlock(&F.mu);
}

void fault_env_disarm(void)
{
    pthread_mutex_lock(&F.mu);
    F.mode = 0;
    F.fired = 0;
    pthread_mutex_unlock(&F.mu);
}

uint64_t fault_env_calls(void)
{
    pthread_mutex_lock(&F.mu);
    uint64_t n = F.calls;
    pthread_mutex_unlock(&F.mu);
    return n;
}

uint64_t fault_env_injected(void)
{
    pthread_mutex_lock(&F.mu);
    uint64_t n = F.injected;
    pthread_mutex_unlock(&F.mu);
    return n;
}

int fault_env_dead(void)
{
    pthread_mutex_lock(&F.mu);
    int d = F.dead;
    pthread_mutex_unlock(&F.mu);
    return d;
}

int fault_env_power_loss(void)
{
    int rc = 0;
    pthread_mutex_lock(&F.mu);
    /* F1: data first, while every record still knows its current name. */
    for (size_t i = 0; i < F.nfiles; i++) {
        frec *f = F.files[i];
        uint64_t size;
        if (!f->path || F.base->path_size(f->path, &size) != 0 || size <= f->synced) continue;
        if (F.base->truncate(f->path, (off_t)f->synced) != 0) rc = -1;
    }
    /* Then the directory operations no fsync covered, newest first. */
    for (size_t i = F.nops; i-- > 0;) {
        dirop *o = &F.ops[i];
        if (o->type == OP_CREATE) {
            if (o->f->path && F.base->unlink(o->f->path) != 0) rc = -1;
            free(o->f->path);
            o->f->path = NULL;
        } else if (o->type == OP_RENAME) {
            if (F.base->rename(o->b, o->a) != 0) rc = -1;
            free(o->f->path);
            o->f->path = xstrdup(o->a);
            if (o->old) {
                if (F.base->rename(o->old->path, o->b) != 0) rc = -1;
                free(o->old->path);
                o->old->path = xstrdup(o->b);
            }
        } else {
            if (F.base->rename(o->b, o->a) != 0) rc = -1;
            free(o->f->path);
            o->f->path = xstrdup(o->a);
        }
        free_op(o);
    }
    F.nops = 0;
    /* After the reboot every file that is left is durable as it is. */
    for (size_t i = 0; i < F.nfiles; i++) {
        frec *f = F.files[i];
        uint64_t size;
        if (f->path && F.base->path_size(f->path, &size) == 0) {
            f->synced = size;
            f->durable = 1;
        }
    }
    F.dead = 0;
    F.mode = F.fired = 0;
    pthread_mutex_unlock(&F.mu);
    return rc;
}
