/*
 * ft_parse.c -- the RediSearch query language, parsed into an ft_qnode
 * tree by recursive descent.
 *
 * Grammar (dialect 2 precedence; dialects 1 and 3 are parsed the same way,
 * see README "FT.* and RediSearch" for what that changes):
 *   query   := union
 *   union   := and ( '|' and )*
 *   and     := unary+                     juxtaposition is intersection
 *   unary   := '-' unary | '~' unary | primary
 *   primary := '(' union ')' | '*' | '"' words '"' | term ['*']
 *            | '@' attr ( '|' attr )* ':' fexpr
 *   fexpr   := '{' tag ( '|' tag )* '}'   TAG field; tag ends in '*': prefix
 *            | '[' bound [','] bound ']'  NUMERIC field; '(' exclusive, -inf/+inf/inf
 *            | '(' union ')' | '"' words '"' | term ['*'] | '-' fexpr   TEXT fields
 * Terms are runs of non-separator bytes (ft_is_sep) with backslash escapes,
 * lower-cased; stop words become QN_NONE, which an intersection ignores.
 * '$name' in a term, tag or bound takes the value of PARAMS name.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/ft_def.h"

typedef struct parser {
    const ft_def *d;
    const char *s;
    size_t n, i;
    const idx_str *params;
    size_t nparams;
    int verbatim;
    char *err;
    int depth;
} parser;

static ft_qnode *node_new(int type)
{
    ft_qnode *q = calloc(1, sizeof(*q));
    if (!q) abort();
    q->type = type;
    q->mask = ~0ULL;
    q->field = -1;
    return q;
}

void ft_qnode_free(ft_qnode *q)
{
    if (!q) return;
    for (size_t i = 0; i < q->nkids; i++)
        ft_qnode_free(q->kids[i]);
    free(q->kids);
    for (size_t i = 0; i < q->ntags; i++)
        free(q->tags[i].v);
    free(q->tags);
    free(q->str);
    free(q);
}

static void add_kid(ft_qnode *p, ft_qnode *k)
{
    p->kids = realloc(p->kids, (p->nkids + 1) * sizeof(*p->kids));
    if (!p->kids) abort();
    p->kids[p->nkids++] = k;
}

static ft_qnode *fail(parser *p, const char *what)
{
    if (!p->err) {
        size_t near = p->i < p->n ? p->i : p->n;
        size_t len = p->n - near < 20 ? p->n - near : 20;
        if (asprintf(&p->err, "-Syntax error at offset %zu near %s%.*s", near, what, (int)len,
                     p->s + near) < 0)
            p->err = NULL;
    }
    return NULL;
}

static void skip_ws(parser *p)
{
    while (p->i < p->n &&
           (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r'))
        p->i++;
}

static int at(parser *p, char c)
{
    return p->i < p->n && p->s[p->i] == c;
}

/* Looks up $name; NULL with an error when PARAMS lacks it. */
static const idx_str *param(parser *p, const char *name, size_t n)
{
    for (size_t i = 0; i + 1 < 2 * p->nparams; i += 2)
        if (p->params[i].n == n && memcmp(p->params[i].p, name, n) == 0) return &p->params[i + 1];
    if (!p->err && asprintf(&p->err, "-No such parameter `%.*s`", (int)n, name) < 0) p->err = NULL;
    return NULL;
}

/* Reads a raw word (term bytes with escapes resolved, not lower-cased)
 * into out; stops at a separator. Returns the number of source bytes. */
static size_t read_word(parser *p, idx_buf *out, int allow_dollar)
{
    size_t start = p->i;
    while (p->i < p->n) {
        unsigned char c = (unsigned char)p->s[p->i];
        if (c == '\\' && p->i + 1 < p->n) {
            idx_buf_byte(out, (unsigned char)p->s[p->i + 1]);
            p->i += 2;
            continue;
        }
        if (c == '$' && allow_dollar && p->i == start) {
            idx_buf_byte(out, c);
            p->i++;
            continue;
        }
        if (ft_is_sep(c)) break;
        idx_buf_byte(out, c);
        p->i++;
    }
    return p->i - start;
}

/* A term (or prefix) node for the word w, lower-cased; a stop word gives
 * QN_NONE. */
