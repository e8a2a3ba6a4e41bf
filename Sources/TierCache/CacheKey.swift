import Foundation

/// The key under which a tier stores an entry: a non-empty string of at most
/// ``maximumUTF8Length`` bytes of UTF-8.
///
/// Tiers treat keys as opaque. Validation happens once, here, so that every tier can rely on a
/// key being usable; tiers with smaller native limits (LMDB's 511 bytes) map long keys
/// themselves and must still tell distinct keys apart.
///
/// A key hashes its text once, when it is made, and hashes as that number afterwards: a key
/// made once and looked up in several tiers, or read then stored, pays for hashing its bytes
/// once rather than at every dictionary probe (Java's `String` caches its hash for the same
/// reason). The number is the text's hash under the process's random seed (`Hasher`), so keys
/// that collide cannot be chosen from outside the process.
///
/// Keys are their UTF-8 bytes: two texts `String` calls equal (`"caf\u{E9}"` and
/// `"cafe\u{301}"`, the same word composed and decomposed) are two keys, as they are in every
/// tier that stores bytes (LMDB, SQLite, Redis). Compared as `String`s, the memory tier took them
/// for one key and the disk tier for two, so removing one spelling left the other's entry below,
/// to come back.
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The longest key accepted, in UTF-8 bytes (16 KiB). Longer keys are almost always a bug
    /// (a body or a whole header block used as a key) and would waste every tier's space.
    public static let maximumUTF8Length = 16 * 1024

    /// The key's text.
    public let rawValue: String
    /// `rawValue`'s hash under this process's seed, computed when the key is made; also the key
    /// hash the memory tier gives policies that count keys.
    let textHash: Int

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
        self.init(validated: rawValue)
    }

    /// A key of `rawValue`, already known to be of an accepted length.
    private init(validated rawValue: String) {
        var text = rawValue
        var hasher = Hasher()
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        self.rawValue = text
        textHash = hasher.finalize()
    }

    /// A key of its own beside `base`: `base` followed by `suffix`, for an entry that belongs to
    /// `base`'s (an HTTP resource's HEAD response, partial content, a variant). Never fails:
    /// when the two together are longer than a key may be, `base` is replaced by its 128-bit
    /// ``KeyDigest`` (`#` and 32 hexadecimal digits), and a suffix too long even for that is
    /// digested with it. A layer that must keep such keys apart from one another keeps the
    /// original key in what it stores and checks it (a digest collision is a miss).
    public init(_ base: CacheKey, appending suffix: String) {
        let length = base.rawValue.utf8.count + suffix.utf8.count
        if length <= Self.maximumUTF8Length {
            self.init(validated: base.rawValue + suffix)
        } else if suffix.utf8.count <= Self.maximumUTF8Length - 33 {
            self.init(validated: Self.digestText(of: base.rawValue.utf8) + suffix)
        } else {
            self.init(validated: Self.digestText(of: base.rawValue.utf8) + KeyDigest.hex(of: suffix.utf8))
        }
    }

    /// A key naming `bytes` by their 128-bit ``KeyDigest``: `#` and 32 hexadecimal digits. Never
    /// fails, whatever the length: for keys derived from data (a request body, a long query).
    /// The digest is not cryptographic; keep the data beside the value to tell a collision.
    public init(digestOf bytes: some Sequence<UInt8>) {
        self.init(validated: Self.digestText(of: bytes))
    }

    /// The text of a key naming `bytes` by their digest.
    private static func digestText(of bytes: some Sequence<UInt8>) -> String { "#" + KeyDigest.hex(of: bytes) }

    /// Whether the two keys have the same UTF-8 bytes: the hashes first, which tell most
    /// different keys apart without reading their text.
    public static func == (lhs: CacheKey, rhs: CacheKey) -> Bool {
        guard lhs.textHash == rhs.textHash else { return false }
        // Keys are native UTF-8 (made contiguous when made): one `memcmp`, not a walk of views.
        let equal = lhs.rawValue.utf8.withContiguousStorageIfAvailable { left in
            rhs.rawValue.utf8.withContiguousStorageIfAvailable { right in
                guard left.count == right.count else { return false }
                guard let a = left.baseAddress, let b = right.baseAddress else { return left.isEmpty }
                return memcmp(a, b, left.count) == 0
            }
        }
        return (equal ?? nil) ?? lhs.rawValue.utf8.elementsEqual(rhs.rawValue.utf8)
    }

    /// Feeds the hash computed when the key was made, not the text again.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(textHash)
    }

    /// The key as given.
    public var description: String { rawValue }
}
