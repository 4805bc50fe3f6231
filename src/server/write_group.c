/*
 * write_group.c -- one engine write for the commands of one read of a
 * connection (a pipeline), instead of one per command.
 *
 * Each engine write has a fixed cost (the engine mutex, a log record, a
 * sequence publish, a memtable insert group, the replication feed), paid
 * per command without grouping. A group keeps the writes of consecutive
 * commands of one client in server.batch and hands them to the engine
 * once, when the read's requests are done (write_group_end) or before a
 * command that may not join runs.
 *
 * Invariant S4 (server.c): while a group is open, server.batch holds the
 * writes of the group's commands and nothing else; every command of the
 * group runs with its own savepoint (S1: an error reply rolls back its own
 * writes only) and reads the writes of the earlier ones through the
 * batch, as EXEC's commands do. The group is written before:
 *   - a command that may not join (a read, a write of another group of
 *     commands, a blocking command, MULTI/EXEC, a client in MULTI, CLIENT
 *     REPLY OFF/SKIP, EVAL_RO and FCALL_RO), so that it finds S2 (an empty
 *     batch between commands);
 *   - blocked clients are served (a key a command readied), so that they
 *     see the state after that command, as Redis serves them after each
 *     command;
 *   - the batch grows past GROUP_MAX_BYTES, or a command brings more than
 *     GROUP_ARG_BYTES of arguments, so that the group stays far below the
 *     log's record limit (W3) that each command alone is checked against;
 *   - the read ends: the group commit in before-sleep then makes it durable
 *     before any reply of it is written (N1), exactly as a command's own
 *     batch.
 * EVAL, EVALSHA and FCALL join: the script's commands read the group's
 * writes through the batch and add their own, each with its savepoint, as
 * EXEC's commands do (a script has none of its own: an error keeps what it
 * wrote, as in Redis). While a script is busy and other clients' events
 * are served, the group stays open and unwritten: the script's caller is
 * protected, so no reply of the group leaves before the group's write.
 * A command of the group changes the key counters in memory only
 * (ks_count_hold_cmd, KS-E7): a SET of a new key would otherwise read
 * the counter back through the batch and put it again, once per command;
 * server_write_batch_n puts the group's sums in once before the write.
 * The group is one engine batch: one log record, applied and replicated
 * atomically, so a crash keeps all of it or nothing -- and none of its
 * replies has been sent before its log write (N1).
 *
 * When the engine refuses the group's batch, every command of the group
 * replies the error instead (their replies since the first one's mark are
 * taken back): their writes were not applied, and a read of the group may
 * have shown one of them.
 */
#include <stdlib.h>
#include <string.h>

#include "server/script.h"
#include "server/server.h"

#define GROUP_MAX_BYTES (256u << 10)
#define GROUP_ARG_BYTES (64u << 10)

static struct {
    client *c;                  /* the open group's client, NULL when none */
    int ncmds;                  /* commands whose writes the batch holds */
    const struct command *last; /* the last of them (the dirty count's c->cmd) */
    reply_mark mark;            /* before the first one's reply */
    uint64_t touches;           /* the dirty count of the commands before the last */
    int counted;                /* ... and whether one of them set its own count */
    int joins;                  /* the running command joins the group */
    int held;                   /* ... and its counters are held (KS-E7): not a script's */
} G;

/* The write commands of the groups whose commands only read and write
 * keys through the keyspace with server.batch (as EXEC runs them): 1 = may
 * join, 2 = not, by command_id; computed on first use. A read does not
 * join: the group is written before it, so that its reads (iterators
 * above all, which would need the batch's memtable index) find an empty
 * batch, as without groups. */
static unsigned char *joinable_ids;

static int compute_joinable(const struct command *cmd)
{
    static const char *const groups[] = {"string",      "hash",   "list",   "set", "sorted-set",
                                         "hyperloglog", "bitmap", "stream", NULL};
    if (!cmd->proc) return 0;
    /* EVAL, EVALSHA and FCALL (not the _RO ones, which are reads): the
     * script's writes go into the group's batch as EXEC's commands' do. */
    if (cmd->flags & CMD_SCRIPT) return !(cmd->flags & CMD_READONLY);
    if (!(cmd->flags & CMD_WRITE)) return 0;
    if (cmd->flags & (CMD_BLOCKING | CMD_ADMIN | CMD_CONTAINER)) return 0;
    for (const char *const *g = groups; *g; g++)
        if (cmd->group && !strcmp(cmd->group, *g)) return 1;
    return 0;
}

