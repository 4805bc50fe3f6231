#!/usr/bin/env bash
# test_env_only.sh -- Invariant E1 (src/engine/env.h): every file operation
# of the engine goes through env_ops, so the fault-injection env sees it.
# Fails when a file in src/engine other than env.c / env_fault.c calls a
# file-system function itself. PASS/FAIL lines per tests/run.sh.
set -u
cd "$(dirname "$0")/.." || exit 1
calls='open|openat|close|unlink|unlinkat|rename|renameat|fsync|fdatasync|sync_file_range|pread|pwrite|write|writev|read|ftruncate|truncate|mkdir|rmdir|opendir|readdir|closedir|stat|fstat|lstat|access|flock|dup|dup2|fopen|fdopen|remove|posix_fadvise|fallocate|posix_fallocate|mmap|link|symlink'
hits=$(grep -nE "(^|[^_a-zA-Z0-9.>])($calls)[[:space:]]*\(" src/engine/*.c |
  grep -vE '^src/engine/env(_fault)?\.c:' |
  grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)' || true)
if [ -z "$hits" ]; then
  echo "PASS EngineFileOperationsGoThroughEnv"
else
  echo "FAIL EngineFileOperationsGoThroughEnv: direct file-system calls outside env.c:"
  echo "$hits" | sed 's/^/    /'
fi
