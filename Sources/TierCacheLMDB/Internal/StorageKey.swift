import TierCache

/// The bytes a `CacheKey` is stored under in LMDB, whose keys are at most 511 bytes.
///
/// A key that fits is stored as its UTF-8 bytes. A longer key is stored as its first
/// ``prefixLength`` bytes, a 0xFF byte (never part of UTF-8) and a 128-bit hash of the whole key;
/// the record then keeps the full key, so a lookup that lands on another key's record (a hash
/// collision) is detected and treated as a miss.
struct StorageKey {
    static let maximumLength = 511
    static let prefixLength = 400

    let bytes: [UInt8]
    /// The full key to keep in the record, when ``bytes`` is not the key itself.
    let fullKey: [UInt8]?

    init(_ key: CacheKey) {
        let utf8 = Array(key.rawValue.utf8)
        guard utf8.count > Self.maximumLength else {
            bytes = utf8
            fullKey = nil
            return
        }
        var mapped = Array(utf8[..<Self.prefixLength])
        mapped.append(0xFF)
        let (first, second) = KeyDigest.words(of: utf8)
        withUnsafeBytes(of: first.littleEndian) { mapped.append(contentsOf: $0) }
        withUnsafeBytes(of: second.littleEndian) { mapped.append(contentsOf: $0) }
        bytes = mapped
        fullKey = utf8
    }
}
