/// The per-entry size rule: a tier refuses any entry whose stored size exceeds a fraction of its
/// capacity (`URLCache` documents 5% for its disk cache).
public struct EntrySizeLimit: Hashable, Sendable {
    /// The fraction of capacity, in `0...1`.
    public let fraction: Double
    /// The largest stored size accepted, in bytes: `floor(capacity × fraction)`, with the
    /// fraction taken to nine decimal places (billionths), in integer arithmetic: 5% of any
    /// capacity is exactly `capacity / 20`. (A `Double` product was not: `0.05` is not exact in
    /// binary, and above 2^53 the product rounds.)
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
        // At most a billion billionths, so the limit never exceeds the capacity and fits an Int.
        let billionths = Int128(min(1e9, (fraction * 1e9).rounded()))
        self.maxBytes = Int(Int128(max(capacity, 0)) * billionths / 1_000_000_000)
    }

    /// Whether an entry of `size` stored bytes is acceptable.
    @inline(__always)
    public func admits(_ size: Int) -> Bool { size <= maxBytes }
}
