import Foundation
import TierCache
import TierCacheCompression
import TierCacheRecords

/// A zstd dictionary as the store keeps it: a row of the metadata database under
/// `dictionary.` and its id (big-endian), so that listing them is a short scan.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 1 | format version (1) |
/// | 1 | 1 | flags: bit 0 provided by the app, bit 1 sealed |
/// | 2 | 2 | reserved (0) |
/// | 4 | 4 | samples it was trained on (0 when provided) |
/// | 8 | 8 | created-at, seconds since 2001-01-01 (IEEE double) |
/// | 16 | 8 | compression ratio on its samples with it (NaN when unknown) |
/// | 24 | 8 | the same samples' ratio without it (NaN when unknown) |
/// | 32 | 4 | checksum of the dictionary's bytes |
/// | 36 | 4 | reserved (0) |
/// | 40 | n | the dictionary, or a ``SealedEnvelope`` of it when the store is encrypted (dictionaries are trained on values, so they hold fragments of them) |
struct DictionaryRow {
    static let formatVersion: UInt8 = 1
    static let headerSize = 40
    static let keyPrefix = Array("dictionary.".utf8)
    private static let providedFlag: UInt8 = 1
    private static let sealedFlag: UInt8 = 2

    var id: UInt16
    var isProvided: Bool
    var samples: Int
    var createdAt: Date
    var ratioWith: Double?
    var ratioWithout: Double?
    /// The dictionary's bytes, or `nil` when sealed under a key not at hand.
    var bytes: [UInt8]?
    var isSealed: Bool
    /// The row's stored size.
    var storedSize: Int

    /// The metadata key of dictionary `id`.
    static func key(_ id: UInt16) -> [UInt8] {
        keyPrefix + [UInt8(id >> 8), UInt8(id & 0xFF)]
    }

    /// The dictionary id a metadata key names, or `nil` for other rows.
    static func id(ofKey key: UnsafeRawBufferPointer) -> UInt16? {
        guard key.count == keyPrefix.count + 2, key.starts(with: keyPrefix) else { return nil }
        return UInt16(key[keyPrefix.count]) << 8 | UInt16(key[keyPrefix.count + 1])
    }

    /// The checksum of the dictionary's bytes a stored row records (sealed or not), or `nil` for
    /// a row too short to be one.
    static func checksum(ofRow row: UnsafeRawBufferPointer) -> UInt32? {
        guard row.count > headerSize, row[0] == formatVersion else { return nil }
        return UInt32(littleEndian: row.loadUnaligned(fromByteOffset: 32, as: UInt32.self))
    }

    /// What the sealed dictionary is bound to: its id, so rows cannot be swapped.
    private static func sealingContext(_ id: UInt16) -> [UInt8] {
        Array("tiercache.dictionary.".utf8) + [UInt8(id >> 8), UInt8(id & 0xFF)]
    }

