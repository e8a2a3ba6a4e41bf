#!/usr/bin/env bash
# Instructions per operation of MemoryTier under each of its nine eviction policies, and of the
# minimal unsynchronized LRU it is measured against, on the memory policy benchmarks' workloads,
# counted by callgrind (valgrind): the setup is measured alone and subtracted, and each is
# compared with the tier's LRU. Unlike throughput, the count does not move with other load on the
# machine.
#   Benchmarks/policy-instructions.sh [operations]    (default 1,000,000)
set -euo pipefail
cd "$(dirname "$0")"
operations=${1:-1000000}
command -v valgrind > /dev/null || { sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo; $sudo apt-get install -y valgrind > /dev/null; }
swift build -c release --product PolicyInstructions >&2
tool=$(swift build -c release --show-bin-path)/PolicyInstructions
count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$tool" "$@" 2>&1 | awk '/Collected/ { print $NF }'
}
printf '%-11s %-10s %14s %10s\n' workload policy "instr/op" "LRU/this"
for workload in get set set-making-key get-or-set; do
    lru=0
    for policy in lru fifo clock sieve s3fifo arc twoq lirs wtinylfu minimal; do
        setup=$(count "$workload" "$policy" 0)
        total=$(count "$workload" "$policy" "$operations")
        perOperation=$(( (total - setup) / operations ))
        [ "$policy" = lru ] && lru=$perOperation
        awk -v w="$workload" -v p="$policy" -v n="$perOperation" -v l="$lru" 'BEGIN { printf "%-11s %-10s %14d %10.2f\n", w, p, n, l / n }'
    done
done
