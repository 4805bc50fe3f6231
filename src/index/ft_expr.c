/*
 * ft_expr.c -- APPLY / FILTER expressions: a precedence-climbing parser
 * into a small tree, and its evaluator.
 *
 * Precedence, loosest first: ||, &&, == != < <= > >=, + -, * / %, ^
 * (right associative), unary - and !. Functions: exists(x), abs, ceil,
 * floor, sqrt, exp, log, log2, log10, upper, lower, strlen, substr(s, off,
 * len), startswith(s, p), contains(s, p), format(fmt, ...) with %s,
 * to_number, to_str, and on unix seconds: year, month, day, dayofmonth,
 * dayofweek, dayofyear, hour, minute. Arithmetic on a non-number or on
 * null gives null (RediSearch gives an error or nan in some of these
 * cases; see README).
 */
#include "index/ft_expr.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "index/idx_key.h"

enum { E_NUM, E_STR, E_FIELD, E_UNARY, E_BINARY, E_CALL };

struct ft_expr {
    int type;
    int op; /* E_UNARY/E_BINARY: operator token */
    ft_val lit;
    char *name; /* E_FIELD, E_CALL */
    size_t nlen;
    ft_expr **args;
    size_t nargs;
};

/* Operator tokens (two-character ones packed). */
#define OP2(a, b) ((a) << 8 | (b))

void ft_val_free(ft_val *v)
{
    free(v->s);
    memset(v, 0, sizeof(*v));
}

void ft_val_str(ft_val *v, const char *s, size_t n)
{
    v->num = 0;
    v->s = malloc(n + 1);
    if (!v->s) abort();
    if (n) memcpy(v->s, s, n);
    v->s[n] = 0;
    v->n = n;
}

void ft_val_copy(ft_val *dst, const ft_val *src)
{
    *dst = *src;
    if (src->s) ft_val_str(dst, src->s, src->n);
}

double ft_val_num(const ft_val *v, int *ok)
{
    double d = 0;
    *ok = v->num ? 1 : v->s ? idx_parse_num(v->s, v->n, &d) == 0 : 0;
    return v->num ? v->d : *ok ? d : 0;
}

int ft_val_truthy(const ft_val *v)
{
    if (v->num) return v->d != 0;
    return v->s && v->n > 0;
}

int ft_val_cmp(const ft_val *a, const ft_val *b)
{
    int an = !a->num && !a->s, bn = !b->num && !b->s;
    if (an || bn) return an - bn;
    int ok1, ok2;
    double x = ft_val_num(a, &ok1), y = ft_val_num(b, &ok2);
    if (ok1 && ok2 && (a->num || b->num)) return (x > y) - (x < y);
    char t1[64], t2[64];
    const char *s1 = a->s, *s2 = b->s;
    size_t n1 = a->n, n2 = b->n;
    if (a->num) n1 = ft_fmt_num(a->d, t1, sizeof(t1)), s1 = t1;
    if (b->num) n2 = ft_fmt_num(b->d, t2, sizeof(t2)), s2 = t2;
    return idx_key_cmp(s1, n1, s2, n2);
}

void ft_expr_free(ft_expr *e)
{
    if (!e) return;
    for (size_t i = 0; i < e->nargs; i++)
        ft_expr_free(e->args[i]);
    free(e->args);
    free(e->name);
    ft_val_free(&e->lit);
    free(e);
}

/* ---- Parser ------------------------------------------------------------------ */

typedef struct xp {
    const char *s;
    size_t n, i;
    char *err;
    int depth;
} xp;

static ft_expr *enew(int type)
{
    ft_expr *e = calloc(1, sizeof(*e));
    if (!e) abort();
    e->type = type;
    return e;
}

static void eadd(ft_expr *e, ft_expr *k)
{
    e->args = realloc(e->args, (e->nargs + 1) * sizeof(*e->args));
    if (!e->args) abort();
    e->args[e->nargs++] = k;
}

static void xws(xp *p)
{
    while (p->i < p->n && isspace((unsigned char)p->s[p->i]))
        p->i++;
}

static ft_expr *xfail(xp *p, const char *msg)
{
    if (!p->err && asprintf(&p->err, "-Syntax error at offset %zu: %s", p->i, msg) < 0)
        p->err = NULL;
    return NULL;
}