static ft_qnode *term_node(parser *p, const char *w, size_t n, int prefix, int verbatim)
{
    idx_buf low = {0};
    ft_lower(w, n, &low);
    if (!prefix && ft_is_stopword(p->d, low.data, low.len)) {
        idx_buf_free(&low);
        return node_new(QN_NONE);
    }
    ft_qnode *q = node_new(prefix ? QN_PREFIX : QN_TERM);
    q->str = malloc(low.len + 1);
    if (!q->str) abort();
    if (low.len) memcpy(q->str, low.data, low.len);
    q->str[low.len] = 0;
    q->slen = low.len;
    q->verbatim = verbatim;
    idx_buf_free(&low);
    return q;
}

static ft_qnode *parse_union(parser *p);

/* '"' words '"': an exact phrase, not expanded with stems. */
static ft_qnode *parse_phrase(parser *p)
{
    p->i++; /* the quote */
    ft_qnode *ph = node_new(QN_PHRASE);
    idx_buf w = {0};
    while (p->i < p->n && p->s[p->i] != '"') {
        unsigned char c = (unsigned char)p->s[p->i];
        if (ft_is_sep(c) && c != '\\') {
            p->i++;
            continue;
        }
        w.len = 0;
        read_word(p, &w, 0);
        if (!w.len) {
            p->i++;
            continue;
        }
        ft_qnode *t = term_node(p, w.data, w.len, 0, 1);
        if (t->type == QN_NONE)
            ft_qnode_free(t);
        else
            add_kid(ph, t);
    }
    idx_buf_free(&w);
    if (!at(p, '"')) {
        ft_qnode_free(ph);
        return fail(p, "");
    }
    p->i++;
    if (ph->nkids == 0) {
        ph->type = QN_NONE;
    } else if (ph->nkids == 1) {
        ft_qnode *only = ph->kids[0];
        ph->nkids = 0;
        ft_qnode_free(ph);
        return only;
    }
    if (ph->type == QN_PHRASE && (p->d->flags & FT_IDX_NOOFFSETS)) {
        ft_qnode_free(ph);
        if (!p->err && asprintf(&p->err, "-Index does not keep term offsets: no exact phrases") < 0)
            p->err = NULL;
        return NULL;
    }
    return ph;
}

/* A term or prefix: word ['*'], or $param. */
static ft_qnode *parse_term(parser *p)
{
    idx_buf w = {0};
    read_word(p, &w, 1);
    if (!w.len) {
        idx_buf_free(&w);
        return fail(p, "");
    }
    ft_qnode *q = NULL;
    int prefix = at(p, '*');
    if (prefix) p->i++;
    if (w.data[0] == '$' && w.len > 1) {
        const idx_str *v = param(p, w.data + 1, w.len - 1);
        if (v) q = term_node(p, v->p, v->n, prefix, p->verbatim);
    } else {
        q = term_node(p, w.data, w.len, prefix, p->verbatim);
    }
    idx_buf_free(&w);
    return q;
}

static int parse_bound(parser *p, double *v, int *excl)
{
    skip_ws(p);
    *excl = 0;
    if (at(p, '(')) *excl = 1, p->i++;
    size_t start = p->i;
    while (p->i < p->n && p->s[p->i] != ' ' && p->s[p->i] != ',' && p->s[p->i] != ']' &&
           p->s[p->i] != '\t')
        p->i++;
    const char *b = p->s + start;
    size_t bn = p->i - start;
    if (bn > 1 && b[0] == '$') {
        const idx_str *pv = param(p, b + 1, bn - 1);
        if (!pv) return -1;
        b = pv->p, bn = pv->n;
        if (bn && b[0] == '(') *excl = 1, b++, bn--;
    }
    if ((bn == 4 && !strncasecmp(b, "-inf", 4))) {
        *v = -INFINITY;
    } else if ((bn == 4 && !strncasecmp(b, "+inf", 4)) || (bn == 3 && !strncasecmp(b, "inf", 3))) {
        *v = INFINITY;
    } else if (idx_parse_num(b, bn, v) != 0) {
        if (!p->err && asprintf(&p->err, "-Bad upper range: %.*s", (int)bn, b) < 0) p->err = NULL;
        return -1;
    }
    skip_ws(p);
    if (at(p, ',')) p->i++;
    return 0;
}

