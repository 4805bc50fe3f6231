/*
 * resp_parser_test.c -- the request parser: multibulk and inline requests,
 * requests split at every byte, pipelines, Redis's protocol error texts and
 * limits, in-place NUL termination and buffer rebasing.
 */
#include <stdlib.h>
#include <string.h>

#include "server/resp_parser.h"
#include "test.h"

/* Parses all of s (fed in one piece) into a flat "a|b|c;" description. */
static int parse_all(const char *s, size_t n, char *out, size_t cap, const char **err)
{
    resp_parser p;
    resp_parser_init(&p);
    char *buf = malloc(n + 1);
    memcpy(buf, s, n);
    size_t pos = 0, o = 0;
    int r;
    out[0] = '\0';
    while ((r = resp_parse(&p, buf, n, &pos)) == RESP_DONE) {
        for (int i = 0; i < p.argc; i++) {
            o += (size_t)snprintf(out + o, cap - o, "%s%.*s", i ? "|" : "", (int)p.argv[i].len,
                                  p.argv[i].ptr);
            if (p.argv[i].ptr[p.argv[i].len] != '\0')
                o += (size_t)snprintf(out + o, cap - o, "!NONUL");
        }
        o += (size_t)snprintf(out + o, cap - o, ";");
    }
    *err = p.err;
    resp_parser_free(&p);
    free(buf);
    return r;
}

