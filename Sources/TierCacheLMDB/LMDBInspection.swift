import Foundation
import TierCache
import TierCacheCompression
import TierCacheRecords

/// A read-only summary of a disk tier's store, as `tiercache inspect` prints it.
public struct LMDBInspection: Sendable, Codable, Hashable {
    /// One entry in a listing.
    public struct Entry: Sendable, Codable, Hashable {
        /// The entry's key.
        public var key: String
        /// The value's size before compression.
        public var originalBytes: Int
        /// The record's size on disk (header, key if hashed, payload).
        public var storedBytes: Int
        /// When the entry was stored.
        public var storedAt: Date
        /// The entry's expiry hint, if it has one.
        public var expiresAt: Date?
    }

    /// The store's directory.
    public var directory: String
    /// The capacity the store was created with, in bytes.
    public var capacity: Int
    /// Accounted bytes in use (see ``LMDBTier``).
    public var bytesInUse: Int
    /// How many entries the store holds.
    public var entries: Int
    /// Size of `data.mdb` on disk.
    public var dataFileBytes: Int
    /// Values' original bytes divided by their stored payload bytes (1 when empty), over the
    /// records the inspection could read.
    public var compressionRatio: Double
    /// The values' bytes before compression, over the records the inspection could read.
    public var valueBytes: Int
    /// Those records' bytes as stored (headers, keys kept in records, sealing).
    public var recordBytes: Int
    /// The zstd dictionaries the store holds, oldest first.
    public var dictionaries: [LMDBDictionaryInfo]
    /// Records compressed with a dictionary, by dictionary id (as text, for JSON).
    public var recordsByDictionary: [String: Int]
    /// The compression ratio of the records compressed with a dictionary, measured on up to 256
    /// of them; `nil` when there are none.
    public var dictionaryRecordsRatio: Double?
    /// The same values' ratio compressed alone, without the dictionary.
    public var dictionaryRecordsRatioWithout: Double?
    /// Sealed (encrypted) records, by the id of the key that sealed them (as text, for JSON).
    public var sealedRecordsByKey: [String: Int]
    /// Sealed records the inspection could not open (no key given, or not the right one); they
    /// are left out of the ratios and listings.
    public var unopenedRecords: Int
    /// Records that failed to decode (a later lookup deletes them).
    public var damagedRecords: Int
    /// Records in a format version this release does not read (a newer TierCache sharing the
    /// store wrote them; a later lookup here removes them). Not in ``damagedRecords``.
    public var unknownFormatRecords: Int
    /// The largest entries by stored size, largest first.
    public var largest: [Entry]
    /// The oldest entries by stored-at, oldest first.
    public var oldest: [Entry]
}

extension LMDBInspection {
    /// Decodes an inspection. `unknownFormatRecords`, which JSON written by 0.1.0 lacks, reads as
    /// 0, so that reports saved then still load.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        directory = try container.decode(String.self, forKey: .directory)
        capacity = try container.decode(Int.self, forKey: .capacity)
        bytesInUse = try container.decode(Int.self, forKey: .bytesInUse)
        entries = try container.decode(Int.self, forKey: .entries)
        dataFileBytes = try container.decode(Int.self, forKey: .dataFileBytes)
        compressionRatio = try container.decode(Double.self, forKey: .compressionRatio)
        valueBytes = try container.decode(Int.self, forKey: .valueBytes)
        recordBytes = try container.decode(Int.self, forKey: .recordBytes)
        dictionaries = try container.decode([LMDBDictionaryInfo].self, forKey: .dictionaries)
        recordsByDictionary = try container.decode([String: Int].self, forKey: .recordsByDictionary)
        dictionaryRecordsRatio = try container.decodeIfPresent(Double.self, forKey: .dictionaryRecordsRatio)
        dictionaryRecordsRatioWithout = try container.decodeIfPresent(
            Double.self, forKey: .dictionaryRecordsRatioWithout)
        sealedRecordsByKey = try container.decode([String: Int].self, forKey: .sealedRecordsByKey)
        unopenedRecords = try container.decode(Int.self, forKey: .unopenedRecords)
        damagedRecords = try container.decode(Int.self, forKey: .damagedRecords)
        unknownFormatRecords = try container.decodeIfPresent(Int.self, forKey: .unknownFormatRecords) ?? 0
        largest = try container.decode([Entry].self, forKey: .largest)
        oldest = try container.decode([Entry].self, forKey: .oldest)
    }
}

