#!/usr/bin/env bash
# bench-redis.sh -- `make bench-redis`: redis-benchmark against strata-server
# and Debian's redis-server side by side, in the same run.
#
#   src/bench/bench-redis.sh [--tests set,get,...] [--clients C] [--pipeline P]
#                            [--fsync everysec|always] [--runs R]
#
# Starts both on free ports with temporary directories -- strata with
# appendfsync <fsync>, redis-server with appendonly yes, the same appendfsync
# and no RDB snapshots -- then runs, for each test in turn, first against
# strata and then against redis:
#   redis-benchmark -t <test> -n $BENCH_N -r 1000000 -c <C> -P <P> -q --csv
# Alternating test by test (rather than one -t set,get,... run per server)
# keeps both servers under the same machine noise; each test still sees the
# data the earlier tests left, exactly as in a single run (spop pops from the
# set sadd filled). --runs R repeats each test R times, alternating again,
# and reports the totals.
#
# Tests are redis-benchmark's -t names, plus custom command lines
# (redis-benchmark puts a random 12-digit number below -r in place of each
# __rand_int__; a bit offset cannot be one, it has leading zeros):
#   evalsha   EVALSHA of a script doing one INCR of a random key (SCRIPT LOAD
#             on both servers first)
#   setbit    SETBIT bits:__rand_int__ 1000 1, -r 1000000: 126-byte bitmaps,
#             about two thirds of the requests create one
#   pfadd     PFADD hll:__rand_int__ __rand_int__, -r 10000: 10_000 sparse
#             HyperLogLogs of ~100 elements, nearly every add changes one
#   geoadd    GEOADD geo 13.__rand_int__ 38.__rand_int__ m:__rand_int__, on
#             one key as a geo index usually is (each __rand_int__ is drawn
#             on its own, so a place is a random point within 1e-6 degrees of
#             13,38 and its name random below -r)
#   zadd and zpopmin are redis-benchmark's own: ZADD myzset <random score>
#             element:__rand_int__ (one key, growing to ~0.63 x BENCH_N
#             members), then ZPOPMIN myzset until it is empty and on (nil
#             replies).
#   xadd      XADD stream:__rand_int__ * f v, -r 1000: 1000 streams of ~1000
#             entries, each XADD appends one with a new id
#   publish   PUBLISH bench <3 bytes> with one subscriber (a redis-cli that
#             reads everything) on each server, so every request also
#             delivers a message
#   hgetall   HGETALL of random keys h:<12 digits> among 100_000 hashes of 10
#             fields (~200 bytes), loaded into both servers before the first
#             test (not in the default list)
#
# The table also gives each server's CPU time per request (user + system of
# the whole server process, every thread, from /proc/<pid>/stat, which
# machine noise disturbs far less than wall time), read after the server has
# been idle for 0.3 s before and after each run so that background work a
# run causes (flushes, compactions, fsyncs) is charged to it, and their
# ratio, redis/strata: above 1 when strata spends less.
#
# Prints a table of requests per second and strata/redis per test; the last
# two lines are
#   redis/strata CPU-time ratios: set=A get=B ...
#   strata/redis ratios: set=A get=B incr=C hset=D mset=E sadd=F spop=G evalsha=H setbit=I pfadd=J publish=K lpush=...
#   ... lrange_100=O zadd=P zpopmin=Q geoadd=R
# (spop pops from the set sadd filled, as in one redis-benchmark run).
# The list tests are redis-benchmark's own (-t): LPUSH/RPUSH/LPOP/RPOP on the
# one key "mylist" (lpush and rpush grow it to 2 x BENCH_N items, lpop and
# rpop empty it again), and lrange_100, which first pushes BENCH_N items
# (redis-benchmark's "LPUSH (needed to benchmark LRANGE)" step, not
# reported) and then times LRANGE mylist 0 99; the last CSV line is the one
# reported.
# Stops both servers and removes the directories, also on failure or ^C.
#
# Environment: BINDIR (where strata-server is; default src), STRATA_SERVER
# (overrides the path), BENCH_N (requests per test; default 1000000),
# BENCH_TIMEOUT (seconds per redis-benchmark run; default 900), BENCH_TESTS
# (the tests to run, default all of the above).
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=src/bench/bench-redis-tests.sh
. src/bench/bench-redis-tests.sh
BINDIR=${BINDIR:-src}
STRATA_SERVER=${STRATA_SERVER:-$BINDIR/strata-server}
N=${BENCH_N:-1000000}
TIMEOUT=${BENCH_TIMEOUT:-900}
TESTS=${BENCH_TESTS:-"set get incr hset mset sadd spop evalsha setbit pfadd publish lpush rpush lpop rpop lrange_100 zadd zpopmin geoadd xadd"}
CLIENTS=50
PIPELINE=16
FSYNC=everysec
RUNS=1
PY=/usr/bin/python3

die() { echo "bench-redis: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --tests) TESTS=${2//,/ }; shift 2 ;;
    --clients) CLIENTS=$2; shift 2 ;;
    --pipeline) PIPELINE=$2; shift 2 ;;
    --fsync) FSYNC=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
for v in "$CLIENTS" "$PIPELINE" "$RUNS" "$N"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || die "counts must be positive numbers, not '$v'"
done
case "$FSYNC" in everysec | always) ;; *) die "--fsync is everysec or always, not '$FSYNC'" ;; esac

for tool in redis-server redis-benchmark redis-cli; do
  command -v "$tool" >/dev/null || die "$tool not found (deps/install.sh installs redis-server and redis-tools)"