static ft_qnode *parse_numeric(parser *p, int field)
{
    p->i++; /* '[' */
    ft_qnode *q = node_new(QN_NUM);
    q->field = field;
    if (parse_bound(p, &q->lo, &q->lo_excl) < 0 || parse_bound(p, &q->hi, &q->hi_excl) < 0) {
        ft_qnode_free(q);
        return fail(p, "");
    }
    skip_ws(p);
    if (!at(p, ']')) {
        ft_qnode_free(q);
        return fail(p, "");
    }
    p->i++;
    return q;
}

static void add_tag(ft_qnode *q, const ft_field *fd, const char *v, size_t n, int prefix)
{
    q->tags = realloc(q->tags, (q->ntags + 1) * sizeof(*q->tags));
    if (!q->tags) abort();
    idx_buf b = {0};
    if (fd->opts & FT_OPT_CASESENSITIVE)
        idx_buf_append(&b, v, n);
    else
        ft_lower(v, n, &b);
    idx_buf_byte(&b, 0);
    q->tags[q->ntags++] = (ft_tagval){b.data, n, prefix};
}

/* '{' tag ('|' tag)* '}'. Inside braces spaces are part of a value
 * (trimmed at its ends), as in dialect 2. */
static ft_qnode *parse_tags(parser *p, int field)
{
    const ft_field *fd = &p->d->fields[field];
    ft_qnode *q = node_new(QN_TAG);
    q->field = field;
    p->i++; /* '{' */
    idx_buf w = {0};
    for (;;) {
        w.len = 0;
        size_t trail = 0;   /* bytes of unescaped trailing space */
        size_t esc_end = 0; /* w.len right after the last escaped byte */
        int prefix = 0;
        skip_ws(p);
        while (p->i < p->n && p->s[p->i] != '|' && p->s[p->i] != '}') {
            char c = p->s[p->i];
            if (c == '\\' && p->i + 1 < p->n) {
                idx_buf_byte(&w, (unsigned char)p->s[p->i + 1]);
                p->i += 2, trail = 0, esc_end = w.len;
                continue;
            }
            idx_buf_byte(&w, (unsigned char)c);
            trail = (c == ' ' || c == '\t') ? trail + 1 : 0;
            p->i++;
        }
        w.len -= trail;
        if (w.len && w.data[w.len - 1] == '*' && esc_end != w.len) prefix = 1, w.len--;
        if (w.len > 1 && w.data[0] == '$') {
            const idx_str *v = param(p, w.data + 1, w.len - 1);
            if (!v) break;
            add_tag(q, fd, v->p, v->n, prefix);
        } else if (w.len) {
            add_tag(q, fd, w.data, w.len, prefix);
        }
        if (!at(p, '|')) break;
        p->i++;
    }
    idx_buf_free(&w);
    if (p->err || !at(p, '}')) {
        ft_qnode_free(q);
        return fail(p, "");
    }
    p->i++;
    if (!q->ntags) q->type = QN_NONE;
    return q;
}

static void set_mask(ft_qnode *q, uint64_t mask)
{
    if (q->type == QN_TERM || q->type == QN_PREFIX || q->type == QN_PHRASE) q->mask &= mask;
    for (size_t i = 0; i < q->nkids; i++)
        set_mask(q->kids[i], mask);
}

static ft_qnode *parse_unary(parser *p);

/* '@' attr ('|' attr)* ':' fexpr */
static ft_qnode *parse_field(parser *p)
{
    size_t at_pos = p->i;
    p->i++;
    int field = -1;
    uint64_t mask = 0;
    for (;;) {
        idx_buf name = {0};
        read_word(p, &name, 0);
        int f = name.len ? ft_field_by_alias(p->d, name.data, name.len) : -1;
        if (f < 0) {
            if (!p->err)
                if (asprintf(&p->err, "-Unknown field at offset %zu near %.*s", at_pos,
                             (int)name.len, name.data ? name.data : "") < 0)
                    p->err = NULL;
            idx_buf_free(&name);
            return NULL;
        }
        idx_buf_free(&name);
        field = f;
        if (p->d->fields[f].type == FT_TEXT) mask |= 1ULL << p->d->fields[f].text_no;
        if (!at(p, '|')) break;
        p->i++;
    }
    if (!at(p, ':')) return fail(p, "");
    p->i++;
    skip_ws(p);
    const ft_field *fd = &p->d->fields[field];
    if (fd->type == FT_TAG) {
        if (!at(p, '{')) return fail(p, "");
        return parse_tags(p, field);
    }
    if (fd->type == FT_NUMERIC) {
        if (!at(p, '[')) return fail(p, "");
        return parse_numeric(p, field);
    }
    ft_qnode *q = parse_unary(p);
    if (q) set_mask(q, mask);
    return q;
}

