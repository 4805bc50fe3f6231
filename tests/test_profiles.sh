#!/usr/bin/env bash
# test_profiles.sh -- the profile workload (strata-bench profiles) at a small
# size on strata, strata-ft (FT.*), rocksdb and sqlite: every engine must complete and all must
# print the same checksum for every phase and for the final verification,
# single worker and in parallel mode. Prints PASS/FAIL lines (tests/run.sh).
set -u
cd "$(dirname "$0")/.."
BENCH=${STRATA_BENCH:-src/strata-bench}
N=${PROFILES_TEST_N:-3000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# run NAME COUNT ARGS...: runs strata-bench with --check-agree, PASS when it exits 0
# having completed all COUNT engines.
run() {
  local name=$1 count=$2; shift 2
  if [ ! -x "$BENCH" ]; then echo "FAIL $name: $BENCH not built"; return; fi
  TMPDIR="$out" "$BENCH" profiles --profiles "$N" --check-agree --no-report "$@" \
    >"$out/$name.log" 2>&1
  local rc=$?
  if [ $rc -eq 0 ] && grep -q "checksum agreement across $count completed engine(s) of $count: ok" "$out/$name.log"; then
    echo "PASS $name"
  else
    echo "FAIL $name: exit $rc: $(grep -E 'skipped|failed|disagree|MISMATCH|error' "$out/$name.log" | head -5 | tr '\n' ' ')"
    tail -5 "$out/$name.log"
  fi
}

run ProfilesEnginesAgreeOnEveryPhase 4 --engine strata,strata-ft,rocksdb,sqlite
run ProfilesParallelPipelinedEnginesAgree 3 --engine strata,rocksdb,sqlite --clients 3 --pipeline 8

# A bad option is a usage error (exit 2), not a crash or a run.
"$BENCH" profiles --profiles abc >"$out/bad.log" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q usage "$out/bad.log"; then echo "PASS ProfilesBadOptionIsUsageError"
else echo "FAIL ProfilesBadOptionIsUsageError: exit $rc"; fi

# Leftover data directories would fill /tmp over many runs.
left=$(find "$out" -maxdepth 1 -name 'strata-bench-*' | wc -l)
if [ "$left" -eq 0 ]; then echo "PASS ProfilesRemovesTemporaryDirectories"
else echo "FAIL ProfilesRemovesTemporaryDirectories: $left left in $out"; fi
