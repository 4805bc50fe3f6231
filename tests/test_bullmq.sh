#!/usr/bin/env bash
# test_bullmq.sh -- BullMQ (npm `bullmq`) as a user runs it, against strata and
# against redis-server: a queue of 1_000 jobs (BULLMQ_JOBS), some delayed,
# some failing twice and retried with backoff, two workers and a QueueEvents
# listener (tests/bullmq/queue_check.js says what is checked: every job
# completed exactly once, every event seen). Prints PASS/FAIL lines and
# "N passed, N failed" like tests/run.sh.
#
# bullmq is installed with npm under build/bullmq (kept there for the next
# run). Without node/npm, or when the npm registry cannot be reached, the
# script says it skipped and exits 0; also while strata lacks a command
# family BullMQ's scripts need (sorted sets), which it names.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BINDIR=${BINDIR:-src}
STRATA=${STRATA_SERVER:-$PWD/$BINDIR/strata-server}
JOBS=${BULLMQ_JOBS:-1000}
DIR=$PWD/$BUILD/bullmq
skip() { echo "bullmq: skipped ($*)"; echo "0 passed, 0 failed"; exit 0; }
command -v node >/dev/null && command -v npm >/dev/null || skip "node and npm are not installed"
if [ ! -d "$DIR/node_modules/bullmq" ]; then
  mkdir -p "$DIR"
  (cd "$DIR" && [ -f package.json ] || echo '{"name":"strata-bullmq-check","private":true}' >package.json)
  (cd "$DIR" && timeout 300 npm install --no-audit --no-fund --silent bullmq@5 >npm.log 2>&1) ||
    skip "npm could not install bullmq: $(tail -1 "$DIR/npm.log")"
fi
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
wait_ping() { for _ in $(seq 100); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.1; done; return 1; }
sport=$(free_port)
"$STRATA" --port "$sport" --dir "$tmp/strata" --logfile "$tmp/strata.log" --appendfsync everysec &
pids+=($!)
rport=$(free_port)
redis-server --port "$rport" --dir "$tmp" --save "" --appendonly no >/dev/null 2>&1 &
pids+=($!)
passed=0; failed=0
wait_ping "$sport" || { echo "FAIL bullmq_on_strata: the server did not start"; exit 1; }
for need in zadd lpush xadd evalsha; do
  [ -n "$(redis-cli -p "$sport" command info "$need" | head -1)" ] ||
    skip "strata has no $(echo $need | tr a-z A-Z) yet, which BullMQ's scripts call"
done
for which in redis strata; do
  port=$rport; [ "$which" = strata ] && port=$sport
  if ! wait_ping "$port"; then echo "FAIL bullmq_on_$which: the server did not start"; failed=$((failed + 1)); continue; fi
  out=$(NODE_PATH="$DIR/node_modules" timeout 300 node tests/bullmq/queue_check.js "$port" "$JOBS" 2>&1)
  rc=$?
  if [ $rc -eq 0 ]; then
    echo "PASS bullmq_on_$which: $out"; passed=$((passed + 1))
  else
    echo "FAIL bullmq_on_$which: $(echo "$out" | tail -3)"; failed=$((failed + 1))
  fi
done
[ "$failed" -gt 0 ] && tail -5 "$tmp/strata.log"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
