/*
 * restore_fuzz.c -- libFuzzer target for RESTORE's payload decoder
 * (ks_restore, src/keyspace/ks_rdb_value.c, and the container readers of
 * ks_rdb_pack.c) on a real keyspace and engine in a temporary directory
 * (under /dev/shm when there is one).
 *
 * Input: one flag byte, then the payload. Flag 0: the payload as it is
 * (so the version and CRC-64 check sees damaged footers); otherwise the
 * bytes are the object (type byte and body) and the target appends a
 * correct footer, so the decoders see everything the fuzzer makes.
 * Checked properties: nothing crashes or trips ASan/UBSan; a refusal is
 * one of RESTORE's two texts; a payload accepted dumps (DUMP), and that
 * dump restores and dumps again to the very same bytes (DUMP is a
 * function of the content). Each input's writes are dropped unwritten
 * (the batch is cleared), so inputs do not pile up state.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "keyspace/keyspace.h"
#include "keyspace/ks_rdb.h"

static eng_db *edb;
static keyspace *ks;
static ks_ctx ctx;

static void open_once(void)
{
    static char dir[64];
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof(dir), "%s/strata-rfuzz-XXXXXX", base);
    if (!mkdtemp(dir)) abort();
    eng_options o;
    eng_options_init(&o);
    o.compaction_filter = ks_compaction_filter;
    if (eng_open(dir, &o, &edb) != ENG_OK || ks_open(edb, &ks) != KS_OK) abort();
    ctx.ks = ks;
    ctx.batch = eng_batch_new(1);
    ctx.now_ms = 1700000000000;
}

static void check_refusal(ks_status st)
{
    if (st != KS_ERR_MSG || !ctx.err) abort();
    if (strcmp(ctx.err, "ERR Bad data format") != 0 &&
        strcmp(ctx.err, "ERR DUMP payload version or checksum are wrong") != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!edb) open_once();
    if (size < 1) return 0;
    ks_rdb_out p = {NULL, 0, 0, 0};
    ks_rdb_put(&p, data + 1, size - 1);
    if (data[0]) ks_rdb_put_footer(&p);
    if (p.oom) abort();
    /* an exact-size copy: ASan sees any read past the payload */
    char *payload = malloc(p.n ? p.n : 1);
    if (!payload) abort();
    if (p.n) memcpy(payload, p.p, p.n);
    ks_status st = ks_restore(&ctx, "k", 1, payload, p.n, 1, 0);
    if (st != KS_OK) {
        check_refusal(st);
    } else {
        ks_val d1, d2;
        if (ks_dump(&ctx, "k", 1, &d1) != KS_OK) abort();
        if (ks_restore(&ctx, "k2", 2, d1.p, d1.n, 1, 0) != KS_OK) abort();
        if (ks_dump(&ctx, "k2", 2, &d2) != KS_OK) abort();
        if (d1.n != d2.n || memcmp(d1.p, d2.p, d1.n) != 0) abort();
        ks_val_free(&d1);
        ks_val_free(&d2);
    }
    eng_batch_clear(ctx.batch);
    ks_ctx_reset(&ctx);
    free(payload);
    free(p.p);
    return 0;
}
