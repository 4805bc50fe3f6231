/*
 * cmd_ft.c -- the FT.* definition commands (RediSearch dialect): argument
 * parsing and replies. The work is in the index layer (src/index/ft.h).
 *
 *   FT.CREATE idx [ON HASH] [PREFIX n p ...] [SCORE s] [LANGUAGE english]
 *             [NOOFFSETS] [NOHL] [NOFIELDS] [NOFREQS] [MAXTEXTFIELDS]
 *             [SKIPINITIALSCAN] [STOPWORDS n w ...] SCHEMA field [AS a] type [opts] ...
 *   FT.ALTER idx [SKIPINITIALSCAN] SCHEMA ADD field [AS a] type [opts] ...
 *   FT.DROPINDEX idx [DD]     FT.DROP idx [KEEPDOCS]     FT._LIST
 *   FT.INFO idx               FT.TAGVALS idx field       FT.EXPLAIN idx query
 *   FT.ALIASADD | ALIASUPDATE alias idx     FT.ALIASDEL alias
 *   FT.CONFIG GET pattern | SET name value | HELP
 * Options that would change results and are not implemented are refused
 * with an error naming them (ON JSON, FILTER, other languages, SCORE_FIELD,
 * LANGUAGE_FIELD, PAYLOAD_FIELD, TEMPORARY, GEO, VECTOR, PHONETIC).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/ft.h"
#include "server/acl.h"
#include "server/server.h"

#define FT_SCHEMA_MAX 64

static idx_str as_str(const arg *a)
{
    return (idx_str){a->ptr, a->len};
}

/* Parses "field [AS alias] TYPE [options]" from argv[*i]; returns 0, or -1
 * after replying an error. */
static int parse_field(client *c, int *i, ft_field_spec *f)
{
    int a = *i;
    memset(f, 0, sizeof(*f));
    if (a >= c->argc) goto bad;
    f->name = as_str(&c->argv[a++]);
    if (a + 1 < c->argc && arg_is(&c->argv[a], "as")) {
        f->alias = as_str(&c->argv[a + 1]);
        a += 2;
    }
    if (a >= c->argc) goto bad;
    const arg *t = &c->argv[a++];
    f->weight = 1;
    f->sep = ',';
    if (arg_is(t, "text")) {
        f->type = FT_TEXT;
    } else if (arg_is(t, "tag")) {
        f->type = FT_TAG;
    } else if (arg_is(t, "numeric")) {
        f->type = FT_NUMERIC;
    } else {
        add_reply_error_fmt(c, "-strata: field type %s is not supported (TEXT, TAG, NUMERIC)",
                            t->ptr);
        return -1;
    }
    while (a < c->argc) {
        const arg *o = &c->argv[a];
        if (arg_is(o, "sortable")) {
            f->opts |= FT_OPT_SORTABLE, a++;
            if (a < c->argc && arg_is(&c->argv[a], "unf")) f->opts |= FT_OPT_UNF, a++;
        } else if (arg_is(o, "noindex")) {
            f->opts |= FT_OPT_NOINDEX, a++;
        } else if (arg_is(o, "withsuffixtrie")) {
            f->opts |= FT_OPT_SUFFIXTRIE, a++;
        } else if (f->type == FT_TEXT && arg_is(o, "nostem")) {
            f->opts |= FT_OPT_NOSTEM, a++;
        } else if (f->type == FT_TEXT && arg_is(o, "weight") && a + 1 < c->argc) {
            if (arg_to_double(c, &c->argv[a + 1], &f->weight) < 0) return -1;
            a += 2;
        } else if (f->type == FT_TAG && arg_is(o, "separator") && a + 1 < c->argc) {
            if (c->argv[a + 1].len != 1) {
                add_reply_error(c, "-Tag separator must be a single character");
                return -1;
            }
            f->sep = c->argv[a + 1].ptr[0];
            a += 2;
        } else if (f->type == FT_TAG && arg_is(o, "casesensitive")) {
            f->opts |= FT_OPT_CASESENSITIVE, a++;
        } else if (arg_is(o, "phonetic")) {
            add_reply_error(c, "-strata: PHONETIC is not supported");
            return -1;
        } else {
            break; /* the next field */
        }
    }
    *i = a;
    return 0;
bad:
    add_reply_error(c, "-Fields arguments are missing");
    return -1;
}

