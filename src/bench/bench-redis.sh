#!/usr/bin/env bash
# bench-redis.sh -- `make bench-redis`: redis-benchmark against strata-server
# and Debian's redis-server side by side, in the same run (issue 3).
#
# Starts both on free ports with temporary directories -- strata with
# appendfsync everysec, redis-server with appendonly yes, appendfsync everysec
# and no RDB snapshots -- then runs, for each test in turn, first against
# strata and then against redis:
#   redis-benchmark -t <test> -n $BENCH_N -r 1000000 -c 50 -P 16 -q --csv
# evalsha is a custom command: EVALSHA of a script doing one INCR of a random
# key (SCRIPT LOAD on both servers first).
# Alternating test by test (rather than one -t set,get,incr,hset,mset,sadd,spop run per
# server) keeps both servers under the same machine noise; each test still
# sees the data the earlier tests left, exactly as in a single run.
# setbit and pfadd are command lines (redis-benchmark puts a random 12-digit
# number below -r in place of each __rand_int__; a bit offset cannot be one,
# it has leading zeros):
#   SETBIT bits:__rand_int__ 1000 1   -r 1000000: 126-byte bitmaps, about
#                                     two thirds of the requests create one
#   PFADD hll:__rand_int__ __rand_int__   -r 10000: 10_000 sparse HyperLogLogs
#                                     of ~100 elements, nearly every add changes one
# The table also gives each server's CPU time per request (utime + stime
# from /proc, which machine noise disturbs far less than wall time) and
# their ratio, redis/strata: above 1 when strata spends less.
# `publish` is the custom command PUBLISH bench <3 bytes> with one subscriber
# (a redis-cli that reads everything) on each server, so every request also
# delivers a message.
# Prints a table of requests per second and strata/redis per test; the last
# line is
#   strata/redis ratios: set=A get=B incr=C hset=D mset=E sadd=F spop=G evalsha=H setbit=I pfadd=J publish=K
# (spop pops from the set sadd filled, as in one redis-benchmark run).
# Stops both servers and removes the directories, also on failure or ^C.
#
# Environment: BINDIR (where strata-server is; default src), STRATA_SERVER
# (overrides the path), BENCH_N (requests per test; default 1000000),
# BENCH_TIMEOUT (seconds per redis-benchmark run; default 900).
set -u
cd "$(dirname "$0")/../.." || exit 1
BINDIR=${BINDIR:-src}
STRATA_SERVER=${STRATA_SERVER:-$BINDIR/strata-server}
N=${BENCH_N:-1000000}
TIMEOUT=${BENCH_TIMEOUT:-900}
TESTS="set get incr hset mset sadd spop evalsha setbit pfadd publish"
INCR_SCRIPT="return redis.call('incr', KEYS[1])"
PY=/usr/bin/python3

die() { echo "bench-redis: $*" >&2; exit 1; }

for tool in redis-server redis-benchmark redis-cli; do
  command -v "$tool" >/dev/null || die "$tool not found (deps/install.sh installs redis-server and redis-tools)"
done
[ -x "$STRATA_SERVER" ] || die "no strata-server at $STRATA_SERVER (make first, or set STRATA_SERVER)"
[[ "$N" =~ ^[1-9][0-9]*$ ]] || die "BENCH_N must be a positive number, not '$N'"

