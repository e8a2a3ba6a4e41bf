import TierCache

/// The smallest capacity the disk tiers accept, and its check.
public enum DiskCapacity {
    /// 1 MiB: below it, the 5% rule leaves room for no useful entry, and a store's own pages
    /// (headers, indexes) would take much of it.
    public static let minimum = 1 << 20

    /// Throws `TierCacheError.Code.invalidConfiguration` unless `capacity` is at least ``minimum``.
    public static func check(_ capacity: Int) throws(TierCacheError) {
        guard capacity >= minimum else {
            throw TierCacheError(
                .invalidConfiguration, "capacity must be at least \(minimum) bytes (1 MiB); got \(capacity)")
        }
    }
}
