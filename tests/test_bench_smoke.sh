#!/usr/bin/env bash
# test_bench_smoke.sh -- tiny runs of the benchmark tools, to keep them
# working: strata-bench engine, strata-bench index and bench-redis.sh each run
# to the end on a small input, and print their final summary line with
# numbers in it. No speed is asserted here (benchmarks report ratios; unit
# tests never time anything). PASS/FAIL lines per tests/run.sh.
#
# Environment (set by tests/run.sh): STRATA_BENCH, STRATA_SERVER, BINDIR.
set -u
cd "$(dirname "$0")/.." || exit 1
BINDIR=${BINDIR:-src}
BENCH=${STRATA_BENCH:-$BINDIR/strata-bench}
export STRATA_SERVER=${STRATA_SERVER:-$BINDIR/strata-server}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
num='[0-9]+(\.[0-9]+)?'

# check name file regex: PASS when the last line of file matches.
# exited_ok <test> <status> <output file>: 0 when the run exited 0, else
# prints the failure with the output's tail.
exited_ok() {
  [ "$2" -eq 0 ] && return 0
  echo "FAIL $1: exit status $2"
  tail -n 8 "$3" | sed 's/^/    /'
  return 1
}

check_last() {
  local last
  last=$(tail -n 1 "$2")
  if [[ "$last" =~ $3 ]]; then
    echo "PASS $1"
  else
    echo "FAIL $1: last line was '$last'"
    tail -n 8 "$2" | sed 's/^/    /'
  fi
}

# EngineBenchPrintsRatioLine: both engines run every operation, the reads
# find exactly the keys written, and the ratio line comes last.
timeout 60 "$BENCH" engine --num 20000 --dir "$out/engine" >"$out/engine.txt" 2>&1
if exited_ok EngineBenchPrintsRatioLine $? "$out/engine.txt"; then
  check_last EngineBenchPrintsRatioLine "$out/engine.txt" \
    "^engine/rocksdb ratios: fillrandom=$num readrandom=$num seekrandom=$num space=$num\$"
fi

# EngineBenchLeavesNoFiles: the dbs it made under --dir are removed.
if [ -d "$out/engine" ] && [ -z "$(ls -A "$out/engine")" ]; then
  echo "PASS EngineBenchLeavesNoFiles"
else
  echo "FAIL EngineBenchLeavesNoFiles: left $(find "$out/engine" -mindepth 1 -maxdepth 1 | tr '\n' ' ')"
fi

# EngineBenchInterruptedLeavesNoFiles: SIGTERM in the middle of a fill
# removes the db being written (a full-size run leaves hundreds of MB).
mkdir -p "$out/engine-int"
"$BENCH" engine --num 2000000 --dir "$out/engine-int" >"$out/int.txt" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -n "$(ls -A "$out/engine-int")" ] && break; sleep 0.05; done
sleep 0.3
kill -TERM $pid
wait $pid
rc=$?
if [ $rc -eq 143 ] && [ -z "$(ls -A "$out/engine-int")" ]; then
  echo "PASS EngineBenchInterruptedLeavesNoFiles"
else
  echo "FAIL EngineBenchInterruptedLeavesNoFiles: status $rc, left:" \
    "$(find "$out/engine-int" -mindepth 1 -maxdepth 1 | tr '\n' ' ')"
fi

# EngineBenchRejectsBadArguments: usage and status 2, nothing run.
bad=0
for args in "--num abc" "--num 0" "--value-size 0" "--compare mysql" "--frobnicate 1" "--num"; do
  # shellcheck disable=SC2086
  timeout 10 "$BENCH" engine $args >"$out/bad.txt" 2>&1
  rc=$?
  if [ $rc -ne 2 ] || ! grep -q '^usage:' "$out/bad.txt"; then
    echo "FAIL EngineBenchRejectsBadArguments: '$args' exited $rc"
    bad=1
  fi
done
[ $bad -eq 0 ] && echo "PASS EngineBenchRejectsBadArguments"

# IndexBenchPrintsRatioLine: two servers, the four indexes, HSETs and
# IDX.RANGE of every shape; the top-reputation query must return 100 entries
# per query (2000 profiles all carry a reputation), keys and HASHES alike.
timeout 60 "$BENCH" index --num 2000 >"$out/index.txt" 2>&1
if exited_ok IndexBenchPrintsRatioLine $? "$out/index.txt"; then
  check_last IndexBenchPrintsRatioLine "$out/index.txt" \
    "^indexed/plain ratios: cpu_per_write=$num throughput=$num\$"
  tops=$(grep -cE '^idx\.range reputation top (keys|HASHES) +[0-9]+ +[0-9.]+ +[0-9.]+ +100\.0$' \
    "$out/index.txt")
  if [ "$tops" -eq 2 ]; then
    echo "PASS IndexBenchTopReputationReturnsLimit"
  else
    echo "FAIL IndexBenchTopReputationReturnsLimit: rows: $(grep 'reputation top' "$out/index.txt")"
  fi
fi

# BenchRedisPrintsRatios: strata and redis-server side by side, every test
# (the sorted-set ones on a smaller key: one zset of 20_000 members costs
# strata milliseconds per ZPOPMIN today, see README "Measured results").
BENCH_N=5000 BENCH_TIMEOUT=60 BENCH_TESTS="set get incr hset mset sadd spop evalsha setbit pfadd publish lpush rpush lpop rpop lrange_100 xadd" \
  timeout 180 src/bench/bench-redis.sh >"$out/redis.txt" 2>&1
if exited_ok BenchRedisPrintsRatios $? "$out/redis.txt"; then
  check_last BenchRedisPrintsRatios "$out/redis.txt" \
    "^strata/redis ratios: set=$num get=$num incr=$num hset=$num mset=$num sadd=$num spop=$num evalsha=$num setbit=$num pfadd=$num publish=$num lpush=$num rpush=$num lpop=$num rpop=$num lrange_100=$num xadd=$num\$"
fi
BENCH_N=2000 BENCH_TIMEOUT=60 BENCH_TESTS="zadd zpopmin geoadd" timeout 120 src/bench/bench-redis.sh \
  >"$out/redis-z.txt" 2>&1
if exited_ok BenchRedisPrintsSortedSetRatios $? "$out/redis-z.txt"; then
  check_last BenchRedisPrintsSortedSetRatios "$out/redis-z.txt" \
    "^strata/redis ratios: zadd=$num zpopmin=$num geoadd=$num\$"
fi