/* The binary operator at p (0 if none) and its precedence level. */
static int peek_op(xp *p, int *level, size_t *len)
{
    xws(p);
    if (p->i >= p->n) return 0;
    char a = p->s[p->i], b = p->i + 1 < p->n ? p->s[p->i + 1] : 0;
    static const struct {
        int op, level;
        size_t len;
    } ops[] = {{OP2('|', '|'), 1, 2}, {OP2('&', '&'), 2, 2},
               {OP2('=', '='), 3, 2}, {OP2('!', '='), 3, 2},
               {OP2('<', '='), 3, 2}, {OP2('>', '='), 3, 2},
               {'<', 3, 1},           {'>', 3, 1},
               {'+', 4, 1},           {'-', 4, 1},
               {'*', 5, 1},           {'/', 5, 1},
               {'%', 5, 1},           {'^', 6, 1}};
    for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
        int op = ops[k].op;
        int match = ops[k].len == 2 ? (op >> 8) == a && (op & 0xFF) == b : op == a;
        if (match) {
            *level = ops[k].level;
            *len = ops[k].len;
            return op;
        }
    }
    return 0;
}

static ft_expr *parse_binary(xp *p, int min_level);

static ft_expr *parse_atom(xp *p)
{
    xws(p);
    if (++p->depth > 500) return xfail(p, "too deep");
    if (p->i >= p->n) return xfail(p, "unexpected end");
    char c = p->s[p->i];
    ft_expr *e = NULL;
    if (c == '(') {
        p->i++;
        e = parse_binary(p, 1);
        xws(p);
        if (!e || p->i >= p->n || p->s[p->i] != ')') {
            ft_expr_free(e);
            return xfail(p, "missing )");
        }
        p->i++;
    } else if (c == '-' || c == '!') {
        p->i++;
        ft_expr *k = parse_atom(p);
        if (!k) return NULL;
        e = enew(E_UNARY);
        e->op = c;
        eadd(e, k);
    } else if (c == '\'' || c == '"') {
        size_t start = ++p->i;
        idx_buf b = {0};
        while (p->i < p->n && p->s[p->i] != c) {
            if (p->s[p->i] == '\\' && p->i + 1 < p->n) p->i++;
            idx_buf_byte(&b, (unsigned char)p->s[p->i++]);
        }
        (void)start;
        if (p->i >= p->n) {
            idx_buf_free(&b);
            return xfail(p, "unterminated string");
        }
        p->i++;
        e = enew(E_STR);
        ft_val_str(&e->lit, b.data ? b.data : "", b.len);
        idx_buf_free(&b);
    } else if (c == '@') {
        size_t start = ++p->i;
        while (p->i < p->n && (isalnum((unsigned char)p->s[p->i]) || p->s[p->i] == '_' ||
                               p->s[p->i] == '.' || p->s[p->i] == '$'))
            p->i++;
        if (p->i == start) return xfail(p, "empty field name");
        e = enew(E_FIELD);
        e->nlen = p->i - start;
        e->name = strndup(p->s + start, e->nlen);
    } else if (isdigit((unsigned char)c) || c == '.') {
        char *end;
        char tmp[128];
        size_t len = p->n - p->i < sizeof(tmp) - 1 ? p->n - p->i : sizeof(tmp) - 1;
        memcpy(tmp, p->s + p->i, len);
        tmp[len] = 0;
        double d = strtod(tmp, &end);
        p->i += (size_t)(end - tmp);
        e = enew(E_NUM);
        e->lit.num = 1;
        e->lit.d = d;
    } else if (isalpha((unsigned char)c) || c == '_') {
        size_t start = p->i;
        while (p->i < p->n && (isalnum((unsigned char)p->s[p->i]) || p->s[p->i] == '_'))
            p->i++;
        e = enew(E_CALL);
        e->nlen = p->i - start;
        e->name = strndup(p->s + start, e->nlen);
        for (size_t k = 0; k < e->nlen; k++)
            e->name[k] = (char)tolower((unsigned char)e->name[k]);
        xws(p);
        if (p->i >= p->n || p->s[p->i] != '(') {
            ft_expr_free(e);
            return xfail(p, "expected ( after a function name");
        }
        p->i++;
        xws(p);
        if (p->i < p->n && p->s[p->i] == ')') {
            p->i++;
        } else {
            for (;;) {
                ft_expr *a = parse_binary(p, 1);
                if (!a) {
                    ft_expr_free(e);
                    return NULL;
                }
                eadd(e, a);
                xws(p);
                if (p->i < p->n && p->s[p->i] == ',') {
                    p->i++;
                    continue;
                }
                if (p->i < p->n && p->s[p->i] == ')') {
                    p->i++;
                    break;
                }
                ft_expr_free(e);
                return xfail(p, "expected , or )");
            }
        }
    } else {
        return xfail(p, "unexpected character");
    }
    p->depth--;
    return e;
}

static ft_expr *parse_binary(xp *p, int min_level)
{
    if (++p->depth > 500) return xfail(p, "too deep");
    ft_expr *lhs = parse_atom(p);
    while (lhs) {
        int level;
        size_t len;
        int op = peek_op(p, &level, &len);
        if (!op || level < min_level) break;
        p->i += len;
        ft_expr *rhs = parse_binary(p, op == '^' ? level : level + 1);
        if (!rhs) {
            ft_expr_free(lhs);
            return NULL;
        }
        ft_expr *e = enew(E_BINARY);
        e->op = op;
        eadd(e, lhs);
        eadd(e, rhs);
        lhs = e;
    }
    p->depth--;
    return lhs;
}

