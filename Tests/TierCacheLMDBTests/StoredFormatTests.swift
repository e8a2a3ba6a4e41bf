import DiskTestSupport
import Foundation
import Testing
import TierCache
import TierCacheCompression
import TierCacheRecords

/// The promise about stored formats across versions: a record written by an earlier version is
/// read by this one, and a record this version cannot read is a counted miss, never misread.
/// The bytes below were written by format version 1 (the first) and 3 (the current); a change to
/// the record format must keep reading them, or bump the version (which makes them a counted miss).
@Suite("Stored records across format versions")
struct StoredFormatTests {
    /// "hello, version 1", stored at 2026-01-01T00:00:00Z (788918400 s after 2001), no expiry,
    /// uncompressed, as format version 1 writes it.
    static let versionOneRecord: [UInt8] = [
        1, 0, 0, 0, 16, 0, 0, 0,  // version 1, no flags, no dictionary, 16 bytes
        0, 0, 0, 64, 248, 130, 199, 65,  // stored at 788918400.0
        0, 0, 0, 0, 0, 0, 248, 127,  // no expiry (NaN)
        151, 216, 133, 135, 0, 0, 0, 0,  // the payload's checksum, no full key
        104, 101, 108, 108, 111, 44, 32, 118, 101, 114, 115, 105, 111, 110, 32, 49,  // "hello, version 1"
    ]
    /// The same entry as format version 3 writes it: only the version and the checksum, which
    /// now covers the header and key too, differ.
    static let versionThreeRecord: [UInt8] = [
        3, 0, 0, 0, 16, 0, 0, 0,  // version 3, no flags, no dictionary, 16 bytes
        0, 0, 0, 64, 248, 130, 199, 65,  // stored at 788918400.0
        0, 0, 0, 0, 0, 0, 248, 127,  // no expiry (NaN)
        169, 3, 180, 224, 0, 0, 0, 0,  // the record's checksum, no full key
        104, 101, 108, 108, 111, 44, 32, 118, 101, 114, 115, 105, 111, 110, 32, 49,  // "hello, version 1"
    ]
    /// The same entry bound to the key it is stored under, `GET https://a.example/` (flag bit
    /// 4): the checksum starts from the key's.
    static let boundRecord: [UInt8] = [
        3, 16, 0, 0, 16, 0, 0, 0,  // version 3, flag bit 4 (bound), no dictionary, 16 bytes
        0, 0, 0, 64, 248, 130, 199, 65,  // stored at 788918400.0
        0, 0, 0, 0, 0, 0, 248, 127,  // no expiry (NaN)
        174, 159, 53, 111, 0, 0, 0, 0,  // the record's checksum, from the key's; no full key
        104, 101, 108, 108, 111, 44, 32, 118, 101, 114, 115, 105, 111, 110, 32, 49,  // "hello, version 1"
    ]
    static let boundKey = Array("GET https://a.example/".utf8)
    static let storedAt = Date(timeIntervalSinceReferenceDate: 788_918_400)

    @Test("Records written by format versions 1 and 3 read back exactly", arguments: [1, 3] as [UInt8])
    func earlierVersionsRead(version: UInt8) throws {
        let codec = try #require(ZstdCodec(level: 1))
        let record = version == 1 ? Self.versionOneRecord : Self.versionThreeRecord
        let value = try record.withUnsafeBytes { bytes in
            let header = try EntryRecord.header(of: bytes)
            #expect(header.metadata.storedAt == Self.storedAt && header.metadata.expiresAt == nil)
            return try EntryRecord.value(of: header, codec: codec, largestValue: 1 << 20)
        }
        #expect(value == Array("hello, version 1".utf8))
    }

    @Test("This version writes format version 3's bytes")
    func writesVersionThree() throws {
        let codec = try #require(ZstdCodec(level: 1))
        let written = EntryRecord.encode(
            CacheEntry(value: Array("hello, version 1".utf8), storedAt: Self.storedAt), fullKey: nil, codec: codec)
        #expect(written == Self.versionThreeRecord, "\(written)")
    }