    /// The row's bytes, sealing the dictionary when `sealer` is given.
    func encoded(sealer: (any RecordSealing)?) throws -> [UInt8] {
        guard let bytes else { throw TierCacheError(.storageFailure, "dictionary \(id) has no bytes to store") }
        var row = [UInt8](repeating: 0, count: Self.headerSize)
        row[0] = Self.formatVersion
        row[1] = (isProvided ? Self.providedFlag : 0) | (sealer != nil ? Self.sealedFlag : 0)
        row.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: UInt32(clamping: samples).littleEndian, toByteOffset: 4, as: UInt32.self)
            raw.storeBytes(
                of: createdAt.timeIntervalSinceReferenceDate.bitPattern.littleEndian, toByteOffset: 8, as: UInt64.self)
            raw.storeBytes(of: (ratioWith ?? .nan).bitPattern.littleEndian, toByteOffset: 16, as: UInt64.self)
            raw.storeBytes(of: (ratioWithout ?? .nan).bitPattern.littleEndian, toByteOffset: 24, as: UInt64.self)
            raw.storeBytes(
                of: bytes.withUnsafeBytes { Checksum.of($0) }.littleEndian, toByteOffset: 32, as: UInt32.self)
        }
        if let sealer {
            let context = Self.sealingContext(id)
            row += try bytes.withUnsafeBytes { plain in
                try context.withUnsafeBytes { try SealedEnvelope.seal(plain, context: $0, with: sealer) }
            }
        } else {
            row += bytes
        }
        return row
    }

    /// Decodes a row; a sealed dictionary is opened with `sealer` (its bytes are `nil` without
    /// one, or when it fails to open). With a `sealer`, a plain row's bytes are `nil` too: an
    /// encrypted store seals its dictionaries when it opens (``LMDBTier`` reseals plain ones), so
    /// a plain row in it was planted, or its unauthenticated sealed flag was cleared. Read such
    /// rows with no sealer to seal them.
    static func decode(
        _ row: UnsafeRawBufferPointer, id: UInt16, sealer: (any RecordSealing)?
    ) throws(EntryRecord.DecodeFailure) -> DictionaryRow {
        guard row.count > headerSize, row[0] == formatVersion else {
            throw EntryRecord.DecodeFailure(reason: "dictionary \(id): not a dictionary row")
        }
        let flags = row[1]
        func double(_ offset: Int) -> Double? {
            let value = Double(
                bitPattern: UInt64(littleEndian: row.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
            return value.isFinite ? value : nil
        }
        guard let created = double(8) else {
            throw EntryRecord.DecodeFailure(reason: "dictionary \(id): no creation time")
        }
        let checksum = UInt32(littleEndian: row.loadUnaligned(fromByteOffset: 32, as: UInt32.self))
        let content = UnsafeRawBufferPointer(rebasing: row[headerSize...])
        let isSealed = flags & sealedFlag != 0
        var bytes: [UInt8]?
        if isSealed {
            if let sealer {
                bytes = try? sealingContext(id).withUnsafeBytes {
                    try SealedEnvelope.open(content, context: $0, with: sealer)
                }
            }
        } else if sealer == nil {
            bytes = [UInt8](content)
        }
        if let plain = bytes, plain.withUnsafeBytes({ Checksum.of($0) }) != checksum {
            throw EntryRecord.DecodeFailure(reason: "dictionary \(id): checksum mismatch")
        }
        return DictionaryRow(
            id: id, isProvided: flags & providedFlag != 0,
            samples: Int(UInt32(littleEndian: row.loadUnaligned(fromByteOffset: 4, as: UInt32.self))),
            createdAt: Date(timeIntervalSinceReferenceDate: created),
            ratioWith: double(16), ratioWithout: double(24), bytes: bytes, isSealed: isSealed, storedSize: row.count)
    }
}

extension Transaction {
    /// Every dictionary row, in id order (rows that fail to decode are left out).
    func dictionaryRows(sealer: (any RecordSealing)?) throws -> [DictionaryRow] {
        var rows: [DictionaryRow] = []
        try forEach(environment.meta) { key, value in
            guard let id = DictionaryRow.id(ofKey: key) else { return }
            if let row = try? DictionaryRow.decode(value, id: id, sealer: sealer) { rows.append(row) }
        }
        return rows
    }

    /// The ids of the dictionary rows `removeAll()` deletes: all but those an app provided, and
    /// those that fail to decode (damage: a checksum that fails, a creation time that is no
    /// time), which no reader sees and which hold fragments of values all the same.
    func removableDictionaryRowIDs() throws -> [UInt16] {
        var ids: [UInt16] = []
        try forEach(environment.meta) { key, value in
            guard let id = DictionaryRow.id(ofKey: key) else { return }
            if (try? DictionaryRow.decode(value, id: id, sealer: nil))?.isProvided != true { ids.append(id) }
        }
        return ids
    }

    /// Dictionary `id`'s row, or `nil` when there is none (or it fails to decode).
    func dictionaryRow(_ id: UInt16, sealer: (any RecordSealing)?) throws -> DictionaryRow? {
        try DictionaryRow.key(id).withUnsafeBytes { key in
            guard let value = try get(environment.meta, key) else { return nil }
            return try? DictionaryRow.decode(value, id: id, sealer: sealer)
        }
    }
}
