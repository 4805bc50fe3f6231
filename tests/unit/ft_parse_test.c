/*
 * ft_parse_test.c -- the FT query language parser: each query is parsed
 * against a small schema and its tree compared through FT.EXPLAIN's text;
 * escapes, PARAMS, stop words, precedence and the error cases. Also the
 * tokenizer and the stemmer the index and the queries share.
 */
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "index/ft_def.h"
#include "test.h"

static ft_def *schema(void)
{
    static ft_def d;
    static char *names[] = {"title", "body", "tag", "num", "cs"};
    static int types[] = {FT_TEXT, FT_TEXT, FT_TAG, FT_NUMERIC, FT_TAG};
    if (d.nfields) return &d;
    d.nfields = 5;
    for (int i = 0; i < 5; i++) {
        d.fields[i].name = d.fields[i].alias = names[i];
        d.fields[i].nlen = d.fields[i].alen = strlen(names[i]);
        d.fields[i].type = types[i];
        d.fields[i].sep = ',';
        d.fields[i].weight = 1;
        d.fields[i].text_no = types[i] == FT_TEXT ? i : -1;
    }
    d.fields[4].opts = FT_OPT_CASESENSITIVE;
    d.ntext = 2;
    return &d;
}

/* Parses q (with params p[0..2n)) and returns its explain text, or the
 * error text prefixed with "ERR:". Static buffer. */
static const char *plan(const char *q, const idx_str *p, size_t np)
{
    static char out[4096];
    char *err = NULL;
    ft_qnode *n = ft_parse(schema(), q, strlen(q), p, np, 0, &err);
    if (!n) {
        snprintf(out, sizeof(out), "ERR:%s", err);
        free(err);
        return out;
    }
    char *e = ft_explain(schema(), n);
    snprintf(out, sizeof(out), "%s", e);
    free(e);
    ft_qnode_free(n);
    return out;
}

#define CHECK_PLAN(q, want)                                                                        \
    do {                                                                                           \
        const char *got_ = plan(q, NULL, 0);                                                       \
        CHECK_MSG(strcmp(got_, want) == 0, "query %s:\n%s\nwanted:\n%s", q, got_, want);           \
    } while (0)

TEST(WildcardAndSingleTermLowerCased)
{
    CHECK_PLAN("*", "<WILDCARD>\n");
    CHECK_PLAN("Hello", "hello\n");
    CHECK_PLAN("  hello  ", "hello\n");
}

TEST(JuxtapositionIsIntersectionAndBindsTighterThanUnion)
{
    CHECK_PLAN("a1 b1 | c1", "UNION {\n  INTERSECT {\n    a1\n    b1\n  }\n  c1\n}\n");
    CHECK_PLAN("a1 (b1 | c1)", "INTERSECT {\n  a1\n  UNION {\n    b1\n    c1\n  }\n}\n");
}

TEST(NegationAndOptional)
{
    CHECK_PLAN("a1 -b1", "INTERSECT {\n  a1\n  NOT {\n    b1\n  }\n}\n");
    CHECK_PLAN("-(a1 | b1)", "NOT {\n  UNION {\n    a1\n    b1\n  }\n}\n");
    CHECK_PLAN("a1 ~b1", "INTERSECT {\n  a1\n  OPTIONAL {\n    b1\n  }\n}\n");
}

TEST(StopWordsAreDroppedFromIntersections)
{
    CHECK_PLAN("the hello of world", "INTERSECT {\n  hello\n  world\n}\n");
    CHECK_PLAN("the", "<EMPTY>\n");
}

TEST(PrefixAndFieldModifiers)
{
    CHECK_PLAN("hel*", "hel*\n");
    CHECK_PLAN("@title:hello", "@title:hello\n");
    CHECK_PLAN("@title|body:hello", "@title|body:hello\n");
    CHECK_PLAN("@title:(a1 b1)", "INTERSECT {\n  @title:a1\n  @title:b1\n}\n");
}

TEST(TagListsWithEscapesSpacesAndPrefixes)
{
    CHECK_PLAN("@tag:{a | B}", "TAG:@tag {\n  a\n  b\n}\n");
    CHECK_PLAN("@tag:{New York}", "TAG:@tag {\n  new york\n}\n");
    CHECK_PLAN("@tag:{new\\ york\\,ny}", "TAG:@tag {\n  new york,ny\n}\n");
    CHECK_PLAN("@tag:{pre*}", "TAG:@tag {\n  pre*\n}\n");
    CHECK_PLAN("@tag:{pre* | x }", "TAG:@tag {\n  pre*\n  x\n}\n");
    CHECK_PLAN("@tag:{a\\|b}", "TAG:@tag {\n  a|b\n}\n");
    CHECK_PLAN("@tag:{user\\@example\\.com}", "TAG:@tag {\n  user@example.com\n}\n");
    CHECK_PLAN("@cs:{MiXed}", "TAG:@cs {\n  MiXed\n}\n");
}

TEST(NumericRangesInclusiveExclusiveInfinite)
{
    CHECK_PLAN("@num:[1 2]", "NUMERIC {1.000000 <= @num <= 2.000000}\n");
    CHECK_PLAN("@num:[(1 (2.5]", "NUMERIC {1.000000 < @num < 2.500000}\n");
    CHECK_PLAN("@num:[-inf +inf]", "NUMERIC {-inf <= @num <= inf}\n");
    CHECK_PLAN("@num:[-1,inf]", "NUMERIC {-1.000000 <= @num <= inf}\n");
}

