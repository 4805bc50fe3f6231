# bench-redis-tests.sh -- the redis-benchmark command line of each test of
# bench-redis.sh and bench-redis-instr.sh (sourced by both, so the two
# measure the same requests).
#
# bench_what port test: sets the array WHAT to redis-benchmark's arguments
# for <test> against the server on <port> (evalsha loads its script there
# first). Tests that are not listed are redis-benchmark's own -t names.
INCR_SCRIPT="return redis.call('incr', KEYS[1])"
HGETALL_KEYS=${HGETALL_KEYS:-100000}
bench_what() {
  local sha
  WHAT=(-t "$2" -r 1000000)
  case "$2" in
  evalsha)
    sha=$(redis-cli -p "$1" script load "$INCR_SCRIPT") || sha=none
    WHAT=(-r 1000000 evalsha "$sha" 1 "counter:__rand_int__")
    ;;
  setbit) WHAT=(-r 1000000 SETBIT "bits:__rand_int__" 1000 1) ;;
  pfadd) WHAT=(-r 10000 PFADD "hll:__rand_int__" __rand_int__) ;;
  hgetall) WHAT=(-r "$HGETALL_KEYS" hgetall "h:__rand_int__") ;;
  geoadd) WHAT=(-r 1000000 GEOADD geo "13.__rand_int__" "38.__rand_int__" "m:__rand_int__") ;;
  xadd) WHAT=(-r 1000 XADD "stream:__rand_int__" "*" f v) ;;
  publish) WHAT=(publish bench msg) ;;
  esac
}
