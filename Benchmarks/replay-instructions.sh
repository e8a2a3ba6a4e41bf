#!/usr/bin/env bash
# Instructions per replayed request of each built-in policy on one trace, at each capacity,
# counted by callgrind (valgrind) inside the replay alone (the trace's loading is not counted),
# each compared with LRU's at the same capacity. Unlike throughput, the count does not move with
# other load on the machine.
#   Benchmarks/replay-instructions.sh [trace] [capacities]
#   (default: $TIERCACHE_TRACES/arc/P12.lis.zst at 32768 and 524288 objects)
set -euo pipefail
cd "$(dirname "$0")"
trace=${1:-${TIERCACHE_TRACES:?set TIERCACHE_TRACES or name a trace}/arc/P12.lis.zst}
capacities=${2:-32768 524288}
command -v valgrind > /dev/null || { sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo; $sudo apt-get install -y valgrind > /dev/null; }
swift build -c release --product ReplayInstructions >&2
tool=$(swift build -c release --show-bin-path)/ReplayInstructions
# The replay of a SimulatedPolicy, which every built-in goes through.
replay='$s15CacheSimulation9SimulatorV6replay_8capacityAA0B6ResultVAA15SimulatedPolicyV_s6UInt64VtF'
requests=$("$tool" "$trace" lru 1 1 | sed -E 's/.*: ([0-9]+) requests.*/\1/')
printf '%-10s %9s %12s %10s\n' policy capacity "instr/req" "this/LRU"
for capacity in $capacities; do
    lru=0
    for policy in lru fifo clock sieve s3fifo arc 2q lirs w-tinylfu; do
        total=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect="$replay" \
            "$tool" "$trace" "$policy" "$capacity" 1 2>&1 | awk '/Collected/ { print $NF }')
        perRequest=$(( total / requests ))
        [ "$policy" = lru ] && lru=$perRequest
        awk -v p="$policy" -v c="$capacity" -v n="$perRequest" -v l="$lru" \
            'BEGIN { printf "%-10s %9d %12d %10.2f\n", p, c, n, n / l }'
    done
done
