/*
 * sql_stmt.h -- the statement catalog the SQL drivers (driver_mariadb.c,
 * driver_sqlite.c) prepare per connection: one statement per request kind,
 * with the _IDS variants returning only user_id for scans. Each driver
 * writes the SQL text of every entry in its own dialect (placeholders
 * differ), indexed by these values.
 */
#ifndef STRATA_BENCH_SQL_STMT_H
#define STRATA_BENCH_SQL_STMT_H

/* The profile columns in the order every statement binds and reads them. */
#define SQL_COLS                                                                                   \
    "user_id, email, country, status, created_at, last_login, reputation, display_name, bio"

enum {
    ST_INSERT,
    ST_UPDATE,
    ST_GET,
    ST_EMAIL,
    ST_CS_IDS,
    ST_CS,
    ST_CA_IDS,
    ST_CA,
    ST_TOP_IDS,
    ST_TOP,
    ST_COUNT,
    NST
};

#endif