static int cmd_joinable(const struct command *cmd)
{
    if (!joinable_ids) {
        joinable_ids = calloc((size_t)command_count(), 1);
        if (!joinable_ids) return 0;
    }
    int id = command_id(cmd);
    if (!joinable_ids[id]) joinable_ids[id] = compute_joinable(cmd) ? 1 : 2;
    return joinable_ids[id] == 1;
}

static int args_small(const client *c)
{
    size_t n = 0;
    for (int i = 0; i < c->argc; i++)
        n += c->argv[i].len;
    return n <= GROUP_ARG_BYTES;
}

/* May cmd of c join the open group? */
static int may_join(client *c, const struct command *cmd)
{
    struct client_private *p = c->priv;
    return G.c == c && cmd && !(c->flags & CLIENT_MULTI) && !p->reply_off && !p->reply_skip &&
           !script_running() && cmd_joinable(cmd) && args_small(c);
}

/* Hands the group's writes to the engine (the replies since G.mark become
 * errors if it refuses). The group stays open, empty. */
static void group_write(void)
{
    if (!G.ncmds) return;
    const struct command *now = G.c->cmd; /* the command about to run */
    G.c->cmd = G.last;
    server.cmd_touches += G.touches; /* the group's keys, counted once written */
    server.cmd_counted |= G.counted;
    G.touches = 0;
    G.counted = 0;
    server_write_batch_n(G.c, &G.mark, G.ncmds);
    G.c->cmd = now;
    G.ncmds = 0;
}

/* Puts the sums the group's commands hold into its batch (KS-E7), before
 * a script joins; 0 when the counter read failed (they stay held). */
static int group_count_flush(void)
{
    server.ctx.ks = server.ks;
    server.ctx.batch = server.batch;
    int ok = ks_count_flush(&server.ctx) == KS_OK;
    ks_ctx_reset(&server.ctx);
    return ok;
}

void write_group_begin(client *c)
{
    /* A busy script's group stays open, untouched by the few commands
     * other clients may run meanwhile (their writes, if any, join the
     * script's batch as before groups). */
    if (script_running()) return;
    group_write(); /* nested (clients served while a command waits): the outer one's first */
    G.c = c;
    G.ncmds = 0;
}

void write_group_before(client *c, const struct command *cmd)
{
    if (script_running()) return; /* as write_group_begin */
    int join = may_join(c, cmd);
    /* A script's FLUSHALL must find every count in the batch. */
    if (join && (cmd->flags & CMD_SCRIPT) && G.ncmds && !group_count_flush()) join = 0;
    if (G.ncmds && !join) group_write();
    /* Whether it joins or its batch is written right after it, its writes
     * go to the engine through server_write_batch_n, which flushes.
     * server_process_command calls write_group_after for every command
     * that may join (it skips it only in MULTI and scripts), which ends
     * the hold's deferral. */
    /* A script's commands write their counters into the batch, each with
     * its own savepoint, as EXEC's do: a hold would keep the sums of one
     * that failed. The sums the group held are in the batch already (above),
     * so the batch alone has every count while the script runs. */
    G.joins = join;
    G.held = join && !(cmd->flags & CMD_SCRIPT);
    if (G.held) ks_count_hold_cmd(server.ks, server.batch);
}

void write_group_after(client *c, const struct command *cmd, const reply_mark *mark)
{
    struct client_private *p = c->priv;
    /* may_join as write_group_before found it: nothing a joining command
     * does changes its terms, but a nested group (a command that waits)
     * may have closed this one. */
    int joined = G.joins && G.c == c;
    if (G.held) ks_count_hold_done(client_ks(c), !c->last_cmd_errors); /* as S1 */
    G.joins = G.held = 0;
    if (joined && !(c->flags & CLIENT_BLOCKED) && !p->waiting &&
        eng_batch_byte_size(server.batch) < GROUP_MAX_BYTES && !block_has_ready()) {
        if (eng_batch_count(server.batch) == 0) { /* wrote nothing: nothing to take back */
            server_write_batch(c, mark);          /* (its dirty count) */
            return;
        }
        if (!G.ncmds) G.mark = *mark;
        G.ncmds++;
        G.last = cmd;
        /* The next command starts its own count (networking.c resets it):
         * keep this one's for the group's write. */
        G.touches += server.cmd_touches;
        G.counted |= server.cmd_counted;
        server.cmd_touches = 0;
        server.cmd_counted = 0;
        return;
    }
    if (G.ncmds && G.c == c) {
        G.ncmds++; /* this command's writes are in the same batch */
        G.last = cmd;
        group_write();
    } else {
        server_write_batch(c, mark);
    }
    block_handle_ready();
}

void write_group_end(client *c)
{
    if (G.c != c || script_running()) return;
    group_write();
    G.c = NULL;
}
