#!/usr/bin/env bash
# Installs the Debian packages strata needs to build, test and benchmark.
# Does nothing when they are all present, so `make test` can call it every time.
set -eu
PKGS="build-essential pkg-config libzstd-dev libxxhash-dev libjemalloc-dev libhiredis-dev
      librocksdb-dev libsqlite3-dev libmariadb-dev mariadb-server redis-server redis-tools
      python3-redis redis-sentinel iproute2 clang libclang-rt-14-dev
      liblua5.1-0-dev lua-cjson-dev lua-bitop-dev libstemmer-dev libssl-dev openssl valgrind"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps/install.sh: installing:$missing"
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
# Debian starts the services it installs; the tests and benchmarks start their own
# instances on free ports, so stop the system-wide ones to keep the machine quiet.
for s in redis-server redis-sentinel mariadb; do
  $SUDO systemctl stop "$s" >/dev/null 2>&1 || $SUDO service "$s" stop >/dev/null 2>&1 || true
done
exit 0
