import Benchmark
import Foundation
import TierCache
import Workloads

// MemoryTier under each eviction policy, beside MemoryTier's default (LRU) and the minimal LRU
// in the same run: the figures that matter are each policy's throughput over LRU's (the goal is
// at least 0.8x) and over the unsynchronized baseline.

func memoryPolicyBenchmarks() {
    let accesses = Workload.accesses
    let strings = Workload.keyStrings
    let keys = strings.compactMap { try? CacheKey($0) }
    let value = Workload.policyValue
    let storedAt = Date()
    let policies: [(name: String, policy: MemoryTier.EvictionPolicy)] = [
        ("LRU", .lru), ("S3-FIFO", .s3fifo), ("W-TinyLFU", .wTinyLFU),
    ]

    for (name, policy) in policies {
        // Every key fits: the hit path and the replacing store alone.
        guard let tier = try? MemoryTier(capacity: 256 << 20, policy: policy) else { return }
        for key in keys { _ = tier.store(CacheEntry(value: value, storedAt: storedAt), forKey: key) }
        Benchmark("Memory policy get hit (Zipf, 100k keys): MemoryTier \(name)") {
            [cursor = AccessCursor()] benchmark in
            var position = cursor.take(benchmark.scaledIterations.count)
            for _ in benchmark.scaledIterations {
                blackHole(tier.entry(forKey: keys[accesses[position % accesses.count]]))
                position &+= 1
            }
        }
        Benchmark("Memory policy set (Zipf, 100k keys): MemoryTier \(name)") { [cursor = AccessCursor()] benchmark in
            var position = cursor.take(benchmark.scaledIterations.count)
            let entry = CacheEntry(value: value, storedAt: storedAt)
            for _ in benchmark.scaledIterations {
                blackHole(tier.store(entry, forKey: keys[accesses[position % accesses.count]]))
                position &+= 1
            }
        }
    }

    // A cache user's loop with evictions: look up, store on a miss, in a tier that holds about
    // 10,000 of the 100,000 keys.
    let fitting = Workload.fittingEntries
    for (name, policy) in policies {
        guard let tier = try? MemoryTier(capacity: Workload.fittingCapacity, policy: policy) else { return }
        let entry = CacheEntry(value: value, storedAt: storedAt)
        Benchmark("Memory policy get or set (Zipf, 100k keys, 10k fit): MemoryTier \(name)") {
            [cursor = AccessCursor()] benchmark in
            var position = cursor.take(benchmark.scaledIterations.count)
            for _ in benchmark.scaledIterations {
                let key = keys[accesses[position % accesses.count]]
                if tier.entry(forKey: key) == nil { blackHole(tier.store(entry, forKey: key)) }
                position &+= 1
            }
        }
    }
    let lru = MinimalLRU(capacity: fitting)
    Benchmark("Memory policy get or set (Zipf, 100k keys, 10k fit): baseline minimal LRU") {
        [cursor = AccessCursor()] benchmark in
        var position = cursor.take(benchmark.scaledIterations.count)
        for _ in benchmark.scaledIterations {
            let key = strings[accesses[position % accesses.count]]
            if lru.get(key) == nil { lru.set(key, value) }
            position &+= 1
        }
    }
}
