/*
 * log_format.h -- constants of the write-ahead log and manifest record
 * framing. The exact grammar, and how recovery treats a torn or corrupt
 * tail (Invariant L1), are in log_format.md (FORMAT.md, "Log files").
 */
#ifndef STRATA_LOG_FORMAT_H
#define STRATA_LOG_FORMAT_H

/* File header: magic (8 bytes) | format version (fixed32) | reserved (fixed32). */
#define LOG_MAGIC "STRATAWL"
#define LOG_FORMAT_VERSION 1
#define LOG_FILE_HEADER_SIZE 16

/* Record: length (fixed32) | checksum (fixed32) of the payload | payload. */
#define LOG_RECORD_HEADER_SIZE 8
#define LOG_MAX_RECORD_SIZE (UINT32_C(1) << 31)

#endif
