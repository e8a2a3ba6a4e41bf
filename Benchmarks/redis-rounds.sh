#!/usr/bin/env bash
# RedisTier against redis-benchmark in alternating rounds on one freshly started redis-server:
# in each round, each lane runs right after its baseline, so that the ratio compares the two
# under the same load of this (noisy, shared) machine. Prints each round's ratios, then their
# medians: the figures of the Redis rows in Benchmarks/README.md.
#
#   redis-rounds.sh [rounds (5)] [seconds per tier lane (3)]
#
# Lanes (RedisRoundTrips --affinity --only LANE, on the connection's event loop), and baselines:
#   get     GET of 1 KiB, one at a time          redis-benchmark -t get -d 1024 -c 1
#   set     SET of 1 KiB, one at a time          redis-benchmark -t set -d 1024 -c 1
#   get16   GET, 16 tasks on one connection      redis-benchmark -t get -d 1024 -c 1 -P 16
#   mget16  entries(forKeys:) of 16 keys (MGET)  redis-benchmark -c 1 MGET of the same 16 keys
# and the first three again over TLS with a password (tls-get, tls-set, tls-get16), against the TLS
# server scripts/redis-servers starts, redis-benchmark with --tls --cacert -a.
set -euo pipefail
cd "$(dirname "$0")"
rounds=${1:-5}
seconds=${2:-3}
dir=$(mktemp -d)
trap '../scripts/redis-servers stop "$dir" >/dev/null 2>&1 || true; rm -rf "$dir" || true' EXIT
eval "$(../scripts/redis-servers start "$dir")"
port=${TIERCACHE_REDIS_URL##*:}
tls_port=${TIERCACHE_REDIS_TLS_URL##*:}
tls_password=${TIERCACHE_REDIS_TLS_URL#rediss://:}
tls_password=${tls_password%@*}
swift build -c release --product RedisRoundTrips >&2
tier="$(swift build -c release --show-bin-path)/RedisRoundTrips"
keys=$(for i in $(seq 0 15); do printf 'roundtrips:key:%d ' "$i"; done)

# requests/s of one redis-benchmark run (its last, summary line)
baseline() {
    redis-benchmark -p "$port" -c 1 -q "$@" | tr '\r' '\n' | grep "requests per second" | tail -1 | sed -E 's/.*: ([0-9.]+) requests per second.*/\1/'
}
tls_baseline() {
    redis-benchmark -p "$tls_port" --tls --cacert "$TIERCACHE_REDIS_TLS_CA" -a "$tls_password" -c 1 -q "$@" |
        tr '\r' '\n' | grep "requests per second" | tail -1 | sed -E 's/.*: ([0-9.]+) requests per second.*/\1/'
}
# operations/s of one RedisRoundTrips lane (a tls- lane over TLS)
lane() {
    case $1 in
        tls-*) "$tier" --affinity --tls --only "${1#tls-}" --seconds "$seconds" ;;
        *) "$tier" --affinity --only "$1" --seconds "$seconds" ;;
    esac | grep "^RedisTier" | sed -E 's/.*: ([0-9]+)\/s$/\1/'
}
lanes="get set get16 mget16 tls-get tls-set tls-get16"

# Store the keys the reads and MGET use, on both servers.
"$tier" --affinity --only set --seconds 1 >/dev/null
"$tier" --affinity --tls --only set --seconds 1 >/dev/null
results=$(mktemp)
for round in $(seq 1 "$rounds"); do
    for name in $lanes; do
        case $name in
            get) base=$(baseline -t get -d 1024 -n $((seconds * 15000))) ;;
            set) base=$(baseline -t set -d 1024 -n $((seconds * 15000))) ;;
            get16) base=$(baseline -t get -d 1024 -P 16 -n $((seconds * 200000))) ;;
            mget16) base=$(baseline -n $((seconds * 12000)) MGET $keys) ;;
            tls-get) base=$(tls_baseline -t get -d 1024 -n $((seconds * 12000))) ;;
            tls-set) base=$(tls_baseline -t set -d 1024 -n $((seconds * 12000))) ;;
            tls-get16) base=$(tls_baseline -t get -d 1024 -P 16 -n $((seconds * 150000))) ;;
        esac
        mine=$(lane "$name")
        ratio=$(awk -v a="$mine" -v b="$base" 'BEGIN { printf "%.2f", a / b }')
        echo "round $round $name: RedisTier $mine/s, redis-benchmark $base/s, ratio ${ratio}x"
        echo "$name $ratio" >> "$results"
    done
done
echo "== medians of $rounds rounds (RedisTier / redis-benchmark) =="
for name in $lanes; do
    grep "^$name " "$results" | awk '{print $2}' | sort -n |
        awk -v name="$name" '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%s: median %.2fx (range %.2f–%.2fx)\n", name, m, v[1], v[NR] }'
done
rm -f "$results"
