import TierCache

extension Workload {
    /// The key space of a workload that evicts on most misses (the standard benchmark "get-or-set
    /// with evictions"): four times what a tier of `capacity` bytes holds at `valueSize`, and at
    /// least `keys`. A capacity too large for that (an unbounded tier's `Int.max`, or terabytes
    /// of 1 KiB values) is an error that names the fix, not an overflow.
    static func keysEvicting(capacity: Int, valueSize: Int, atLeast keys: Int) throws(BenchmarkError) -> Int {
        let (fourTimes, overflows) = capacity.multipliedReportingOverflow(by: 4)
        let needed = overflows ? Int.max : fourTimes / max(valueSize, 1)
        guard needed <= Workload.maximumKeys else {
            throw .invalidWorkload(
                "evicting a tier of \(capacity) bytes at \(valueSize)-byte values needs four times the keys it holds, more than a workload's \(Workload.maximumKeys): use larger values, or a smaller tier"
            )
        }
        return max(keys, needed)
    }
}

extension SubjectDriver {
    /// Fills a fresh subject for the evicting standard benchmark (its iterations, 10,000
    /// requests by package-benchmark's default, found an empty tier and evicted nothing) and
    /// returns the key space: four times the entries its largest tier holds once filled, as it
    /// stores them (compressed, a disk tier holds more than its capacity over the value size), and
    /// at least `keys`. The largest, not the first: memory over a disk sized by the memory tier
    /// left the disk holding every key, and nothing but the memory tier evicted.
    func fillForEvicting(keys: Int, valueSize: Int) async throws -> Int {
        var largest: (tier: any CacheTier, capacity: Int)?
        for tier in tiers {
            let capacity = try await tier.usage().capacity
            if capacity > largest?.capacity ?? .min { largest = (tier, capacity) }
        }
        guard let largest else { return keys }
        let estimate = try Workload.keysEvicting(capacity: largest.capacity, valueSize: valueSize, atLeast: keys)
        let filling = try Workload(.synthetic(keys: estimate, distribution: .uniform, sizes: .fixed(valueSize)))
            .requests(length: 1)
        try await storeEveryKey(of: filling, keys: try filling.keys())
        let held = try await largest.tier.usage().entries
        return min(max(keys, held.multipliedReportingOverflow(by: 4).partialValue), Workload.maximumKeys)
    }
}