extension LMDBTier {
    /// Opens the store in `directory` read-only and summarises it, listing `top` entries in each
    /// listing. Changes nothing, and works while other processes use the store. Give the tier's
    /// `encryption` to look inside sealed records; without it they are counted, not read.
    /// Throws `invalidConfiguration` for a negative `top`.
    public static func inspect(
        directory: URL, top: Int = 5, encryption: (any RecordSealing)? = nil
    ) throws(TierCacheError) -> LMDBInspection {
        guard top >= 0 else { throw TierCacheError(.invalidConfiguration, "top must not be negative; got \(top)") }
        var isDirectory: ObjCBool = false
        guard
            FileManager.default.fileExists(
                atPath: directory.appendingPathComponent("data.mdb").path, isDirectory: &isDirectory),
            !isDirectory.boolValue
        else {
            throw TierCacheError(.foreignStore, "\(directory.path) holds no LMDB tier store (no data.mdb)")
        }
        // LMDB follows whatever page numbers and offsets it finds; check them first, so a damaged
        // store is reported rather than crashing the inspector.
        let check = LMDBStoreChecker(dataFile: directory.appendingPathComponent("data.mdb").path)
            .checkWhileOthersMayWrite(scope: .structure)
        if let foreign = check.foreign {
            throw TierCacheError(
                .foreignStore, "\(directory.path) holds an LMDB database that TierCache did not create (\(foreign))")
        }
        if let unreadable = check.unreadable {
            throw TierCacheError(.storageFailure, "could not check the store at \(directory.path): \(unreadable)")
        }
        if let damage = check.damage {
            throw TierCacheError(.damagedStore, "the store at \(directory.path) is damaged: \(damage)")
        }
        // The environment of a tier open on the store in this process, if any: a second one
        // would break LMDB's locks under it (``SharedEnvironments``).
        let lease = try SharedEnvironments.lease(
            directory: directory, mapSize: nil, durability: .metadataAsync, maxReaders: 126, readOnly: true)
        // Past the read's last reference to the environment: only the table's may be the last.
        defer { withExtendedLifetime(lease) {} }
        guard let codec = ZstdCodec(level: 1) else { throw TierCacheError(.storageFailure, "zstd is unavailable") }
        do {
            return try lease.environment.read { txn in
                let shelf = DictionaryShelf(level: codec.level, sealer: encryption, maximumValueSize: 0)
                let capacity = Int(clamping: try txn.metaValue("capacity") ?? 0)
                var originalTotal = 0, payloadTotal = 0, recordTotal = 0, damaged = 0, unknownFormat = 0, unopened = 0
                var byDictionary: [String: Int] = [:], byKey: [String: Int] = [:]
                var dictionaryTotals = (original: 0, with: 0, without: 0, sampled: 0)
                var all: [LMDBInspection.Entry] = []
                var scratch: [UInt8] = []
                try txn.forEach(lease.environment.entries) { key, stored in
                    var opened: [UInt8]?
                    if SealedEnvelope.isSealed(stored) {
                        byKey[SealedEnvelope.keyID(of: stored).map(String.init) ?? "?", default: 0] += 1
                        guard let encryption,
                            let plain = try? SealedEnvelope.open(stored, context: key, with: encryption)
                        else {
                            unopened += 1
                            return
                        }
                        opened = plain
                    }
                    (opened ?? [UInt8](stored)).withUnsafeBytes { (record: UnsafeRawBufferPointer) -> Void in
                        let header: StoredRecord.Header
                        do throws(StoredRecord.DecodeFailure) {
                            header = try StoredRecord.header(of: record, storedUnder: key)
                        } catch {
                            if error.isUnknownFormatVersion { unknownFormat += 1 } else { damaged += 1 }
                            return
                        }
                        let keyText = String(decoding: header.fullKey ?? key, as: UTF8.self)
                        originalTotal += header.originalSize
                        payloadTotal += header.payload.count
                        recordTotal += stored.count
                        if let id = header.dictionaryID {
                            byDictionary[String(id), default: 0] += 1
                            // How these values compress alone, on a sample: what the dictionary gains.
                            if dictionaryTotals.sampled < 256, let dictionary = shelf.dictionary(id, in: txn),
                                let value = try? StoredRecord.value(
                                    of: header, codec: codec, dictionary: dictionary,
                                    largestValue: StoredRecord.largestValue(inCapacity: capacity))
                            {
                                if scratch.count < ZstdCodec.compressedBound(value.count) {
                                    scratch = [UInt8](repeating: 0, count: ZstdCodec.compressedBound(value.count))
                                }
                                let alone =
                                    value.withUnsafeBytes { plain in
                                        scratch.withUnsafeMutableBytes { codec.compress(plain, into: $0) }
                                    } ?? value.count
                                dictionaryTotals.original += value.count
                                dictionaryTotals.with += header.payload.count
                                dictionaryTotals.without += alone
                                dictionaryTotals.sampled += 1
                            }
                        }
                        all.append(
                            LMDBInspection.Entry(
                                key: keyText, originalBytes: header.originalSize, storedBytes: stored.count,
                                storedAt: header.metadata.storedAt, expiresAt: header.metadata.expiresAt))
                    }
                }
                let fileSize =
                    (try? FileManager.default.attributesOfItem(
                        atPath: directory.appendingPathComponent("data.mdb").path)[.size] as? Int) ?? 0
                return LMDBInspection(
                    directory: directory.path,
                    capacity: capacity,
                    bytesInUse: try txn.writeState().used,
                    entries: txn.entryCount(lease.environment.entries),
                    dataFileBytes: fileSize,
                    compressionRatio: payloadTotal == 0 ? 1 : Double(originalTotal) / Double(payloadTotal),
                    valueBytes: originalTotal,
                    recordBytes: recordTotal,
                    dictionaries: try txn.dictionaryRows(sealer: encryption).map(\.info),
                    recordsByDictionary: byDictionary,
                    dictionaryRecordsRatio: dictionaryTotals.sampled == 0
                        ? nil : Double(dictionaryTotals.original) / Double(max(1, dictionaryTotals.with)),
                    dictionaryRecordsRatioWithout: dictionaryTotals.sampled == 0
                        ? nil : Double(dictionaryTotals.original) / Double(max(1, dictionaryTotals.without)),
                    sealedRecordsByKey: byKey,
                    unopenedRecords: unopened,
                    damagedRecords: damaged,
                    unknownFormatRecords: unknownFormat,
                    largest: Array(all.sorted { $0.storedBytes > $1.storedBytes }.prefix(top)),
                    oldest: Array(all.sorted { $0.storedAt < $1.storedAt }.prefix(top)))
            }
        } catch let error as TierCacheError {
            throw error
        } catch {
            throw TierCacheError(
                .storageFailure, "could not read the store at \(directory.path)", underlying: "\(error)")
        }
    }
}
