/*
 * ks_glob_test.c -- ks_glob_match against a reference model of Redis's
 * stringmatchlen on random patterns (both case modes), its known quirks,
 * and its cost bound on backtracking patterns (counted steps, not time).
 *
 * The reference is written the slow, obvious way: plain backtracking over
 * a NUL-terminated copy, reading the terminator where Redis's matcher
 * reads it. tests/integration/test_glob.py checks both against the real
 * redis-server through KEYS and COMMAND LIST FILTERBY PATTERN.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/keyspace.h"
#include "test.h"
#include "test_rng.h"

static int ref_lower(int ch)
{
    return ch >= 0 ? tolower(ch) : ch; /* the C locale leaves other bytes alone */
}

static int ref_eq(char a, char b, int nocase)
{
    return nocase ? ref_lower(a) == ref_lower(b) : a == b;
}

/* The element at p (left bytes of pattern remain, p[left] == '\0'):
 * returns its length and sets *hit when it matches ch. */
static size_t ref_elem(const char *p, size_t left, char ch, int nocase, int *hit)
{
    if (p[0] == '?') return *hit = 1, 1;
    if (p[0] == '\\' && left >= 2) return *hit = ref_eq(p[1], ch, nocase), 2;
    if (p[0] != '[') return *hit = ref_eq(p[0], ch, nocase), 1;
    const char *q = p + 1;
    size_t l = left - 1;
    int neg = *q == '^', in = 0;
    if (neg) q++, l--;
    for (;;) {
        if (l == 0) {
            *hit = neg ? !in : in;
            return left;
        }
        if (q[0] == '\\' && l >= 2) {
            in |= q[1] == ch;
            q += 2, l -= 2;
        } else if (q[0] == ']') {
            *hit = neg ? !in : in;
            return (size_t)(q - p) + 1;
        } else if (l >= 3 && q[1] == '-') {
            int lo = q[0], hi = q[2], c = ch;
            if (lo > hi) {
                int t = lo;
                lo = hi;
                hi = t;
            }
            if (nocase) lo = ref_lower(lo), hi = ref_lower(hi), c = ref_lower(c);
            in |= c >= lo && c <= hi;
            q += 3, l -= 3;
        } else {
            in |= ref_eq(q[0], ch, nocase);
            q++, l--;
        }
    }
}

static int ref_rest(const char *p, size_t pl, const char *s, size_t sl, int nocase)
{
    if (pl == 0) return sl == 0;
    if (p[0] == '*')
        return ref_rest(p + 1, pl - 1, s, sl, nocase) ||
               (sl && ref_rest(p, pl, s + 1, sl - 1, nocase));
    if (sl == 0) return 0;
    int hit;
    size_t n = ref_elem(p, pl, s[0], nocase, &hit);
    return hit && ref_rest(p + n, pl - n, s + 1, sl - 1, nocase);
}

static int ref_match(const char *p, size_t pl, const char *s, size_t sl, int nocase)
{
    char *pc = malloc(pl + 1);
    memcpy(pc, p, pl);
    pc[pl] = 0;
    int r = sl == 0 ? pl == 0 : ref_rest(pc, pl, s, sl, nocase);
    free(pc);
    return r;
}

static void random_bytes(char *out, size_t n, const char *alphabet, size_t an)
{
    for (size_t i = 0; i < n; i++)
        out[i] = alphabet[rnd() % an];
}

TEST(RandomPatternsAgreeWithTheReferenceMatcher)
{
    static const char pat_alpha[] = "aab***??[]^-\\Az\x80\xff";
    static const char str_alpha[] = "aabAZz]-^\\[\x80\xff*?";
    char p[16], s[12];
    uint64_t matches = 0;
    for (int i = 0; i < 1000000; i++) {
        size_t pl = rnd() % sizeof(p), sl = rnd() % sizeof(s);
        random_bytes(p, pl, pat_alpha, sizeof(pat_alpha) - 1);
        random_bytes(s, sl, str_alpha, sizeof(str_alpha) - 1);
        int nocase = (int)(rnd() & 1);
        int want = ref_match(p, pl, s, sl, nocase);
        int got = ks_glob_match(p, pl, s, sl, nocase);
        matches += (uint64_t)want;
        CHECK_MSG(got == want, "pattern '%.*s' string '%.*s' nocase %d: got %d want %d", (int)pl, p,
                  (int)sl, s, nocase, got, want);
    }
    CHECK_MSG(matches > 20000, "%llu matches",
              (unsigned long long)matches); /* the random cases do reach matches */
}

