/*
 * ft_expr.h -- the expression language of FT.AGGREGATE's APPLY and FILTER
 * (a subset of RediSearch's): numbers, 'strings' and "strings", @field,
 * + - * / % ^, unary -, == != < <= > >=, && || !, parentheses, and the
 * functions listed in ft_expr.c. Values are ft_val (ft.h): a number, a
 * string, or null (num == 0 and s == NULL).
 *
 * Threading: any; no globals.
 */
#ifndef STRATA_FT_EXPR_H
#define STRATA_FT_EXPR_H

#include <stddef.h>

#include "index/ft.h"

typedef struct ft_expr ft_expr;

/* Looks up a field of the current row by name (without '@'); returns NULL
 * when the row has no such field. */
typedef const ft_val *(*ft_expr_lookup_fn)(void *arg, const char *name, size_t n);

/* Parses s. Returns the tree, or NULL with *err (malloc'd). */
ft_expr *ft_expr_parse(const char *s, size_t n, char **err);
void ft_expr_free(ft_expr *e);
/* Calls fn for each @field the expression reads (to load them). */
void ft_expr_fields(const ft_expr *e, void (*fn)(void *arg, const char *name, size_t n), void *arg);
/* Evaluates e into *out (a fresh value the caller frees with ft_val_free). */
void ft_expr_eval(const ft_expr *e, ft_expr_lookup_fn lookup, void *arg, ft_val *out);

void ft_val_free(ft_val *v);
void ft_val_str(ft_val *v, const char *s, size_t n); /* sets a string copy */
void ft_val_copy(ft_val *dst, const ft_val *src);
/* The value as a number; 0 when it is not one (*ok = 0). */
double ft_val_num(const ft_val *v, int *ok);
/* Orders two values: numbers numerically when both are numbers, else as
 * strings (numbers formatted); null after everything. */
int ft_val_cmp(const ft_val *a, const ft_val *b);
int ft_val_truthy(const ft_val *v);

#endif
