import Foundation
import TierCache

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
    /// Values' original bytes divided by their stored payload bytes (1 when empty).
    public var compressionRatio: Double
    /// Records that failed to decode (a later lookup deletes them).
    public var damagedRecords: Int
    /// The largest entries by stored size, largest first.
    public var largest: [Entry]
    /// The oldest entries by stored-at, oldest first.
    public var oldest: [Entry]
}

extension LMDBTier {
    /// Opens the store in `directory` read-only and summarises it, listing `top` entries in each
    /// listing. Changes nothing, and works while other processes use the store.
    public static func inspect(directory: URL, top: Int = 5) throws(TierCacheError) -> LMDBInspection {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.appendingPathComponent("data.mdb").path, isDirectory: &isDirectory),
              !isDirectory.boolValue
        else {
            throw TierCacheError(.foreignStore, "\(directory.path) holds no TierCache store (no data.mdb)")
        }
        // LMDB follows whatever page numbers and offsets it finds; check them first, so a damaged
        // store is reported rather than crashing the inspector.
        let check = LMDBStoreChecker(dataFile: directory.appendingPathComponent("data.mdb").path)
            .checkWhileOthersMayWrite(scope: .structure)
        if let foreign = check.foreign {
            throw TierCacheError(.foreignStore, "\(directory.path) holds an LMDB database that TierCache did not create (\(foreign))")
        }
        if let unreadable = check.unreadable {
            throw TierCacheError(.storageFailure, "could not check the store at \(directory.path): \(unreadable)")
        }
        if let damage = check.damage {
            throw TierCacheError(.damagedStore, "the store at \(directory.path) is damaged: \(damage)")
        }
        let environment = try openEnvironment(
            directory: directory, mapSize: nil, durability: .metadataAsync, maxReaders: 126, readOnly: true)
        do {
            return try environment.read { txn in
                var originalTotal = 0, payloadTotal = 0, damaged = 0
                var all: [LMDBInspection.Entry] = []
                try txn.forEach(environment.entries) { key, record in
                    guard let header = try? StoredRecord.header(of: record) else {
                        damaged += 1
                        return
                    }
                    let keyText = String(decoding: header.fullKey ?? key, as: UTF8.self)
                    originalTotal += header.originalSize
                    payloadTotal += header.payload.count
                    all.append(LMDBInspection.Entry(
                        key: keyText, originalBytes: header.originalSize, storedBytes: record.count,
                        storedAt: header.metadata.storedAt, expiresAt: header.metadata.expiresAt))
                }
                let fileSize = (try? FileManager.default.attributesOfItem(
                    atPath: directory.appendingPathComponent("data.mdb").path)[.size] as? Int) ?? 0
                return LMDBInspection(
                    directory: directory.path,
                    capacity: Int(try txn.metaValue("capacity") ?? 0),
                    bytesInUse: try txn.writeState().used,
                    entries: txn.entryCount(environment.entries),
                    dataFileBytes: fileSize,
                    compressionRatio: payloadTotal == 0 ? 1 : Double(originalTotal) / Double(payloadTotal),
                    damagedRecords: damaged,
                    largest: Array(all.sorted { $0.storedBytes > $1.storedBytes }.prefix(top)),
                    oldest: Array(all.sorted { $0.storedAt < $1.storedAt }.prefix(top)))
            }
        } catch let error as TierCacheError {
            throw error
        } catch {
            throw TierCacheError(.storageFailure, "could not read the store at \(directory.path)", underlying: "\(error)")
        }
    }
}