typedef struct glob_case {
    const char *pat, *str;
    int nocase, want;
} glob_case;

TEST(RedisQuirksOfStringmatchlenAreKept)
{
    static const glob_case cases[] = {
        {"*", "", 0, 0}, /* the empty string matches only "" */
        {"", "", 0, 1},
        {"*", "a", 0, 1},
        {"a*", "a", 0, 1},
        {"a*?", "a", 0, 0},
        {"[", "[", 0, 0},    /* an open class with no member */
        {"[^", "x", 0, 1},   /* an open negated empty class takes any byte */
        {"[]a]", "]", 0, 0}, /* ']' first closes an empty class; "a]" follows */
        {"[]a]", "a]", 0, 0},
        {"[^]a]", "xa]", 0, 1},
        {"[a-]", "]", 0, 1}, /* a..']' */
        {"[a-]", "b", 0, 0},
        {"[z-a]", "m", 0, 1}, /* ends in either order */
        {"[\\]]", "]", 0, 1},
        {"[\\a]", "A", 1, 0}, /* \x in a class ignores nocase */
        {"[A-C]", "b", 1, 1},
        {"[Z-a]", "_", 1, 0},       /* folded after ordering: z..a */
        {"[a-\xff]", "\xff", 0, 1}, /* signed char: -1..'a' */
        {"[a-\xff]", "b", 0, 0},
        {"\\", "\\", 0, 1},
        {"a\\", "a\\", 0, 1},
        {"\\*", "*", 0, 1},
        {"\\*", "a", 0, 0},
        {"h?llo", "hello", 0, 1},
        {"h[^e]llo", "hello", 0, 0},
        {"H*O", "hello", 1, 1},
        {"*a*b*c", "xaybzc", 0, 1},
        {"*a*b*c", "xaybz", 0, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const glob_case *t = &cases[i];
        int got = ks_glob_match(t->pat, strlen(t->pat), t->str, strlen(t->str), t->nocase);
        CHECK_MSG(got == t->want, "'%s' vs '%s' nocase %d: got %d", t->pat, t->str, t->nocase, got);
        CHECK_MSG(ref_match(t->pat, strlen(t->pat), t->str, strlen(t->str), t->nocase) == t->want,
                  "reference disagrees on '%s' vs '%s'", t->pat, t->str);
    }
}

/* 200 patterns that make a backtracking matcher try every way to split
 * the string between their stars, against strings they almost match. */
TEST(BacktrackingPatternsCostAtMostPatternTimesStringSteps)
{
    char pat[512], str[300];
    uint64_t total = 0, bound_total = 0;
    for (int i = 0; i < 200; i++) {
        size_t pl = 0, reps = 10 + (size_t)i;
        for (size_t r = 0; r < reps && pl + 3 < sizeof(pat); r++)
            pat[pl++] = '*', pat[pl++] = (i & 1) ? 'a' : '?';
        pat[pl++] = '#';
        size_t sl = 64 + (size_t)i;
        memset(str, 'a', sl);
        uint64_t steps = 0;
        CHECK(ks_glob_match_steps(pat, pl, str, sl, i & 2, &steps) == 0);
        uint64_t bound = (uint64_t)(pl + 1) * (sl + 1) + pl;
        CHECK_MSG(steps <= bound, "pattern %d: %llu steps > bound %llu", i,
                  (unsigned long long)steps, (unsigned long long)bound);
        total += steps;
        bound_total += bound;
    }
    /* The whole set costs a few million steps (a backtracking matcher needs
     * more than 2^60 for the longest pattern alone). */
    CHECK_MSG(total <= bound_total && total < 20000000, "%llu steps", (unsigned long long)total);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
