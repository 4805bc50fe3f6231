/*
 * write_batch.h -- the inside of eng_batch: its encoding (which is also the
 * payload of a log record) and how the engine applies it.
 *
 *   batch    = sequence (fixed64) | count (fixed32) | op*
 *   op       = 0x01 varstring(key) varstring(value)       -- put
 *            | 0x00 varstring(key)                         -- delete
 *            | 0x02 varstring(start) varstring(end)        -- delete range
 *   varstring = varint32 length | bytes
 *
 * The i-th op (0-based) gets sequence number `sequence + i`.
 */
#ifndef STRATA_WRITE_BATCH_H
#define STRATA_WRITE_BATCH_H

#include "coding.h"
#include "engine.h"
#include "iter.h"

#define BATCH_HEADER_SIZE 12

struct memtable;
struct mem_scan_only;

/* The encoded representation (header included). */
slice batch_contents(const eng_batch *b);
void batch_set_sequence(eng_batch *b, uint64_t seq);
uint64_t batch_sequence(const eng_batch *b);

/* Builds a batch from an encoded representation read from the log.
 * ENG_CORRUPTION when it does not parse. *out is owned by the caller. */
eng_status batch_from_contents(slice rep, eng_batch **out);

/* Calls fn for each op in order; stops and returns the first non-OK status
 * fn returns, or ENG_CORRUPTION if the encoding is bad (checked before any
 * fn call, so a bad batch applies nothing). type is ENG_TYPE_*; for deletes
 * value is empty; for range deletes key = start, value = end. */
typedef eng_status (*batch_op_fn)(void *ctx, uint64_t seq, int type, slice key, slice value);
eng_status batch_iterate(const eng_batch *b, batch_op_fn fn, void *ctx);

/* Inserts the batch's ops into mem with sequence numbers from
 * batch_sequence(b): every op, or only the newest op on each key when the
 * batch's point index is built (write_batch.c, B5). REQUIRES: the batch is
 * published whole (no reader at a sequence inside it). */
eng_status batch_insert_into(const eng_batch *b, struct memtable *mem);

/* For an indexed batch: its private memtable of pending entries, op i at
 * sequence ENG_BATCH_SEQ_BASE + i (so they shadow committed data), holding
 * every op added so far; NULL if the batch is not indexed or holds no ops
 * (both mean "nothing pending"). The index is built lazily: ops are only
 * encoded when added, and this call first indexes the ops added since its
 * last call (O(new ops)); after a rollback below the indexed point it
 * rebuilds from the ops that remain. Owned by the batch; valid until the
 * batch is cleared, rolled back or freed (take a reference to keep it longer:
 * an iterator does). Entries added by later calls become visible to
 * existing holders only as a memtable's concurrent readers see inserts.
 * REQUIRES: no concurrent call on the same batch, and no concurrent
 * eng_batch_* call on it (the batch belongs to one thread: the command
 * thread). Logically const: it updates the batch's cached index only. */
struct memtable *batch_index(const eng_batch *b);

/* The range deletions of an indexed batch's ops (B6), brought up to date as
 * batch_index does, with a new reference for the caller (rdel_set_unref);
 * NULL when it has none. Later calls may append to the same set (its
 * readers see appends as a memtable's see inserts). REQUIRES: as
 * batch_index. */
struct rdel_set *batch_rdels(const eng_batch *b);

/* The newest op on key in an indexed batch, through its point index
 * (write_batch.c, B4; brought up to date first, O(new ops)): 1 with *type
 * (ENG_TYPE_VALUE or ENG_TYPE_DELETION) and *value (valid until the batch
 * changes), 0 when no op of the batch is on key, -1 when the point index
 * cannot answer (the batch holds range deletions, or key is under a prefix
 * of so, whose ops the point index leaves out): use batch_index. so is the
 * db's scan-only prefix set (NULL: none; it must outlive the batch's ops,
 * and be the same set for every call until the batch is cleared, or the
 * answer is -1). REQUIRES: as batch_index. */
int batch_point_get(const eng_batch *b, const struct mem_scan_only *so, slice key, int *type,
                    slice *value);

/* A test hook: how many point-index slots the batch's last clear (or
 * rollback below its point index) wrote. */
uint32_t batch_point_drop_slots(const eng_batch *b);

/* Does the batch contain any delete-range op? */
int batch_has_range_deletes(const eng_batch *b);

#endif
