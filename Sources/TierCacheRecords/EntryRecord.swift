import Foundation
import TierCache

/// The stored form of an entry (format version 3), little-endian:
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 1 | format version (3) |
/// | 1 | 1 | flags: bit 0 payload is a zstd frame, bit 1 full key follows the header, bit 2 the frame needs a dictionary, bit 3 payload is a zlib stream, bit 4 the checksum covers the key the record is stored under |
/// | 2 | 2 | the dictionary's id (with flag bit 2), else 0 |
/// | 4 | 4 | original value size |
/// | 8 | 8 | stored-at, seconds since 2001-01-01 (IEEE double, `Date`'s own representation, so it round-trips exactly) |
/// | 16 | 8 | expires-at, likewise, NaN when absent |
/// | 24 | 4 | checksum of the other header fields, the full key and a raw payload (compressed frames carry their own) |
/// | 28 | 4 | full key length (0 unless flag bit 1) |
/// | 32 | n | full key, then the payload |
///
/// A record bound to its key (flag bit 4) is read only under that key: the checksum starts from
/// the key's, so a record that ends up under another key (a bit of the key flipped where a store
/// keeps it, two records' places swapped) fails it instead of answering for that key. The LMDB
/// tier binds its records; the Redis tier does not (servers of an earlier version, in a rolling
/// deploy, would take bound records for damaged ones and delete them).
///
/// Format version 1, still read, differs only in its checksum, which covers a raw payload alone
/// (0 with a compressed one): damage to its times could go unnoticed, an entry never expire.
/// (Version 2 is taken: it marks a ``SealedEnvelope``, which readers of records alone reject.)
///
/// Anything that does not match (another version, unknown flags, impossible lengths, a bad
/// checksum, a frame that fails to decode) decodes as ``DecodeFailure``: the tier counts it and
/// deletes the record, except that a shared tier leaves a record of another format version in
/// place (``DecodeFailure/isUnknownFormatVersion``; a newer TierCache may be writing them). A
/// record naming a dictionary decodes only with that dictionary; which dictionary an id means is
/// the tier's to keep (see ``ZstdDictionary``). A TierCache that reads version 1 only takes a
/// version 3 record for another version's.
///
/// A tier that encrypts wraps the whole record in a ``SealedEnvelope``.
///
/// The LMDB and Redis tiers store this same record with zstd payloads, so a value compressed by one
/// reads in the other; the SQLite tier stores it with zlib payloads (every Apple SDK has zlib, none
/// has zstd). A tier reads only the payload format of its ``RecordCompressor``: a record whose
/// payload is in another format is refused like a damaged one.
public enum EntryRecord {
    /// The format version this code writes.
    public static let formatVersion: UInt8 = 3
    /// The first format version, still read.
    public static let firstFormatVersion: UInt8 = 1
    public static let headerSize = 32
    /// The largest value a record can describe (its size field is 32 bits), or `Int.max` where an
    /// `Int` is 32 bits itself (watchOS on arm64_32).
    public static let maximumValueSize = Int(clamping: UInt32.max)

    /// The largest value a tier of `capacity` bytes stores and reads: its capacity (a compressible
    /// value takes far fewer bytes than it holds, but none is larger than the whole tier), and at
    /// most ``maximumValueSize``. A record that declares more is damage, refused before anything
    /// is allocated: decompressing allocates what the header says, and a zstd frame of 128 KiB
    /// can declare 4 GiB.
    public static func largestValue(inCapacity capacity: Int) -> Int { max(0, min(maximumValueSize, capacity)) }
    private static let fullKeyFlag: UInt8 = 2
    private static let dictionaryFlag: UInt8 = 4
    private static let keyBoundFlag: UInt8 = 16
    private static let compressedFlags = PayloadFormat.zstd.rawValue | PayloadFormat.zlib.rawValue
    private static let knownFlags: UInt8 = compressedFlags | fullKeyFlag | dictionaryFlag | keyBoundFlag

