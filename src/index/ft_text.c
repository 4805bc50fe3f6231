/*
 * ft_text.c -- text analysis for FT indexes, as RediSearch's default
 * tokenizer does it:
 *   - tokens are split at whitespace, control characters and every ASCII
 *     punctuation character except '_' (RediSearch's separator set);
 *   - a backslash makes the next character part of the token, separator or
 *     not (and is itself dropped);
 *   - ASCII letters are lower-cased (RediSearch also folds non-ASCII
 *     letters; strata does not);
 *   - stop words (RediSearch's default English list, or the index's own
 *     STOPWORDS list) are dropped and take no position;
 *   - stems: the Snowball English stemmer (libstemmer), for tokens of at
 *     least FT_MIN_STEM_LEN bytes, as RediSearch's default MINSTEMLEN.
 * TAG values are split by the field's separator, trimmed of spaces and
 * lower-cased unless CASESENSITIVE.
 */
#include <libstemmer.h>
#include <stdlib.h>
#include <string.h>

#include "index/ft_def.h"

static const char *const default_stop[] = {
    "a",    "is",    "the",  "an",    "and",   "are",  "as",   "at", "be",  "but",  "by",
    "for",  "if",    "in",   "into",  "it",    "no",   "not",  "of", "on",  "or",   "such",
    "that", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with"};

int ft_is_sep(unsigned char c)
{
    if (c <= ' ' || c == 0x7f) return 1;
    if (c >= 0x80 || c == '_') return 0;
    return !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
}

void ft_lower(const char *s, size_t n, idx_buf *out)
{
    idx_buf_reserve(out, n);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        out->data[out->len++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
}

int ft_is_stopword(const ft_def *f, const char *tok, size_t n)
{
    if (f && f->custom_stop) {
        for (size_t i = 0; i < f->nstop; i++)
            if (f->stoplens[i] == n && memcmp(f->stop[i], tok, n) == 0) return 1;
        return 0;
    }
    for (size_t i = 0; i < sizeof(default_stop) / sizeof(default_stop[0]); i++)
        if (strlen(default_stop[i]) == n && memcmp(default_stop[i], tok, n) == 0) return 1;
    return 0;
}

uint32_t ft_tokenize(const ft_def *f, const char *s, size_t n, ft_token_fn fn, void *arg)
{
    idx_buf tok = {0};
    uint32_t pos = 0;
    size_t i = 0;
    while (i < n) {
        tok.len = 0;
        while (i < n) {
            unsigned char c = (unsigned char)s[i];
            if (c == '\\' && i + 1 < n) {
                c = (unsigned char)s[++i];
            } else if (ft_is_sep(c)) {
                break;
            }
            idx_buf_byte(&tok, (unsigned char)(c >= 'A' && c <= 'Z' ? c + 32 : c));
            i++;
        }
        i++; /* the separator */
        if (!tok.len || ft_is_stopword(f, tok.data, tok.len)) continue;
        fn(arg, tok.data, tok.len, ++pos);
    }
    idx_buf_free(&tok);
    return pos;
}

static struct sb_stemmer *stemmer;

void ft_text_free(void)
{
    if (stemmer) sb_stemmer_delete(stemmer);
    stemmer = NULL;
}

int ft_stem(const char *tok, size_t n, idx_buf *out)
{
    out->len = 0;
    if (n < FT_MIN_STEM_LEN || n > 1000) return 0;
    if (!stemmer && !(stemmer = sb_stemmer_new("english", "UTF_8"))) return 0;
    const sb_symbol *st = sb_stemmer_stem(stemmer, (const sb_symbol *)tok, (int)n);
    if (!st) return 0;
    size_t sl = (size_t)sb_stemmer_length(stemmer);
    if (sl == n && memcmp(st, tok, n) == 0) return 0;
    idx_buf_append(out, st, sl);
    return 1;
}

void ft_split_tags(const ft_field *fd, const char *s, size_t n,
                   void (*fn)(void *arg, const char *t, size_t tn), void *arg)
{
    idx_buf t = {0};
    size_t i = 0;
    while (i <= n) {
        size_t j = i;
        while (j < n && s[j] != fd->sep)
            j++;
        size_t a = i, b = j;
        while (a < b && (s[a] == ' ' || s[a] == '\t'))
            a++;
        while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t'))
            b--;
        if (b > a) {
            t.len = 0;
            if (fd->opts & FT_OPT_CASESENSITIVE)
                idx_buf_append(&t, s + a, b - a);
            else
                ft_lower(s + a, b - a, &t);
            fn(arg, t.data, t.len);
        }
        i = j + 1;
    }
    idx_buf_free(&t);
}
