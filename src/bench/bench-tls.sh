#!/usr/bin/env bash
# bench-tls.sh -- what TLS costs: server CPU seconds (utime+stime from
# /proc/<pid>/stat) for redis-benchmark SET and GET over plain TCP and over
# TLS, strata and redis-server side by side, alternating, ROUNDS times.
#   src/bench/bench-tls.sh            (N=100000 requests per test, C=20 clients)
# Certificates come from a throwaway CA made with the openssl command line.
set -eu
cd "$(dirname "$0")/../.."
N=${N:-100000} C=${C:-20} ROUNDS=${ROUNDS:-2}
STRATA=${STRATA_SERVER:-$PWD/src/strata-server}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
ossl() { openssl "$@" >/dev/null 2>&1; }
ossl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/ca.key" -out "$tmp/ca.crt" -days 1 -subj /CN=bench-ca
ossl req -newkey rsa:2048 -nodes -keyout "$tmp/s.key" -out "$tmp/s.csr" -subj /CN=localhost
ossl x509 -req -in "$tmp/s.csr" -CA "$tmp/ca.crt" -CAkey "$tmp/ca.key" -CAcreateserial -out "$tmp/s.crt" -days 1
port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu() { awk '{print ($14+$15)/100}' "/proc/$1/stat"; }
tlsargs=(--tls-cert-file "$tmp/s.crt" --tls-key-file "$tmp/s.key" --tls-ca-cert-file "$tmp/ca.crt" --tls-auth-clients no)
one() { # kind
    local kind=$1 p t dir pid
    p=$(port); t=$(port); dir="$tmp/$kind"; rm -rf "$dir"; mkdir -p "$dir"
    if [ "$kind" = strata ]; then
        "$STRATA" --port "$p" --tls-port "$t" --dir "$dir" --logfile "$dir/log" "${tlsargs[@]}" &
    else
        redis-server --port "$p" --tls-port "$t" --dir "$dir" --save "" --logfile "$dir/log" "${tlsargs[@]}" &
    fi
    pid=$!
    for _ in $(seq 50); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.1; done
    for mode in plain tls; do
        local a=(-p "$p"); [ "$mode" = tls ] && a=(-p "$t" --tls --cacert "$tmp/ca.crt")
        local c0 c1; c0=$(cpu $pid)
        redis-benchmark "${a[@]}" -n "$N" -c "$C" -t set,get -q >/dev/null 2>&1
        c1=$(cpu $pid)
        printf '%-7s %-6s server CPU %6.2f s\n' "$kind" "$mode" "$(echo "$c1 - $c0" | bc)"
    done
    kill $pid; wait $pid 2>/dev/null || true
}
for _ in $(seq "$ROUNDS"); do one strata; one redis; done
