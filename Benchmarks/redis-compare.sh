#!/usr/bin/env bash
# RedisTier against redis-benchmark, on the same freshly started redis-server, in one run:
# GET and SET of 1 KiB values over one connection, unpipelined (-P 1) and 16 in flight (-P 16).
# Prints redis-benchmark's requests/s, then the RedisBenchmarks target's; compare the two. Then
# RedisRoundTrips, the same three operations in a plain loop, with Swift's default executor and
# with SwiftNIO's event loops as the global executor (which the benchmark harness cannot use), and
# with each lane inside RedisTier.withEventLoopAffinity (on the connection's own event loop); last,
# redis-benchmark's MGET of 16 of the keys RedisRoundTrips stored, the baseline of its
# entries(forKeys:) row.
set -euo pipefail
cd "$(dirname "$0")"
dir=$(mktemp -d)
trap '../scripts/redis-servers stop "$dir" || true; rm -rf "$dir" || true' EXIT
eval "$(../scripts/redis-servers start "$dir")"
port=${TIERCACHE_REDIS_URL##*:}
echo "== redis-benchmark, one connection, 1 KiB values =="
redis-benchmark -p "$port" -t set,get -n 200000 -d 1024 -c 1 -q
echo "== redis-benchmark, one connection, 16 pipelined =="
redis-benchmark -p "$port" -t get -n 1000000 -d 1024 -c 1 -P 16 -q
echo "== RedisTier (RedisBenchmarks) =="
swift package --allow-writing-to-package-directory benchmark --target RedisBenchmarks --format markdown "$@"
echo "== RedisTier in a plain loop (RedisRoundTrips) =="
swift build -c release --product RedisRoundTrips >&2
"$(swift build -c release --show-bin-path)/RedisRoundTrips"
"$(swift build -c release --show-bin-path)/RedisRoundTrips" --nio-executor
"$(swift build -c release --show-bin-path)/RedisRoundTrips" --affinity
echo "== redis-benchmark, MGET of 16 keys RedisRoundTrips stored, one connection =="
redis-benchmark -p "$port" -n 100000 -c 1 -q MGET $(for i in $(seq 0 15); do printf 'roundtrips:key:%d ' "$i"; done)