TEST(ExactPhrases)
{
    CHECK_PLAN("\"hello world\"", "EXACT {\n  hello\n  world\n}\n");
    CHECK_PLAN("\"hello the world\"", "EXACT {\n  hello\n  world\n}\n");
    CHECK_PLAN("\"hello\"", "hello\n");
}

TEST(EscapedSeparatorsStayInTerms)
{
    CHECK_PLAN("hello\\-world", "hello-world\n");
    CHECK_PLAN("a\\ b", "a b\n");
}

TEST(PunctuationOutsideTermsIsSkipped)
{
    /* redis-om quotes text matches in single quotes */
    CHECK_PLAN("@title:'hello'", "@title:hello\n");
}

TEST(ParamsSubstituteTermsTagsAndBounds)
{
    idx_str p[] = {{"t", 1},  {"Hello", 5}, {"g", 1},  {"x y", 3},
                   {"lo", 2}, {"(3", 2},    {"hi", 2}, {"9", 1}};
    const char *got = plan("$t @tag:{$g} @num:[$lo $hi]", p, 4);
    CHECK_MSG(strcmp(got, "INTERSECT {\n  hello\n  TAG:@tag {\n    x y\n  }\n  NUMERIC {3.000000 "
                          "< @num <= 9.000000}\n}\n") == 0,
              "%s", got);
    got = plan("$missing", p, 4);
    CHECK_MSG(strstr(got, "No such parameter `missing`") != NULL, "%s", got);
}

TEST(SyntaxErrorsAreErrorsNotCrashes)
{
    static const char *bad[] = {"(a1",        "a1)",        "@tag:{a",   "@num:[1", "@num:[x 2]",
                                "@nosuch:a1", "\"unclosed", "@tag:a1",   "@num:a1", "@title",
                                "|",          "a1 |",       "@tag:{a}}", "((((",    "-"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *got = plan(bad[i], NULL, 0);
        CHECK_MSG(strncmp(got, "ERR:-", 5) == 0, "query %s gave %s", bad[i], got);
    }
    char deep[5000];
    memset(deep, '(', sizeof(deep) - 1);
    deep[sizeof(deep) - 1] = 0;
    CHECK(strncmp(plan(deep, NULL, 0), "ERR:", 4) == 0);
}

static char toks[1024];
static void collect(void *arg, const char *t, size_t n, uint32_t pos)
{
    (void)arg;
    size_t l = strlen(toks);
    snprintf(toks + l, sizeof(toks) - l, "%.*s@%u ", (int)n, t, pos);
}

TEST(TokenizerSplitsPunctuationKeepsUnderscoreAndEscapes)
{
    toks[0] = 0;
    const char *s = "Foo-bar.baz...bag hello_world The x\\-y";
    ft_tokenize(NULL, s, strlen(s), collect, NULL);
    CHECK_MSG(strcmp(toks, "foo@1 bar@2 baz@3 bag@4 hello_world@5 x-y@6 ") == 0, "%s", toks);
}

TEST(SnowballEnglishStems)
{
    idx_buf b = {0};
    CHECK(ft_stem("running", 7, &b) == 1);
    CHECK_MEM(b.data, b.len, "run");
    CHECK(ft_stem("runs", 4, &b) == 1);
    CHECK_MEM(b.data, b.len, "run");
    CHECK(ft_stem("run", 3, &b) == 0);  /* shorter than MINSTEMLEN */
    CHECK(ft_stem("jump", 4, &b) == 0); /* its own stem */
    idx_buf_free(&b);
}

/* The FT catalog record decodes strictly and encodes back to its bytes. */
TEST(FtCatalogRecordRoundTripsAndRejectsDamage)
{
    static const char seed_path[] = "tests/fuzz/corpus/catalog_fuzz/ft-record";
    FILE *fp = fopen(seed_path, "rb");
    CHECK_MSG(fp != NULL, "missing %s (run from the repository root)", seed_path);
    char rec[512];
    size_t n = fread(rec, 1, sizeof(rec), fp);
    fclose(fp);
    size_t kl = (unsigned char)rec[0];
    char *k = rec + 1, *v = rec + 1 + kl;
    size_t vl = n - 1 - kl;
    char why[256] = "";
    idx_def *d = idx_catalog_decode(k, kl, v, vl, why, sizeof(why));
    CHECK_MSG(d != NULL, "refused: %s", why);
    CHECK(d->ft && d->ft->nfields == 2 && d->ft->ntext == 1);
    idx_buf ek = {0}, ev = {0};
    idx_catalog_encode(d, &ek, &ev);
    CHECK(ek.len == kl && memcmp(ek.data, k, kl) == 0);
    CHECK(ev.len == vl && memcmp(ev.data, v, vl) == 0);
    idx_buf_free(&ek);
    idx_buf_free(&ev);
    idx_def_free(d);
    v[5] = 2; /* state byte: neither ready nor building */
    CHECK(idx_catalog_decode(k, kl, v, vl, why, sizeof(why)) == NULL && why[0]);
    v[5] = 0;
    v[vl] = 0; /* one byte too many */
    CHECK(idx_catalog_decode(k, kl, v, vl + 1, why, sizeof(why)) == NULL);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
