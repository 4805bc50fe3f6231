/*
 * driver_sqlite.c -- the profile workload on SQLite, as in the public
 * report: one table, native SQL indexes, WAL, synchronous=NORMAL, 1 GB cache
 * and mmap, autocommit single-row writes through prepared statements.
 *
 * On disk: <dir>/profiles.db (and its -wal/-shm while open), schema:
 *   profiles(user_id INTEGER PRIMARY KEY, email, country, status, created_at,
 *            last_login, reputation, display_name, bio)
 *   UNIQUE INDEX on email; INDEX (country, status, user_id);
 *   INDEX (created_at, user_id); INDEX (reputation DESC, user_id)
 * Each worker has its own connection (WAL lets readers run beside a writer;
 * writers wait on busy_timeout).
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/profiles/driver.h"
#include "bench/profiles/sql_stmt.h"
#include "bench/profiles/util.h"

static const char *const sql_text[NST] = {
    "INSERT INTO profiles (" SQL_COLS ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    "UPDATE profiles SET email = ?2, country = ?3, status = ?4, created_at = ?5, "
    "last_login = ?6, reputation = ?7, display_name = ?8, bio = ?9 WHERE user_id = ?1",
    "SELECT " SQL_COLS " FROM profiles WHERE user_id = ?1",
    "SELECT " SQL_COLS " FROM profiles WHERE email = ?1",
    "SELECT user_id FROM profiles WHERE country = ?1 AND status = ?2 ORDER BY user_id LIMIT 100",
    "SELECT " SQL_COLS " FROM profiles WHERE country = ?1 AND status = ?2 "
    "ORDER BY user_id LIMIT 100",
    "SELECT user_id FROM profiles WHERE created_at BETWEEN ?1 AND ?2 "
    "ORDER BY created_at, user_id LIMIT 100",
    "SELECT " SQL_COLS " FROM profiles WHERE created_at BETWEEN ?1 AND ?2 "
    "ORDER BY created_at, user_id LIMIT 100",
    "SELECT user_id FROM profiles ORDER BY reputation DESC, user_id LIMIT 100",
    "SELECT " SQL_COLS " FROM profiles ORDER BY reputation DESC, user_id LIMIT 100",
    "SELECT count(*) FROM profiles",
};

static const char *const schema =
    "CREATE TABLE IF NOT EXISTS profiles (user_id INTEGER PRIMARY KEY, email TEXT NOT NULL, "
    "country TEXT NOT NULL, status TEXT NOT NULL, created_at INTEGER NOT NULL, "
    "last_login INTEGER NOT NULL, reputation INTEGER NOT NULL, display_name TEXT NOT NULL, "
    "bio TEXT NOT NULL);"
    "CREATE UNIQUE INDEX IF NOT EXISTS ix_email ON profiles(email);"
    "CREATE INDEX IF NOT EXISTS ix_country_status ON profiles(country, status, user_id);"
    "CREATE INDEX IF NOT EXISTS ix_created_at ON profiles(created_at, user_id);"
    "CREATE INDEX IF NOT EXISTS ix_reputation ON profiles(reputation DESC, user_id);";

struct drv_engine {
    char path[600];
    sqlite3 *admin; /* schema, settle; closed and reopened by reopen */
};

struct drv_conn {
    sqlite3 *db;
    sqlite3_stmt *st[NST];
};

static int sq_probe(char *why, size_t cap)
{
    return 0;
}

static int sq_fail(sqlite3 *db, const char *what, char *err, size_t cap)
{
    snprintf(err, cap, "sqlite %s: %s", what, db ? sqlite3_errmsg(db) : "out of memory");
    return -1;
}

