/*
 * env_fault.h -- a fault-injecting env (env.h) for tests, after LevelDB's
 * FaultInjectionTestEnv and RocksDB's FaultInjectionTestFS.
 *
 * Installed in place of the POSIX table it passes every call through and
 * keeps, per file, how many bytes were durable at its last fdatasync, and,
 * per directory, the creates, renames and unlinks since its last fsync
 * (a replaced or unlinked file is moved to a hidden trash name until then,
 * so that a power loss can bring it back). It can:
 *   - fail the first call of chosen kinds at or after the Nth call, once,
 *     or that call and every later one of those kinds until disarmed, with
 *     an errno such as ENOSPC or EIO;
 *   - simulate a power loss at the Nth call: that call and every later
 *     call that would change the disk fail with EIO (the machine is gone);
 *     after the engine is closed, fault_env_power_loss() makes the disk
 *     what it would be after the reboot: every file cut to its last synced
 *     size, every create, rename and unlink not followed by an fsync of its
 *     directory undone.
 * With fake_sync, fsyncs are recorded but not performed (fast tests: the
 * power loss is simulated anyway).
 *
 * Truncation (used by recovery to cut a torn log tail) is treated as
 * durable at once. Thread-safe (one mutex). Not for production use: the
 * server never installs it.
 */
#ifndef STRATA_ENV_FAULT_H
#define STRATA_ENV_FAULT_H

#include <stdint.h>

/* Kinds of call, for counting and for choosing which calls fail. */
enum {
    FAULT_CREATE = 1 << 0,  /* open with O_CREAT */
    FAULT_WRITE = 1 << 1,   /* write */
    FAULT_READ = 1 << 2,    /* open for reading, pread */
    FAULT_SYNC = 1 << 3,    /* fdatasync */
    FAULT_DIRSYNC = 1 << 4, /* fsync of a directory */
    FAULT_RENAME = 1 << 5,
    FAULT_UNLINK = 1 << 6,
    FAULT_TRUNCATE = 1 << 7,
    FAULT_OTHER = 1 << 8, /* dup, stat, list, mkdir, lock */
    FAULT_ALL = (1 << 9) - 1,
    FAULT_MUTATING = FAULT_CREATE | FAULT_WRITE | FAULT_SYNC | FAULT_DIRSYNC | FAULT_RENAME |
                     FAULT_UNLINK | FAULT_TRUNCATE,
};

enum {
    FAULT_ONCE = 1,       /* the Nth call fails with err; later calls succeed */
    FAULT_STICKY = 2,     /* the Nth call and every later one (of kinds) fail */
    FAULT_POWER_LOSS = 3, /* the machine stops at the Nth call (err is EIO) */
};

/* Installs the fault env (env_install) with empty bookkeeping: files that
 * exist now count as durable. */
void fault_env_install(void);
/* Restores the previous env and frees the bookkeeping. */
void fault_env_uninstall(void);
void fault_env_set_fake_sync(int on);

/* Arms a fault at the first call of one of `kinds` (on a file the filter
 * of fault_env_only lets through) made at or after the nth call of any kind
 * from now (1 = the next). err is the errno to return (EIO for a power
 * loss). */
void fault_env_arm(int mode, uint64_t nth, unsigned kinds, int err);
/* Ends a sticky or pending fault. A power loss that happened stays. */
void fault_env_disarm(void);
/* Counts and fails only calls on files whose name ends with suffix (e.g.
 * ".sst"); NULL or "" for every file. Calls on a descriptor opened only for
 * reading have no name here and never match a suffix. */
void fault_env_only(const char *suffix);
/* Calls fn (NULL: none) for every call counted, with its kind, file (NULL
 * when unknown), the errno injected (0: none) and whether the machine is
 * already gone: a trace for debugging a failed trial. Called under the
 * env's mutex: fn must not call back into the engine. */
void fault_env_trace(void (*fn)(unsigned kind, const char *path, int err, int dead));

uint64_t fault_env_calls(void);    /* calls of any kind since install */
uint64_t fault_env_injected(void); /* calls failed by injection */
int fault_env_dead(void);          /* a power loss happened */

/* Makes the disk what it is after a reboot (see above) and clears the
 * power loss. REQUIRES: every file the engine opened is closed. Returns 0,
 * or -1 when a file could not be restored. */
int fault_env_power_loss(void);

#endif
