/// A 128-bit digest for shortening long keys (two FNV-1a passes with different offsets).
///
/// Not cryptographic: a layer that stores under a digest must keep enough of the original to
/// detect a collision and treat it as a miss (``CacheKey`` users in TierCache do).
public enum KeyDigest {
    /// The digest of `bytes` as two 64-bit words.
    public static func words(of bytes: some Sequence<UInt8>) -> (UInt64, UInt64) {
        var first: UInt64 = 0xCBF2_9CE4_8422_2325
        var second: UInt64 = 0x6C62_272E_07BB_0142
        for byte in bytes {
            first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            second = (second ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return (first, second)
    }

    /// The digest of `bytes` as 32 hexadecimal digits.
    public static func hex(of bytes: some Sequence<UInt8>) -> String {
        let (first, second) = words(of: bytes)
        return hex16(first) + hex16(second)
    }

    private static func hex16(_ word: UInt64) -> String {
        let digits = String(word, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
