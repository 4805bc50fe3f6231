/*
 * driver_mariadb.c -- the profile workload on Debian's MariaDB server over
 * loopback TCP (libmariadb prepared statements), with the schema and
 * settings of the public report's MySQL run: InnoDB,
 * innodb_flush_log_at_trx_commit=2, no binary log, native SQL indexes,
 * autocommit single-row writes.
 *
 * On disk: <dir>/data, a data directory made by mariadb-install-db for this
 * run; the server listens on a free port on 127.0.0.1 and is stopped (and
 * the directory removed) afterwards. Database profilebench, table:
 *   profiles(user_id BIGINT PRIMARY KEY, email, country, status, created_at,
 *            last_login, reputation, display_name, bio)
 *   UNIQUE (email), (country, status, user_id), (created_at, user_id),
 *   (reputation DESC, user_id)
 * Storage is the size of the table's .ibd file after settle.
 */
#include <mariadb/mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/profiles/driver.h"
#include "bench/profiles/sql_stmt.h"
#include "bench/profiles/util.h"

static const char *const sql_text[NST] = {
    "INSERT INTO profiles (" SQL_COLS ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "UPDATE profiles SET email = ?, country = ?, status = ?, created_at = ?, last_login = ?, "
    "reputation = ?, display_name = ?, bio = ? WHERE user_id = ?",
    "SELECT " SQL_COLS " FROM profiles WHERE user_id = ?",
    "SELECT " SQL_COLS " FROM profiles WHERE email = ?",
    "SELECT user_id FROM profiles WHERE country = ? AND status = ? ORDER BY user_id LIMIT 100",
    "SELECT " SQL_COLS " FROM profiles WHERE country = ? AND status = ? ORDER BY user_id LIMIT 100",
    "SELECT user_id FROM profiles WHERE created_at BETWEEN ? AND ? "
    "ORDER BY created_at, user_id LIMIT 100",
    "SELECT " SQL_COLS " FROM profiles WHERE created_at BETWEEN ? AND ? "
    "ORDER BY created_at, user_id LIMIT 100",
    "SELECT user_id FROM profiles ORDER BY reputation DESC, user_id LIMIT 100",
    "SELECT " SQL_COLS " FROM profiles ORDER BY reputation DESC, user_id LIMIT 100",
    "SELECT COUNT(*) FROM profiles",
};

static const char *const schema[] = {
    "CREATE DATABASE IF NOT EXISTS profilebench",
    "CREATE TABLE IF NOT EXISTS profilebench.profiles (user_id BIGINT NOT NULL PRIMARY KEY, "
    "email VARCHAR(64) NOT NULL, country VARCHAR(4) NOT NULL, status VARCHAR(16) NOT NULL, "
    "created_at BIGINT NOT NULL, last_login BIGINT NOT NULL, reputation INT NOT NULL, "
    "display_name VARCHAR(64) NOT NULL, bio TEXT NOT NULL, UNIQUE KEY ix_email (email), "
    "KEY ix_country_status (country, status, user_id), KEY ix_created_at (created_at, user_id), "
    "KEY ix_reputation (reputation DESC, user_id)) ENGINE=InnoDB DEFAULT CHARSET=ascii "
    "COLLATE=ascii_bin",
};

struct drv_engine {
    char dir[600], data[640], sock[640], log[640];
    int port;
    pid_t pid;
};

/* Parameter and result buffers, bound once per statement at connect. */
typedef struct vals {
    long long id, created, login, a, b;
    int rep;
    char email[64], country[8], status[16], dname[64], bio[WL_BIO_CAP + 8];
    unsigned long l_email, l_country, l_status, l_dname, l_bio;
    my_bool null[9], trunc[9];
} vals;

struct drv_conn {
    MYSQL *my;
    MYSQL_STMT *st[NST];
    vals in, row;
};

static const char *mariadbd_bin(void)
{
    const char *b = getenv("MARIADBD");
    return b && *b ? b : "/usr/sbin/mariadbd";
}

static int md_probe(char *why, size_t cap)
{
    if (access(mariadbd_bin(), X_OK) != 0) {
        snprintf(why, cap, "%s not found (install mariadb-server)", mariadbd_bin());
        return -1;
    }
    if (access("/usr/bin/mariadb-install-db", X_OK) != 0) {
        snprintf(why, cap, "mariadb-install-db not found (install mariadb-server)");
        return -1;
    }
    return 0;
}

