#!/usr/bin/env bash
# bench-redis-instr.sh -- server instructions per request, strata against
# redis-server, under the same redis-benchmark load: repeatable where
# bench-redis.sh's CPU times swing with the shared machine's load.
#
#   src/bench/bench-redis-instr.sh [test ...]     (default: set get incr hset mset)
#
# For each test and each server in turn: starts the server under
# valgrind --tool=callgrind with instrumentation off (strata with
# appendfsync everysec, redis-server with appendonly yes, everysec, no RDB),
# runs redis-benchmark -t <test> -n WARM (default 20000) to fill it, turns
# instrumentation on, runs -n N (default 50000; mset 10000), turns it off
# and stops the server. Every run uses -r 1000000 -c 50 -P 16. Prints
# instructions per request (every thread of the server) and their ratio
# redis/strata (above 1 when strata executes fewer); the callgrind files
# stay in $OUT (default a temporary directory, removed) for callgrind_annotate.
#
# Environment: STRATA_SERVER (default src/strata-server), N, WARM, OUT.
set -u
cd "$(dirname "$0")/../.." || exit 1
STRATA_SERVER=${STRATA_SERVER:-src/strata-server}
TESTS=${*:-"set get incr hset mset"}
WARM=${WARM:-20000}
keep=${OUT:+1}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
for tool in valgrind callgrind_control callgrind_annotate redis-server redis-benchmark redis-cli; do
  command -v "$tool" >/dev/null || { echo "bench-redis-instr: $tool not found (deps/install.sh)" >&2; exit 1; }
done
free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
vpid=""
trap '[ -n "$vpid" ] && kill -TERM "$vpid" 2>/dev/null; [ -z "$keep" ] && rm -rf "$OUT"' EXIT

# run <name> <test> <n>: prints the instructions of n requests.
run() {
  local port dir out=$OUT/$1-$2.cg
  port=$(free_port)
  dir=$(mktemp -d)
  if [ "$1" = strata ]; then
    valgrind --tool=callgrind --callgrind-out-file="$out" --instr-atstart=no \
      "$STRATA_SERVER" --port "$port" --dir "$dir" --appendfsync everysec >"$dir.log" 2>&1 &
  else
    valgrind --tool=callgrind --callgrind-out-file="$out" --instr-atstart=no \
      redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --appendonly yes \
      --appendfsync everysec --save "" >"$dir.log" 2>&1 &
  fi
  vpid=$!
  for _ in $(seq 600); do [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && break; sleep 0.2; done
  redis-benchmark -p "$port" -t "$2" -n "$WARM" -r 1000000 -c 50 -P 16 -q >/dev/null 2>&1
  callgrind_control -i on "$vpid" >/dev/null 2>&1
  redis-benchmark -p "$port" -t "$2" -n "$3" -r 1000000 -c 50 -P 16 -q >/dev/null 2>&1
  callgrind_control -i off "$vpid" >/dev/null 2>&1
  kill -TERM "$vpid"
  wait "$vpid" 2>/dev/null
  vpid=""
  rm -rf "$dir" "$dir.log"
  callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
}

printf '%-6s %14s %14s %8s\n' test "strata Ir/req" "redis Ir/req" ratio
line="redis/strata instruction ratios:"
for t in $TESTS; do
  n=${N:-50000}
  [ "$t" = mset ] && n=${N:-10000}
  s=$(run strata "$t" "$n")
  r=$(run redis "$t" "$n")
  ratio=$(awk -v s="$s" -v r="$r" 'BEGIN { printf "%.2f", r / s }')
  awk -v t="$t" -v s="$s" -v r="$r" -v n="$n" -v q="$ratio" \
    'BEGIN { printf "%-6s %14d %14d %8s\n", t, s / n, r / n, q }'
  line="$line $t=$ratio"
done
echo "$line"
