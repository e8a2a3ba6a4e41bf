import DiskTestSupport
import Foundation
import Testing
import TierCache
import TierCacheCompression
import TierCacheRecords

/// The promise about stored formats across versions: a record written by an earlier version is
/// read by this one, and a record this version cannot read is a counted miss, never misread.
/// The bytes below were written by format version 1 (the first); a change to the record format
/// must keep reading them, or bump the version (which makes them a counted miss).
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
    static let storedAt = Date(timeIntervalSinceReferenceDate: 788_918_400)

    @Test("A record written by format version 1 reads back exactly")
    func versionOneReads() throws {
        let codec = try #require(ZstdCodec(level: 1))
        let value = try Self.versionOneRecord.withUnsafeBytes { bytes in
            let header = try EntryRecord.header(of: bytes)
            #expect(header.metadata.storedAt == Self.storedAt && header.metadata.expiresAt == nil)
            return try EntryRecord.value(of: header, codec: codec, largestValue: 1 << 20)
        }
        #expect(value == Array("hello, version 1".utf8))
        // This version still writes the same bytes.
        let written = EntryRecord.encode(
            CacheEntry(value: Array("hello, version 1".utf8), storedAt: Self.storedAt), fullKey: nil, codec: codec)
        #expect(written == Self.versionOneRecord, "\(written)")
    }

    @Test(
        "A record of another format version is refused as such, never decoded", arguments: [0, 2, 3, 9, 255] as [UInt8])
    func otherVersions(version: UInt8) {
        var record = Self.versionOneRecord
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