static int start_server(drv_engine *e, char *err, size_t cap)
{
    char port[32], datadir[700], sock[700], pidf[700];
    e->port = util_free_port();
    snprintf(port, sizeof(port), "--port=%d", e->port);
    snprintf(datadir, sizeof(datadir), "--datadir=%s", e->data);
    snprintf(sock, sizeof(sock), "--socket=%s", e->sock);
    snprintf(pidf, sizeof(pidf), "--pid-file=%s/mariadbd.pid", e->dir);
    char *argv[] = {(char *)mariadbd_bin(),
                    "--no-defaults",
                    datadir,
                    port,
                    sock,
                    pidf,
                    "--bind-address=127.0.0.1",
                    "--user=root",
                    "--skip-grant-tables",
                    "--skip-log-bin",
                    "--innodb-flush-log-at-trx-commit=2",
                    "--innodb-buffer-pool-size=1G",
                    "--max-connections=600",
                    "--skip-name-resolve",
                    NULL};
    e->pid = util_spawn(argv, e->log, err, cap);
    if (e->pid < 0) return -1;
    if (util_wait_port(e->pid, e->port, 120000, err, cap)) {
        char tail[300];
        util_log_tail(e->log, tail, sizeof(tail));
        size_t l = strlen(err);
        snprintf(err + l, cap - l, " (log: %s)", tail);
        util_stop(e->pid, 10000);
        e->pid = 0;
        return -1;
    }
    return 0;
}

static void stop_server(drv_engine *e)
{
    if (e->pid > 0) util_stop(e->pid, 120000);
    e->pid = 0;
}

static MYSQL *connect_db(drv_engine *e, const char *db, char *err, size_t cap)
{
    MYSQL *my = mysql_init(NULL);
    if (!my) {
        snprintf(err, cap, "mysql_init failed");
        return NULL;
    }
    for (int tries = 0; tries < 100; tries++) {
        if (mysql_real_connect(my, "127.0.0.1", "root", "", db, (unsigned)e->port, NULL, 0))
            return my;
        usleep(100000); /* the port may open before the server accepts logins */
    }
    snprintf(err, cap, "connect to mariadb on port %d: %s", e->port, mysql_error(my));
    mysql_close(my);
    return NULL;
}

static void md_close(drv_engine *e)
{
    if (!e) return;
    stop_server(e);
    free(e);
}

static drv_engine *md_open(const char *dir, char *err, size_t cap)
{
    drv_engine *e = calloc(1, sizeof(*e));
    if (!e) return NULL;
    snprintf(e->dir, sizeof(e->dir), "%s", dir);
    snprintf(e->data, sizeof(e->data), "%s/data", dir);
    snprintf(e->sock, sizeof(e->sock), "%s/mariadbd.sock", dir);
    snprintf(e->log, sizeof(e->log), "%s/server.log", dir);
    char datadir[700];
    snprintf(datadir, sizeof(datadir), "--datadir=%s", e->data);
    char *argv[] = {"/usr/bin/mariadb-install-db",
                    "--no-defaults",
                    datadir,
                    "--user=root",
                    "--auth-root-authentication-method=normal",
                    "--skip-test-db",
                    NULL};
    pid_t pid = util_spawn(argv, e->log, err, cap);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        if (pid >= 0) {
            char tail[300];
            util_log_tail(e->log, tail, sizeof(tail));
            snprintf(err, cap, "mariadb-install-db failed: %s", tail);
        }
        free(e);
        return NULL;
    }
    if (start_server(e, err, cap)) {
        free(e);
        return NULL;
    }
    MYSQL *my = connect_db(e, NULL, err, cap);
    for (size_t i = 0; my && i < sizeof(schema) / sizeof(schema[0]); i++) {
        if (mysql_query(my, schema[i])) {
            snprintf(err, cap, "schema: %s", mysql_error(my));
            mysql_close(my);
            my = NULL;
        }
    }
    if (!my) {
        md_close(e);
        return NULL;
    }
    mysql_close(my);
    return e;
}

static void bind_num(MYSQL_BIND *b, enum enum_field_types t, void *p)
{
    memset(b, 0, sizeof(*b));
    b->buffer_type = t;
    b->buffer = p;
}

static void bind_str(MYSQL_BIND *b, char *p, size_t cap, unsigned long *len)
{
    memset(b, 0, sizeof(*b));
    b->buffer_type = MYSQL_TYPE_STRING;
    b->buffer = p;
    b->buffer_length = cap;
    b->length = len;
}

/* The nine profile columns of v in table order. */
static void bind_profile(MYSQL_BIND *b, vals *v)
{
    bind_num(&b[0], MYSQL_TYPE_LONGLONG, &v->id);
    bind_str(&b[1], v->email, sizeof(v->email), &v->l_email);
    bind_str(&b[2], v->country, sizeof(v->country), &v->l_country);
    bind_str(&b[3], v->status, sizeof(v->status), &v->l_status);
    bind_num(&b[4], MYSQL_TYPE_LONGLONG, &v->created);
    bind_num(&b[5], MYSQL_TYPE_LONGLONG, &v->login);
    bind_num(&b[6], MYSQL_TYPE_LONG, &v->rep);
    bind_str(&b[7], v->dname, sizeof(v->dname), &v->l_dname);
    bind_str(&b[8], v->bio, sizeof(v->bio), &v->l_bio);
    for (int i = 0; i < 9; i++)
        b[i].is_null = &v->null[i], b[i].error = &v->trunc[i];
}