static int parse_schema(client *c, int i, ft_field_spec *fields, size_t *n)
{
    *n = 0;
    while (i < c->argc) {
        if (*n == FT_SCHEMA_MAX) {
            add_reply_error_fmt(c, "-Schema is limited to %d fields", FT_SCHEMA_MAX);
            return -1;
        }
        if (parse_field(c, &i, &fields[(*n)++]) < 0) return -1;
    }
    if (*n == 0) {
        add_reply_error(c, "-Fields arguments are missing");
        return -1;
    }
    return 0;
}

/* Reads "n item ..." at argv[i]; returns the index after it or -1. */
static int counted_list(client *c, int i, long long *n)
{
    if (i >= c->argc || arg_to_ll(c, &c->argv[i], n) < 0) return -1;
    if (*n < 0 || *n > c->argc - i - 1) {
        add_reply_error(c, ERR_SYNTAX);
        return -1;
    }
    return i + 1;
}

void cmd_ft_create(client *c)
{
    ft_field_spec fields[FT_SCHEMA_MAX];
    ft_spec s = {.name = as_str(&c->argv[1]), .score = 1.0, .fields = fields};
    idx_str *prefixes = NULL, *stop = NULL;
    int i = 2;
    while (i < c->argc && !arg_is(&c->argv[i], "schema")) {
        const arg *o = &c->argv[i];
        long long n = 0;
        if (arg_is(o, "on") && i + 1 < c->argc) {
            if (!arg_is(&c->argv[i + 1], "hash")) {
                add_reply_error(c, "-strata: ON JSON is not supported (only ON HASH)");
                goto out;
            }
            i += 2;
        } else if (arg_is(o, "prefix") || arg_is(o, "stopwords")) {
            int is_prefix = arg_is(o, "prefix");
            int at = counted_list(c, i + 1, &n);
            if (at < 0) goto out;
            idx_str *list = calloc((size_t)n + 1, sizeof(*list));
            for (long long k = 0; k < n; k++)
                list[k] = as_str(&c->argv[at + k]);
            if (is_prefix) {
                free(prefixes);
                prefixes = list, s.prefixes = list, s.nprefixes = (size_t)n;
            } else {
                free(stop);
                stop = list, s.stop = list, s.nstop = (size_t)n, s.custom_stop = 1;
            }
            i = at + (int)n;
        } else if (arg_is(o, "score") && i + 1 < c->argc) {
            if (arg_to_double(c, &c->argv[i + 1], &s.score) < 0) goto out;
            if (s.score < 0 || s.score > 1) {
                add_reply_error(c, "-Invalid score");
                goto out;
            }
            i += 2;
        } else if (arg_is(o, "language") && i + 1 < c->argc) {
            if (!arg_is(&c->argv[i + 1], "english")) {
                add_reply_error(c, "-strata: this LANGUAGE is not supported (only english)");
                goto out;
            }
            i += 2;
        } else if (arg_is(o, "nooffsets")) {
            s.flags |= FT_IDX_NOOFFSETS, i++;
        } else if (arg_is(o, "nofreqs")) {
            s.flags |= FT_IDX_NOFREQS, i++;
        } else if (arg_is(o, "nofields")) {
            s.flags |= FT_IDX_NOFIELDS, i++;
        } else if (arg_is(o, "nohl")) {
            s.flags |= FT_IDX_NOHL, i++;
        } else if (arg_is(o, "skipinitialscan")) {
            s.flags |= FT_IDX_SKIPSCAN, i++;
        } else if (arg_is(o, "maxtextfields")) {
            i++;
        } else {
            add_reply_error_fmt(c, "-strata: FT.CREATE option %s is not supported", o->ptr);
            goto out;
        }
    }
    if (i >= c->argc) {
        add_reply_error(c, "-No schema found");
        goto out;
    }
    if (parse_schema(c, i + 1, fields, &s.nfields) < 0) goto out;
    ks_status st = ft_create(client_ks(c), &s);
    if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else
        add_reply_ok(c);
out:
    free(prefixes);
    free(stop);
}

void cmd_ft_alter(client *c)
{
    ft_field_spec fields[FT_SCHEMA_MAX];
    int i = 2;
    if (i < c->argc && arg_is(&c->argv[i], "skipinitialscan")) i++;
    if (i + 1 >= c->argc || !arg_is(&c->argv[i], "schema") || !arg_is(&c->argv[i + 1], "add")) {
        add_reply_error(c, "-Unknown action passed to ALTER SCHEMA");
        return;
    }
    size_t n = 0;
    if (parse_schema(c, i + 2, fields, &n) < 0) return;
    ks_status st = ft_alter_add(client_ks(c), as_str(&c->argv[1]), fields, n);
    if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else
        add_reply_ok(c);
}