tmp=$(mktemp -d) || die "mktemp failed"
pids=()      # the two servers
bench_pid="" # the redis-benchmark run in progress
# shellcheck disable=SC2317  # called through the EXIT trap
cleanup() {
  local p _
  [ -n "$bench_pid" ] && kill -TERM "$bench_pid" 2>/dev/null
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  $PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_ping name port pid: waits up to 20 s for PONG.
wait_ping() {
  local _
  for _ in $(seq 200); do
    [ "$(redis-cli -p "$2" ping 2>/dev/null)" = PONG ] && return 0
    kill -0 "$3" 2>/dev/null || { tail -5 "$tmp/$1.log" >&2; die "$1 exited at startup"; }
    sleep 0.1
  done
  tail -5 "$tmp/$1.log" >&2
  die "$1 did not answer PING on port $2"
}

mkdir -p "$tmp/strata" "$tmp/redis"
sport=$(free_port) || die "no free port"
rport=$(free_port) || die "no free port"
"$STRATA_SERVER" --port "$sport" --dir "$tmp/strata" --appendfsync everysec >"$tmp/strata.log" 2>&1 &
pids+=($!)
wait_ping strata "$sport" "${pids[0]}"
redis-server --port "$rport" --bind 127.0.0.1 --dir "$tmp/redis" --appendonly yes \
  --appendfsync everysec --save "" >"$tmp/redis.log" 2>&1 &
pids+=($!)
wait_ping redis "$rport" "${pids[1]}"

# run_bench port test pid: sets RPS to the requests per second redis-benchmark
# reports, or to nothing when the run failed, and CPU_US to the server's CPU
# microseconds per request. The run goes in the background
# and the shell waits for it, so that ^C or SIGTERM reach the traps at once
# (timeout puts redis-benchmark in a process group of its own; cleanup stops
# it).
run_bench() {
  local what=(-t "$2" -r 1000000)
  case "$2" in
  evalsha)
    local sha
    sha=$(redis-cli -p "$1" script load "$INCR_SCRIPT") || sha=none
    what=(-r 1000000 evalsha "$sha" 1 "counter:__rand_int__")
    ;;
  setbit) what=(-r 1000000 SETBIT "bits:__rand_int__" 1000 1) ;;
  pfadd) what=(-r 10000 PFADD "hll:__rand_int__" __rand_int__) ;;
  publish) what=(publish bench msg) ;;
  esac
  timeout "$TIMEOUT" redis-benchmark -p "$1" -n "$N" -c 50 -P 16 -q --csv "${what[@]}" \
    >"$tmp/bench.csv" 2>>"$tmp/benchmark.err" &
  local cpu0
  cpu0=$(cpu_ticks "$3")
  bench_pid=$!
  wait "$bench_pid"
  bench_pid=""
  RPS=$(awk -F'","' 'NR > 1 && $1 ~ /^"[A-Za-z]/ { print $2; exit }' "$tmp/bench.csv")
  CPU_US=$(awk -v a="$cpu0" -v b="$(cpu_ticks "$3")" -v hz="$(getconf CLK_TCK)" -v n="$N" \
    'BEGIN { printf "%.2f", (b - a) * 1e6 / hz / n }')
}

# cpu_ticks pid: user + system clock ticks the process has used.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

fmt() { if [ -n "$1" ]; then printf '%.0f' "$1"; else echo failed; fi; }

# One subscriber of channel "bench" on each server for the publish test.
for port in "$sport" "$rport"; do
  redis-cli -p "$port" subscribe bench >/dev/null 2>&1 &
  pids+=($!)
done
for port in "$sport" "$rport"; do
  for _ in $(seq 50); do
    [ "$(redis-cli -p "$port" pubsub numsub bench | tail -1)" = 1 ] && break
    sleep 0.1
  done
done

echo "redis-benchmark -n $N -r 1000000 (setbit, pfadd: -r 10000) -c 50 -P 16: strata on port $sport (appendfsync everysec)," \
  "redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') on port $rport" \
  "(appendonly yes, appendfsync everysec)"
printf '%-6s %14s %14s %8s %10s %10s %9s\n' test "strata req/s" "redis req/s" ratio \
  "strata us" "redis us" "cpu ratio"
summary="strata/redis ratios:"
cpu_summary="redis/strata CPU-time ratios:"
failed=0
for t in $TESTS; do
  run_bench "$sport" "$t" "${pids[0]}"
  s=$RPS
  scpu=$CPU_US
  run_bench "$rport" "$t" "${pids[1]}"
  r=$RPS
  rcpu=$CPU_US
  if [ -z "$s" ] || [ -z "$r" ]; then
    failed=1
    printf '%-6s %14s %14s %8s\n' "$t" "$(fmt "$s")" "$(fmt "$r")" "-"
    summary+=" $t=failed"
    continue
  fi
  ratio=$(awk -v a="$s" -v b="$r" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
  cratio=$(awk -v a="$scpu" -v b="$rcpu" 'BEGIN { printf "%.2f", (a > 0 ? b / a : 0) }')
  printf '%-6s %14.0f %14.0f %8s %10s %10s %9s\n' "$t" "$s" "$r" "$ratio" "$scpu" "$rcpu" "$cratio"
  summary+=" $t=$ratio"
  cpu_summary+=" $t=$cratio"
done
if [ "$failed" -ne 0 ] && [ -s "$tmp/benchmark.err" ]; then
  echo "redis-benchmark errors:" >&2
  tail -5 "$tmp/benchmark.err" >&2
fi
kill -0 "${pids[0]}" 2>/dev/null || { echo "bench-redis: strata-server died; its log:" >&2; tail -20 "$tmp/strata.log" >&2; failed=1; }
for port in "$sport" "$rport"; do # a subscriber that fell behind was dropped: say so
  [ "$(redis-cli -p "$port" pubsub numsub bench 2>/dev/null | tail -1)" = 1 ] ||
    echo "bench-redis: the subscriber on port $port was disconnected during publish" >&2
done
echo "$cpu_summary"
echo "$summary"
exit "$failed"
