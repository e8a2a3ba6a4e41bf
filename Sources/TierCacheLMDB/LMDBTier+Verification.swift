import CLMDB
import Foundation
import TierCache
import TierCacheCompression
import TierCacheRecords

/// What ``LMDBTier/verify()`` or ``LMDBTier/verify(directory:)`` found in a store.
public struct LMDBVerification: Sendable, Codable, Hashable {
    /// The first structural damage found (a page LMDB would misread), or `nil`. A store with
    /// structural damage must not be read by LMDB: opening it resets it (or, with
    /// ``LMDBTier/RecoveryPolicy/throwError``, throws `TierCacheError.Code.damagedStore`).
    public var structuralDamage: String?
    /// Entry records that fail to decode or verify. Each is a miss, deleted when looked up.
    public var damagedRecords: Int
    /// Up to ten keys of damaged records.
    public var damagedRecordKeys: [String]
    /// Entry records in a format version this release does not read: a newer TierCache sharing
    /// the store wrote them. Not damage (they are not in ``damagedRecords``, and leave the store
    /// ``isSound``): a lookup here misses one and removes it, counted in
    /// `TierStatistics.unknownFormatRecords`.
    public var unknownFormatRecords: Int
    /// Entry records walked.
    public var entries: Int
    /// Pages read: branch, leaf and overflow pages of every B-tree.
    public var pagesWalked: Int
    /// Pages on LMDB's free lists.
    public var freePages: Int
    /// LMDB's page size.
    public var pageSize: Int
    /// Bytes read from `data.mdb`.
    public var bytesRead: Int

    /// Whether nothing is damaged.
    public var isSound: Bool { structuralDamage == nil && damagedRecords == 0 }
}

extension LMDBVerification {
    /// Decodes a verification. `unknownFormatRecords`, which JSON written by 0.1.0 lacks, reads
    /// as 0, so that reports saved then still load.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        structuralDamage = try container.decodeIfPresent(String.self, forKey: .structuralDamage)
        damagedRecords = try container.decode(Int.self, forKey: .damagedRecords)
        damagedRecordKeys = try container.decode([String].self, forKey: .damagedRecordKeys)
        unknownFormatRecords = try container.decodeIfPresent(Int.self, forKey: .unknownFormatRecords) ?? 0
        entries = try container.decode(Int.self, forKey: .entries)
        pagesWalked = try container.decode(Int.self, forKey: .pagesWalked)
        freePages = try container.decode(Int.self, forKey: .freePages)
        pageSize = try container.decode(Int.self, forKey: .pageSize)
        bytesRead = try container.decode(Int.self, forKey: .bytesRead)
    }
}

extension LMDBTier {
    /// What opening found and did.
    struct CheckedOpen {
        var lease: SharedEnvironments.Lease
        var marker: CheckMarker
        /// Why the store was deleted and recreated, if it was.
        var resetReason: String?
    }