/* Opens a connection with the report's settings. */
static sqlite3 *open_db(const char *path, char *err, size_t cap)
{
    sqlite3 *db = NULL;
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
        sq_fail(db, "open", err, cap);
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 60000);
    const char *pragmas = "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                          "PRAGMA cache_size=-1048576; PRAGMA mmap_size=1073741824;"
                          "PRAGMA temp_store=MEMORY;";
    if (sqlite3_exec(db, pragmas, NULL, NULL, NULL) != SQLITE_OK) {
        sq_fail(db, "pragmas", err, cap);
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

static void sq_close(drv_engine *e)
{
    if (!e) return;
    if (e->admin) sqlite3_close(e->admin);
    free(e);
}

static drv_engine *sq_open(const char *dir, char *err, size_t cap)
{
    drv_engine *e = calloc(1, sizeof(*e));
    if (!e) return NULL;
    snprintf(e->path, sizeof(e->path), "%s/profiles.db", dir);
    e->admin = open_db(e->path, err, cap);
    if (!e->admin || sqlite3_exec(e->admin, schema, NULL, NULL, NULL) != SQLITE_OK) {
        if (e->admin) sq_fail(e->admin, "schema", err, cap);
        sq_close(e);
        return NULL;
    }
    return e;
}

static void sq_disconnect(drv_conn *c)
{
    if (!c) return;
    for (int i = 0; i < NST; i++)
        sqlite3_finalize(c->st[i]);
    sqlite3_close(c->db);
    free(c);
}

static drv_conn *sq_connect(drv_engine *e, char *err, size_t cap)
{
    drv_conn *c = calloc(1, sizeof(*c));
    if (!c) return NULL;
    c->db = open_db(e->path, err, cap);
    if (!c->db) {
        free(c);
        return NULL;
    }
    for (int i = 0; i < NST; i++) {
        if (sqlite3_prepare_v2(c->db, sql_text[i], -1, &c->st[i], NULL) != SQLITE_OK) {
            sq_fail(c->db, "prepare", err, cap);
            sq_disconnect(c);
            return NULL;
        }
    }
    return c;
}

static void bind_profile(sqlite3_stmt *s, const wl_profile *p)
{
    sqlite3_bind_int64(s, 1, p->user_id);
    sqlite3_bind_text(s, 2, p->email, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 3, p->country, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 4, p->status, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 5, p->created_at);
    sqlite3_bind_int64(s, 6, p->last_login);
    sqlite3_bind_int64(s, 7, p->reputation);
    sqlite3_bind_text(s, 8, p->display_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 9, p->bio, -1, SQLITE_STATIC);
}

static void copy_text(sqlite3_stmt *s, int col, char *dst, size_t cap)
{
    const unsigned char *t = sqlite3_column_text(s, col);
    snprintf(dst, cap, "%s", t ? (const char *)t : "");
}

static void read_profile(sqlite3_stmt *s, wl_profile *p)
{
    p->user_id = sqlite3_column_int64(s, 0);
    copy_text(s, 1, p->email, sizeof(p->email));
    copy_text(s, 2, p->country, sizeof(p->country));
    copy_text(s, 3, p->status, sizeof(p->status));
    p->created_at = sqlite3_column_int64(s, 4);
    p->last_login = sqlite3_column_int64(s, 5);
    p->reputation = (int32_t)sqlite3_column_int64(s, 6);
    copy_text(s, 7, p->display_name, sizeof(p->display_name));
    copy_text(s, 8, p->bio, sizeof(p->bio));
}

/* Steps s to the end, collecting ids or profiles into r. */
static int run_query(drv_conn *c, sqlite3_stmt *s, drv_req *r, int profiles, char *err, size_t cap)
{
    int rc;
    r->n = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW && r->n < WL_LIMIT) {
        if (profiles)
            read_profile(s, &r->out[r->n++]);
        else
            r->ids[r->n++] = sqlite3_column_int64(s, 0);
    }
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return sq_fail(c->db, "query", err, cap);
    return 0;
}

