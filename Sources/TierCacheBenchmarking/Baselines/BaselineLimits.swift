import TierCache

/// What the baselines share of the tiers' rules, so that at one capacity a baseline and its
/// subject refuse the same entries and do the same work. (The disk baselines measure their bare
/// compressed value against the limit, where a tier's record adds its framing and, in SQLite, the
/// key: an entry within those few dozen bytes of the limit is kept by the baseline alone.)
enum BaselineLimits {
    /// The largest entry a baseline of `capacity` stores: the subject's own limit (`maxEntryBytes`,
    /// as its tier reports it), else 5% of the capacity (the tiers' default rule); never above the
    /// capacity. `capacity` is at least 0.
    static func maxEntryBytes(_ maxEntryBytes: Int?, capacity: Int) -> Int {
        // The default rule's fraction never throws: 0 only stands in for the impossible.
        maxEntryBytes.map { min(max($0, 0), capacity) }
            ?? (try? EntrySizeLimit(fraction: EntrySizeLimit.urlCacheDefaultFraction, capacity: capacity))?.maxBytes
            ?? 0
    }

    /// The error a disk baseline throws when the workload outgrows its capacity: it evicts
    /// nothing, so from there on it would refuse (or keep) what its subject evicts to make room
    /// for, and the two would no longer do the same work.
    static func outgrown(_ baseline: String, capacity: Int) -> TierCacheError {
        TierCacheError(
            .storageFailure,
            "the \(baseline) baseline outgrew its capacity (\(ByteCount.format(capacity))): it evicts nothing, so its "
                + "throughput compares with its subject's only while the workload fits; give the tier more capacity, "
                + "or the workload fewer keys or smaller values")
    }
}
