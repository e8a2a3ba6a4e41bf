/// The per-entry size rule: a tier refuses any entry whose stored size exceeds a fraction of its
/// capacity (`URLCache` documents 5% for its disk cache).
public struct EntrySizeLimit: Hashable, Sendable {
    /// The fraction of capacity, in `0...1`.
    public let fraction: Double
    /// The largest stored size accepted, in bytes: `floor(capacity × fraction)`.
    public let maxBytes: Int

    /// The fraction `URLCache` documents for its disk cache.
    public static let urlCacheDefaultFraction = 0.05

    /// Creates the rule for a tier of `capacity` bytes, or throws
    /// ``TierCacheError/Code/invalidConfiguration`` when `fraction` is outside `0...1` or not a number.
    public init(fraction: Double, capacity: Int) throws(TierCacheError) {
        guard fraction.isFinite, fraction > 0, fraction <= 1 else {
            throw TierCacheError(
                .invalidConfiguration, "maxEntryFraction must be in (0, 1]; got \(fraction)")
        }
        self.fraction = fraction
        let bytes = (Double(capacity) * fraction).rounded(.down)
        // A `Double` rounds capacities above 2^53 (up as well as down), and `Double(Int.max)` is
        // 2^63, one past `Int.max`: the limit never exceeds the capacity, and a product that
        // large (a capacity near `Int.max`, a fraction near 1) is the whole capacity rather than
        // a conversion that traps.
        self.maxBytes = bytes < Double(Int.max) ? min(Int(bytes), max(capacity, 0)) : capacity
    }

    /// Whether an entry of `size` stored bytes is acceptable.
    @inline(__always)
    public func admits(_ size: Int) -> Bool { size <= maxBytes }
}