static void drop(client *c, int dd)
{
    ks_status st = ft_drop(client_ks(c), as_str(&c->argv[1]), dd);
    if (st == KS_NOTFOUND)
        add_reply_error(c, "-Unknown Index name");
    else if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else
        add_reply_ok(c);
}

/* FT.DROPINDEX keeps the documents unless DD (KEEPDOCS, the legacy word,
 * is accepted and changes nothing). */
void cmd_ft_dropindex(client *c)
{
    int dd = c->argc == 3 && arg_is(&c->argv[2], "dd");
    if (c->argc > 3 || (c->argc == 3 && !dd && !arg_is(&c->argv[2], "keepdocs"))) {
        add_reply_error(c, ERR_SYNTAX);
        return;
    }
    drop(c, dd);
}

/* The legacy FT.DROP deletes the documents unless KEEPDOCS (redis-py 4.3
 * sends an empty argument for "delete them"). */
void cmd_ft_drop(client *c)
{
    int keep = c->argc == 3 && arg_is(&c->argv[2], "keepdocs");
    if (c->argc > 3 || (c->argc == 3 && !keep && c->argv[2].len)) {
        add_reply_error(c, ERR_SYNTAX);
        return;
    }
    drop(c, !keep);
}

typedef struct list_acc {
    client *c;
    long n;
} list_acc;

static void list_one(void *arg, const char *name, size_t nlen)
{
    list_acc *a = arg;
    add_reply_bulk(a->c, name, nlen);
    a->n++;
}

void cmd_ft__list(client *c)
{
    list_acc a = {c, 0};
    void *len = add_reply_deferred_len(c);
    ft_list(dbmap_stored(c->db), list_one, &a);
    set_deferred_array_len(c, len, a.n);
}

static void kv_str(client *c, const char *k, const char *v)
{
    add_reply_bulk_cstr(c, k);
    add_reply_bulk_cstr(c, v);
}

static void kv_num(client *c, const char *k, double v)
{
    char buf[64];
    add_reply_bulk_cstr(c, k);
    ft_fmt_num(v, buf, sizeof(buf));
    add_reply_bulk_cstr(c, buf);
}

static void info_attribute(client *c, const ft_field_spec *f)
{
    static const char *const types[] = {"TEXT", "TAG", "NUMERIC"};
    void *len = add_reply_deferred_len(c);
    long n = 6;
    add_reply_bulk_cstr(c, "identifier");
    add_reply_bulk(c, f->name.p, f->name.n);
    add_reply_bulk_cstr(c, "attribute");
    add_reply_bulk(c, f->alias.p, f->alias.n);
    add_reply_bulk_cstr(c, "type");
    add_reply_bulk_cstr(c, types[f->type]);
    if (f->type == FT_TAG) {
        char sep[2] = {f->sep, 0};
        kv_str(c, "SEPARATOR", sep);
        n += 2;
        if (f->opts & FT_OPT_CASESENSITIVE) add_reply_bulk_cstr(c, "CASESENSITIVE"), n++;
    }
    if (f->type == FT_TEXT) {
        kv_num(c, "WEIGHT", f->weight);
        n += 2;
        if (f->opts & FT_OPT_NOSTEM) add_reply_bulk_cstr(c, "NOSTEM"), n++;
    }
    if (f->opts & FT_OPT_SORTABLE) add_reply_bulk_cstr(c, "SORTABLE"), n++;
    if (f->opts & FT_OPT_UNF) add_reply_bulk_cstr(c, "UNF"), n++;
    if (f->opts & FT_OPT_NOINDEX) add_reply_bulk_cstr(c, "NOINDEX"), n++;
    if (f->opts & FT_OPT_SUFFIXTRIE) add_reply_bulk_cstr(c, "WITHSUFFIXTRIE"), n++;
    set_deferred_array_len(c, len, n);
}

