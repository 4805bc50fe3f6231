#!/usr/bin/env bash
# bench-bitmap-512mb.sh -- what one 512 MB bitmap costs: SETBIT k 4294967295 1
# (which makes a 512 MB string, as in Redis), then N more SETBITs at random
# offsets below it, then GETBIT, BITCOUNT and a restart, on strata-server and
# on Debian's redis-server in turn (strata with appendfsync everysec,
# redis-server with appendonly yes, appendfsync everysec, no RDB).
#
#   src/bench/bench-bitmap-512mb.sh [N]        (N defaults to 100)
#
# For each step it prints the wall time, the server's CPU time (utime +
# stime from /proc/<pid>/stat, all threads), its resident memory after the
# step and at its peak (VmRSS, VmHWM), the bytes it made the kernel write
# to storage (/proc/<pid>/io write_bytes) and the size of its data
# directory. Not part of make test (redis-server needs 512 MB; strata keeps
# the bitmap in 1 KiB chunks, so its SETBITs each write one chunk).
#
# Environment: BINDIR (where strata-server is; default src), STRATA_SERVER.
set -u
cd "$(dirname "$0")/../.." || exit 1
BINDIR=${BINDIR:-src}
STRATA_SERVER=${STRATA_SERVER:-$BINDIR/strata-server}
N=${1:-100}
PY=/usr/bin/python3
[ -x "$STRATA_SERVER" ] || { echo "no strata-server at $STRATA_SERVER" >&2; exit 1; }
[[ "$N" =~ ^[0-9]+$ ]] || { echo "N must be a number" >&2; exit 1; }

tmp=$(mktemp -d) || exit 1
pid=""
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
hz=$(getconf CLK_TCK)

start() { # kind
  if [ "$1" = strata ]; then
    "$STRATA_SERVER" --port "$port" --dir "$tmp/$1" --appendfsync everysec >"$tmp/$1.log" 2>&1 &
  else
    redis-server --port "$port" --bind 127.0.0.1 --dir "$tmp/$1" --appendonly yes \
      --appendfsync everysec --save "" >"$tmp/$1.log" 2>&1 &
  fi
  pid=$!
  for _ in $(seq 600); do
    [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && return 0
    sleep 0.1
  done
  echo "$1 did not start" >&2
  exit 1
}

stop() {
  redis-cli -p "$port" shutdown >/dev/null 2>&1
  wait "$pid" 2>/dev/null
  pid=""
}

ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
wbytes() { awk '/^write_bytes/ { print $2 }' "/proc/$pid/io"; }
kb() { awk -v k="$1" '$1 == k ":" { print $2 }' "/proc/$pid/status"; }
now() { date +%s.%N; }

# step name t0 c0 w0: prints one line for what happened since (t0, c0, w0).
step() {
  printf '%-8s %-24s %9.2f %9.2f %9.0f %9.0f %10.0f %8s\n' "$kind" "$1" \
    "$(awk -v a="$2" -v b="$(now)" 'BEGIN { print b - a }')" \
    "$(awk -v a="$3" -v b="$(ticks)" -v hz="$hz" 'BEGIN { print (b - a) / hz }')" \
    "$(awk -v k="$(kb VmRSS)" 'BEGIN { print k / 1024 }')" \
    "$(awk -v k="$(kb VmHWM)" 'BEGIN { print k / 1024 }')" \
    "$(awk -v a="$4" -v b="$(wbytes)" 'BEGIN { print (b - a) / 1048576 }')" \
    "$(du -sm "$tmp/$kind" | cut -f1)M"
}

printf '%-8s %-24s %9s %9s %9s %9s %10s %8s\n' server step "wall s" "cpu s" "rss MB" \
  "peak MB" "written MB" "dir"
for kind in strata redis; do
  mkdir -p "$tmp/$kind"
  start "$kind"
  t0=$(now) c0=$(ticks) w0=$(wbytes)
  redis-cli -p "$port" setbit big 4294967295 1 >/dev/null
  step "setbit 4294967295 1" "$t0" "$c0" "$w0"
  t0=$(now) c0=$(ticks) w0=$(wbytes)
  RANDOM=7
  for _ in $(seq "$N"); do
    redis-cli -p "$port" setbit big $(((RANDOM << 15 | RANDOM) << 2)) 1 >/dev/null
  done
  step "$N x setbit (random)" "$t0" "$c0" "$w0"
  t0=$(now) c0=$(ticks) w0=$(wbytes)
  redis-cli -p "$port" getbit big 4294967295 >/dev/null
  step "getbit" "$t0" "$c0" "$w0"
  t0=$(now) c0=$(ticks) w0=$(wbytes)
  count=$(redis-cli -p "$port" bitcount big)
  step "bitcount = $count" "$t0" "$c0" "$w0"
  t0=$(now)
  stop
  start "$kind"
  step "restart" "$t0" 0 0 # the new process's CPU and writes since it started
  stop
  rm -rf "${tmp:?}/$kind"
done