/* Punctuation that is no operator is skipped, as RediSearch's lexer does
 * (redis-om quotes text in single quotes). */
static int stray_punct(char c)
{
    return ft_is_sep((unsigned char)c) && !strchr("()@\"*-~|{}[]$\\:", c) && c != ' ' &&
           c != '\t' && c != '\r' && c != '\n';
}

static ft_qnode *parse_primary(parser *p)
{
    skip_ws(p);
    while (p->i < p->n && stray_punct(p->s[p->i])) {
        p->i++;
        skip_ws(p);
        if (p->i >= p->n || at(p, ')') || at(p, '|')) return node_new(QN_NONE);
    }
    if (p->i >= p->n) return fail(p, "");
    char c = p->s[p->i];
    if (c == '(') {
        p->i++;
        skip_ws(p);
        ft_qnode *q = at(p, ')') ? node_new(QN_NONE) : parse_union(p);
        skip_ws(p);
        if (!q) return NULL;
        if (!at(p, ')')) {
            ft_qnode_free(q);
            return fail(p, "");
        }
        p->i++;
        return q;
    }
    if (c == '@') return parse_field(p);
    if (c == '"') return parse_phrase(p);
    if (c == '*') {
        p->i++;
        return node_new(QN_ALL);
    }
    if (c == '\\' || c == '$' || !ft_is_sep((unsigned char)c)) return parse_term(p);
    return fail(p, "");
}

static ft_qnode *parse_unary(parser *p)
{
    skip_ws(p);
    if (++p->depth > 1000) return fail(p, "");
    ft_qnode *q;
    if (at(p, '-') || at(p, '~')) {
        int type = p->s[p->i] == '-' ? QN_NOT : QN_OPT;
        p->i++;
        ft_qnode *k = parse_unary(p);
        if (!k) return NULL;
        q = node_new(type);
        add_kid(q, k);
    } else {
        q = parse_primary(p);
    }
    p->depth--;
    return q;
}

/* Simplifies an AND/OR with one child into the child. */
static ft_qnode *collapse(ft_qnode *q)
{
    if ((q->type == QN_AND || q->type == QN_OR) && q->nkids == 1) {
        ft_qnode *k = q->kids[0];
        q->nkids = 0;
        ft_qnode_free(q);
        return k;
    }
    return q;
}

static ft_qnode *parse_and(parser *p)
{
    ft_qnode *a = node_new(QN_AND);
    size_t parsed = 0;
    for (;;) {
        skip_ws(p);
        if (p->i >= p->n || at(p, '|') || at(p, ')')) break;
        parsed++;
        ft_qnode *k = parse_unary(p);
        if (!k) {
            ft_qnode_free(a);
            return NULL;
        }
        if (k->type == QN_NONE && k->nkids == 0) {
            ft_qnode_free(k); /* a stop word: ignored by the intersection */
            continue;
        }
        add_kid(a, k);
    }
    if (!parsed) {
        ft_qnode_free(a);
        return fail(p, ""); /* an empty operand of '|', or nothing at all */
    }
    if (!a->nkids) a->type = QN_NONE;
    return collapse(a);
}

static ft_qnode *parse_union(parser *p)
{
    ft_qnode *o = node_new(QN_OR);
    for (;;) {
        ft_qnode *k = parse_and(p);
        if (!k) {
            ft_qnode_free(o);
            return NULL;
        }
        add_kid(o, k);
        skip_ws(p);
        if (!at(p, '|')) break;
        p->i++;
    }
    return collapse(o);
}