/* FT.INFO in RediSearch 2.6's order: node-redis reads it by position. */
void cmd_ft_info(client *c)
{
    ft_info *in = malloc(sizeof(*in));
    if (!in) abort();
    ks_status st = ft_describe(client_ks(c), as_str(&c->argv[1]), in);
    if (st == KS_NOTFOUND) {
        add_reply_error(c, "-Unknown Index name");
        goto out;
    }
    if (st != KS_OK) {
        add_reply_ks_error(c, st, client_ks(c));
        goto out;
    }
    add_reply_map_len(c, in->custom_stop ? 25 : 24);
    add_reply_bulk_cstr(c, "index_name");
    add_reply_bulk(c, in->name.p, in->name.n);
    add_reply_bulk_cstr(c, "index_options");
    void *olen = add_reply_deferred_len(c);
    long no = 0;
    static const char *const opt_names[] = {"NOOFFSETS", "NOFREQS", "NOFIELDS", "NOHL",
                                            "SKIPINITIALSCAN"};
    for (int b = 0; b < 5; b++)
        if (in->flags & (1u << b)) add_reply_bulk_cstr(c, opt_names[b]), no++;
    set_deferred_array_len(c, olen, no);
    add_reply_bulk_cstr(c, "index_definition");
    add_reply_map_len(c, 3);
    kv_str(c, "key_type", "HASH");
    add_reply_bulk_cstr(c, "prefixes");
    add_reply_array_len(c, in->nprefixes ? (long)in->nprefixes : 1);
    if (!in->nprefixes) add_reply_bulk_cstr(c, "");
    for (size_t i = 0; i < in->nprefixes; i++)
        add_reply_bulk(c, in->prefixes[i], in->plens[i]);
    kv_num(c, "default_score", in->score);
    add_reply_bulk_cstr(c, "attributes");
    add_reply_array_len(c, (long)in->nfields);
    for (size_t i = 0; i < in->nfields; i++)
        info_attribute(c, &in->fields[i]);
    kv_num(c, "num_docs", (double)in->num_docs);
    kv_num(c, "max_doc_id", (double)in->num_docs);
    kv_num(c, "num_terms", (double)in->num_terms);
    kv_num(c, "num_records", (double)in->num_records);
    static const char *const zeros[] = {
        "inverted_sz_mb",       "vector_index_sz_mb", "total_inverted_index_blocks",
        "offset_vectors_sz_mb", "doc_table_size_mb",  "sortable_values_size_mb",
        "key_table_size_mb"};
    for (size_t i = 0; i < sizeof(zeros) / sizeof(zeros[0]); i++)
        kv_str(c, zeros[i], "0");
    kv_num(c, "records_per_doc_avg",
           in->num_docs ? (double)in->num_records / (double)in->num_docs : 0);
    kv_str(c, "bytes_per_record_avg", "0");
    kv_str(c, "offsets_per_term_avg", "0");
    kv_str(c, "offset_bits_per_record_avg", "0");
    kv_num(c, "hash_indexing_failures", (double)in->failures);
    add_reply_bulk_cstr(c, "indexing");
    add_reply_long_long(c, in->building);
    kv_num(c, "percent_indexed", in->percent);
    add_reply_bulk_cstr(c, "gc_stats");
    add_reply_map_len(c, 7);
    static const char *const gc[] = {"bytes_collected",  "total_ms_run",
                                     "total_cycles",     "average_cycle_time_ms",
                                     "last_run_time_ms", "gc_numeric_trees_missed",
                                     "gc_blocks_denied"};
    for (int i = 0; i < 7; i++)
        kv_str(c, gc[i], "0");
    add_reply_bulk_cstr(c, "cursor_stats");
    add_reply_map_len(c, 4);
    static const char *const cur[] = {"global_idle", "global_total", "index_capacity",
                                      "index_total"};
    for (int i = 0; i < 4; i++) {
        add_reply_bulk_cstr(c, cur[i]);
        add_reply_long_long(c, 0);
    }
    if (in->custom_stop) {
        add_reply_bulk_cstr(c, "stopwords_list");
        add_reply_array_len(c, (long)in->nstop);
        for (size_t i = 0; i < in->nstop; i++)
            add_reply_bulk_cstr(c, in->stop[i]);
    }
out:
    free(in);
}

void cmd_ft_tagvals(client *c)
{
    if (acl_refuse_ft_query(c, &c->argv[1])) return;
    list_acc a = {c, 0};
    reply_mark mark;
    reply_mark_get(c, &mark);
    void *len = add_reply_deferred_len(c);
    ks_status st = ft_tagvals(client_ks(c), as_str(&c->argv[1]), as_str(&c->argv[2]), list_one, &a);
    if (st != KS_OK) {
        reply_truncate(c, &mark);
        add_reply_ks_error(c, st, client_ks(c));
        return;
    }
    set_deferred_array_len(c, len, a.n);
}

