/*
 * networking_prefetch.c -- cache hints for a pipeline before it runs: the
 * keys (and hash fields) its requests name, read straight from the query
 * buffer without parsing it for real, handed to the keyspace's prefetch
 * so the commands' memtable cache misses overlap. Apart from
 * networking.c because it is an optimisation with its own mini-parser:
 * nothing it does changes a reply, and a request it misreads only wastes
 * a hint.
 */
#include <string.h>

#include "server/resp_parser.h"
#include "server/server.h"

/* The number n of a "<c>n\r\n" header at b[*pos..end), moving *pos past
 * it; -1 when there is none (another form, or not all there yet). */
static long long header_len(const char *b, size_t end, size_t *pos, char c)
{
    size_t i = *pos, start;
    if (i >= end || b[i] != c) return -1;
    long long v = 0;
    for (start = ++i; i < end && b[i] >= '0' && b[i] <= '9' && i - start < 18; i++)
        v = v * 10 + (b[i] - '0');
    if (i == start || i + 2 > end || b[i] != '\r' || b[i + 1] != '\n') return -1;
    *pos = i + 2;
    return v;
}

/* Before a pipeline runs: the first key of each of its complete multibulk
 * requests (by the command's row: SET, GET, INCR, HSET, SADD, LPUSH ...)
 * is handed to ks_prefetch (as a read: no_writes below), and its access slot
 * prefetched -- and a hash command's field or a set command's member to
 * ks_prefetch_fields -- so
 * that the commands' cache misses in the memtable overlap instead of each
 * command waiting for its own. A key the request before named too (HSET,
 * LPUSH or RPOP of one key) is hinted once: it is in the cache after the
 * first. MSET's other keys are not: hinting them cost more than the
 * misses it overlapped. A hint: nothing is parsed for real
 * here, and a request it misreads only wastes a prefetch. */
/* Moves *pos past one complete multibulk request; 0 when there is none. */
static int skip_request(const char *b, size_t end, size_t *pos)
{
    long long argc = header_len(b, end, pos, '*');
    for (long long a = 0; a < argc; a++) {
        long long l = header_len(b, end, pos, '$');
        if (l < 0 || (size_t)l + 2 > end - *pos) return 0;
        *pos += (size_t)l + 2;
    }
    return argc > 0;
}

/* What one networking_prefetch hands on: record keys and hash fields with
 * their keys. */
typedef struct prefetch_set {
    const char *keys[KS_PREFETCH_MAX], *hkeys[KS_PREFETCH_MAX], *fields[KS_PREFETCH_MAX];
    size_t lens[KS_PREFETCH_MAX], hlens[KS_PREFETCH_MAX], flens[KS_PREFETCH_MAX], n, nf;
} prefetch_set;

/* Every key is hinted as a read (its index slot and entry), a write's
 * too: the tree paths a write would descend cost a descent each to
 * prefetch, and the write group inserts its writes together at the end,
 * where mem_add_many overlaps their descents' misses itself
 * (prefetch_inserts in memtable.c). */
static const unsigned char no_writes[KS_PREFETCH_MAX];

/* Where the last networking_prefetch of PF.c stopped (a pipeline longer
 * than KS_PREFETCH_MAX requests): process_input hints the next ones when
 * it gets there (PF.c NULL: none left in the buffer). Only a hint: a stale
 * value skips or repeats one. */
static struct {
    const client *c;
    size_t end;
} PF;

static void add_key(prefetch_set *s, const char *k, size_t l)
{
    if (s->n && s->lens[s->n - 1] == l && !memcmp(s->keys[s->n - 1], k, l)) return;
    s->keys[s->n] = k;
    s->lens[s->n++] = l;
}

/* For a command whose keys follow a count (EVAL, EVALSHA, FCALL: a
 * key spec with a keynum search, Redis's "numkeys"), given its argument
 * a: the first key's position when a is that count and it is at least 1,
 * else 0. */
static long long keynum_first(const struct command *cmd, long long a, const char *arg, size_t l)
{
    const key_spec *k = &cmd->keys[0];
    if (k->bs != KSPEC_BS_INDEX || k->fk != KSPEC_FK_KEYNUM || a != k->pos + k->fa) return 0;
    if (l == 0 || l > 4 || arg[0] < '1' || arg[0] > '9') return 0;
    for (size_t i = 1; i < l; i++)
        if (arg[i] < '0' || arg[i] > '9') return 0;
    return k->pos + k->fb;
}

/* Adds the key (and a hash command's field) of the request at
 * b[*pos..end) to s and moves *pos past it; 0 when it is not a complete
 * request (*pos then undefined). REQUIRES: s has room for one more. */
static int prefetch_request(const char *b, size_t end, size_t *pos, prefetch_set *s)
{
    long long argc = header_len(b, end, pos, '*');
    if (argc < 2 || argc > 1024) return 0;
    const struct command *cmd = NULL;
    const char *key = NULL;
    size_t klen = 0;
    long long first = 0; /* the first key's position */
    for (long long a = 0; a < argc; a++) {
        long long l = header_len(b, end, pos, '$');
        if (l < 0 || (size_t)l + 2 > end - *pos) return 0;
        const char *arg = b + *pos;
        *pos += (size_t)l + 2;
        if (a == 0) {
            cmd = command_lookup(arg, (size_t)l);
            first = cmd ? cmd->first_key : 0;
        }
        if (cmd && a && first == 0) first = keynum_first(cmd, a, arg, (size_t)l);
        if (!cmd || a == 0 || a > 3) continue;
        if (a == first) {
            key = arg, klen = (size_t)l;
            add_key(s, arg, (size_t)l);
        } else if (a == 2 && key && cmd->group &&
                   (!strcmp(cmd->group, "hash") || !strcmp(cmd->group, "set"))) {
            s->hkeys[s->nf] = key;
            s->hlens[s->nf] = klen;
            s->fields[s->nf] = arg;
            s->flens[s->nf++] = (size_t)l;
        }
    }
    return 1;
}

void networking_prefetch(client *c)
{
    struct client_private *p = c->priv;
    PF.c = NULL;
    if (p->parser->in_multibulk || p->qlen - p->qpos < 32) return;
    const char *b = p->qbuf;
    size_t pos = p->qpos, end = p->qlen;
    /* One request (no pipeline, -c 1): nothing to overlap, no lookups. */
    size_t second = pos;
    if (!skip_request(b, end, &second) || second >= end) return;
    prefetch_set s;
    s.n = s.nf = 0;
    int r = 1;
    while (s.n < KS_PREFETCH_MAX && s.nf < KS_PREFETCH_MAX &&
           (r = prefetch_request(b, end, &pos, &s)))
        ;
    if (r) { /* stopped full: more requests may follow */
        PF.c = c;
        PF.end = pos;
    }
    int db = dbmap_stored(c->db); /* DBM2 */
    if (s.n >= 2) {
        for (size_t i = 0; i < s.n; i++)
            key_access_prefetch(c->db, s.keys[i], s.lens[i]);
        ks_prefetch(server.ks, db, s.n, s.keys, s.lens, no_writes);
    }
    if (s.nf >= 2)
        ks_prefetch_fields(server.ks, db, s.nf, s.hkeys, s.hlens, s.fields, s.flens, no_writes,
                           server_now_ms());
}

int networking_prefetch_resumes(const client *c)
{
    return PF.c == c && c->priv->qpos >= PF.end;
}
