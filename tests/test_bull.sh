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
# wait_ping PORT [PID]: PORT answers PING (and the server there is PID).
wait_ping() {
  for _ in $(seq 300); do
    if redis-cli -p "$1" ping >/dev/null 2>&1; then
      [ -z "${2:-}" ] && return 0
      [ "$(redis-cli -p "$1" info server | tr -d '\r' | sed -n 's/^process_id://p')" = "$2" ]
      return
    fi
    [ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null && return 1
    sleep 0.1
  done
  return 1
}
run_strata() { exec "$STRATA" --port "$1" --dir "$tmp/strata" --logfile "$tmp/strata.log" --appendfsync everysec; }
run_redis() { exec redis-server --port "$1" --dir "$tmp" --save "" --appendonly no >/dev/null 2>&1; }
# start VAR FUNCTION: runs FUNCTION PORT (which execs the server, so $! is
# its pid) in the background on a free port and sets VAR to the port.
# free_port's port is free only until someone binds it (another test
# program's server, a client's source port): when the server exits or
# another server answers there, it tries a new port.
start() {
  local port pid
  for _ in 1 2 3 4 5; do
    port=$(free_port)
    "$2" "$port" &
    pid=$!
    if wait_ping "$port" "$pid"; then pids+=("$pid"); printf -v "$1" %s "$port"; return 0; fi
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  done
  return 1
}
sport=0 rport=0
start sport run_strata || { echo "FAIL bull_on_strata: the server did not start"; echo "0 passed, 1 failed"; exit 1; }
start rport run_redis
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
