/// A fast 32-bit checksum of stored bytes: records' headers and raw payloads (zstd frames carry
/// their own), dictionaries.
///
/// Processes eight bytes per step with a multiply-rotate mix; it detects damage, it is not a
/// cryptographic hash.
public enum Checksum {
    /// The checksum of `bytes`. With a `seed` (the checksum of bytes that come before), the
    /// checksum of both parts; a seed of 0 is no seed.
    public static func of(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        var hash: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(bytes.count) ^ (UInt64(seed) &* 0xC2B2_AE3D_27D4_EB4F)
        let wordCount = bytes.count / 8
        for index in 0..<wordCount {
            let word = bytes.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)
            hash = (hash ^ (word &* 0xC2B2_AE3D_27D4_EB4F)).rotatedLeft(by: 31) &* 0x1656_67B1_9E37_79F9
        }
        for index in (wordCount * 8)..<bytes.count {
            hash = (hash ^ UInt64(bytes[index]) &* 0x27D4_EB2F_1656_67C5).rotatedLeft(by: 11) &* 0x9E37_79B1_85EB_CA87
        }
        hash ^= hash >> 33
        hash &*= 0xFF51_AFD7_ED55_8CCD
        hash ^= hash >> 33
        return UInt32(truncatingIfNeeded: hash ^ (hash >> 32))
    }
}

extension UInt64 {
    @inline(__always)
    fileprivate func rotatedLeft(by amount: UInt64) -> UInt64 {
        (self << amount) | (self >> (64 - amount))
    }
}
