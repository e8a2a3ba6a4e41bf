/// Redis Cluster's key slots: CRC16 (XMODEM) of the key, or of its hash tag, modulo 16,384.
public enum HashSlot {
    /// The number of slots in a Redis Cluster.
    public static let count = 16_384

    /// The slot of `key`. When the key has a `{…}` with at least one byte between the first `{`
    /// and the next `}`, only those bytes are hashed, so related keys can share a slot.
    public static func of(_ key: [UInt8]) -> Int {
        if let open = key.firstIndex(of: UInt8(ascii: "{")),
            let close = key[(open + 1)...].firstIndex(of: UInt8(ascii: "}")), close > open + 1
        {
            return Int(crc16(key[(open + 1)..<close]) % UInt16(count))
        }
        return Int(crc16(key[...]) % UInt16(count))
    }

    /// CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, as the cluster specification uses.
    static func crc16(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 {
                crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
            }
        }
        return crc
    }
}
