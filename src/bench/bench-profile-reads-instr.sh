#!/usr/bin/env bash
# bench-profile-reads-instr.sh -- server instructions per request of the
# profile workload's single-worker reads, strata against redis-server, under
# callgrind: the repeatable figure behind goal 4's CPU ratios.
#
#   src/bench/bench-profile-reads-instr.sh [get|top ...]   (default: get top)
#
# Loads PROFILES (default 100000) profile hashes shaped as the workload's
# (src/bench/profiles/workload.c) into each server, plain, without
# valgrind: strata with the four profile indexes, then DEBUG COMPACT (as the
# benchmark's stabilize step); redis-server with the sorted set idx:rep of
# driver_redis.c, then SAVE. Then, for each test and server, restarts the
# server on a copy of that data under valgrind --tool=callgrind with
# instrumentation off, sends WARM requests (default 0 for get: the read
# phase starts on a fresh server; 500 for top) from one connection, one at a
# time (-c 1), turns instrumentation on, sends N more (default PROFILES get:
# the read phase, whose first reads of each block decompress it; 3000 top)
# and prints instructions per request (every thread) and the
# ratio redis/strata (above 1: strata executes fewer).
#   get: HGETALL user:<random id> on both.
#   top: strata IDX.RANGE reputation LIMIT 0 100; redis-server ZRANGE
#        idx:rep - + BYLEX LIMIT 0 100 (driver_strata.c, driver_redis.c).
# CACHE=1 adds the cache simulation (LL = one core's 2 MB L2) and prints
# last-level misses per request too. The callgrind files stay in $OUT when
# it is set (else a temporary directory, removed).
#
# Environment: STRATA_SERVER (default src/strata-server), PROFILES, N, WARM,
# OUT, CACHE.
set -u
cd "$(dirname "$0")/../.." || exit 1
STRATA_SERVER=${STRATA_SERVER:-src/strata-server}
PROFILES=${PROFILES:-100000}
export PROFILES
TESTS=${*:-"get top"}
keep=${OUT:+1}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
for tool in valgrind callgrind_control callgrind_annotate redis-server redis-cli; do
  command -v "$tool" >/dev/null || { echo "bench-profile-reads-instr: $tool not found" >&2; exit 1; }
done
sim=()
[ -n "${CACHE:-}" ] && sim=(--cache-sim=yes --LL=2097152,16,64)
vpid=""
trap '[ -n "$vpid" ] && kill -TERM "$vpid" 2>/dev/null; [ -z "$keep" ] && rm -rf "$OUT"' EXIT
free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_up() { # port
  for _ in $(seq 600); do redis-cli -p "$1" ping 2>/dev/null | grep -q PONG && return 0; sleep 0.5; done
  return 1
}

