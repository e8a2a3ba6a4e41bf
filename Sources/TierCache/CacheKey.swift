/// The key under which a tier stores an entry: a non-empty string of at most
/// ``maximumUTF8Length`` bytes of UTF-8.
///
/// Tiers treat keys as opaque. Validation happens once, here, so that every tier can rely on a
/// key being usable; tiers with smaller native limits (LMDB's 511 bytes) map long keys
/// themselves and must still tell distinct keys apart.
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The longest key accepted, in UTF-8 bytes (16 KiB). Longer keys are almost always a bug
    /// (a body or a whole header block used as a key) and would waste every tier's space.
    public static let maximumUTF8Length = 16 * 1024

    /// The key's text.
    public let rawValue: String

    /// Creates a key, or throws ``TierCacheError/Code/invalidKey`` when `rawValue` is empty or
    /// longer than ``maximumUTF8Length`` UTF-8 bytes.
    public init(_ rawValue: String) throws(TierCacheError) {
        let length = rawValue.utf8.count
        guard length > 0 else {
            throw TierCacheError(.invalidKey, "a cache key must not be empty")
        }
        guard length <= Self.maximumUTF8Length else {
            throw TierCacheError(
                .invalidKey,
                "a cache key is \(length) UTF-8 bytes long; the limit is \(Self.maximumUTF8Length)")
        }
        self.rawValue = rawValue
    }

    /// The key as given.
    public var description: String { rawValue }
}