    /// Opens the environment under the "being checked" protocol (see ``CheckMarker``): when no
    /// other tier has the store open, marks it, checks its structure, opens it with LMDB and
    /// walks every B-tree through LMDB, then clears the mark. A mark found left behind by a
    /// process that died means that process crashed checking this store: the store is reset
    /// (or, with ``RecoveryPolicy/throwError``, reported as damaged) without being read again.
    static func openChecked(directory: URL, configuration: Configuration) throws(TierCacheError) -> CheckedOpen {
        let marker = try CheckMarker(directory: directory)
        func open() throws(TierCacheError) -> SharedEnvironments.Lease {
            let lease = try SharedEnvironments.lease(
                directory: directory, mapSize: configuration.capacity, durability: configuration.durability,
                maxReaders: configuration.maxReaders, readOnly: false)
            try Self.checkLayout(
                of: lease.environment, capacity: configuration.capacity, encrypting: configuration.encryption != nil)
            return lease
        }
        let path = directory.path
        switch marker.situation {
        case .shared(let stale?):
            throw TierCacheError(
                .damagedStore,
                "a process died while checking the store at \(path) (\(stale)); other processes still have it open, "
                    + "so it cannot be reset now")
        case .shared(nil):
            // Whoever opened it first checked it, and it is in use: not at rest to walk or reset.
            let lease = try open()
            marker.finishOpening()
            return CheckedOpen(lease: lease, marker: marker, resetReason: nil)
        case .alone(let stale):
            var resetReason: String?
            if let stale {
                guard configuration.recovery == .resetDamagedStore else {
                    throw TierCacheError(
                        .damagedStore,
                        "a process died while checking the store at \(path) (\(stale)); it may crash readers")
                }
                try deleteStoreFiles(in: directory)
                resetReason = "a process died while checking the store (\(stale))"
            }
            marker.mark()
            do throws(TierCacheError) {
                let dataFile = directory.appendingPathComponent("data.mdb").path
                if FileManager.default.fileExists(atPath: dataFile) {
                    let report = LMDBStoreChecker(dataFile: dataFile).check(scope: .structure)
                    if let unreadable = report.unreadable {
                        throw TierCacheError(.storageFailure, "could not check the store at \(path): \(unreadable)")
                    }
                    if let foreign = report.foreign {
                        throw TierCacheError(
                            .foreignStore,
                            "\(path) holds an LMDB database that TierCache did not create (\(foreign)); choose another directory"
                        )
                    }
                    if let damage = report.damage {
                        guard configuration.recovery == .resetDamagedStore else {
                            throw TierCacheError(.damagedStore, "the store at \(path) is damaged: \(damage)")
                        }
                        try deleteStoreFiles(in: directory)
                        resetReason = "the store was damaged: \(damage)"
                    }
                }
                let lease: SharedEnvironments.Lease
                do {
                    lease = try open()
                } catch let error
                    where configuration.recovery == .resetDamagedStore
                    && (error.code == .damagedStore || error.code == .incompatibleVersion)
                {
                    try deleteStoreFiles(in: directory)
                    resetReason = "LMDB could not open the store: \(error.message)"
                    lease = try open()
                }
                // Under the mark: if LMDB itself trips over something the check missed, it does
                // so here, once, and the next open resets the store instead of crashing again.
                try lease.environment.readEveryPage()
                marker.clear()
                marker.finishOpening()
                return CheckedOpen(lease: lease, marker: marker, resetReason: resetReason)
            } catch {
                // Thrown, not crashed: the mark must not make the next open reset the store.
                marker.clear()
                throw error
            }
        }
    }

    /// Walks every page and every record of the open store and reports damage, without changing
    /// anything. Safe to call while other processes use the store: the walk reads the snapshot of
    /// one read transaction, bounds-checking every access, so damage is reported rather than
    /// followed.
    ///
    /// Cost: reads the whole used part of `data.mdb` and decodes every entry (a full scan),
    /// opening sealed records and using the store's dictionaries as lookups do: a record sealed
    /// under a key this tier was not given, or needing a dictionary the store lost, counts as
    /// damaged; one in a newer format version counts apart (``LMDBVerification/unknownFormatRecords``).
    /// The walk holds one read transaction throughout: on a store of gigabytes, the pages freed
    /// meanwhile cannot be reused until it ends, and stores beside it may evict more, or be
    /// refused as out of space. Verify a large store at a quiet time.
    public func verify() throws(TierCacheError) -> LMDBVerification {
        let dataFile = directory.appendingPathComponent("data.mdb").path
        do {
            // Busy writers can rewrite both meta pages between the snapshot's start and the check
            // reading them: a sound store, checked again on a newer snapshot.
            var attempts = 0
            while true {
                attempts += 1
                let report = try environment.read { txn in
                    let scope = LMDBStoreChecker.Scope.records { key, record in
                        switch self.decode(record, storedUnder: key, owner: nil, now: nil, in: txn) {
                        case .entry: .sound
                        case .unusable(.unknownFormat): .unknownFormat
                        default: .damaged
                        }
                    }
                    return LMDBStoreChecker(dataFile: dataFile).check(
                        scope: scope, transactionID: UInt64(mdb_txn_id(txn.txn)))
                }
                if report.snapshotRewritten, attempts < 5 { continue }
                if let unreadable = report.unreadable {
                    throw TierCacheError(
                        .storageFailure, "could not check the store at \(directory.path): \(unreadable)")
                }
                return LMDBVerification(report)
            }
        } catch let error as TierCacheError {
            throw error
        } catch {
            throw TierCacheError(
                .storageFailure, "could not verify the store at \(directory.path)", underlying: "\(error)")
        }
    }

