/*
 * util.h -- small helpers shared by the profile benchmark's drivers and
 * runner: byte order, clocks, directory sizes and child server processes.
 *
 * Thread-safe unless noted; none keeps global state.
 */
#ifndef STRATA_BENCH_UTIL_H
#define STRATA_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

static inline void util_be64(char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (char)(v >> (56 - 8 * i));
}

static inline uint64_t util_get_be64(const char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | (unsigned char)p[i];
    return v;
}

/* Bytewise comparison, shorter first on a common prefix (memcmp order). */
int util_cmp(const char *a, size_t al, const char *b, size_t bl);

/* Monotonic clock in nanoseconds. */
int64_t util_now_ns(void);

/* Sum of the sizes of the regular files under path (recursively); -1 if
 * path cannot be read. */
int64_t util_dir_bytes(const char *path);

/* Removes path recursively (like rm -rf). Returns 0 or -1. */
int util_rm_rf(const char *path);

/* A TCP port on 127.0.0.1 that was free a moment ago, or -1. */
int util_free_port(void);

/* Starts argv[0] (a path) with argv, stdout and stderr appended to logpath
 * (NULL: /dev/null). Returns the pid, or -1 with err. */
pid_t util_spawn(char *const argv[], const char *logpath, char *err, size_t cap);

/* Waits until something accepts TCP connections on 127.0.0.1:port, up to
 * timeout_ms. Returns 0, or -1 with err (also when pid exits first). */
int util_wait_port(pid_t pid, int port, int timeout_ms, char *err, size_t cap);

/* Waits up to timeout_ms for pid to exit, then SIGKILLs it. Returns 0 when it
 * exited by itself. */
int util_reap(pid_t pid, int timeout_ms);

/* Sends SIGTERM and reaps (util_reap). */
int util_stop(pid_t pid, int timeout_ms);

/* Peak resident memory (VmHWM) of pid in bytes, or -1. */
int64_t util_vmhwm(pid_t pid);

/* CPU time (user + system, every thread) of process pid, in ns; pid 0 is
 * this process (getrusage). -1 when unknown. */
int64_t util_cpu_ns(pid_t pid);

/* Path of a program next to the running executable (or "" if unknown). */
void util_exe_sibling(const char *name, char *out, size_t cap);

/* Last lines of a log file into out (for error messages). */
void util_log_tail(const char *path, char *out, size_t cap);

#endif
