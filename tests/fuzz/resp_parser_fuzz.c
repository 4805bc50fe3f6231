/*
 * resp_parser_fuzz.c -- libFuzzer target for the request parser.
 *
 * The first input byte picks the chunk sizes (and bit 0 the
 * unauthenticated limits); the rest is fed to the parser
 * the way networking.c does it: appended in chunks to a buffer that is
 * compacted (keep_from/rebase) after each parse call. ASan catches any read
 * or write outside the buffer (it is allocated to exactly its length, so
 * the parser may not touch buf[len]). Checked properties: every argument
 * lies inside the buffer and is NUL-terminated in place; positions only move
 * forward; an error always carries a message; and, whatever the chunking,
 * the sequence of requests equals that of a one-piece parse.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/resp_parser.h"

/* Parses data in chunks; returns a digest of the requests seen and whether
 * it ended in an error. */
static uint64_t run(const uint8_t *data, size_t size, unsigned seed, int unauth, int *errored)
{
    resp_parser p;
    resp_parser_init(&p);
    p.max_bulk_len = 1 << 20;
    p.unauthenticated = unauth;
    char *buf = NULL;
    size_t len = 0, pos = 0, fed = 0;
    uint64_t digest = 1469598103934665603ULL;
    *errored = 0;
    while (fed < size && !*errored) {
        size_t step = seed == 0 ? size : 1 + (seed * 7 + fed) % 13;
        if (step > size - fed) step = size - fed;
        char *nb = malloc(len + step); /* exact size: ASan sees any overread */
        if (len) memcpy(nb, buf, len);
        memcpy(nb + len, data + fed, step);
        free(buf);
        buf = nb;
        len += step;
        fed += step;
        for (;;) {
            size_t before = pos;
            int r = resp_parse(&p, buf, len, &pos);
            if (pos < before || pos > len) abort();
            if (r == RESP_ERR) {
                if (!p.err || !*p.err) abort();
                *errored = 1;
                break;
            }
            if (r == RESP_AGAIN) break;
            if (p.argc <= 0) abort();
            for (int i = 0; i < p.argc; i++) {
                const char *a = p.argv[i].ptr;
                if (a < buf || a + p.argv[i].len >= buf + len) abort();
                if (a[p.argv[i].len] != '\0') abort();
                for (size_t k = 0; k < p.argv[i].len; k++)
                    digest = (digest ^ (unsigned char)a[k]) * 1099511628211ULL;
                digest = (digest ^ 0x100) * 1099511628211ULL;
            }
            digest = (digest ^ 0x200) * 1099511628211ULL;
        }
        size_t keep = resp_parser_keep_from(&p, pos);
        if (keep > pos) abort();
        memmove(buf, buf + keep, len - keep);
        len -= keep;
        pos -= keep;
        resp_parser_rebase(&p, keep);
    }
    free(buf);
    resp_parser_free(&p);
    return digest;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    unsigned seed = data[0];
    int e1, e2;
    uint64_t whole = run(data + 1, size - 1, 0, seed & 1, &e1);
    uint64_t chunked = run(data + 1, size - 1, seed | 2, seed & 1, &e2);
    /* Chunking must not change the requests parsed. */
    if (!e1 && !e2 && whole != chunked) abort();
    return 0;
}
