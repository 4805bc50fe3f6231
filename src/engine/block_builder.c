/*
 * block_builder.c -- writes a block: entries with keys prefix-compressed
 * against the previous key, a full key every `interval` entries (a restart
 * point), then the restart offsets and their count.
 *
 *   block   = entry* restart:fixed32* num_restarts:fixed32
 *   entry   = shared:varint32 non_shared:varint32 value_len:varint32
 *             key_delta[non_shared] value[value_len]
 *
 * Invariants the reader (block.c) relies on:
 *   B1. The entry at a restart offset has shared == 0.
 *   B2. Restart offsets increase strictly; the first is 0.
 *   B3. num_restarts >= 1, even for an empty block (one restart at 0).
 * and the writer's choice (table_format.h; readers accept any restarts):
 *   B4. An entry starts a restart when `interval` entries or
 *       SST_RESTART_BYTES bytes of entries follow the last restart.
 */
#include "block_builder.h"

#include "table_format.h"

void block_builder_init(block_builder *b, int restart_interval)
{
    memset(b, 0, sizeof(*b));
    b->interval = restart_interval < 1 ? 1 : restart_interval;
    buf_put_fixed32(&b->restarts, 0); /* B2, B3 */
}

void block_builder_free(block_builder *b)
{
    buf_free(&b->data);
    buf_free(&b->restarts);
    buf_free(&b->last_key);
}

void block_builder_reset(block_builder *b)
{
    b->data.len = 0;
    b->restarts.len = 0;
    b->last_key.len = 0;
    b->counter = 0;
    b->since = 0;
    b->entries = 0;
    b->finished = 0;
    buf_put_fixed32(&b->restarts, 0);
}

void block_builder_add(block_builder *b, slice key, slice value)
{
    size_t shared = 0;
    if (b->counter < b->interval && b->since < SST_RESTART_BYTES) { /* B4 */
        size_t n = key.size < b->last_key.len ? key.size : b->last_key.len;
        while (shared < n && key.data[shared] == b->last_key.data[shared])
            shared++;
    } else {
        /* B1: a restart entry carries its whole key. */
        buf_put_fixed32(&b->restarts, (uint32_t)b->data.len);
        b->counter = 0;
        b->since = 0;
    }
    size_t start = b->data.len;
    size_t non_shared = key.size - shared;
    buf_put_varint(&b->data, shared);
    buf_put_varint(&b->data, non_shared);
    buf_put_varint(&b->data, value.size);
    buf_append(&b->data, key.data + shared, non_shared);
    buf_append(&b->data, value.data, value.size);

    b->last_key.len = shared;
    buf_append(&b->last_key, key.data + shared, non_shared);
    b->counter++;
    b->since += b->data.len - start;
    b->entries++;
}

slice block_builder_finish(block_builder *b)
{
    if (!b->finished) {
        buf_append(&b->data, b->restarts.data, b->restarts.len);
        buf_put_fixed32(&b->data, (uint32_t)(b->restarts.len / 4));
        b->finished = 1;
    }
    return slice_make(b->data.data, b->data.len);
}

size_t block_builder_size_estimate(const block_builder *b)
{
    return b->finished ? b->data.len : b->data.len + b->restarts.len + 4;
}