#define EXPECT_PARSE(input, want)                                                                  \
    do {                                                                                           \
        char got_[4096];                                                                           \
        const char *err_;                                                                          \
        int r_ = parse_all(input, sizeof(input) - 1, got_, sizeof(got_), &err_);                   \
        CHECK_MSG(r_ == RESP_AGAIN, "parse of %s returned %d (%s)", #input, r_, err_ ? err_ : ""); \
        CHECK_MSG(strcmp(got_, want) == 0, "got '%.300s' want '%.300s'", got_, want);              \
    } while (0)

#define EXPECT_ERROR(input, msg)                                                                   \
    do {                                                                                           \
        char got_[4096];                                                                           \
        const char *err_ = NULL;                                                                   \
        int r_ = parse_all(input, sizeof(input) - 1, got_, sizeof(got_), &err_);                   \
        CHECK_MSG(r_ == RESP_ERR, "parse of %s returned %d, want error", #input, r_);              \
        CHECK_MSG(strcmp(err_, msg) == 0, "error '%s' want '%s'", err_, msg);                      \
    } while (0)

TEST(MultibulkRequestIsParsed)
{
    EXPECT_PARSE("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", "GET|k;");
    EXPECT_PARSE("*3\r\n$3\r\nSET\r\n$0\r\n\r\n$5\r\na\r\nb\x00\r\n", "SET||a\r\nb;");
}

TEST(PipelinedRequestsAreAllReturned)
{
    EXPECT_PARSE(
        "*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\nECHO x\r\n*2\r\n$4\r\nECHO\r\n$1\r\ny\r\n",
        "PING;PING;ECHO|x;ECHO|y;");
}

TEST(EmptyMultibulkAndBlankLinesAreSkipped)
{
    EXPECT_PARSE("*0\r\n*-1\r\n\r\n\n   \r\n*1\r\n$4\r\nPING\r\n", "PING;");
}

TEST(InlineCommandsSplitLikeRedis)
{
    EXPECT_PARSE("set a b\r\n", "set|a|b;");
    EXPECT_PARSE("set a b\n", "set|a|b;");
    EXPECT_PARSE("  set   \"a b\"  'c d'\t x \r\n", "set|a b|c d|x;");
    EXPECT_PARSE("echo \"\\x41\\n\\\"q\\\"\"\r\n", "echo|A\n\"q\";");
    EXPECT_PARSE("echo 'it\\'s'\r\n", "echo|it's;");
    EXPECT_PARSE("echo \"\"\r\n", "echo|;");
}

TEST(UnbalancedQuotesAreAProtocolError)
{
    EXPECT_ERROR("set \"a b\r\n", "Protocol error: unbalanced quotes in request");
    EXPECT_ERROR("set 'a\r\n", "Protocol error: unbalanced quotes in request");
    EXPECT_ERROR("set \"a\"b\r\n", "Protocol error: unbalanced quotes in request");
}

TEST(BadHeadersGetRedisErrorTexts)
{
    EXPECT_ERROR("*x\r\n", "Protocol error: invalid multibulk length");
    EXPECT_ERROR("*1073741825\r\n", "Protocol error: invalid multibulk length");
    EXPECT_ERROR("*1\r\n$x\r\n", "Protocol error: invalid bulk length");
    EXPECT_ERROR("*1\r\n$-5\r\n", "Protocol error: invalid bulk length");
    EXPECT_ERROR("*1\r\n$600000000\r\n", "Protocol error: invalid bulk length");
    EXPECT_ERROR("*1\r\n+3\r\n", "Protocol error: expected '$', got '+'");
    EXPECT_ERROR("*2\r\n$1\r\na\r\n:1\r\n", "Protocol error: expected '$', got ':'");
    EXPECT_ERROR("*01\r\n", "Protocol error: invalid multibulk length");
    EXPECT_ERROR("*1\r\n$ 1\r\n", "Protocol error: invalid bulk length");
}

TEST(HugeBulkHeaderIsRejectedBeforeItsData)
{
    /* Only the header is there: the parser must not wait for (or ask the
     * caller to make room for) 600 MB. */
    resp_parser p;
    resp_parser_init(&p);
    char buf[] = "*1\r\n$600000000\r\n";
    size_t pos = 0;
    CHECK_EQ_INT(resp_parse(&p, buf, sizeof(buf) - 1, &pos), RESP_ERR);
    CHECK_EQ_INT(resp_parser_bulk_need(&p), 0);
    resp_parser_free(&p);
}

TEST(ProtoMaxBulkLenIsConfigurable)
{
    resp_parser p;
    resp_parser_init(&p);
    p.max_bulk_len = 3;
    char ok[] = "*1\r\n$3\r\nabc\r\n", bad[] = "*1\r\n$4\r\nabcd\r\n";
    size_t pos = 0;
    CHECK_EQ_INT(resp_parse(&p, ok, sizeof(ok) - 1, &pos), RESP_DONE);
    pos = 0;
    CHECK_EQ_INT(resp_parse(&p, bad, sizeof(bad) - 1, &pos), RESP_ERR);
    CHECK(strcmp(p.err, "Protocol error: invalid bulk length") == 0);
    resp_parser_free(&p);
}

TEST(UnauthenticatedLimitsApply)
{
    resp_parser p;
    resp_parser_init(&p);
    p.unauthenticated = 1;
    char many[] = "*11\r\n";
    size_t pos = 0;
    CHECK_EQ_INT(resp_parse(&p, many, sizeof(many) - 1, &pos), RESP_ERR);
    CHECK(strcmp(p.err, "Protocol error: unauthenticated multibulk length") == 0);
    resp_parser_free(&p);
    resp_parser_init(&p);
    p.unauthenticated = 1;
    char big[] = "*1\r\n$16385\r\n";
    pos = 0;
    CHECK_EQ_INT(resp_parse(&p, big, sizeof(big) - 1, &pos), RESP_ERR);
    CHECK(strcmp(p.err, "Protocol error: unauthenticated bulk length") == 0);
    resp_parser_free(&p);
}

TEST(LongLinesWithoutNewlineAreRejected)
{
    size_t n = RESP_INLINE_MAX + 10;
    char *buf = malloc(n);
    resp_parser p;
    size_t pos;
    const char *first[] = {"a", "*", "*1\r\n$"};
    const char *want[] = {"Protocol error: too big inline request",
                          "Protocol error: too big mbulk count string",
                          "Protocol error: too big bulk count string"};
    for (int i = 0; i < 3; i++) {
        memset(buf, '1', n);
        memcpy(buf, first[i], strlen(first[i]));
        resp_parser_init(&p);
        pos = 0;
        CHECK_EQ_INT(resp_parse(&p, buf, n, &pos), RESP_ERR);
        CHECK_MSG(strcmp(p.err, want[i]) == 0, "case %d: %s", i, p.err);
        resp_parser_free(&p);
    }
    free(buf);
}

/* Feeds a pipeline one byte more at a time, as a slow socket would, moving
 * the kept bytes to the front of the buffer after each call. */
TEST(RequestSplitAtEveryByteResumes)
{
    const char *in = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$10\r\n0123456789\r\nPING\r\n"
                     "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n";
    size_t n = strlen(in);
    for (size_t step = 1; step <= n; step++) {
        resp_parser p;
        resp_parser_init(&p);
        char buf[256];
        size_t len = 0, pos = 0, fed = 0;
        char got[512] = "";
        size_t o = 0;
        while (fed < n) {
            size_t k = n - fed < step ? n - fed : step;
            memcpy(buf + len, in + fed, k);
            len += k;
            fed += k;
            int r;
            while ((r = resp_parse(&p, buf, len, &pos)) == RESP_DONE) {
                for (int i = 0; i < p.argc; i++)
                    o += (size_t)snprintf(got + o, sizeof(got) - o, "%s%s", i ? "|" : "",
                                          p.argv[i].ptr);
                o += (size_t)snprintf(got + o, sizeof(got) - o, ";");
            }
            CHECK_EQ_INT(r, RESP_AGAIN);
            size_t keep = resp_parser_keep_from(&p, pos);
            memmove(buf, buf + keep, len - keep);
            len -= keep;
            pos -= keep;
            resp_parser_rebase(&p, keep);
        }
        CHECK_MSG(strcmp(got, "SET|key|0123456789;PING;ECHO|;") == 0, "step %zu got %s", step, got);
        resp_parser_free(&p);
    }
}

TEST(BulkNeedTellsTheRemainingValueSize)
{
    resp_parser p;
    resp_parser_init(&p);
    char buf[] = "*2\r\n$3\r\nSET\r\n$100000\r\nab";
    size_t pos = 0;
    CHECK_EQ_INT(resp_parse(&p, buf, sizeof(buf) - 1, &pos), RESP_AGAIN);
    CHECK_EQ_INT(resp_parser_bulk_need(&p), 100002);
    CHECK_EQ_INT(resp_parser_keep_from(&p, pos), 0);
    resp_parser_free(&p);
}

TEST(ManyArgumentsGrowTheArgv)
{
    char buf[20000];
    size_t o = (size_t)snprintf(buf, sizeof(buf), "*2000\r\n");
    for (int i = 0; i < 2000; i++)
        o += (size_t)snprintf(buf + o, sizeof(buf) - o, "$1\r\n%d\r\n", i % 10);
    resp_parser p;
    resp_parser_init(&p);
    size_t pos = 0;
    CHECK_EQ_INT(resp_parse(&p, buf, o, &pos), RESP_DONE);
    CHECK_EQ_INT(p.argc, 2000);
    CHECK(p.argv[1999].ptr[0] == '9');
    CHECK_EQ_INT(pos, o);
    resp_parser_free(&p);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