ft_expr *ft_expr_parse(const char *s, size_t n, char **err)
{
    xp p = {s, n, 0, NULL, 0};
    ft_expr *e = parse_binary(&p, 1);
    xws(&p);
    if (e && p.i < p.n) {
        ft_expr_free(e);
        e = xfail(&p, "unexpected input");
    }
    *err = e ? NULL : p.err ? p.err : strdup("-Syntax error in expression");
    if (e) free(p.err);
    return e;
}

void ft_expr_fields(const ft_expr *e, void (*fn)(void *arg, const char *name, size_t n), void *arg)
{
    if (e->type == E_FIELD) fn(arg, e->name, e->nlen);
    for (size_t i = 0; i < e->nargs; i++)
        ft_expr_fields(e->args[i], fn, arg);
}

/* ---- Evaluation ---------------------------------------------------------------- */

static void set_num(ft_val *v, double d)
{
    ft_val_free(v);
    v->num = 1;
    v->d = d;
}

static void set_bool(ft_val *v, int b)
{
    set_num(v, b ? 1 : 0);
}

static void binary(int op, const ft_val *a, const ft_val *b, ft_val *out)
{
    switch (op) {
    case OP2('|', '|'):
        return set_bool(out, ft_val_truthy(a) || ft_val_truthy(b));
    case OP2('&', '&'):
        return set_bool(out, ft_val_truthy(a) && ft_val_truthy(b));
    case OP2('=', '='):
        return set_bool(out, ft_val_cmp(a, b) == 0);
    case OP2('!', '='):
        return set_bool(out, ft_val_cmp(a, b) != 0);
    case OP2('<', '='):
        return set_bool(out, ft_val_cmp(a, b) <= 0);
    case OP2('>', '='):
        return set_bool(out, ft_val_cmp(a, b) >= 0);
    case '<':
        return set_bool(out, ft_val_cmp(a, b) < 0);
    case '>':
        return set_bool(out, ft_val_cmp(a, b) > 0);
    }
    int ok1, ok2;
    double x = ft_val_num(a, &ok1), y = ft_val_num(b, &ok2);
    if (!ok1 || !ok2) return; /* null */
    switch (op) {
    case '+':
        return set_num(out, x + y);
    case '-':
        return set_num(out, x - y);
    case '*':
        return set_num(out, x * y);
    case '/':
        return set_num(out, x / y);
    case '%':
        return set_num(out, (double)((long long)x % ((long long)y ? (long long)y : 1)));
    case '^':
        return set_num(out, pow(x, y));
    }
}

static void time_part(const char *fn, double secs, ft_val *out)
{
    time_t t = (time_t)secs;
    struct tm tm;
    gmtime_r(&t, &tm);
    if (!strcmp(fn, "year")) return set_num(out, tm.tm_year + 1900);
    if (!strcmp(fn, "month")) return set_num(out, tm.tm_mon + 1);
    if (!strcmp(fn, "dayofmonth")) return set_num(out, tm.tm_mday);
    if (!strcmp(fn, "dayofweek")) return set_num(out, tm.tm_wday);
    if (!strcmp(fn, "dayofyear")) return set_num(out, tm.tm_yday);
    /* day, hour, minute: the timestamp rounded down to it, as RediSearch */
    long long unit = !strcmp(fn, "day") ? 86400 : !strcmp(fn, "hour") ? 3600 : 60;
    set_num(out, (double)((long long)secs / unit * unit));
}

static void str_of(const ft_val *v, char *tmp, const char **s, size_t *n)
{
    if (v->num) {
        *n = ft_fmt_num(v->d, tmp, 64);
        *s = tmp;
    } else {
        *s = v->s ? v->s : "";
        *n = v->s ? v->n : 0;
    }
}

