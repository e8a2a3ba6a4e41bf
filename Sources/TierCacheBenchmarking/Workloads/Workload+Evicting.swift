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