    /// The compression format of a record's payload: its flag bit in the header.
    public enum PayloadFormat: UInt8, Sendable, CustomStringConvertible {
        /// A zstd frame (LMDB and Redis tiers).
        case zstd = 1
        /// A zlib stream (SQLite tier).
        case zlib = 8

        /// The format's name.
        public var description: String {
            switch self {
            case .zstd: "zstd"
            case .zlib: "zlib"
            }
        }
    }

    public struct DecodeFailure: Error, Sendable {
        public let reason: String
        /// Whether the record is in a format version this code does not read (written by another
        /// TierCache version), rather than damaged.
        public let isUnknownFormatVersion: Bool

        public init(reason: String, isUnknownFormatVersion: Bool = false) {
            self.reason = reason
            self.isUnknownFormatVersion = isUnknownFormatVersion
        }
    }

    /// Encodes `entry`, compressing the value with `codec` when that makes it smaller; with
    /// `dictionary`, compressing with it. With `boundKey`, the key the record will be stored
    /// under, the record reads only under that key (``header(of:storedUnder:)``).
    public static func encode<Codec: RecordCompressor>(
        _ entry: CacheEntry, fullKey: [UInt8]?, codec: Codec,
        dictionary: RecordDictionary<Codec.Dictionary>? = nil, boundTo boundKey: [UInt8]? = nil
    ) -> [UInt8] {
        let keyLength = fullKey?.count ?? 0
        let payloadOffset = headerSize + keyLength
        let valueCount = entry.value.count
        let bound = max(Codec.compressedBound(valueCount), valueCount)
        return [UInt8](unsafeUninitializedCapacity: payloadOffset + bound) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            let payload = UnsafeMutableRawBufferPointer(rebasing: raw[payloadOffset...])
            var flags: UInt8 = 0
            var dictionaryID: UInt16 = 0
            var payloadCount = valueCount
            entry.value.withUnsafeBytes { value in
                // Compress with room for the worst case (zstd compresses in one pass only when
                // the output cannot run short), then keep the frame only if it shrank the value:
                // one that does not is not worth its decompression cost.
                if valueCount > 0,
                    let compressed = codec.compress(value, into: payload, dictionary: dictionary?.dictionary),
                    compressed < valueCount
                {
                    flags |= Codec.format.rawValue
                    if let dictionary {
                        flags |= dictionaryFlag
                        dictionaryID = dictionary.id
                    }
                    payloadCount = compressed
                } else {
                    if valueCount > 0 { payload.copyMemory(from: value) }
                }
            }
            if boundKey != nil { flags |= keyBoundFlag }
            if let fullKey {
                flags |= fullKeyFlag
                fullKey.withUnsafeBytes {
                    UnsafeMutableRawBufferPointer(rebasing: raw[headerSize...]).copyMemory(from: $0)
                }
            }
            raw.storeBytes(of: formatVersion, toByteOffset: 0, as: UInt8.self)
            raw.storeBytes(of: flags, toByteOffset: 1, as: UInt8.self)
            raw.storeBytes(of: dictionaryID.littleEndian, toByteOffset: 2, as: UInt16.self)
            raw.storeBytes(of: UInt32(valueCount).littleEndian, toByteOffset: 4, as: UInt32.self)
            let storedAt = entry.metadata.storedAt.timeIntervalSinceReferenceDate.bitPattern
            raw.storeBytes(of: storedAt.littleEndian, toByteOffset: 8, as: UInt64.self)
            let expiresAt = (entry.metadata.expiresAt?.timeIntervalSinceReferenceDate ?? .nan).bitPattern
            raw.storeBytes(of: expiresAt.littleEndian, toByteOffset: 16, as: UInt64.self)
            raw.storeBytes(of: UInt32(keyLength).littleEndian, toByteOffset: 28, as: UInt32.self)
            let covered = flags & compressedFlags == 0 ? payloadOffset + payloadCount : payloadOffset
            let keySeed = boundKey.map { key in key.withUnsafeBytes { Checksum.of($0) } } ?? 0
            let checksum = recordChecksum(UnsafeRawBufferPointer(rebasing: raw[..<covered]), keySeed: keySeed)
            raw.storeBytes(of: checksum.littleEndian, toByteOffset: 24, as: UInt32.self)
            initialized = payloadOffset + payloadCount
        }
    }

    /// The dictionary a record just encoded names, read without checking the record (``header(of:)``
    /// checks it, and hashes a raw payload to do so): for the writer that made it.
    public static func dictionaryID(ofEncoded record: UnsafeRawBufferPointer) -> UInt16? {
        guard record.count >= headerSize, record.load(fromByteOffset: 1, as: UInt8.self) & dictionaryFlag != 0 else {
            return nil
        }
        return UInt16(littleEndian: record.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
    }

    /// The checksum of a record of this format version cut after what it covers: every byte but
    /// the checksum field's own, after the checksum of the key it is bound to (`keySeed`, 0 for
    /// none: a seed of 0 is no seed, so unbound records keep the checksum they always had).
    private static func recordChecksum(_ covered: UnsafeRawBufferPointer, keySeed: UInt32) -> UInt32 {
        Checksum.of(
            UnsafeRawBufferPointer(rebasing: covered[28...]),
            seed: Checksum.of(UnsafeRawBufferPointer(rebasing: covered[..<24]), seed: keySeed))
    }

    /// The header fields, checked against the record's checksum (format version 1: unchecked),
    /// without decompressing the payload.
    public struct Header {
        /// The payload's compression format, or `nil` for a raw payload.
        public var format: PayloadFormat?
        /// Whether the payload is compressed.
        public var isCompressed: Bool { format != nil }
        /// The id of the dictionary the frame needs, if it needs one.
        public var dictionaryID: UInt16?
        public var originalSize: Int
        public var metadata: CacheEntry.Metadata
        /// The record's checksum field.
        public var checksum: UInt32
        public var fullKey: UnsafeRawBufferPointer?
        public var payload: UnsafeRawBufferPointer
        /// Whether ``checksum`` covered a raw payload already (format version 3), or the payload
        /// is still to be checked against it (format version 1).
        var payloadChecked: Bool
    }

    /// The header of `record`, checked. `storedUnder` is the key the record was found under: a
    /// record bound to its key (``encode(_:fullKey:codec:dictionary:boundTo:)``) is checked
    /// against it, and fails without it; other records ignore it.
    public static func header(
        of record: UnsafeRawBufferPointer, storedUnder key: UnsafeRawBufferPointer? = nil
    ) throws(DecodeFailure) -> Header {
        guard record.count >= headerSize else { throw DecodeFailure(reason: "record shorter than its header") }
        let version = record.load(fromByteOffset: 0, as: UInt8.self)
        guard version == formatVersion || version == firstFormatVersion else {
            throw DecodeFailure(reason: "format version \(version)", isUnknownFormatVersion: true)
        }
        let flags = record.load(fromByteOffset: 1, as: UInt8.self)
        guard flags & ~knownFlags == 0 else { throw DecodeFailure(reason: "unknown flags \(flags)") }
        var keySeed: UInt32 = 0
        if flags & keyBoundFlag != 0 {
            guard version == formatVersion else {
                throw DecodeFailure(reason: "a version \(version) record bound to a key")
            }
            guard let key else { throw DecodeFailure(reason: "a record bound to its key, read without it") }
            keySeed = Checksum.of(key)
        }
        let dictionaryID = UInt16(littleEndian: record.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
        let format: PayloadFormat?
        switch flags & compressedFlags {
        case 0: format = nil
        case PayloadFormat.zstd.rawValue: format = .zstd
        case PayloadFormat.zlib.rawValue: format = .zlib
        default: throw DecodeFailure(reason: "flags \(flags) name two payload formats")
        }
        let needsDictionary = flags & dictionaryFlag != 0
        guard needsDictionary ? format != nil : dictionaryID == 0 else {
            throw DecodeFailure(reason: "dictionary field \(dictionaryID) with flags \(flags)")
        }
        // `Int(exactly:)`: a damaged size or key length of 2^31 or more is damage where an `Int` is
        // 32 bits, not a trap.
        guard
            let originalSize = Int(
                exactly: UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        else { throw DecodeFailure(reason: "a value size this platform cannot hold") }
        let storedAt = Double(
            bitPattern: UInt64(littleEndian: record.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        let expiresAt = Double(
            bitPattern: UInt64(littleEndian: record.loadUnaligned(fromByteOffset: 16, as: UInt64.self)))
        let checksum = UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 24, as: UInt32.self))
        guard
            let keyLength = Int(
                exactly: UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 28, as: UInt32.self)))
        else { throw DecodeFailure(reason: "a key length this platform cannot hold") }
        guard storedAt.isFinite else { throw DecodeFailure(reason: "stored-at is not a time") }
        guard keyLength <= record.count - headerSize else { throw DecodeFailure(reason: "key length past the end") }
        let hasFullKey = flags & fullKeyFlag != 0
        guard hasFullKey || keyLength == 0 else { throw DecodeFailure(reason: "key length without key flag") }
        let payload = UnsafeRawBufferPointer(rebasing: record[(headerSize + keyLength)...])
        guard format != nil || payload.count == originalSize else {
            throw DecodeFailure(reason: "raw payload of \(payload.count) bytes, header says \(originalSize)")
        }
        let checksumCoversRecord = version == formatVersion
        if checksumCoversRecord {
            let covered = format == nil ? record.count : headerSize + keyLength
            guard recordChecksum(UnsafeRawBufferPointer(rebasing: record[..<covered]), keySeed: keySeed) == checksum
            else {
                throw DecodeFailure(reason: "checksum mismatch")
            }
        } else if format != nil, checksum != 0 {
            // Version 1 wrote 0 there with a compressed payload: a version 3 record whose version
            // byte lost a bit (3 to 1) must not be read unchecked.
            throw DecodeFailure(reason: "a version 1 compressed record with a checksum")
        }
        return Header(
            format: format,
            dictionaryID: needsDictionary ? dictionaryID : nil,
            originalSize: originalSize,
            metadata: CacheEntry.Metadata(
                storedAt: Date(timeIntervalSinceReferenceDate: storedAt),
                expiresAt: expiresAt.isNaN ? nil : Date(timeIntervalSinceReferenceDate: expiresAt)),
            checksum: checksum,
            fullKey: hasFullKey ? UnsafeRawBufferPointer(rebasing: record[headerSize..<(headerSize + keyLength)]) : nil,
            payload: payload,
            payloadChecked: checksumCoversRecord)
    }

    /// The value, decompressed and verified. A record naming a dictionary needs it as
    /// `dictionary` (the caller looks its id up); a payload in another format than `codec`'s
    /// fails, and so does one that declares more than `largestValue` bytes
    /// (``largestValue(inCapacity:)``).
    public static func value<Codec: RecordCompressor>(
        of header: Header, codec: Codec, dictionary: Codec.Dictionary? = nil, largestValue: Int
    ) throws(DecodeFailure) -> [UInt8] {
        guard header.originalSize <= largestValue else {
            throw DecodeFailure(
                reason: "a value of \(header.originalSize) bytes, more than the \(largestValue) a value can hold here")
        }
        if let format = header.format {
            guard format == Codec.format else {
                throw DecodeFailure(reason: "a \(format) payload, where \(Codec.format) is expected")
            }
            if let id = header.dictionaryID, dictionary == nil {
                throw DecodeFailure(reason: "the record needs dictionary \(id)")
            }
            return try codec.decompress(
                header.payload, originalSize: header.originalSize,
                dictionary: header.dictionaryID == nil ? nil : dictionary)
        }
        guard header.payloadChecked || Checksum.of(header.payload) == header.checksum else {
            throw DecodeFailure(reason: "checksum mismatch")
        }
        return [UInt8](header.payload)
    }
}
