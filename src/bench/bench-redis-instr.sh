#!/usr/bin/env bash
# bench-redis-instr.sh -- server instructions per request, strata against
# redis-server, under the same redis-benchmark load: repeatable where
# bench-redis.sh's CPU times swing with the shared machine's load.
#
#   src/bench/bench-redis-instr.sh [test ...]     (default: set get incr hset mset)
#
# Tests are bench-redis.sh's (its -t names and custom command lines, from
# bench-redis-tests.sh). For each test and each server in turn: starts the
# server under valgrind --tool=callgrind with instrumentation off (strata
# with appendfsync everysec, redis-server with appendonly yes, everysec, no
# RDB), fills it (below), runs the test -n WARM (default 20000) to reach a
# steady state, turns instrumentation on, runs it -n N (default 50000; mset
# 10000), turns it off and stops the server. Every run uses -c 50 -P 16
# and the test's -r. So that every measured request does the work it does
# in bench-redis.sh, the fill gives the consuming tests enough to consume:
# lpop and rpop first LPUSH WARM + N + 1000 items onto mylist; spop first
# adds exactly WARM + N members element:<12 digits> to myset (the shape of
# sadd's), so that the measured pops take the set down to empty as
# bench-redis.sh's do (spop pops everything sadd added), each of strata's
# rewrites of a set popped down to half included; lrange_100 first pushes 10000 items
# and then measures only its LRANGE mylist 0 99 (redis-benchmark's own
# lrange_100 pushes inside the run), publish has one subscriber reading
# everything, evalsha loads its script. Prints
# instructions per request (every thread of the server) and their ratio
# redis/strata (above 1 when strata executes fewer); the callgrind files
# stay in $OUT (default a temporary directory, removed) for callgrind_annotate.
#
# CACHE=1 adds --cache-sim=yes and prints, beside instructions, the data
# cache misses per request: D1 (first level, reads + writes) and LL (reads
# + writes) -- as repeatable as the instruction counts, and what a
# memory-bound path costs that instructions do not show
# (`callgrind_annotate --show=Ir,D1mr,DLmr --sort=DLmr OUT/strata-set.cg`
# says where). The simulated LL is LL_CACHE (valgrind's --LL=size,assoc,line;
# default 2097152,16,64: one core's private L2 here), not the host's large
# shared L3, in which a whole memtable would fit and only first touches of
# memory would miss.
#
# Environment: STRATA_SERVER (default src/strata-server), N, WARM, OUT, CACHE,
# LL_CACHE.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=src/bench/bench-redis-tests.sh
. src/bench/bench-redis-tests.sh
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
spid=""
sim=()
[ -n "${CACHE:-}" ] && sim=(--cache-sim=yes --LL="${LL_CACHE:-2097152,16,64}")
trap '[ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null; [ -n "$vpid" ] && kill -TERM "$vpid" 2>/dev/null; [ -z "$keep" ] && rm -rf "$OUT"' EXIT

# bench port test n: runs n requests of test (bench_what's command line).
bench() {
  bench_what "$1" "$2"
  [ "$2" = lrange_100 ] && WHAT=(LRANGE mylist 0 99)
  redis-benchmark -p "$1" -n "$3" -c 50 -P 16 -q "${WHAT[@]}" >/dev/null 2>&1
}

# fill port test n: what test needs before its warm-up and n measured requests.
fill() {
  local _
  case "$2" in
  lpop | rpop) bench "$1" lpush $((WARM + $3 + 1000)) ;;
  zpopmin) bench "$1" zadd $((WARM + $3 + 1000)) ;;
  spop)
    /usr/bin/python3 - "$1" $((WARM + $3)) <<'PYEOF'
import sys, redis
r = redis.Redis(port=int(sys.argv[1]))
p = r.pipeline(transaction=False)
for i in range(int(sys.argv[2])):
    p.sadd("myset", "element:%012d" % (i * 7919 % 1000000007))
    if i % 1000 == 999:
        p.execute()
