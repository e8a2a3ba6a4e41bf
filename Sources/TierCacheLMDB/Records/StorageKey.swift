import TierCache

/// The bytes a `CacheKey` is stored under in LMDB, whose keys are at most 511 bytes.
///
/// A key that fits is stored as its UTF-8 bytes. A longer key is stored as its first
/// ``prefixLength`` bytes, a 0xFF byte (never part of UTF-8) and a 128-bit hash of the whole key;
/// the record then keeps the full key, so a lookup that lands on another key's record (a hash
/// collision) is detected and treated as a miss. A tier that encrypts with hashed key names
/// stores every key under its keyed hash, and every record (sealed) keeps the full key.
struct StorageKey {
    static let maximumLength = 511
    static let prefixLength = 400

    let bytes: [UInt8]
    /// The full key to keep in the record, when ``bytes`` is not the key itself.
    let fullKey: [UInt8]?

    init(_ key: CacheKey, sealer: (any RecordSealing)? = nil) {
        let utf8 = Array(key.rawValue.utf8)
        if let sealer, let name = utf8.withUnsafeBytes({ sealer.storageName(forKey: $0) }) {
            bytes = name.count <= Self.maximumLength ? name : Self.shortened(name)
            fullKey = utf8
        } else if utf8.count > Self.maximumLength {
            bytes = Self.shortened(utf8)
            fullKey = utf8
        } else {
            bytes = utf8
            fullKey = nil
        }
    }

    /// The prefix, the 0xFF marker and the 128-bit hash.
    private static func shortened(_ utf8: [UInt8]) -> [UInt8] {
        var mapped = Array(utf8[..<prefixLength])
        mapped.append(0xFF)
        let (first, second) = KeyDigest.words(of: utf8)
        withUnsafeBytes(of: first.littleEndian) { mapped.append(contentsOf: $0) }
        withUnsafeBytes(of: second.littleEndian) { mapped.append(contentsOf: $0) }
        return mapped
    }
}
