/*
 * catalog_fuzz.c -- libFuzzer target for the index catalog record decoder
 * (idx_catalog_decode, src/index/catalog.c), which reads whatever the
 * engine hands back at startup, damaged records included.
 *
 * Input: one byte k, then the record: its first k bytes (at most the rest)
 * are the engine key, the others the value. Checked properties: decoding
 * never crashes or reads outside the record; a refusal always says why; a
 * definition it accepts meets idx_def_check, and encoding it gives back the
 * very bytes it was decoded from (the decoder is strict, so a record has
 * one encoding).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "index/catalog.h"

static char *copy(const uint8_t *p, size_t n)
{
    char *c = malloc(n ? n : 1); /* exact size: ASan sees any overread */
    if (!c) abort();
    if (n) memcpy(c, p, n);
    return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    size_t kl = data[0];
    if (kl > size - 1) kl = size - 1;
    size_t vl = size - 1 - kl;
    char *k = copy(data + 1, kl), *v = copy(data + 1 + kl, vl);
    char why[256] = "";
    idx_def *d = idx_catalog_decode(k, kl, v, vl, why, sizeof(why));
    if (!d) {
        if (!why[0]) abort();
    } else {
        char again[256];
        if (idx_def_check(d, again, sizeof(again)) != 0) abort();
        idx_buf ek = {0}, ev = {0};
        idx_catalog_encode(d, &ek, &ev);
        if (ek.len != kl || memcmp(ek.data, k, kl) != 0) abort();
        if (ev.len != vl || memcmp(ev.data, v, vl) != 0) abort();
        idx_buf_free(&ek);
        idx_buf_free(&ev);
        idx_def_free(d);
    }
    free(k);
    free(v);
    return 0;
}