    /// Walks every page and every record of the store in `directory` without opening it with
    /// LMDB, and reports damage. Changes nothing. Meant for a store no process is writing (a
    /// concurrent writer can make a sound store look damaged); ``verify()`` on an open tier reads
    /// a consistent snapshot instead. Without the tier's keys and dictionaries, a sealed record
    /// is checked only for being an envelope, and a record needing a dictionary only for its
    /// header.
    ///
    /// - Throws: `TierCacheError.Code.foreignStore` when there is no TierCache store there.
    public static func verify(directory: URL) throws(TierCacheError) -> LMDBVerification {
        let dataFile = directory.appendingPathComponent("data.mdb").path
        guard FileManager.default.fileExists(atPath: dataFile) else {
            throw TierCacheError(.foreignStore, "\(directory.path) holds no LMDB tier store (no data.mdb)")
        }
        guard let codec = ZstdCodec(level: 1) else { throw TierCacheError(.storageFailure, "zstd is unavailable") }
        // The store's capacity is not read here (the check reads pages, not through LMDB): a value
        // declaring more than half the machine's memory counts as damage rather than being
        // allocated.
        let largestValue = StoredRecord.largestValue(
            inCapacity: Int(clamping: ProcessInfo.processInfo.physicalMemory / 2))
        let scope = LMDBStoreChecker.Scope.records { key, record -> LMDBStoreChecker.RecordVerdict in
            if SealedEnvelope.isSealed(record) { return SealedEnvelope.keyID(of: record) != nil ? .sound : .damaged }
            let header: StoredRecord.Header
            do throws(StoredRecord.DecodeFailure) {
                header = try StoredRecord.header(of: record, storedUnder: key)
            } catch {
                return error.isUnknownFormatVersion ? .unknownFormat : .damaged
            }
            return header.dictionaryID != nil
                || (try? StoredRecord.value(of: header, codec: codec, largestValue: largestValue)) != nil
                ? .sound : .damaged
        }
        let report = LMDBStoreChecker(dataFile: dataFile).checkWhileOthersMayWrite(scope: scope)
        if let foreign = report.foreign {
            throw TierCacheError(
                .foreignStore, "\(directory.path) holds an LMDB database that TierCache did not create (\(foreign))")
        }
        if let unreadable = report.unreadable {
            throw TierCacheError(.storageFailure, "could not check the store at \(directory.path): \(unreadable)")
        }
        return LMDBVerification(report)
    }
}

extension LMDBVerification {
    init(_ report: LMDBStoreChecker.Report) {
        self.init(
            structuralDamage: report.damage, damagedRecords: report.damagedRecords,
            damagedRecordKeys: report.damagedRecordKeys, unknownFormatRecords: report.unknownFormatRecords,
            entries: report.entries, pagesWalked: report.pagesWalked, freePages: report.freePages,
            pageSize: report.pageSize,
            bytesRead: report.bytesRead)
    }
}

extension LMDBEnvironment {
    /// Steps a cursor through every B-tree (free pages, main, and the tier's four databases), so
    /// LMDB visits every branch and leaf page a lookup or a write could reach.
    func readEveryPage() throws(TierCacheError) {
        do {
            try read { txn in
                for dbi in [MDB_dbi(0), MDB_dbi(1), meta, entries, ticks, recency] {
                    try txn.forEach(dbi) { _, _ in }
                }
            }
        } catch let error as TierCacheError {
            throw error
        } catch {
            throw TierCacheError(.storageFailure, "could not read the store at \(path)", underlying: "\(error)")
        }
    }
}