    @Test("A record bound to its key is written as pinned, reads under that key, and under no other")
    func boundRecords() throws {
        let codec = try #require(ZstdCodec(level: 1))
        let written = EntryRecord.encode(
            CacheEntry(value: Array("hello, version 1".utf8), storedAt: Self.storedAt), fullKey: nil, codec: codec,
            boundTo: Self.boundKey)
        #expect(written == Self.boundRecord, "\(written)")
        let value = try Self.boundRecord.withUnsafeBytes { bytes in
            try Self.boundKey.withUnsafeBytes { key in
                try EntryRecord.value(
                    of: try EntryRecord.header(of: bytes, storedUnder: key), codec: codec, largestValue: 1 << 20)
            }
        }
        #expect(value == Array("hello, version 1".utf8))
        for other in [Array("GET https://a.example/x".utf8), Array("GET https://b.example/".utf8), []] {
            #expect(throws: EntryRecord.DecodeFailure.self) {
                try Self.boundRecord.withUnsafeBytes { bytes in
                    try other.withUnsafeBytes { _ = try EntryRecord.header(of: bytes, storedUnder: $0) }
                }
            }
        }
        #expect(throws: EntryRecord.DecodeFailure.self, "read without a key") {
            try Self.boundRecord.withUnsafeBytes { _ = try EntryRecord.header(of: $0) }
        }
        // An unbound record ignores the key it is read under.
        let unbound = try Self.versionThreeRecord.withUnsafeBytes { bytes in
            try Self.boundKey.withUnsafeBytes { try EntryRecord.header(of: bytes, storedUnder: $0).originalSize }
        }
        #expect(unbound == 16)
    }

    /// Damage anywhere in a record, its times included, must not be read as another entry: a
    /// flipped bit in the expiry could otherwise keep an entry for ever.
    @Test(
        "Every single flipped bit of a record is refused or reads back the same entry",
        arguments: [false, true], [false, true])
    func everyFlippedBit(compressible: Bool, withKey: Bool) throws {
        let codec = try #require(ZstdCodec(level: 1))
        let value =
            compressible ? [UInt8](repeating: 42, count: 200) : (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 97) }
        let entry = CacheEntry(
            value: value, storedAt: Self.storedAt, expiresAt: Self.storedAt.addingTimeInterval(3_600))
        let key: [UInt8]? = withKey ? Array("GET https://a.example/".utf8) : nil
        // With a full key, the record is also bound to the key it is stored under (as LMDB's are).
        let storedUnder = Array("stored-under".utf8)
        let record = EntryRecord.encode(entry, fullKey: key, codec: codec, boundTo: withKey ? storedUnder : nil)
        #expect(record.count < (compressible ? 100 : 200), "compressed as expected: \(record.count) bytes")
        var misread: [Int] = []
        for bit in 0..<(record.count * 8) {
            var damaged = record
            damaged[bit / 8] ^= 1 << UInt8(bit % 8)
            let decoded = damaged.withUnsafeBytes { bytes -> (CacheEntry, [UInt8]?)? in
                guard let header = storedUnder.withUnsafeBytes({ try? EntryRecord.header(of: bytes, storedUnder: $0) }),
                    let value = try? EntryRecord.value(of: header, codec: codec, largestValue: 1 << 20)
                else { return nil }
                let entry = CacheEntry(
                    value: value, storedAt: header.metadata.storedAt, expiresAt: header.metadata.expiresAt)
                return (entry, header.fullKey.map(Array.init))
            }
            if let (read, readKey) = decoded, read != entry || readKey != key { misread.append(bit) }
        }
        #expect(misread.isEmpty, "bits read as another entry or key: \(misread)")
        // Two bits: the version byte's (3 to 1: version 1 left compressed records unchecked) and
        // one of the expiry's.
        var twice = record
        twice[0] ^= 2
        twice[20] ^= 1
        let read = twice.withUnsafeBytes { bytes in
            (try? EntryRecord.header(of: bytes)).flatMap { header in
                (try? EntryRecord.value(of: header, codec: codec, largestValue: 1 << 20)).map { _ in header.metadata }
            }
        }
        #expect(read == nil, "read with expiry \(String(describing: read?.expiresAt))")
    }

    @Test(
        "A record of another format version is refused as such, never decoded", arguments: [0, 2, 4, 9, 255] as [UInt8])
    func otherVersions(version: UInt8) {
        var record = Self.versionThreeRecord
        record[0] = version
        let failure = record.withUnsafeBytes { bytes -> EntryRecord.DecodeFailure? in
            do {
                _ = try EntryRecord.header(of: bytes)
                return nil
            } catch {
                return error as? EntryRecord.DecodeFailure
            }
        }
        #expect(failure?.isUnknownFormatVersion == true)
    }

    @Test("A compressed record declaring more than the tier holds is refused before anything is allocated")
    func decompressionBomb() throws {
        let codec = try #require(ZstdCodec(level: 1))
        // 8 MiB of zeros compress to a few hundred bytes: a record far smaller than what it declares.
        let zeros = [UInt8](repeating: 0, count: 8 << 20)
        let record = EntryRecord.encode(CacheEntry(value: zeros, storedAt: Self.storedAt), fullKey: nil, codec: codec)
        #expect(record.count < 4_096)
        try record.withUnsafeBytes { bytes in
            let header = try EntryRecord.header(of: bytes)
            #expect(throws: EntryRecord.DecodeFailure.self) {
                try EntryRecord.value(of: header, codec: codec, largestValue: 4 << 20)
            }
            #expect(try EntryRecord.value(of: header, codec: codec, largestValue: 8 << 20) == zeros)
        }
        #expect(EntryRecord.largestValue(inCapacity: 4 << 20) == 4 << 20)
        #expect(EntryRecord.largestValue(inCapacity: .max) == EntryRecord.maximumValueSize)
    }

    @Test("Damage is not mistaken for another version")
    func damageIsDamage() throws {
        let codec = try #require(ZstdCodec(level: 1))
        var record = Self.versionOneRecord
        record[record.count - 1] ^= 0xFF
        let failure = record.withUnsafeBytes { bytes -> EntryRecord.DecodeFailure? in
            do {
                _ = try EntryRecord.value(of: try EntryRecord.header(of: bytes), codec: codec, largestValue: 1 << 20)
                return nil
            } catch {
                return error as? EntryRecord.DecodeFailure
            }
        }
        #expect(failure != nil && failure?.isUnknownFormatVersion == false)
    }
}
