#!/usr/bin/env bash
# Runs units of Redis's own test suite in external mode against strata and
# against redis-server, side by side, and prints per unit how many tests
# passed ([ok]) and failed ([err] or an exception) on each.
#
#   REDIS_TESTS=/path/to/redis-7.0.15 tests/redis-units.sh [unit ...]
#
# REDIS_TESTS is a copy of Redis's repository at tag 7.0.15 (its tests/
# and runtest are used as they are; nothing of it is part of strata).
# Without REDIS_TESTS the script says it skipped and exits 0, so it can sit
# beside make test without being part of it. Units default to the list
# below; pass names such as unit/type/list to run some. Each unit runs
# against a fresh server of each kind (a unit that kills a server does not
# spoil the next). Logs and the names of the failed tests go to
# $OUT (default build/redis-units/): <unit>.<server>.log and .failed;
# <unit>.only-redis lists the tests that pass on redis-server and not on
# strata. Exit status 0 when strata passes every test redis-server passes.
# REDIS_UNITS_ARGS adds runtest options, e.g. --durable to keep a unit
# going past a test that dies on a command strata does not have yet.
set -u
cd "$(dirname "$0")/.."
if [ -z "${REDIS_TESTS:-}" ] || [ ! -x "$REDIS_TESTS/runtest" ]; then
    echo "redis-units: skipped (set REDIS_TESTS to a copy of redis/redis at 7.0.15)"
    exit 0
fi
BINDIR=${BINDIR:-src}
STRATA=${STRATA_SERVER:-$PWD/$BINDIR/strata-server}
REDIS=${REDIS_SERVER:-/usr/bin/redis-server}
OUT=${OUT:-$PWD/build/redis-units}
UNIT_TIMEOUT=${UNIT_TIMEOUT:-900}
mkdir -p "$OUT"
UNITS=("$@")
[ ${#UNITS[@]} -eq 0 ] && UNITS=(
    unit/type/string unit/type/incr unit/type/hash unit/type/list unit/type/set unit/type/zset
    unit/keyspace unit/expire unit/multi unit/protocol unit/scan unit/info-command unit/other
    unit/type/stream unit/type/stream-cgroups unit/bitops unit/bitfield unit/hyperloglog
    unit/geo unit/dump unit/sort unit/scripting unit/functions unit/pubsub unit/pubsubshard
    unit/info unit/slowlog unit/latency-monitor unit/introspection unit/introspection-2
    unit/acl unit/acl-v2 unit/auth unit/querybuf unit/limits unit/quit unit/tracking)

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_server() { # kind dir port -> pid on stdout
    local kind=$1 dir=$2 port=$3
    if [ "$kind" = strata ]; then
        "$STRATA" --port "$port" --dir "$dir" --logfile "$dir/server.log" >/dev/null 2>&1 &
    else
        "$REDIS" --port "$port" --dir "$dir" --save "" --appendonly no \
            --logfile "$dir/server.log" --enable-debug-command yes >/dev/null 2>&1 &
    fi
    echo $!
}

wait_ready() { # port
    for _ in $(seq 1 100); do
        redis-cli -p "$1" ping 2>/dev/null | grep -q PONG && return 0
        sleep 0.1
    done
    return 1
}

run_unit() { # kind unit -> "ok err" on stdout
    local kind=$1 unit=$2 tag dir port pid log
    tag=$(echo "$unit" | tr '/' '_')
    dir=$(mktemp -d)
    port=$(free_port)
    pid=$(start_server "$kind" "$dir" "$port")
    log="$OUT/$tag.$kind.log"
    if ! wait_ready "$port"; then
        echo "server did not start" >"$log"
    else
        (cd "$REDIS_TESTS" && timeout "$UNIT_TIMEOUT" ./runtest --host 127.0.0.1 --port "$port" \
            --single "$unit" --ignore-encoding --ignore-digest --tags -needs:repl \
            --tags -needs:debug --tags -needs:config-maxmemory --clients 1 --timeout 120 \
            ${REDIS_UNITS_ARGS:-}) \
            >"$log" 2>&1
    fi
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rm -rf "$dir"
    # Strip colour codes, then count outcomes; an exception ends the unit.
    sed -i 's/\x1b\[[0-9;]*m//g' "$log"
    grep -E '^\[ok\]: ' "$log" | sed 's/^\[ok\]: //; s/ ([0-9]* ms)$//' | sort -u >"$OUT/$tag.$kind.passed"
    grep -E '^\[err\]: |^\[exception\]' "$log" | sed 's/^\[err\]: //' >"$OUT/$tag.$kind.failed"
    echo "$(wc -l <"$OUT/$tag.$kind.passed") $(wc -l <"$OUT/$tag.$kind.failed")"
}

printf '%-28s %14s %14s %12s\n' unit "strata ok/err" "redis ok/err" "only-redis"
status=0
for u in "${UNITS[@]}"; do
    tag=$(echo "$u" | tr '/' '_')
    read -r s_ok s_err < <(run_unit strata "$u")
    read -r r_ok r_err < <(run_unit redis "$u")
    comm -13 "$OUT/$tag.strata.passed" "$OUT/$tag.redis.passed" >"$OUT/$tag.only-redis"
    missing=$(wc -l <"$OUT/$tag.only-redis")
    [ "$missing" -gt 0 ] && status=1
    printf '%-28s %8s/%-5s %8s/%-5s %12s\n' "$u" "$s_ok" "$s_err" "$r_ok" "$r_err" "$missing"
done
exit $status
