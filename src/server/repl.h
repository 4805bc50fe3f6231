/*
 * repl.h -- replication: the primary's stream, backlog and replicas
 * (repl_master.c), the replica's link (repl_replica.c), and what the rest
 * of the server calls. Protocol and invariants: REPLICATION.md.
 *
 * Threading: the command thread only.
 */
#ifndef STRATA_REPL_H
#define STRATA_REPL_H

#include <stdint.h>

#include "server/server.h"

/* ---- Shared state (repl_master.c) ---- */
typedef struct repl_state {
    char replid[41], replid2[41];
    long long offset;        /* master_repl_offset: stream bytes of replid's history */
    long long second_offset; /* second_repl_offset; -1 */
    int is_replica;          /* REPLICAOF host port in effect */
    char master_host[256];
    int master_port;
} repl_state;
extern repl_state repl;

/* Startup: a new replid, the backlog, the replica's stored state, and
 * REPLICAOF from the config file. */
void repl_init(void);
/* R1 and the stream: called after eng_write accepted b (a command's or
 * the cron's batch). On a primary appends it to the stream. */
void repl_feed_batch(eng_batch *b);
/* The keyspace's touch hook on a primary: key (NULL: db flushed) goes
 * with the next fed batch, so replicas touch it too. */
void repl_note_touched(int db, const char *key, size_t len);
/* On a primary, appends c's command (at most 8 arguments) to the stream
 * as it is: PUBLISH and SPUBLISH, which replicas run too. */
void repl_propagate(const client *c);
/* Appends raw stream bytes (a frame) to the backlog and, unless
 * backlog_only, to every online replica. */
void repl_feed_bytes(const char *p, size_t n, int backlog_only);
/* Appends the frame "*argc $len arg ..." (RESP, as the stream's grammar
 * in REPLICATION.md) through repl_feed_bytes. */
void repl_feed_frame(const char *const *argv, const size_t *len, int argc);
/* Every event-loop iteration: snapshot transfers, WAIT wake-ups, acks. */
void repl_before_sleep(void);
/* Once a second or more often (server cron): pings, acks, reconnects. */
void repl_cron(void);
/* The write checks of Redis's processCommand: READONLY on a replica,
 * NOREPLICAS with min-replicas-to-write. Returns the error text, or NULL
 * when cmd (with c's MULTI queue for EXEC) may write. */
const char *repl_write_refusal(client *c, const struct command *cmd);
/* The same checks for a write of any kind: a script that may write (no
 * no-writes flag) is refused with them before it runs, as Redis's
 * scriptPrepareForRun. */
const char *repl_any_write_refusal(void);
/* replica-serve-stale-data no: 1 when cmd (its subcommand; with c's
 * MULTI queue for EXEC) is not flagged stale and must get MASTERDOWN, the
 * link to the primary being down. */
int repl_refuses_stale(const client *c, const struct command *cmd);
/* R1: 1 when the server must not write c's batch (a replica, c not the
 * link). */
int repl_drop_local_writes(void);
/* c is being freed: forget it as a replica or a WAIT. */
void repl_client_free(client *c);
/* INFO replication. */
void repl_info(sbuf *b);
/* INFO stats: sync_full, sync_partial_ok, sync_partial_err; CONFIG
 * RESETSTAT zeroes them. */
void repl_info_stats(sbuf *b);
void repl_reset_stats(void);
/* CLIENT LIST / KILL TYPE: 1 when c is a replica connection. */
int repl_client_is_replica(const client *c);

/* ---- Master side used by the replica side ---- */
/* A new history (promotion): replid2 = replid, second_offset = offset+1. */
void repl_shift_replid(void);
/* Starts the backlog afresh, empty at offset (a replica: a full sync
 * replaced the data, or its stored state at startup); it exists from then
 * on, so a promoted replica serves the other replicas partial resyncs. */
void repl_backlog_reset(long long offset);
/* Frees the backlog and the replica tables (shutdown). */
void repl_backlog_free(void);
/* Drops every replica connection (a primary turning into a replica). */
void repl_disconnect_replicas(void);
/* Replicas past the handshake (INFO's connected_slaves). */
int repl_replica_count(void);
/* The replica announced as host:port: 1 and whether it is online and
 * its acked offset, or 0 when there is none. */
int repl_replica_find(const char *host, int port, int *online, long long *ack);
/* An online replica that acked the whole stream: 1 and its address
 * (host copied into host[cap]), else 0. */
int repl_replica_caught_up(char *host, size_t cap, int *port);

/* ---- Coordinated failover (repl_failover.c) ---- */
/* INFO's master_failover_state. */
const char *repl_failover_state(void);
/* A FAILOVER is in any state but no-failover (PSYNC and REPLICAOF are
 * refused meanwhile). */
int repl_failover_busy(void);
/* failover-in-progress: the handshake sends PSYNC ... FAILOVER. */
int repl_failover_in_progress(void);
/* The target answered the PSYNC FAILOVER: accepted (+CONTINUE or
 * +FULLRESYNC) ends the failover, else it is aborted. */
void repl_failover_psync_answered(int accepted);
/* Ends a failover in any state, a primary again; why goes to the log. */
void repl_failover_abort(const char *why);
/* Every event-loop iteration (repl_before_sleep). */
void repl_failover_cron(void);

/* ---- Replica side (repl_replica.c) ---- */
/* Starts replicating from host:port (NULL: REPLICAOF NO ONE). */
void repl_set_master(const char *host, int port);
void repl_replica_cron(void);
/* Runs the handshake now rather than at the next cron (FAILOVER). */
void repl_replica_connect_now(void);
/* "replicaof" in the config file (host NULL: none): applied by repl_init. */
void repl_config_master(const char *host, int port);
void repl_start_configured(void);
/* The replica's INFO lines (master_host ... ). */
void repl_replica_info(sbuf *b);
/* Loads the stored replica state (replid, offset) at startup; returns 1
 * when there is one. */
int repl_replica_load_state(void);
/* master_link_status up. */
int repl_link_up(void);

/* Command bodies (cmd_repl.c parses). */
void repl_replconf(client *c);
void repl_psync(client *c, const char *replid, long long offset);
void repl_wait(client *c, long long numreplicas, int64_t deadline_ms);
void repl_role(client *c);
/* Shutdown: waits for a running BACKUP (it reads the engine). */
void repl_backup_wait(void);
/* Shutdown, after every client is gone: closes the link, frees the
 * backlog. REQUIRES: before eng_close. */
void repl_shutdown(void);

/* The server reloads what its layers cache from the engine (main.c). */
int server_reload_layers(void);

#endif
