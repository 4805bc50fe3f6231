#!/usr/bin/env bash
# test_bull.sh -- Bull v4 (npm `bull`: lists, sorted sets, hashes, Lua and
# pub/sub) as an application runs it, against redis-server and against
# strata: 1_000 jobs (BULL_JOBS), some delayed, some retried, two workers
# (tests/bull/queue_check.js says what is checked). Prints PASS/FAIL lines
# and "N passed, N failed" like tests/run.sh.
#
# bull is installed with npm under build/bull (kept for the next run).
# Without node/npm, or when the npm registry cannot be reached, the script
# says it skipped; likewise while strata lacks a command Bull's scripts
# call, which it names.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BINDIR=${BINDIR:-src}
STRATA=${STRATA_SERVER:-$PWD/$BINDIR/strata-server}
JOBS=${BULL_JOBS:-1000}
DIR=$PWD/$BUILD/bull
skip() { echo "bull: skipped ($*)"; echo "0 passed, 0 failed"; exit 0; }
command -v node >/dev/null && command -v npm >/dev/null || skip "node and npm are not installed"
if [ ! -d "$DIR/node_modules/bull" ]; then
  mkdir -p "$DIR"
  [ -f "$DIR/package.json" ] || echo '{"name":"strata-bull-check","private":true}' >"$DIR/package.json"
  (cd "$DIR" && timeout 300 npm install --no-audit --no-fund --silent bull@4 >npm.log 2>&1) ||
    skip "npm could not install bull: $(tail -1 "$DIR/npm.log")"
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
wait_ping "$sport" || { echo "FAIL bull_on_strata: the server did not start"; echo "0 passed, 1 failed"; exit 1; }
for need in lpush brpoplpush zadd evalsha publish; do
  [ -n "$(redis-cli -p "$sport" command info "$need" | head -1)" ] ||
    skip "strata has no $(echo $need | tr a-z A-Z) yet, which Bull calls"
done
passed=0; failed=0
for which in redis strata; do
  port=$rport; [ "$which" = strata ] && port=$sport
  if ! wait_ping "$port"; then echo "FAIL bull_on_$which: the server did not start"; failed=$((failed + 1)); continue; fi
  out=$(NODE_PATH="$DIR/node_modules" timeout 300 node tests/bull/queue_check.js "$port" "$JOBS" 2>&1)
  if [ $? -eq 0 ]; then
    echo "PASS bull_on_$which: $out"; passed=$((passed + 1))
  else
    echo "FAIL bull_on_$which: $(echo "$out" | tail -3)"; failed=$((failed + 1))
  fi
done
[ "$failed" -gt 0 ] && tail -5 "$tmp/strata.log"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