static void call(const ft_expr *e, ft_val *a, ft_val *out)
{
    const char *fn = e->name;
    size_t na = e->nargs;
    static const char *const math1[] = {"abs", "ceil", "floor", "sqrt",
                                        "exp", "log",  "log2",  "log10"};
    static double (*const mathf[])(double) = {fabs, ceil, floor, sqrt, exp, log, log2, log10};
    for (size_t k = 0; k < 8; k++) {
        if (strcmp(fn, math1[k]) != 0 || na != 1) continue;
        int ok;
        double x = ft_val_num(&a[0], &ok);
        if (ok) set_num(out, mathf[k](x));
        return;
    }
    char t0[64], t1[64];
    const char *s0 = "", *s1 = "";
    size_t n0 = 0, n1 = 0;
    if (na > 0) str_of(&a[0], t0, &s0, &n0);
    if (na > 1) str_of(&a[1], t1, &s1, &n1);
    if (!strcmp(fn, "exists") && na == 1) return set_bool(out, a[0].num || a[0].s);
    if (!strcmp(fn, "to_str") && na == 1) return ft_val_str(out, s0, n0);
    if (!strcmp(fn, "to_number") && na == 1) {
        int ok;
        double x = ft_val_num(&a[0], &ok);
        if (ok) set_num(out, x);
        return;
    }
    if ((!strcmp(fn, "upper") || !strcmp(fn, "lower")) && na == 1) {
        ft_val_str(out, s0, n0);
        for (size_t i = 0; i < n0; i++)
            out->s[i] = (char)(fn[0] == 'u' ? toupper((unsigned char)out->s[i])
                                            : tolower((unsigned char)out->s[i]));
        return;
    }
    if (!strcmp(fn, "strlen") && na == 1) return set_num(out, (double)n0);
    if (!strcmp(fn, "startswith") && na == 2)
        return set_bool(out, n1 <= n0 && memcmp(s0, s1, n1) == 0);
    if (!strcmp(fn, "contains") && na == 2) {
        int found = n1 == 0;
        for (size_t i = 0; !found && i + n1 <= n0; i++)
            found = memcmp(s0 + i, s1, n1) == 0;
        return set_num(out, found);
    }
    if (!strcmp(fn, "substr") && na == 3) {
        int ok;
        long long off = (long long)ft_val_num(&a[1], &ok), len = (long long)ft_val_num(&a[2], &ok);
        if (off < 0) off += (long long)n0;
        if (off < 0) off = 0;
        if (off > (long long)n0) off = (long long)n0;
        if (len < 0) len = (long long)n0 - off + len + 1;
        if (len < 0) len = 0;
        if (off + len > (long long)n0) len = (long long)n0 - off;
        return ft_val_str(out, s0 + off, (size_t)len);
    }
    if (!strcmp(fn, "format") && na >= 1) {
        idx_buf b = {0};
        size_t arg = 1;
        for (size_t i = 0; i < n0; i++) {
            if (s0[i] == '%' && i + 1 < n0 && s0[i + 1] == 's') {
                char t[64];
                const char *s = "(null)";
                size_t n = 6;
                if (arg < na && (a[arg].num || a[arg].s)) str_of(&a[arg], t, &s, &n);
                arg++;
                idx_buf_append(&b, s, n);
                i++;
            } else if (s0[i] == '%' && i + 1 < n0 && s0[i + 1] == '%') {
                idx_buf_byte(&b, '%');
                i++;
            } else {
                idx_buf_byte(&b, (unsigned char)s0[i]);
            }
        }
        ft_val_str(out, b.data ? b.data : "", b.len);
        idx_buf_free(&b);
        return;
    }
    static const char *const times[] = {"year",      "month",     "day",  "dayofmonth",
                                        "dayofweek", "dayofyear", "hour", "minute"};
    for (size_t k = 0; k < 8; k++) {
        if (strcmp(fn, times[k]) != 0 || na != 1) continue;
        int ok;
        double x = ft_val_num(&a[0], &ok);
        if (ok) time_part(fn, x, out);
        return;
    }
}

void ft_expr_eval(const ft_expr *e, ft_expr_lookup_fn lookup, void *arg, ft_val *out)
{
    memset(out, 0, sizeof(*out));
    switch (e->type) {
    case E_NUM:
    case E_STR:
        ft_val_copy(out, &e->lit);
        return;
    case E_FIELD: {
        const ft_val *v = lookup(arg, e->name, e->nlen);
        if (v) ft_val_copy(out, v);
        return;
    }
    case E_UNARY: {
        ft_val k;
        ft_expr_eval(e->args[0], lookup, arg, &k);
        if (e->op == '!') {
            set_bool(out, !ft_val_truthy(&k));
        } else {
            int ok;
            double x = ft_val_num(&k, &ok);
            if (ok) set_num(out, -x);
        }
        ft_val_free(&k);
        return;
    }
    case E_BINARY: {
        ft_val a, b;
        ft_expr_eval(e->args[0], lookup, arg, &a);
        ft_expr_eval(e->args[1], lookup, arg, &b);
        binary(e->op, &a, &b, out);
        ft_val_free(&a);
        ft_val_free(&b);
        return;
    }
    case E_CALL: {
        ft_val a[16];
        size_t na = e->nargs < 16 ? e->nargs : 16;
        for (size_t i = 0; i < na; i++)
            ft_expr_eval(e->args[i], lookup, arg, &a[i]);
        call(e, a, out);
        for (size_t i = 0; i < na; i++)
            ft_val_free(&a[i]);
        return;
    }
    }
}
