import TierCache

/// The smallest capacity the disk tiers accept, the largest share of it one entry may take, and
/// their checks.
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

    /// The largest `maxEntryFraction` a disk tier accepts: an entry must fit beside the store's
    /// own pages and the room LMDB keeps for copy-on-write (the LMDB tier fills at most 75% of
    /// its capacity), so at most half the capacity.
    public static let largestEntryFraction = 0.5

    /// Throws `TierCacheError.Code.invalidConfiguration` unless `fraction` is at most
    /// ``largestEntryFraction`` (the entry-size rule checks the rest).
    public static func checkEntryFraction(_ fraction: Double) throws(TierCacheError) {
        guard !(fraction > largestEntryFraction) else {
            throw TierCacheError(
                .invalidConfiguration, "maxEntryFraction must be at most \(largestEntryFraction); got \(fraction)")
        }
    }
}