/* Binds statement i's parameters to c->in and its results to c->row. */
static int bind_stmt(drv_conn *c, int i)
{
    MYSQL_BIND p[9], r[9];
    memset(p, 0, sizeof(p));
    bind_profile(r, &c->row);
    switch (i) {
    case ST_INSERT:
        bind_profile(p, &c->in);
        break;
    case ST_UPDATE:
        bind_profile(p + 0, &c->in); /* then rotate: user_id goes last */
        {
            MYSQL_BIND id = p[0];
            memmove(p, p + 1, 8 * sizeof(MYSQL_BIND));
            p[8] = id;
        }
        break;
    case ST_GET:
        bind_num(&p[0], MYSQL_TYPE_LONGLONG, &c->in.id);
        break;
    case ST_EMAIL:
        bind_str(&p[0], c->in.email, sizeof(c->in.email), &c->in.l_email);
        break;
    case ST_CS_IDS:
    case ST_CS:
        bind_str(&p[0], c->in.country, sizeof(c->in.country), &c->in.l_country);
        bind_str(&p[1], c->in.status, sizeof(c->in.status), &c->in.l_status);
        break;
    case ST_CA_IDS:
    case ST_CA:
        bind_num(&p[0], MYSQL_TYPE_LONGLONG, &c->in.a);
        bind_num(&p[1], MYSQL_TYPE_LONGLONG, &c->in.b);
        break;
    }
    MYSQL_STMT *s = c->st[i];
    if (mysql_stmt_param_count(s) && mysql_stmt_bind_param(s, p)) return -1;
    if (mysql_stmt_field_count(s) && mysql_stmt_bind_result(s, r)) return -1;
    return 0;
}

static void md_disconnect(drv_conn *c)
{
    if (!c) return;
    for (int i = 0; i < NST; i++)
        if (c->st[i]) mysql_stmt_close(c->st[i]);
    mysql_close(c->my);
    free(c);
}

static drv_conn *md_connect(drv_engine *e, char *err, size_t cap)
{
    drv_conn *c = calloc(1, sizeof(*c));
    if (!c) return NULL;
    if (!(c->my = connect_db(e, "profilebench", err, cap))) {
        free(c);
        return NULL;
    }
    for (int i = 0; i < NST; i++) {
        c->st[i] = mysql_stmt_init(c->my);
        if (!c->st[i] || mysql_stmt_prepare(c->st[i], sql_text[i], strlen(sql_text[i])) ||
            bind_stmt(c, i)) {
            snprintf(err, cap, "prepare: %s", c->st[i] ? mysql_stmt_error(c->st[i]) : "failed");
            md_disconnect(c);
            return NULL;
        }
    }
    return c;
}

static void set_str(char *dst, size_t cap, unsigned long *len, const char *s)
{
    snprintf(dst, cap, "%s", s);
    *len = strlen(dst);
}

static void put_profile(vals *v, const wl_profile *p)
{
    v->id = p->user_id;
    v->created = p->created_at;
    v->login = p->last_login;
    v->rep = p->reputation;
    set_str(v->email, sizeof(v->email), &v->l_email, p->email);
    set_str(v->country, sizeof(v->country), &v->l_country, p->country);
    set_str(v->status, sizeof(v->status), &v->l_status, p->status);
    set_str(v->dname, sizeof(v->dname), &v->l_dname, p->display_name);
    set_str(v->bio, sizeof(v->bio), &v->l_bio, p->bio);
}

