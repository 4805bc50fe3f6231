#!/usr/bin/env bash
# Runs every test and ends with the line "N passed, N failed".
#
# Each test program prints "PASS <name>" / "FAIL <name>: why" lines; a
# program that exits non-zero without printing a FAIL line (a crash, a
# sanitizer report) counts as one failure under its own name.
#   tests/unit/*.c         C unit, model and crash tests   ($BUILD/tests/)
#   tests/unit/eng_*.c     again under ASan + UBSan       ($BUILD/tests-asan/)
#   tests/integration/*.py real clients against a real server (/usr/bin/python3),
#                          then again against $BUILD/asan/strata-server
#   tests/fuzz/*.c         short libFuzzer runs (make fuzz: only these, FUZZ_SECONDS each)
#   tests/*.sh             other scripted checks (same PASS/FAIL protocol)
# TEST_FILTER=substr limits the run to programs whose path contains substr.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BINDIR=${BINDIR:-src}
export STRATA_SERVER="$PWD/$BINDIR/strata-server" STRATA_BENCH="$PWD/$BINDIR/strata-bench"
export STRATA_CHECK="$PWD/$BINDIR/strata-check"
[ "${BINDIR#/}" != "$BINDIR" ] && export STRATA_SERVER="$BINDIR/strata-server" STRATA_BENCH="$BINDIR/strata-bench" STRATA_CHECK="$BINDIR/strata-check"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
PY=/usr/bin/python3
# TEST_JOBS programs run at a time (default: the number of cores). Each
# writes to its own log; results are printed in the order the programs are
# listed, whatever order they finish in, with the wall seconds and the CPU
# seconds (user + system, the program's children included). Every test uses
# its own free ports and temporary directories, so any two may run side by side.
JOBS=${TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
# A program still running after TEST_TIMEOUT seconds is interrupted (SIGINT:
# the integration harness still stops its servers) and fails under its own
# name, so a hang costs one program's failure, not the whole run's time.
# The slowest program takes about a minute on a loaded 2-core machine.
TEST_TIMEOUT=${TEST_TIMEOUT:-1200}
passed=0; failed=0
out=$(mktemp -d)
queued=0; printed=0
names=()

report() { # index: counts and prints the finished program's result
  local i=$1 name=${names[$1]} log="$out/$1.log" rc secs cpu p f
  read -r rc secs cpu <"$out/$i.done"
  p=$(grep -c '^PASS ' "$log"); f=$(grep -c '^FAIL ' "$log")
  if [ "$rc" -eq 124 ]; then
    f=$((f + 1)); echo "FAIL $name: still running after ${TEST_TIMEOUT}s (TEST_TIMEOUT)" >>"$log"
  elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1; echo "FAIL $name: exited with status $rc" >>"$log"
  fi
  passed=$((passed + p)); failed=$((failed + f))
  printf '%-44s %4d passed %3d failed  %4ds %6ss cpu\n' "$name" "$p" "$f" "$secs" "$cpu"
  if [ "$f" -gt 0 ]; then grep -E '^FAIL ' "$log" | head -20; tail -30 "$log" | grep -vE '^(PASS|FAIL) '; fi
  rm -f "$log" "$out/$i.done" "$out/$i.cpu"
}

flush() { # prints, in order, every result that is ready
  while [ "$printed" -lt "$queued" ] && [ -f "$out/$printed.done" ]; do
    report "$printed"; printed=$((printed + 1))
  done
}

run_one() { # name, command...: starts the program once a slot is free
  local name=$1; shift
  [ -n "${TEST_FILTER:-}" ] && [[ "$name" != *"$TEST_FILTER"* ]] && return
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; flush; done
  local i=$queued
  names[$i]=$name
  (
    start=$(date +%s)
    TIMEFORMAT='%U %S'
    { time timeout -s INT -k 60 "$TEST_TIMEOUT" "$@" >"$out/$i.log" 2>&1 </dev/null; } 2>"$out/$i.cpu"
    rc=$?
    read -r u s <"$out/$i.cpu"
    echo "$rc $(($(date +%s) - start)) $(echo "$u $s" | awk '{ printf "%.1f", $1 + $2 }')" \
      >"$out/$i.tmp" && mv "$out/$i.tmp" "$out/$i.done"
  ) &
  queued=$((queued + 1))
  flush
}

for t in "$BUILD"/tests/*; do [ -x "$t" ] && run_one "unit/$(basename "$t")" "$t"; done
for t in "$BUILD"/tests-asan/*; do [ -x "$t" ] && run_one "asan/$(basename "$t")" "$t"; done
for t in tests/integration/test_*.py; do [ -f "$t" ] && run_one "integration/$(basename "$t")" $PY "$t"; done
# Again against the server built with every layer under ASan + UBSan (make
# asan); a sanitizer report from a server fails the test that started it.
if [ -x "$BUILD/asan/strata-server" ]; then
  for t in tests/integration/test_*.py; do
    [ -f "$t" ] && run_one "asan-integration/$(basename "$t")" \
      env STRATA_SERVER="$PWD/$BUILD/asan/strata-server" STRATA_ASAN=1 $PY "$t"
  done
fi
# Fuzz time: FUZZ_SECONDS per target, by default 120 s shared by all (at
# least 10 each). tests/fuzz/<target>.options holds extra libFuzzer flags.
nfuzz=$(ls "$BUILD"/fuzz/ 2>/dev/null | wc -l)
fuzz_default=$(( nfuzz > 0 ? 120 / nfuzz : 20 )); [ "$fuzz_default" -lt 10 ] && fuzz_default=10
for t in "$BUILD"/fuzz/*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  seeds=""; [ -d "tests/fuzz/corpus/$name" ] && seeds="tests/fuzz/corpus/$name"
  opts=""; [ -f "tests/fuzz/$name.options" ] && opts=$(cat "tests/fuzz/$name.options")
  mkdir -p "$BUILD/fuzz-corpus/$name"
  run_one "fuzz/$name" bash -c "set -o pipefail; '$t' -max_total_time=${FUZZ_SECONDS:-$fuzz_default} -timeout=30 -rss_limit_mb=1024 $opts '$BUILD/fuzz-corpus/$name' $seeds 2>&1 | tail -5 && echo 'PASS $name'"
done
for t in tests/test_*.sh; do [ -f "$t" ] && run_one "script/$(basename "$t")" bash "$t"; done
wait
flush
rm -rf "$out"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