static int exec_one(drv_conn *c, drv_req *r, char *err, size_t cap)
{
    sqlite3_stmt *s;
    int p = r->want_profiles;
    switch (r->op) {
    case DRV_INSERT:
    case DRV_WRITE:
        s = c->st[r->op == DRV_INSERT ? ST_INSERT : ST_UPDATE];
        bind_profile(s, r->new_p);
        int rc = sqlite3_step(s);
        sqlite3_reset(s);
        if (rc != SQLITE_DONE) return sq_fail(c->db, "write", err, cap);
        if (r->op == DRV_WRITE && sqlite3_changes(c->db) != 1) {
            snprintf(err, cap, "sqlite: update of missing user %lld", (long long)r->new_p->user_id);
            return -1;
        }
        return 0;
    case DRV_GET:
        s = c->st[ST_GET];
        sqlite3_bind_int64(s, 1, r->id);
        return run_query(c, s, r, 1, err, cap);
    case DRV_EMAIL:
        s = c->st[ST_EMAIL];
        sqlite3_bind_text(s, 1, r->email, -1, SQLITE_STATIC);
        return run_query(c, s, r, 1, err, cap);
    case DRV_CS:
        s = c->st[p ? ST_CS : ST_CS_IDS];
        sqlite3_bind_text(s, 1, wl_countries[r->country], -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 2, wl_statuses[r->status], -1, SQLITE_STATIC);
        return run_query(c, s, r, p, err, cap);
    case DRV_CA:
        s = c->st[p ? ST_CA : ST_CA_IDS];
        sqlite3_bind_int64(s, 1, r->from);
        sqlite3_bind_int64(s, 2, r->to);
        return run_query(c, s, r, p, err, cap);
    case DRV_TOP:
        return run_query(c, c->st[p ? ST_TOP : ST_TOP_IDS], r, p, err, cap);
    }
    snprintf(err, cap, "unknown request");
    return -1;
}

static int sq_exec(drv_conn *c, drv_req *reqs, int n, char *err, size_t cap)
{
    for (int i = 0; i < n; i++)
        if (exec_one(c, &reqs[i], err, cap)) return -1;
    return 0;
}

static int sq_settle(drv_engine *e, char *err, size_t cap)
{
    if (sqlite3_exec(e->admin, "PRAGMA wal_checkpoint(TRUNCATE);", NULL, NULL, NULL) != SQLITE_OK)
        return sq_fail(e->admin, "checkpoint", err, cap);
    return 0;
}

static int64_t sq_storage(drv_engine *e)
{
    char wal[640];
    snprintf(wal, sizeof(wal), "%s-wal", e->path);
    int64_t db = util_dir_bytes(e->path), w = util_dir_bytes(wal);
    return db < 0 ? -1 : db + (w > 0 ? w : 0);
}

static int sq_reopen(drv_engine *e, char *err, size_t cap)
{
    sqlite3_close(e->admin);
    e->admin = open_db(e->path, err, cap);
    return e->admin ? 0 : -1;
}

static int64_t sq_count(drv_conn *c, char *err, size_t cap)
{
    sqlite3_stmt *s = c->st[ST_COUNT];
    int64_t n = -1;
    if (sqlite3_step(s) == SQLITE_ROW)
        n = sqlite3_column_int64(s, 0);
    else
        sq_fail(c->db, "count", err, cap);
    sqlite3_reset(s);
    return n;
}

static pid_t sq_server_pid(drv_engine *e)
{
    return 0;
}

const drv_ops drv_sqlite_ops = {
    .name = "sqlite",
    .title = "SQLite",
    .remote = 0,
    .settings = "JournalMode: WAL\nSynchronous: NORMAL\nCacheMb: 1024\nMmapMb: 1024\n"
                "TempStore: MEMORY\nWrites: autocommit single-row, prepared statements\n"
                "Indexes: native (email unique; country,status,user_id; created_at,user_id; "
                "reputation DESC,user_id)\n",
    .probe = sq_probe,
    .open = sq_open,
    .connect = sq_connect,
    .disconnect = sq_disconnect,
    .exec = sq_exec,
    .stabilize = NULL,
    .settle = sq_settle,
    .storage = sq_storage,
    .reopen = sq_reopen,
    .count = sq_count,
    .server_pid = sq_server_pid,
    .close = sq_close,
};