static void copy_out(char *dst, size_t cap, const char *src, unsigned long len)
{
    size_t n = len < cap - 1 ? len : cap - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

static void get_profile(const vals *v, wl_profile *p)
{
    p->user_id = v->id;
    p->created_at = v->created;
    p->last_login = v->login;
    p->reputation = v->rep;
    copy_out(p->email, sizeof(p->email), v->email, v->l_email);
    copy_out(p->country, sizeof(p->country), v->country, v->l_country);
    copy_out(p->status, sizeof(p->status), v->status, v->l_status);
    copy_out(p->display_name, sizeof(p->display_name), v->dname, v->l_dname);
    copy_out(p->bio, sizeof(p->bio), v->bio, v->l_bio);
}

/* Executes statement i (parameters already in c->in) and fetches its rows
 * into r (profiles or ids). */
static int run(drv_conn *c, int i, drv_req *r, int profiles, char *err, size_t cap)
{
    MYSQL_STMT *s = c->st[i];
    if (mysql_stmt_execute(s)) goto fail;
    if (!r) return 0;
    r->n = 0;
    int rc;
    while ((rc = mysql_stmt_fetch(s)) == 0) {
        if (r->n >= WL_LIMIT) continue;
        if (profiles) get_profile(&c->row, &r->out[r->n]);
        r->ids[r->n++] = c->row.id;
    }
    if (rc != MYSQL_NO_DATA) {
        if (rc == MYSQL_DATA_TRUNCATED)
            snprintf(err, cap, "mariadb: a value was truncated");
        else
            snprintf(err, cap, "mariadb fetch: %s", mysql_stmt_error(s));
        mysql_stmt_free_result(s);
        return -1;
    }
    mysql_stmt_free_result(s);
    return 0;
fail:
    snprintf(err, cap, "mariadb: %s", mysql_stmt_error(s));
    return -1;
}

static int exec_one(drv_conn *c, drv_req *r, char *err, size_t cap)
{
    int p = r->want_profiles;
    switch (r->op) {
    case DRV_INSERT:
    case DRV_WRITE:
        put_profile(&c->in, r->new_p);
        if (run(c, r->op == DRV_INSERT ? ST_INSERT : ST_UPDATE, NULL, 0, err, cap)) return -1;
        if (mysql_stmt_affected_rows(c->st[r->op == DRV_INSERT ? ST_INSERT : ST_UPDATE]) != 1) {
            snprintf(err, cap, "mariadb: write of user %lld changed no row",
                     (long long)r->new_p->user_id);
            return -1;
        }
        return 0;
    case DRV_GET:
        c->in.id = r->id;
        return run(c, ST_GET, r, 1, err, cap);
    case DRV_EMAIL:
        set_str(c->in.email, sizeof(c->in.email), &c->in.l_email, r->email);
        return run(c, ST_EMAIL, r, 1, err, cap);
    case DRV_CS:
        set_str(c->in.country, sizeof(c->in.country), &c->in.l_country, wl_countries[r->country]);
        set_str(c->in.status, sizeof(c->in.status), &c->in.l_status, wl_statuses[r->status]);
        return run(c, p ? ST_CS : ST_CS_IDS, r, p, err, cap);
    case DRV_CA:
        c->in.a = r->from;
        c->in.b = r->to;
        return run(c, p ? ST_CA : ST_CA_IDS, r, p, err, cap);
    case DRV_TOP:
        return run(c, p ? ST_TOP : ST_TOP_IDS, r, p, err, cap);
    }
    snprintf(err, cap, "unknown request");
    return -1;
}

static int md_exec(drv_conn *c, drv_req *reqs, int n, char *err, size_t cap)
{
    for (int i = 0; i < n; i++)
        if (exec_one(c, &reqs[i], err, cap)) return -1;
    return 0;
}

static int md_settle(drv_engine *e, char *err, size_t cap)
{
    MYSQL *my = connect_db(e, "profilebench", err, cap);
    if (!my) return -1;
    int rc =
        mysql_query(my, "FLUSH TABLES profiles FOR EXPORT") || mysql_query(my, "UNLOCK TABLES");
    if (rc) snprintf(err, cap, "settle: %s", mysql_error(my));
    mysql_close(my);
    return rc ? -1 : 0;
}

static int64_t md_storage(drv_engine *e)
{
    char path[700];
    snprintf(path, sizeof(path), "%s/profilebench/profiles.ibd", e->data);
    return util_dir_bytes(path);
}

static int md_reopen(drv_engine *e, char *err, size_t cap)
{
    stop_server(e);
    return start_server(e, err, cap);
}

static int64_t md_count(drv_conn *c, char *err, size_t cap)
{
    drv_req r = {0};
    int64_t ids[WL_LIMIT];
    r.ids = ids;
    if (run(c, ST_COUNT, &r, 0, err, cap)) return -1;
    return r.n == 1 ? ids[0] : -1;
}

static pid_t md_server_pid(drv_engine *e)
{
    return e->pid;
}

const drv_ops drv_mariadb_ops = {
    .name = "mariadb",
    .title = "MariaDB",
    .remote = 1,
    .settings = "Server: Debian mariadbd over loopback TCP (libmariadb prepared statements)\n"
                "Engine: InnoDB, innodb_flush_log_at_trx_commit=2, binary log disabled, "
                "innodb_buffer_pool_size=1G\n"
                "Writes: autocommit single-row\n"
                "Indexes: native (email unique; country,status,user_id; created_at,user_id; "
                "reputation DESC,user_id)\n"
                "Requests: one at a time per connection (the protocol has no pipelining)\n",
    .probe = md_probe,
    .open = md_open,
    .connect = md_connect,
    .disconnect = md_disconnect,
    .exec = md_exec,
    .stabilize = NULL,
    .settle = md_settle,
    .storage = md_storage,
    .reopen = md_reopen,
    .count = md_count,
    .server_pid = md_server_pid,
    .close = md_close,
};