ft_qnode *ft_parse(const ft_def *d, const char *query, size_t qlen, const idx_str *params,
                   size_t nparams, int verbatim, char **err)
{
    parser p = {d, query, qlen, 0, params, nparams, verbatim, NULL, 0};
    *err = NULL;
    ft_qnode *q = parse_union(&p);
    skip_ws(&p);
    if (q && p.i < p.n) {
        ft_qnode_free(q);
        q = fail(&p, "");
    }
    if (!q) {
        *err = p.err ? p.err : strdup("-Syntax error");
        return NULL;
    }
    free(p.err);
    return q;
}

/* ---- FT.EXPLAIN ------------------------------------------------------------ */

static void pad(idx_buf *b, int depth)
{
    for (int i = 0; i < depth; i++)
        idx_buf_append(b, "  ", 2);
}

static void fmt_num(idx_buf *b, double v)
{
    char t[64];
    int n = isinf(v) ? snprintf(t, sizeof(t), "%sinf", v < 0 ? "-" : "")
                     : snprintf(t, sizeof(t), "%f", v);
    idx_buf_append(b, t, (size_t)n);
}

static void field_prefix(idx_buf *b, const ft_def *d, uint64_t mask)
{
    if (mask == ~0ULL || !d->ntext) return;
    idx_buf_byte(b, '@');
    int first = 1;
    for (size_t i = 0; i < d->nfields; i++) {
        if (d->fields[i].type != FT_TEXT || !(mask & (1ULL << d->fields[i].text_no))) continue;
        if (!first) idx_buf_byte(b, '|');
        idx_buf_append(b, d->fields[i].alias, d->fields[i].alen);
        first = 0;
    }
    idx_buf_byte(b, ':');
}

static void explain(idx_buf *b, const ft_def *d, const ft_qnode *q, int depth)
{
    static const char *const names[] = {"<WILDCARD>", "<EMPTY>", "INTERSECT", "UNION", "NOT",
                                        "OPTIONAL",   "",        "",          "EXACT"};
    pad(b, depth);
    switch (q->type) {
    case QN_ALL:
    case QN_NONE:
        idx_buf_append(b, names[q->type], strlen(names[q->type]));
        break;
    case QN_TERM:
    case QN_PREFIX:
        field_prefix(b, d, q->mask);
        idx_buf_append(b, q->str, q->slen);
        if (q->type == QN_PREFIX) idx_buf_byte(b, '*');
        break;
    case QN_TAG: {
        const ft_field *fd = &d->fields[q->field];
        idx_buf_append(b, "TAG:@", 5);
        idx_buf_append(b, fd->alias, fd->alen);
        idx_buf_append(b, " {\n", 3);
        for (size_t i = 0; i < q->ntags; i++) {
            pad(b, depth + 1);
            idx_buf_append(b, q->tags[i].v, q->tags[i].n);
            if (q->tags[i].prefix) idx_buf_byte(b, '*');
            idx_buf_byte(b, '\n');
        }
        pad(b, depth);
        idx_buf_byte(b, '}');
        break;
    }
    case QN_NUM: {
        const ft_field *fd = &d->fields[q->field];
        idx_buf_append(b, "NUMERIC {", 9);
        fmt_num(b, q->lo);
        idx_buf_append(b, q->lo_excl ? " < @" : " <= @", q->lo_excl ? 4 : 5);
        idx_buf_append(b, fd->alias, fd->alen);
        idx_buf_append(b, q->hi_excl ? " < " : " <= ", q->hi_excl ? 3 : 4);
        fmt_num(b, q->hi);
        idx_buf_byte(b, '}');
        break;
    }
    default:
        if (q->type == QN_PHRASE) field_prefix(b, d, q->mask);
        idx_buf_append(b, names[q->type], strlen(names[q->type]));
        idx_buf_append(b, " {\n", 3);
        for (size_t i = 0; i < q->nkids; i++)
            explain(b, d, q->kids[i], depth + 1);
        pad(b, depth);
        idx_buf_byte(b, '}');
    }
    idx_buf_byte(b, '\n');
}

char *ft_explain(const ft_def *d, const ft_qnode *q)
{
    idx_buf b = {0};
    explain(&b, d, q, 0);
    idx_buf_byte(&b, 0);
    return b.data;
}