done
[ -x "$STRATA_SERVER" ] || die "no strata-server at $STRATA_SERVER (make first, or set STRATA_SERVER)"

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
"$STRATA_SERVER" --port "$sport" --dir "$tmp/strata" --appendfsync "$FSYNC" >"$tmp/strata.log" 2>&1 &
pids+=($!)
wait_ping strata "$sport" "${pids[0]}"
redis-server --port "$rport" --bind 127.0.0.1 --dir "$tmp/redis" --appendonly yes \
  --appendfsync "$FSYNC" --save "" >"$tmp/redis.log" 2>&1 &
pids+=($!)
wait_ping redis "$rport" "${pids[1]}"

# cpu_ticks pid: user + system clock ticks of the whole process so far.
cpu_ticks() {
  # Fields after the parenthesised command name: utime is the 12th, stime the 13th.
  sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}
HZ=$(getconf CLK_TCK)

# load_hashes port: the hgetall test's 100_000 hashes of 10 fields.
load_hashes() {
  $PY - "$1" "$HGETALL_KEYS" <<'PYEOF' || die "loading the hgetall hashes failed"
import sys, redis
r = redis.Redis(port=int(sys.argv[1]))
p = r.pipeline(transaction=False)
for i in range(int(sys.argv[2])):
    p.hset("h:%012d" % i, mapping={"f%d" % j: "value-%d-%012d" % (j, i) for j in range(10)})
    if i % 1000 == 999:
        p.execute()
p.execute()
PYEOF
}

# run_bench port test: sets RPS to the requests per second redis-benchmark
# reports (nothing when the run failed). The run goes in the background and
# the shell waits for it, so that ^C or SIGTERM reach the traps at once
# (timeout puts redis-benchmark in a process group of its own; cleanup stops
# it).
run_bench() {
  bench_what "$1" "$2"
  timeout "$TIMEOUT" redis-benchmark -p "$1" -n "$N" -c "$CLIENTS" -P "$PIPELINE" -q --csv \
    "${WHAT[@]}" >"$tmp/bench.csv" 2>>"$tmp/benchmark.err" &
  bench_pid=$!
  wait "$bench_pid"
  bench_pid=""
  RPS=$(awk -F'","' 'NR > 1 && $1 ~ /^"[A-Za-z]/ { rps = $2 } END { print rps }' "$tmp/bench.csv")
}

# settle pid: waits (up to 30 s) until the server has used no CPU for 0.3 s,
# so background work a run caused (flushes, compactions, fsyncs) is charged
# to that run and not to the next.
settle() {
  local a b _
  a=$(cpu_ticks "$1")
  for _ in $(seq 100); do
    sleep 0.3
    b=$(cpu_ticks "$1")
    [ "$a" = "$b" ] && return
    a=$b
  done
}

# measure port pid test: RPS as run_bench, TICKS the server's CPU ticks for it.
measure() {
  local t0
  settle "$2"
  t0=$(cpu_ticks "$2")
  run_bench "$1" "$3"
  settle "$2"
  TICKS=$(($(cpu_ticks "$2") - t0))
}

case " $TESTS " in *" hgetall "*) load_hashes "$sport"; load_hashes "$rport" ;; esac

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

echo "redis-benchmark -n $N -r 1000000 (pfadd: -r 10000; xadd: -r 1000) -c $CLIENTS" \
  "-P $PIPELINE ($RUNS run(s) per test): strata on port $sport (appendfsync $FSYNC)," \
  "redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') on port $rport" \
  "(appendonly yes, appendfsync $FSYNC)"
printf '%-8s %13s %13s %7s %10s %10s %9s\n' test "strata req/s" "redis req/s" ratio \
  "strata us" "redis us" "cpu ratio"
summary="strata/redis ratios:"
cpu_summary="redis/strata CPU-time ratios:"
failed=0
for t in $TESTS; do
  # Totals over the runs: seconds of wall time and ticks of CPU per server.
  swall=0 rwall=0 sticks=0 rticks=0 ok=1
  for _ in $(seq "$RUNS"); do
    measure "$sport" "${pids[0]}" "$t"
    [ -n "$RPS" ] || { ok=0; break; }
    swall=$(awk -v a="$swall" -v n="$N" -v r="$RPS" 'BEGIN { print a + n / r }')
    sticks=$((sticks + TICKS))
    measure "$rport" "${pids[1]}" "$t"
    [ -n "$RPS" ] || { ok=0; break; }
    rwall=$(awk -v a="$rwall" -v n="$N" -v r="$RPS" 'BEGIN { print a + n / r }')
    rticks=$((rticks + TICKS))
  done
  if [ "$ok" -eq 0 ]; then
    failed=1
    printf '%-8s %14s\n' "$t" failed
    summary+=" $t=failed"
    cpu_summary+=" $t=failed"
    continue
  fi
  read -r s r ratio sus rus cratio < <(awk -v n="$((N * RUNS))" -v sw="$swall" -v rw="$rwall" \
    -v st="$sticks" -v rt="$rticks" -v hz="$HZ" 'BEGIN {
      s = n / sw; r = n / rw; sus = st * 1e6 / hz / n; rus = rt * 1e6 / hz / n
      printf "%.0f %.0f %.2f %.2f %.2f %.2f\n", s, r, s / r, sus, rus, (sus > 0 ? rus / sus : 0) }')
  printf '%-8s %13s %13s %7s %10s %10s %9s\n' "$t" "$s" "$r" "$ratio" "$sus" "$rus" "$cratio"
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
