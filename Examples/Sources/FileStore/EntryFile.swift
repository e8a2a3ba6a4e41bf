import Foundation
import TierCache

/// The bytes of one entry's file: a magic number, the key's length, the two dates (as bit
/// patterns, so they come back exactly), the key, and the value.
enum EntryFile {
    private static let magic: UInt32 = 0x5443_4631  // "TCF1"
    private static let noExpiry = UInt64.max
    private static let headerSize = 24

    /// The size of the file `encode` writes for `entry` under `key`.
    static func size(of entry: CacheEntry, key: String) -> Int { headerSize + key.utf8.count + entry.size }

    static func encode(_ entry: CacheEntry, key: String) -> Data {
        var data = Data()
        let keyBytes = Array(key.utf8)
        data.reserveCapacity(headerSize + keyBytes.count + entry.size)
        append(magic, to: &data)
        append(UInt32(keyBytes.count), to: &data)
        append(entry.metadata.storedAt.timeIntervalSinceReferenceDate.bitPattern, to: &data)
        append(entry.metadata.expiresAt?.timeIntervalSinceReferenceDate.bitPattern ?? noExpiry, to: &data)
        data.append(contentsOf: keyBytes)
        data.append(contentsOf: entry.value)
        return data
    }

    /// The key and entry in `data`, or `nil` for anything that is not a whole entry file.
    static func decode(_ data: Data) -> (key: String, entry: CacheEntry)? {
        let bytes = [UInt8](data)
        guard bytes.count >= headerSize, read(UInt32.self, bytes, at: 0) == magic else { return nil }
        let keyLength = Int(read(UInt32.self, bytes, at: 4))
        guard keyLength <= bytes.count - headerSize,
            let key = String(validating: bytes[headerSize..<headerSize + keyLength], as: UTF8.self)
        else { return nil }
        let storedAt = Date(timeIntervalSinceReferenceDate: Double(bitPattern: read(UInt64.self, bytes, at: 8)))
        let expiry = read(UInt64.self, bytes, at: 16)
        let expiresAt = expiry == noExpiry ? nil : Date(timeIntervalSinceReferenceDate: Double(bitPattern: expiry))
        let value = Array(bytes[(headerSize + keyLength)...])
        return (key, CacheEntry(value: value, storedAt: storedAt, expiresAt: expiresAt))
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to data: inout Data) {
        withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
    }

    private static func read<T: FixedWidthInteger>(_: T.Type, _ bytes: [UInt8], at offset: Int) -> T {
        var value = T.zero
        for index in 0..<MemoryLayout<T>.size { value |= T(bytes[offset + index]) << (8 * index) }
        return value
    }
}