static void explain(client *c, int cli)
{
    idx_str params[64];
    size_t np = 0;
    for (int i = 3; i < c->argc; i++) {
        long long n;
        if (arg_is(&c->argv[i], "params") && i + 1 < c->argc) {
            int at = counted_list(c, i + 1, &n);
            if (at < 0) return;
            for (long long k = 0; k + 1 < n && np < 64; k++)
                params[np++] = as_str(&c->argv[at + k]);
            i = at + (int)n - 1;
        } else if (arg_is(&c->argv[i], "dialect") && i + 1 < c->argc) {
            i++;
        }
    }
    char *out = NULL;
    ks_status st = ft_explain_query(client_ks(c), as_str(&c->argv[1]), as_str(&c->argv[2]), params,
                                    np / 2, &out);
    if (st != KS_OK) {
        add_reply_ks_error(c, st, client_ks(c));
        return;
    }
    if (!cli) {
        add_reply_bulk_cstr(c, out);
    } else { /* one line per element, as FT.EXPLAINCLI */
        long n = 0;
        void *len = add_reply_deferred_len(c);
        for (char *p = out, *nl; *p; p = nl + 1) {
            nl = strchr(p, '\n');
            if (!nl) nl = p + strlen(p) - 1;
            add_reply_bulk(c, p, (size_t)(nl - p + (*nl != '\n')));
            n++;
        }
        set_deferred_array_len(c, len, n);
    }
    free(out);
}

void cmd_ft_explain(client *c)
{
    explain(c, 0);
}

void cmd_ft_explaincli(client *c)
{
    explain(c, 1);
}

static void alias(client *c, int op)
{
    idx_str ix = op == FT_ALIAS_DEL ? (idx_str){"", 0} : as_str(&c->argv[2]);
    ks_status st = ft_alias(client_ks(c), op, as_str(&c->argv[1]), ix);
    if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else
        add_reply_ok(c);
}

void cmd_ft_aliasadd(client *c)
{
    alias(c, FT_ALIAS_ADD);
}

void cmd_ft_aliasupdate(client *c)
{
    alias(c, FT_ALIAS_UPDATE);
}

void cmd_ft_aliasdel(client *c)
{
    alias(c, FT_ALIAS_DEL);
}

/* FT.CONFIG: RediSearch's usual options with their defaults. SET is
 * accepted for these and remembered, but changes nothing else. */
static struct {
    const char *name;
    char value[64];
} ft_config[] = {
    {"MINPREFIX", "2"},
    {"MAXEXPANSIONS", "200"},
    {"TIMEOUT", "500"},
    {"ON_TIMEOUT", "return"},
    {"MINSTEMLEN", "4"},
    {"DEFAULT_DIALECT", "1"},
    {"MAXSEARCHRESULTS", "1000000"},
    {"MAXAGGREGATERESULTS", "unlimited"},
    {"MAXDOCTABLESIZE", "1000000"},
    {"CURSOR_MAX_IDLE", "300000"},
    {"GC_POLICY", "fork"},
    {"FORK_GC_RUN_INTERVAL", "30"},
    {"UNION_ITERATOR_HEAP", "20"},
    {"NOGC", "false"},
    {"SAFEMODE", "true"},
    {"FRISOINI", ""},
};
#define FT_NCONFIG (sizeof(ft_config) / sizeof(ft_config[0]))

void cmd_ft_config(client *c)
{
    const arg *sub = &c->argv[1];
    if (arg_is(sub, "get") && c->argc == 3) {
        long n = 0;
        void *len = add_reply_deferred_len(c);
        for (size_t i = 0; i < FT_NCONFIG; i++) {
            if (!ks_glob_match(c->argv[2].ptr, c->argv[2].len, ft_config[i].name,
                               strlen(ft_config[i].name), 1))
                continue;
            add_reply_array_len(c, 2);
            add_reply_bulk_cstr(c, ft_config[i].name);
            add_reply_bulk_cstr(c, ft_config[i].value);
            n++;
        }
        set_deferred_array_len(c, len, n);
    } else if (arg_is(sub, "set") && c->argc >= 4) {
        for (size_t i = 0; i < FT_NCONFIG; i++) {
            if (strcasecmp(ft_config[i].name, c->argv[2].ptr) != 0) continue;
            snprintf(ft_config[i].value, sizeof(ft_config[i].value), "%s", c->argv[3].ptr);
            add_reply_ok(c);
            return;
        }
        add_reply_error(c, "-Invalid option");
    } else if (arg_is(sub, "help")) {
        add_reply_array_len(c, 2);
        add_reply_bulk_cstr(c, "FT.CONFIG GET <pattern>");
        add_reply_bulk_cstr(c, "FT.CONFIG SET <option> <value>");
    } else {
        add_reply_error(c, "-Unknown subcommand for FT.CONFIG");
    }
}
