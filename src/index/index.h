/*
 * index.h -- secondary indexes over hash fields, kept exact in the write
 * path (IDX.* commands). Entry and catalog encoding: src/index/FORMAT.md.
 *
 * Threading: the server's command thread only.
 */
#ifndef STRATA_INDEX_H
#define STRATA_INDEX_H

#include <stdint.h>

#include "keyspace/keyspace.h"

/* Loads the index catalog from the engine and registers the keyspace hash
 * hook and index compaction filter. Called once at startup after ks_open.
 * Returns KS_OK or an error with a message in *err (malloc'd). */
ks_status idx_init(keyspace *ks, char **err);
void idx_shutdown(void);

/* Advances background index builds by one small step (a few milliseconds
 * of work) using ctx's batch, which the caller commits. Returns 1 while some
 * build still has work to do. Called from the event loop. */
int idx_build_step(ks_ctx *ctx);

/* Lines for INFO (a "# Index" section); written into buf, returns length. */
size_t idx_info(char *buf, size_t cap);

#endif
