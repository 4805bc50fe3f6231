/*
 * ks_glob.c -- the one glob matcher of the server (KEYS, SCAN/HSCAN MATCH,
 * CONFIG GET, COMMAND LIST FILTERBY PATTERN, PSUBSCRIBE): Redis's
 * stringmatchlen semantics in O(plen * slen) time and O(1) space.
 *
 * Semantics (those of Redis 7.0, quirks included, because clients see them):
 *   *        any run of bytes; a run of stars is one star
 *   ?        any one byte
 *   [...]    one byte of the class: [abc], ranges [a-z] (ends in either
 *            order), [^...] negation, \x a literal x inside the class.
 *            ']' right after '[' or '[^' closes an empty class. An element
 *            "x-y" is a range whenever two more bytes follow x, even if y is
 *            the ']' ("[a-]" is the range a..']' and the class stays open).
 *            A class that never closes runs to the end of the pattern.
 *            Range ends compare as the platform's plain char (so bytes >=
 *            0x80 are below 'a' where char is signed, as in Redis).
 *   \x       the byte x; a lone trailing '\' is itself
 *   nocase   ASCII case folding for literals, class members and ranges
 *            (folded after the ends are ordered), but not for \x inside a
 *            class
 *   An empty string matches only the empty pattern ("*" does not match "";
 *   KEYS and SCAN treat a pattern of exactly "*" as "everything" themselves).
 *
 * Algorithm: every element other than '*' matches exactly one byte, so the
 * pieces between stars have fixed lengths and the leftmost place where a
 * piece matches is always the best one (it leaves the most of the string
 * to the rest of the pattern). The loop keeps only the last star seen:
 * on a mismatch it restarts the piece after that star one byte further on.
 * The restart point never moves back, so there are at most slen + 1 passes
 * over at most plen pattern bytes each.
 */
#include "keyspace/keyspace.h"

static int fold(int ch)
{
    return ch >= 'A' && ch <= 'Z' ? ch + ('a' - 'A') : ch;
}

/* Matches the class at p[0] == '[' (left bytes of pattern) against ch.
 * Returns whether it matches; *used = the class's length in the pattern. */
static int match_class(const char *p, size_t left, char ch, int nocase, size_t *used)
{
    size_t i = 1;
    int neg = 0, match = 0;
    if (i < left && p[i] == '^') neg = 1, i++;
    for (;; i++) {
        if (i >= left) { /* unterminated: the class is the rest */
            *used = left;
            break;
        }
        if (p[i] == '\\' && left - i >= 2) {
            i++;
            if (p[i] == ch) match = 1;
        } else if (p[i] == ']') {
            *used = i + 1;
            break;
        } else if (left - i >= 3 && p[i + 1] == '-') {
            int a = p[i], b = p[i + 2], c = ch; /* plain char, as Redis */
            if (a > b) {
                int t = a;
                a = b;
                b = t;
            }
            if (nocase) a = fold(a), b = fold(b), c = fold(c);
            if (c >= a && c <= b) match = 1;
            i += 2;
        } else if (nocase ? fold(p[i]) == fold(ch) : p[i] == ch) {
            match = 1;
        }
    }
    return neg ? !match : match;
}

/* Matches the element at p[0] (not '*') against ch; *used = its length. */
static int match_elem(const char *p, size_t left, char ch, int nocase, size_t *used)
{
    char want = p[0];
    *used = 1;
    if (want == '?') return 1;
    if (want == '[') return match_class(p, left, ch, nocase, used);
    if (want == '\\' && left >= 2) want = p[1], *used = 2;
    return nocase ? fold(want) == fold(ch) : want == ch;
}

int ks_glob_match_steps(const char *pat, size_t plen, const char *s, size_t slen, int nocase,
                        uint64_t *steps)
{
    size_t pi = 0, si = 0, star_p = 0, star_s = 0, used;
    int have_star = 0;
    uint64_t n = 0;
    if (slen == 0) return plen == 0; /* as Redis: the string ends before the pattern starts */
    while (si < slen) {
        n++;
        if (pi < plen && pat[pi] == '*') {
            while (pi < plen && pat[pi] == '*')
                pi++;
            if (pi == plen) break; /* a trailing star takes the rest */
            have_star = 1;
            star_p = pi;
            star_s = si;
            continue;
        }
        if (pi < plen && match_elem(pat + pi, plen - pi, s[si], nocase, &used)) {
            n += used;
            pi += used;
            si++;
            continue;
        }
        if (!have_star) {
            if (steps) *steps += n;
            return 0;
        }
        pi = star_p; /* the last star takes one more byte */
        si = ++star_s;
    }
    while (pi < plen && pat[pi] == '*')
        pi++;
    if (steps) *steps += n;
    return pi == plen;
}

int ks_glob_match(const char *pat, size_t plen, const char *s, size_t slen, int nocase)
{
    return ks_glob_match_steps(pat, plen, s, slen, nocase, NULL);
}
