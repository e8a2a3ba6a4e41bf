/// The per-entry size rule: a tier refuses any entry whose stored size exceeds a fraction of its
/// capacity (`URLCache` documents 5% for its disk cache).
public struct EntrySizeLimit: Hashable, Sendable {
    /// The fraction of capacity, in `0...1`.
    public let fraction: Double
    /// The largest stored size accepted, in bytes: `floor(capacity × fraction)`. A fraction of
    /// whole billionths (any of nine decimal places or fewer, as written) is applied in integer
    /// arithmetic: 5% of any capacity is exactly `capacity / 20`. (A `Double` product was not:
    /// `0.05` is not exact in binary, and above 2^53 the product rounds.) Any other fraction (a
    /// third) is applied as a `Double` product, rounded down.
    public let maxBytes: Int

    /// The fraction `URLCache` documents for its disk cache.
    public static let urlCacheDefaultFraction = 0.05

    /// Creates the rule for a tier of `capacity` bytes whose storage takes no record larger than
    /// `ceiling` (a Redis string's 512 MiB, a 32-bit size field): the limit is the lower of the
    /// two, and reported as such.
    public init(fraction: Double, capacity: Int, ceiling: Int) throws(TierCacheError) {
        let rule = try EntrySizeLimit(fraction: fraction, capacity: capacity)
        self.fraction = fraction
        self.maxBytes = min(rule.maxBytes, max(0, ceiling))
    }

    /// Creates the rule for a tier of `capacity` bytes, or throws
    /// ``TierCacheError/Code/invalidConfiguration`` when `fraction` is outside `0...1` or not a number.
    public init(fraction: Double, capacity: Int) throws(TierCacheError) {
        guard fraction.isFinite, fraction > 0, fraction <= 1 else {
            throw TierCacheError(
                .invalidConfiguration, "maxEntryFraction must be in (0, 1]; got \(fraction)")
        }
        self.fraction = fraction
        let capacity = max(capacity, 0)
        let scaled = fraction * 1e9
        let billionths = scaled.rounded()
        if billionths >= 1, abs(scaled - billionths) < 1e-3 {
            // At most a billion billionths: the limit never exceeds the capacity and fits an Int.
            self.maxBytes = Int(Int128(capacity) * Int128(min(billionths, 1e9)) / 1_000_000_000)
        } else {
            // `Double(Int.max)` is 2^63, one past `Int.max`: such a product is the capacity.
            let bytes = (Double(capacity) * fraction).rounded(.down)
            self.maxBytes = bytes < Double(Int.max) ? min(Int(bytes), capacity) : capacity
        }
    }

    /// Whether an entry of `size` stored bytes is acceptable.
    @inline(__always)
    public func admits(_ size: Int) -> Bool { size <= maxBytes }
}