# client port kind mode n seed: loads (mode load) or sends n requests.
client() {
  /usr/bin/python3 - "$@" <<'PYEOF'
import os, random, sys, redis
port, kind, mode, n, seed = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
r = redis.Redis(port=port)
rnd = random.Random(seed)
if mode == "load":
    C = ["US","DE","GB","FR","NL","SE","NO","DK","FI","ES","IT","PT","PL","CZ","TR","JP",
         "KR","SG","IN","BR","CA","AU","MX","AR","ZA","IL","IE","CH","AT","BE","RO","GR"]
    S = ["active", "suspended", "deleted", "pending"]
    T = ["storage engines", "distributed systems", "analytics", "developer tools", "backend services"]
    if kind == "strata":
        for d in ["email PREFIX user: UNIQUE SCHEMA email TAG",
                  "country_status PREFIX user: SCHEMA country TAG status TAG user_id NUMERIC",
                  "created_at PREFIX user: SCHEMA created_at NUMERIC user_id NUMERIC",
                  "reputation PREFIX user: SCHEMA reputation NUMERIC DESC user_id NUMERIC"]:
            r.execute_command("IDX.CREATE", *d.split())
    p = r.pipeline(transaction=False)
    for i in range(1, n + 1):
        rep = rnd.randrange(1000000)
        p.hset("user:%d" % i, mapping={
            "user_id": i, "display_name": "User %012d" % i,
            "email": "user%012d@example%02d.com" % (i, i % 97), "country": C[rnd.randrange(32)],
            "status": S[rnd.randrange(4)], "created_at": 1700000000000 + i * 1000 + rnd.randrange(997),
            "last_login": 1700000000000 + rnd.randrange(7776000000), "reputation": rep,
            "bio": "Profile %d prefers %s and has segment %04d." % (i, T[rnd.randrange(5)], rnd.randrange(10000))})
        if kind == "redis":
            p.zadd("idx:rep", {(1000000 - rep).to_bytes(8, "big") + i.to_bytes(8, "big"): 0})
        if i % 1000 == 0:
            p.execute()
    p.execute()
    if kind == "strata":
        r.execute_command("DEBUG", "COMPACT")
    else:
        r.save()
    sys.exit(0)
for _ in range(n):
    if mode == "get":
        r.execute_command("HGETALL", "user:%d" % rnd.randrange(1, int(os.environ["PROFILES"]) + 1))
    elif kind == "strata":
        r.execute_command("IDX.RANGE", "reputation", "LIMIT", "0", "100")
    else:
        r.execute_command("ZRANGE", "idx:rep", "-", "+", "BYLEX", "LIMIT", "0", "100")
PYEOF
}

# start kind dir port [valgrind args...]: the server on dir, in the background.
start() {
  local kind=$1 dir=$2 port=$3
  shift 3
  if [ "$kind" = strata ]; then
    "$@" "$STRATA_SERVER" --port "$port" --dir "$dir" --appendfsync everysec \
      --enable-debug-command yes >"$dir.log" 2>&1 &
  else
    "$@" redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save '' \
      --appendonly no >"$dir.log" 2>&1 &
  fi
  vpid=$!
  wait_up "$port" || { echo "bench-profile-reads-instr: $kind did not start ($dir.log)" >&2; exit 1; }
}

for kind in strata redis; do
  port=$(free_port)
  mkdir -p "$OUT/$kind.data"
  start "$kind" "$OUT/$kind.data" "$port" env
  client "$port" "$kind" load "$PROFILES" 1 || exit 1
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1
  wait "$vpid"
  vpid=""
done

for t in $TESTS; do
  declare -A per=()
  for kind in strata redis; do
    port=$(free_port)
    dir="$OUT/$kind.$t"
    rm -rf "$dir" && cp -a "$OUT/$kind.data" "$dir"
    cg="$OUT/$kind-$t.cg"
    start "$kind" "$dir" "$port" valgrind --tool=callgrind "${sim[@]}" \
      --callgrind-out-file="$cg" --instr-atstart=no
    if [ "$t" = get ]; then warm=${WARM:-0} n=${N:-$PROFILES}; else warm=${WARM:-500} n=${N:-3000}; fi
    client "$port" "$kind" "$t" "$warm" 2
    callgrind_control -i on "$vpid" >/dev/null 2>&1
    client "$port" "$kind" "$t" "$n" 3
    callgrind_control -i off "$vpid" >/dev/null 2>&1
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1
    wait "$vpid"
    vpid=""
    tot=$(callgrind_annotate "$cg" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
    per[$kind]=$((tot / n))
    line="$t $kind: ${per[$kind]} instructions per request"
    if [ -n "${CACHE:-}" ]; then
      ll=$(callgrind_annotate --show=DLmr,DLmw "$cg" 2>/dev/null |
        awk -v n="$n" '/PROGRAM TOTALS/ {a=$1; b=$3; gsub(",", "", a); gsub(",", "", b); printf "%.1f", (a + b) / n}')
      line="$line, $ll LL misses"
    fi
    echo "$line"
  done
  awk -v r="${per[redis]}" -v s="${per[strata]}" -v t="$t" 'BEGIN { printf "%s redis/strata: %.2f\n", t, r / s }'
  unset per
done