p.execute()
PYEOF
    ;;
  lrange_100) bench "$1" lpush 10000 ;;
  publish)
    redis-cli -p "$1" subscribe bench >/dev/null 2>&1 &
    spid=$!
    for _ in $(seq 100); do
      [ "$(redis-cli -p "$1" pubsub numsub bench | tail -1)" = 1 ] && break
      sleep 0.1
    done
    ;;
  esac
}

# run <name> <test> <n>: prints the instructions of n requests (with CACHE,
# then the D1 and LL data misses).
run() {
  local port dir out=$OUT/$1-$2.cg
  port=$(free_port)
  dir=$(mktemp -d)
  if [ "$1" = strata ]; then
    valgrind --tool=callgrind "${sim[@]}" --callgrind-out-file="$out" --instr-atstart=no \
      "$STRATA_SERVER" --port "$port" --dir "$dir" --appendfsync everysec >"$dir.log" 2>&1 &
  else
    valgrind --tool=callgrind "${sim[@]}" --callgrind-out-file="$out" --instr-atstart=no \
      redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --appendonly yes \
      --appendfsync everysec --save "" >"$dir.log" 2>&1 &
  fi
  vpid=$!
  for _ in $(seq 600); do [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && break; sleep 0.2; done
  fill "$port" "$2" "$3"
  bench "$port" "$2" "$WARM"
  callgrind_control -i on "$vpid" >/dev/null 2>&1
  bench "$port" "$2" "$3"
  callgrind_control -i off "$vpid" >/dev/null 2>&1
  [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
  spid=""
  kill -TERM "$vpid"
  wait "$vpid" 2>/dev/null
  vpid=""
  rm -rf "$dir" "$dir.log"
  # PROGRAM TOTALS: each count followed by its percentage.
  if [ -n "${CACHE:-}" ]; then
    callgrind_annotate --show=Ir,D1mr,D1mw,DLmr,DLmw "$out" 2>/dev/null |
      awk '/PROGRAM TOTALS/ { gsub(",", ""); print $1, $3 + $5, $7 + $9 }'
  else
    callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
  fi
}

if [ -n "${CACHE:-}" ]; then
  printf '%-6s %13s %12s %8s %9s %9s %7s %9s %9s %7s\n' test "strata Ir/req" "redis Ir/req" ratio \
    "strata D1" "redis D1" ratio "strata LL" "redis LL" ratio
else
  printf '%-6s %14s %14s %8s\n' test "strata Ir/req" "redis Ir/req" ratio
fi
line="redis/strata instruction ratios:"
dline="redis/strata D1 miss ratios:"
lline="redis/strata LL miss ratios:"
for t in $TESTS; do
  n=${N:-50000}
  [ "$t" = mset ] && n=${N:-10000}
  read -r s sd sl < <(run strata "$t" "$n")
  read -r r rd rl < <(run redis "$t" "$n")
  ratio=$(awk -v s="$s" -v r="$r" 'BEGIN { printf "%.2f", r / s }')
  line="$line $t=$ratio"
  if [ -n "${CACHE:-}" ]; then
    read -r dq lq < <(awk -v a="$sd" -v b="$rd" -v c="$sl" -v d="$rl" \
      'BEGIN { printf "%.2f %.2f\n", (a > 0 ? b / a : 0), (c > 0 ? d / c : 0) }')
    awk -v t="$t" -v s="$s" -v r="$r" -v n="$n" -v q="$ratio" -v sd="$sd" -v rd="$rd" \
      -v sl="$sl" -v rl="$rl" -v dq="$dq" -v lq="$lq" 'BEGIN {
      printf "%-6s %13d %12d %8s %9.1f %9.1f %7s %9.2f %9.2f %7s\n", t, s / n, r / n, q,
        sd / n, rd / n, dq, sl / n, rl / n, lq }'
    dline="$dline $t=$dq"
    lline="$lline $t=$lq"
  else
    awk -v t="$t" -v s="$s" -v r="$r" -v n="$n" -v q="$ratio" \
      'BEGIN { printf "%-6s %14d %14d %8s\n", t, s / n, r / n, q }'
  fi
done
echo "$line"
if [ -n "${CACHE:-}" ]; then
  echo "$dline"
  echo "$lline"
fi
