import CLMDB
import Foundation
import Logging
import TierCache
import TierCacheCompression
import TierCacheRecords

/// A disk tier: one LMDB environment in a directory, values compressed with zstd.
///
/// ## Capacity
/// The environment's map size is the configured capacity, so `data.mdb` never grows past it;
/// `lock.mdb` beside it takes a further 8 KiB plus 64 bytes per reader slot (about 16 KiB by
/// default). The tier accounts each entry's pages (key, record, overflow pages rounded to LMDB's
/// page size, and its two index rows) and keeps that sum under ``fillLimit`` of capacity,
/// evicting least-recently-used entries in the same transaction as the store. The remainder is
/// room for LMDB's branch pages, copy-on-write and pages pinned by readers. If LMDB still reports
/// a full map, the tier evicts more and retries (waiting briefly for readers that pin freed
/// pages): callers never see `MDB_MAP_FULL`; a map that stays full (a long-running reader
/// pinning pages) refuses the entry with `RefusalReason.outOfSpace(detail:)`.
///
/// ## A full disk
/// When the file system is full (`ENOSPC`), the quota is used up (`EDQUOT`) or the process's
/// file-size limit is reached (`EFBIG`), a store is refused with
/// `RefusalReason.outOfSpace(detail:)` and counted in `TierStatistics.refusedOutOfSpace`:
/// entries already stored stay readable (nothing is evicted to make room: LMDB never shrinks its
/// file), and stores succeed again as soon as space returns, without reopening. A lookup that
/// cannot delete an expired or damaged record for lack of space is still a plain miss. (One
/// case does not recover by itself: a commit that cannot write its meta page, an I/O error or a
/// copy-on-write file system with no room to overwrite a block, leaves LMDB's environment
/// unusable in this process, and every operation then throws `storageFailure` naming
/// `MDB_PANIC` until every tier on the store is closed and it is opened again.) A process
/// that lowers `RLIMIT_FSIZE` must ignore `SIGXFSZ` (`signal(SIGXFSZ, SIG_IGN)`), whose default
/// action kills it; the tier installs no signal handlers of its own.
///
/// ## Concurrent stores
/// Stores running at the same time share one write transaction (group commit): a store that
/// finds no commit running leads the next one, with every store queued by then (waiting at most
/// 500 µs for stores already compressing their entries), and those arriving during a commit are
/// written together in the next; each returns when the transaction holding it has committed, so
/// the crash guarantee above is unchanged. A lone writer never waits, and its store costs what it
/// did alone; with many writers, one `fsync` makes many entries durable instead of one (see
/// `Benchmarks/README.md`). A batch holds at most 256 entries or 16 MiB. Lookups never wait for
/// stores (LMDB's readers see the last committed snapshot). Callers on Swift's concurrency pool
/// block one of its threads while they wait, as they did for LMDB's writer lock before: the pool
/// has as many threads as cores, so many concurrent writers are best given threads of their own.
///
/// ## Recency
/// Lookups run in read-only transactions and note accesses in memory; the next store applies
/// them in order before it evicts (see `AccessLog`), so eviction follows true LRU order unless
/// more than 16,384 distinct keys are read between two writes.
///
/// ## The entry-size rule
/// An entry whose stored size — the record written, after compression and framing — exceeds
/// ``Configuration/maxEntryFraction`` of capacity (5% by default) is refused with
/// `RefusalReason.tooLarge(size:limit:)`, counted, and any older entry under its key removed.
///
/// ## Integrity and crashes
/// Compressed values are zstd frames with zstd's checksum; values that zstd does not shrink are
/// stored raw with a checksum of their own. A record that fails to decode or verify is a miss,
/// is deleted and is counted in `TierStatistics.corruptionsRemoved` (one in a format version this
/// code does not read, in `TierStatistics.unknownFormatRecords`). Every commit is handed to
/// the operating system before `store` returns, so a process killed at any point (even by
/// `SIGKILL`) leaves every committed entry in place; what a power loss costs depends on
/// ``Durability``. Several processes may open one directory at once; LMDB's lock file
/// serialises their writers. They must all use the same capacity. Tiers (and
/// ``inspect(directory:top:encryption:)``) on one directory in one process share one LMDB
/// environment, since LMDB must not open a store twice in a process (a second open would reset
/// its lock file under the first): it syncs as the most durable of those tiers asks, and a tier
/// opened while only an inspection holds the store read-only is refused until it returns.
///
/// ## Damaged stores
/// LMDB has no page checksums and follows whatever page numbers and offsets it finds, so a
/// damaged page can crash any reader. An opener that finds no other tier using the store checks
/// it before LMDB reads it: it writes a "being checked" mark (a sidecar file, fsynced), walks the
/// file with bounds-checked reads (meta pages, every branch and leaf page, the extent of every
/// overflow value, the free lists; see ``verify()``), then steps LMDB through every B-tree, and
/// clears the mark. Damage the walk finds resets the store (deletes and recreates it, counted in
/// `TierStatistics.storeResets`, reported by ``storeResetReason`` and
/// ``Configuration/onStoreReset``). If LMDB crashes the process anyway, the mark stays, and the
/// next open resets the store instead of reading it again: a damaged store costs at most one
/// crash. The sidecar files' `flock`s keep this safe for several processes (a mark being written
/// by a live process is waited for, never taken for a dead one's). The check costs about one
/// read of the store's B-tree pages (measured by the damage tests, `LMDBDamageTests`); an open
/// beside another open tier skips it.
///
/// ## Keys
/// LMDB keys are at most 511 bytes; longer `CacheKey`s are stored under a prefix and a 128-bit
/// hash, and the record keeps the full key, so a hash collision is a miss, never a wrong value.
///
/// ## Dictionaries
/// With ``Configuration/dictionary`` set to ``DictionaryCompression/automatic(_:)``, the tier
/// trains a zstd dictionary on the small values it stores once it has seen enough of them, and
/// compresses small values with it (a 1 KiB JSON response: about 3.4× instead of 1.8×); it
/// trains a new one when the ratio drifts. Each record names its dictionary; a record whose
/// dictionary is gone is a miss, deleted and counted in `TierStatistics.dictionaryMisses`. See
/// <doc:DictionariesAndEncryption>.
///
/// ## Encryption at rest
/// With ``Configuration/encryption`` set (`EncryptionAtRest` from `TierCacheEncryption`), every
/// record and dictionary is sealed with an AEAD under the app's key, optionally under a keyed
/// hash of its key. A record that does not open (wrong key, altered, moved under another key,
/// or a plain record in an encrypted store) is a miss, deleted and counted in
/// `TierStatistics.unopenableRecords`; one sealed under a key id the tier was not given is a
/// miss left in place (another process may hold that key); records sealed under an older key
/// are sealed again under the current one when read. The threat model is in <doc:DictionariesAndEncryption>.
public final class LMDBTier: LocalCacheTier {
    /// The share of capacity that entries' accounted bytes may fill (75%).
    public static let fillLimit = 0.75

    /// The tier's name in statistics and reports.
    public let name: String
    /// Disk: the tier persists, so `allowedInMemoryOnly` entries are not stored in it.
    public var medium: TierMedium { .disk }
    /// The directory holding the store.
    public let directory: URL
    /// Whether opening found a damaged store and started afresh (see ``RecoveryPolicy``).
    public let didResetDamagedStore: Bool
    /// Why opening deleted and recreated the store (damage the check found, a check that crashed
    /// a previous process, or an open LMDB refused), or `nil` when it did not. Also counted in
    /// `TierStatistics.storeResets` and passed to ``Configuration/onStoreReset``.
    public let storeResetReason: String?

    /// The store's environment, shared with the other tiers on it in this process
    /// (``SharedEnvironments``).
    private let lease: SharedEnvironments.Lease
    var environment: LMDBEnvironment { lease.environment }
    let codec: ZstdCodec
    /// Holds the store's users lock while the tier is open (see ``CheckMarker``).
    private let marker: CheckMarker
    let capacity: Int
    let budget: Int
    /// The largest record the tier stores: `maxEntryFraction` of the capacity, and never above
    /// what LMDB and the record format count a value's size in (32 bits). From a capacity of
    /// 80 GiB at 5% the limit reported passed it: a value under it was refused as over it, or
    /// its record failed in LMDB as a storage error instead of a refusal.
    private let maxRecordBytes: Int
    let clock: CacheClock
    let counters: TierCounters
    let logger: Logger?
    /// Seals records, when the tier encrypts.
    let encryption: (any RecordSealing)?
    /// The dictionaries records name, and the one new small values use.
    let dictionaries: DictionaryShelf
    /// Decides when to train a dictionary (automatic dictionaries only).
    let trainer: DictionaryTrainer?
    /// The app's dictionary (``DictionaryCompression/provided(_:maximumValueSize:)``), if any.
    let providedDictionary: [UInt8]?
    private let accessLog = AccessLog()
    /// Keys whose older record a full map left in place after a refused store or a removal: a
    /// miss here until the next write deletes them.
    private let hiddenKeys = HiddenKeys()
    private let groupCommit = GroupCommit<PendingRecord>()

    /// Opens the store in `directory`, creating the directory (owner-only permissions) and the
    /// store when absent.
    ///
    /// - Throws: `TierCacheError` with code
    ///   `TierCacheError.Code.invalidConfiguration` (capacity below ``minimumCapacity``, a
    ///   fraction outside `(0, 0.5]`, a bad compression level, a capacity other than the store's, no
    ///   ``Configuration/encryption`` for a store once opened with it),
    ///   `TierCacheError.Code.notADirectory`, `TierCacheError.Code.permissionDenied`,
    ///   `TierCacheError.Code.foreignStore` (the directory holds another program's LMDB
    ///   database), or, with ``RecoveryPolicy/throwError``, `TierCacheError.Code.damagedStore`
    ///   and `TierCacheError.Code.incompatibleVersion`.
    public init(directory: URL, configuration: Configuration) throws(TierCacheError) {
        try DiskCapacity.check(configuration.capacity)
        guard let codec = ZstdCodec(level: configuration.compressionLevel) else {
            throw TierCacheError(
                .invalidConfiguration,
                "compression level must be in \(ZstdCodec.minimumLevel)...\(ZstdCodec.maximumLevel) and not 0; "
                    + "got \(configuration.compressionLevel)")
        }
        guard configuration.maxReaders > 0 else {
            throw TierCacheError(.invalidConfiguration, "maxReaders must be positive; got \(configuration.maxReaders)")
        }
        try DiskCapacity.checkEntryFraction(configuration.maxEntryFraction)
        self.maxRecordBytes = try EntrySizeLimit(
            fraction: configuration.maxEntryFraction, capacity: configuration.capacity, ceiling: Int(UInt32.max)
        ).maxBytes
        let dictionaryValueLimit = try Self.validate(configuration.dictionary, capacity: configuration.capacity)
        try StoreDirectory.prepare(directory)

        let opened = try Self.openChecked(directory: directory, configuration: configuration)
        self.lease = opened.lease
        self.marker = opened.marker
        self.didResetDamagedStore = opened.resetReason != nil
        self.storeResetReason = opened.resetReason
        self.counters = TierCounters(tierName: configuration.name, metricsFactory: configuration.metricsFactory)
        self.logger = configuration.logger
        if let reason = opened.resetReason {
            counters.recordStoreReset()
            configuration.logger?.error(
                "damaged store deleted and started afresh; its entries are lost",
                metadata: ["tier": "\(configuration.name)", "directory": "\(directory.path)", "reason": "\(reason)"])
            configuration.onStoreReset?(directory, reason)
        }
        self.name = configuration.name
        self.directory = directory
        self.codec = codec
        self.capacity = configuration.capacity
        self.budget = Int(Double(configuration.capacity) * Self.fillLimit)
        self.clock = configuration.clock
        self.encryption = configuration.encryption
        self.dictionaries = DictionaryShelf(
            level: configuration.compressionLevel, sealer: configuration.encryption,
            maximumValueSize: dictionaryValueLimit)
        if case .automatic(let training) = configuration.dictionary {
            self.trainer = DictionaryTrainer(settings: training)
        } else {
            self.trainer = nil
        }
        if case .provided(let bytes, _) = configuration.dictionary {
            self.providedDictionary = bytes
        } else {
            self.providedDictionary = nil
        }
        try prepareDictionaries(configuration.dictionary)
    }

    /// Opens the store in `directory` with default settings and the given capacity in bytes.
    public convenience init(directory: URL, capacity: Int) throws(TierCacheError) {
        try self.init(directory: directory, configuration: Configuration(capacity: capacity))
    }

    // MARK: Reading

    private enum Lookup {
        /// With the opened record and the stored one when it must be sealed again under the current key.
        case hit(CacheEntry, reseal: (opened: [UInt8], old: [UInt8])?)
        case miss
        /// Sealed under a key id this tier was not given: a miss, the record left in place.
        case sealedUnderUnknownKey
        case unusable(Unusable)
    }

    /// The entry stored under `key`, or nil. A record that fails to decode or verify is removed,
    /// counted and missed; an entry past its expiry hint is removed and missed.
    public func entry(forKey key: CacheKey) throws -> CacheEntry? {
        let timing = counters.startLookup()
        let storageKey = storageKey(key)
        if hiddenKeys.hides(storageKey.bytes) {
            counters.recordLookup(hit: false, timing: timing)
            return nil
        }
        let now = clock.now()
        let lookup = try storageKey.bytes.withUnsafeBytes { keyBytes in
            try environment.read { txn -> Lookup in
                guard let record = try txn.get(environment.entries, keyBytes) else { return .miss }
                switch decode(record, storedUnder: keyBytes, owner: storageKey, now: now, in: txn) {
                case .entry(let entry, reseal: nil): return .hit(entry, reseal: nil)
                case .entry(let entry, reseal: let opened?): return .hit(entry, reseal: (opened, [UInt8](record)))
                case .notThisKey, .tooLarge: return .miss  // (no bound was given)
                case .sealedUnderUnknownKey: return .sealedUnderUnknownKey
                case .unusable(let reason):
                    // Not taken to the write lock to be deleted, on every read, for nothing.
                    return try belongsToEncryptingTiers(record, in: txn) ? .miss : .unusable(reason)
                }
            }
        }
        switch lookup {
        case .hit(let entry, let reseal):
            counters.recordLookup(hit: true, timing: timing)
            accessLog.noteAccess(storageKey.bytes)
            if let (opened, old) = reseal { self.reseal(opened, replacing: old, under: storageKey) }
            return entry
        case .miss:
            counters.recordLookup(hit: false, timing: timing)
            return nil
        case .sealedUnderUnknownKey:
            counters.recordLookup(hit: false, timing: timing)
            logger?.debug(
                "entry sealed under a key id this tier was not given (another process's, or dropped): a miss, left in place",
                metadata: ["tier": "\(name)", "key": "\(logName(of: key))"])
            return nil
        case .unusable(let reason):
            counters.recordLookup(hit: false, timing: timing)
            // Deleting is tidying up: on a full disk the answer is still a miss, not an error.
            let removed: Bool
            do {
                removed = try removeIfUnusable(storageKey, now: now)
            } catch let error as TierCacheError where error.code == .diskFull || error.code == .mapFull {
                removed = false
            }
            if removed {
                switch reason {
                case .expired:
                    counters.recordExpiration()
                case .damaged:
                    counters.recordCorruptionRemoved()
                    logger?.warning(
                        "damaged entry removed (a miss)", metadata: ["tier": "\(name)", "key": "\(logName(of: key))"])
                case .missingDictionary:
                    counters.recordDictionaryMiss()
                    logger?.debug(
                        "entry compressed with a dictionary the store no longer holds removed (a miss)",
                        metadata: ["tier": "\(name)", "key": "\(logName(of: key))"])
                case .unopenable:
                    counters.recordUnopenableRecord()
                    logger?.warning(
                        "sealed entry that does not open with the keys given removed (a miss): wrong key, or altered",
                        metadata: ["tier": "\(name)", "key": "\(logName(of: key))"])
                case .unknownFormat:
                    counters.recordUnknownFormat()
                    logger?.info(
                        "entry in a format version this TierCache does not read removed (a miss)",
                        metadata: ["tier": "\(name)", "key": "\(logName(of: key))"])
                }
            }
            return nil
        }
    }

    /// Whether `record` is sealed and this plain tier is still open in a store encrypted since it
    /// opened (a rollout of encryption): the encrypting tiers' record, a miss here, never deleted
    /// (the two kinds of tier deleted each other's records).
    private func belongsToEncryptingTiers(_ record: UnsafeRawBufferPointer, in txn: Transaction) throws -> Bool {
        guard encryption == nil, SealedEnvelope.isSealed(record) else { return false }
        return try txn.metaValue(Self.encryptedMark) != nil
    }

    /// Deletes the record under `key` if it is still unusable: a concurrent store may have
    /// replaced it since the lookup saw it.
    private func removeIfUnusable(_ key: StorageKey, now: Date) throws -> Bool {
        try write { txn in
            try key.bytes.withUnsafeBytes { keyBytes in
                guard let record = try txn.get(environment.entries, keyBytes) else { return false }
                guard case .unusable = decode(record, storedUnder: keyBytes, owner: key, now: now, in: txn) else {
                    return false
                }
                if try belongsToEncryptingTiers(record, in: txn) { return false }
                var state = try txn.writeState()
                try removeRecord(keyBytes, in: txn, state: &state)
                try txn.setWriteState(state)
                return true
            }
        }
    }

    // MARK: Writing

    /// Stores `entry` under `key` in one transaction, evicting least-recently-used entries
    /// to stay within the capacity. An entry whose record exceeds the per-entry limit, or already
    /// expired, or that does not fit on a full disk, is refused and the key's older entry removed
    /// (or, when the disk has no room even for that, hidden: a miss here until a write deletes it).
    public func store(_ entry: CacheEntry, forKey key: CacheKey) throws -> StoreOutcome {
        let storageKey = storageKey(key)
        let outcome: StoreOutcome
        var encoded: EncodedRecord?
        if entry.metadata.isExpired(at: clock.now()) {
            outcome = .refused(.alreadyExpired)
            try removeAfterRefusal(storageKey)
        } else if entry.value.count > StoredRecord.largestValue(inCapacity: capacity) {
            // Larger than the whole tier, however well it compresses (and than the 32 bits the
            // record format counts a value's size in).
            outcome = .refused(.tooLarge(size: entry.value.count, limit: maxRecordBytes))
            try removeAfterRefusal(storageKey)
        } else {
            // From here a commit being gathered waits for this store (see `GroupCommit`).
            groupCommit.enter()
            var committed: StoreOutcome?
            do {
                for _ in 0..<8 {
                    recoverCurrentDictionaryIfLost()
                    let encoding = try encode(entry, under: storageKey)
                    encoded = encoding
                    do {
                        committed = try commitUnlessTooLarge(encoding, under: storageKey)
                        break
                    } catch let retired as DictionaryRetired {
                        // Compressed with a dictionary retired meanwhile (by another store here or
                        // in another process), or whose id now names another: forget it and
                        // compress again, with the one the next turn recovers (or none).
                        dictionaries.forget(retired.id)
                    }
                }
            } catch {
                groupCommit.exit()
                throw error
            }
            groupCommit.exit()
            guard let committed else {
                throw TierCacheError(
                    .storageFailure, "every dictionary this store compressed with was retired before it was written")
            }
            outcome = committed
            if case .refused(.tooLarge) = outcome {
                try removeAfterRefusal(storageKey)
            }
        }
        counters.record(outcome)
        report(outcome, key: key)
        if outcome == .stored, let trainer, let encoded, entry.value.count <= trainer.settings.maximumValueSize,
            !entry.value.isEmpty,
            trainer.note(entry.value, compressedTo: encoded.payloadCount, withDictionary: encoded.usedDictionary)
        {
            trainDictionary(with: trainer)
        }
        return outcome
    }

    /// Commits `encoded` (sharing a transaction with the stores running beside it) unless it is
    /// over the per-entry limit. Throws ``DictionaryRetired`` when the dictionary it names left
    /// the store before the commit.
    private func commitUnlessTooLarge(_ encoded: EncodedRecord, under key: StorageKey) throws -> StoreOutcome {
        guard encoded.stored.count <= maxRecordBytes else {
            return .refused(.tooLarge(size: encoded.stored.count, limit: maxRecordBytes))
        }
        do {
            try commitJoiningOthers(PendingRecord(key: key, record: encoded.stored, dictionary: encoded.dictionary))
            return .stored
        } catch let error as TierCacheError where error.code == .diskFull || error.code == .mapFull {
            // A full disk (or a map that stayed full) refuses this write; what is stored stays
            // readable, and the next store tries again. The old entry goes, or is hidden.
            try? removeEntry(key)
            return .refused(.outOfSpace(detail: error.message))
        }
    }

    /// A record on its way into the store, waiting in ``groupCommit``.
    private struct PendingRecord {
        let key: StorageKey
        let record: [UInt8]
        /// The dictionary the record's value needs, checked to be in the store when it is written.
        let dictionary: UsedDictionary?
    }

    /// Writes `pending` in a transaction shared with the stores running beside it, returning
    /// once that transaction has committed.
    private func commitJoiningOthers(_ pending: PendingRecord) throws {
        try groupCommit.submit(pending, bytes: pending.record.count) { batch in
            commit(batch)
        }
    }

    /// Writes a batch of records in one transaction. If that fails (a full map, whose retries
    /// need eviction committed on its own, or a failed commit) the transaction has written
    /// nothing, and each record is written alone, with a lone store's retries, to get its own
    /// answer.
    private func commit(_ batch: [PendingRecord]) -> [Result<Void, any Error>] {
        if batch.count > 1 {
            do {
                let evicted = try writeApplyingAccesses { txn -> Int in
                    try ensureStillPlainIfPlain(in: txn)
                    var state = try txn.writeState()
                    var evicted = 0
                    for pending in batch {
                        evicted += try put(pending, in: txn, state: &state)
                    }
                    try txn.setWriteState(state)
                    return evicted
                }
                counters.recordEvictions(evicted)
                return Array(repeating: .success(()), count: batch.count)
            } catch {
                // Fall through: one at a time.
            }
        }
        // A map that stayed full for one record (twelve attempts, about 60 ms of waiting) refuses
        // the records as large or larger at once: each waited its own attempts, and the whole
        // batch's callers waited for all of them (some 16 s for 256 records) to be refused
        // alike. A smaller one is still tried: a run of free pages too short for one record
        // may hold another.
        var stayedFull: (error: any Error, size: Int)?
        return batch.map { pending in
            if let stayedFull, pending.record.count >= stayedFull.size { return .failure(stayedFull.error) }
            let result = Result { try insert(pending) }
            if case .failure(let error as TierCacheError) = result, error.code == .mapFull {
                stayedFull = (error, min(pending.record.count, stayedFull?.size ?? .max))
            }
            return result
        }
    }

    /// Throws when this plain tier's store was encrypted since it opened (another process, or a
    /// tier here, opened it with keys: a rollout of encryption): it takes no more records in the
    /// clear. Checked at open only, the old processes went on writing plaintext, and each side
    /// deleted the other's records as unreadable. Once per write transaction, before its puts.
    func ensureStillPlainIfPlain(in txn: Transaction) throws {
        guard encryption == nil, try txn.metaValue(Self.encryptedMark) != nil else { return }
        throw TierCacheError(
            .invalidConfiguration,
            "the store at \(directory.path) was encrypted since this tier opened it without keys; "
                + "open it again with its keys (Configuration.encryption)")
    }

    /// Puts the pending record in `txn`, first evicting least-recently-used entries until it
    /// fits the budget; returns how many were evicted. Throws ``DictionaryRetired`` when the
    /// dictionary it names is no longer in the store (its row gone, or recording other bytes).
    private func put(_ pending: PendingRecord, in txn: Transaction, state: inout WriteState) throws -> Int {
        let (key, record) = (pending.key, pending.record)
        if let needed = pending.dictionary {
            let recorded = try DictionaryRow.key(needed.id).withUnsafeBytes { key in
                try txn.get(environment.meta, key).flatMap(DictionaryRow.checksum(ofRow:))
            }
            guard recorded == needed.checksum else { throw DictionaryRetired(id: needed.id) }
        }
        let cost = accountedBytes(keyCount: key.bytes.count, recordCount: record.count)
        let evicted = try key.bytes.withUnsafeBytes { keyBytes in
            // The old record leaves first, with its tick: left in place, it could be the oldest
            // entry that eviction takes (its bytes taken back twice, the count short for good,
            // and an eviction counted that was an overwrite).
            try removeRecord(keyBytes, in: txn, state: &state)
            let evicted = try evict(in: txn, state: &state, until: budget - cost)
            try record.withUnsafeBytes { try txn.put(environment.entries, keyBytes, $0) }
            try touch(keyBytes, in: txn, state: &state)
            return evicted
        }
        state.used += cost
        return evicted
    }

    /// Writes the pending record in a transaction of its own, evicting and retrying while LMDB
    /// reports a full map.
    private func insert(_ pending: PendingRecord) throws {
        let cost = accountedBytes(keyCount: pending.key.bytes.count, recordCount: pending.record.count)
        var extraToFree = max(cost, capacity / 32)
        // Freeing more each time is bounded: past it, evicting more only empties the cache (each
        // doubling committed, the whole cache was gone by the fifth retry) while the put waits
        // on readers or on a run of free pages long enough, and the entry is refused instead.
        let mostToFree = max(2 * cost, capacity / 8)
        for attempt in 0..<12 {
            do {
                let evicted = try writeApplyingAccesses { txn -> Int in
                    try ensureStillPlainIfPlain(in: txn)
                    var state = try txn.writeState()
                    let evicted = try put(pending, in: txn, state: &state)
                    try txn.setWriteState(state)
                    return evicted
                }
                counters.recordEvictions(evicted)
                return
            } catch is LMDBEnvironment.MapFull {
                // LMDB found no free run of pages long enough: the accounting cannot see
                // fragmentation or pages pinned by readers. Pages freed in a transaction are only
                // reusable after it commits, so evict in a transaction of its own, then retry,
                // freeing more each time.
                do {
                    try evictCommitted(until: budget - cost - extraToFree, recountingIfUnder: attempt == 0)
                } catch is LMDBEnvironment.MapFull {
                    // Even the eviction found no page to write: readers (here or in other
                    // processes) hold snapshots that pin the freed pages. They are short, so wait
                    // for them, below.
                }
                extraToFree = min(extraToFree * 2, mostToFree)
                MapFullBackoff.wait(attempt: attempt, environment: environment)
            }
        }
        throw TierCacheError(
            .mapFull,
            "the store at \(directory.path) stayed full after evicting; a long-running reader may be pinning its pages")
    }

    /// Evicts until the accounted bytes are at most `target`, in a transaction of its own.
    /// Throws ``LMDBEnvironment/MapFull`` when even that found no page to write.
    ///
    /// With `recountingIfUnder`, accounts already at or under `target` while the entries occupy
    /// more than twice their bytes in pages are counted again from the records first: a full map
    /// with room by the accounts may be accounts damaged low (a state row lost, or a bit of it
    /// flipped), under which nothing was ever evicted and every store of a new key was refused
    /// for good. (Readers pinning pages fill a map with sound accounts too; the pages' count,
    /// read without a walk, keeps those episodes from scanning every entry at each store.)
    func evictCommitted(until target: Int, recountingIfUnder: Bool = false) throws {
        let evicted = try writeApplyingAccesses { txn -> Int in
            var state = try txn.writeState()
            if recountingIfUnder, state.used <= max(0, target),
                txn.pageBytes(environment.entries) > 2 * state.used
            {
                state.used = try heldBytes(in: txn)
            }
            let evicted = try evict(in: txn, state: &state, until: max(0, target))
            try txn.setWriteState(state)
            return evicted
        }
        counters.recordEvictions(evicted)
    }

    /// `environment.write`, first deleting the records of hidden keys (forgotten once committed)
    /// and applying the accesses lookups noted (so that what `body` evicts is the least recently
    /// used): when the transaction does not commit, they go back to the log for the next write.
    /// The keys are this write's own, taken under LMDB's write lock (a snapshot of the hidden
    /// keys taken before it could delete a record a write committed meanwhile stored anew).
    private func writeApplyingAccesses<T>(_ body: (Transaction) throws -> T) throws -> T {
        var applied: [[UInt8]] = []
        var hidden: [[UInt8]] = []
        do {
            let result = try environment.write { txn in
                hidden = hiddenKeys.snapshot()
                applied = accessLog.drain()
                if !applied.isEmpty || !hidden.isEmpty {
                    var state = try txn.writeState()
                    for key in hidden {
                        try key.withUnsafeBytes { try removeRecord($0, in: txn, state: &state) }
                    }
                    for key in applied {
                        try key.withUnsafeBytes { try touch($0, in: txn, state: &state, onlyIfPresent: true) }
                    }
                    try txn.setWriteState(state)
                }
                return try body(txn)
            }
            hiddenKeys.forget(hidden)
            return result
        } catch {
            accessLog.restore(applied)
            throw error
        }
    }

    /// Evicts least-recently-used entries until the accounted bytes are at most `target`. Runs in
    /// ``writeApplyingAccesses(_:)``, which applied the noted accesses first.
    func evict(in txn: Transaction, state: inout WriteState, until target: Int) throws -> Int {
        var evicted = 0
        while state.used > target {
            guard let (oldestTick, oldestKey) = try txn.first(environment.recency) else {
                // Nothing left to evict, and still over: the count had drifted (a damaged state
                // row). Recounted from what the store holds.
                state.used = try heldBytes(in: txn)
                break
            }
            // A damaged row (a key LMDB cannot look up, or one whose tick row points elsewhere)
            // removes no record: its own row goes all the same, or the loop would meet it again
            // for ever, holding the write lock of every process.
            if (1...StorageKey.maximumLength).contains(oldestKey.count) {
                try oldestKey.withUnsafeBytes { try removeRecord($0, in: txn, state: &state) }
                evicted += 1
            }
            _ = try oldestTick.withUnsafeBytes { try txn.delete(environment.recency, $0) }
        }
        return evicted
    }

    /// The bytes the store holds, counted from its records: its entries (a damaged recency index
    /// may have left some unindexed) and its dictionaries. A scan of every entry, for accounts
    /// found wrong.
    private func heldBytes(in txn: Transaction) throws -> Int {
        var held = try dictionaryBytes(in: txn)
        try txn.forEach(environment.entries) { key, record in
            held += accountedBytes(keyCount: key.count, recordCount: record.count)
        }
        return held
    }

    /// Gives `key` the next access tick, replacing its previous one in the recency index.
    private func touch(
        _ key: UnsafeRawBufferPointer, in txn: Transaction, state: inout WriteState, onlyIfPresent: Bool = false
    ) throws {
        if let previous = try txn.get(environment.ticks, key), previous.count == 8 {
            let tick = previous.loadUnaligned(as: UInt64.self)  // stored big-endian; kept as is
            try withUnsafeBytes(of: tick) { _ = try txn.delete(environment.recency, $0) }
        } else if onlyIfPresent {
            return
        }
        state.clock &+= 1
        try withUnsafeBytes(of: state.clock.bigEndian) { tick in
            try txn.put(environment.ticks, key, tick)
            try txn.put(environment.recency, tick, key)
        }
    }

    /// Deletes the record, its tick and its recency row, and takes back its accounted bytes.
    private func removeRecord(_ key: UnsafeRawBufferPointer, in txn: Transaction, state: inout WriteState) throws {
        if let record = try txn.get(environment.entries, key) {
            state.used -= accountedBytes(keyCount: key.count, recordCount: record.count)
            try txn.delete(environment.entries, key)
        }
        if let previous = try txn.get(environment.ticks, key), previous.count == 8 {
            let tick = previous.loadUnaligned(as: UInt64.self)
            try withUnsafeBytes(of: tick) { _ = try txn.delete(environment.recency, $0) }
            try txn.delete(environment.ticks, key)
        }
    }

    /// The bytes an entry takes in the map: its leaf node or overflow pages, plus its rows in the
    /// tick and recency databases, each leaf row scaled by how full leaf pages are on average.
    ///
    /// Leaf pages are not full: a B-tree filled in random key order keeps its leaves about ln 2
    /// (69%) full (Yao, "On random 2-3 trees", 1978), a page holds whole nodes only, and the
    /// recency index, filled in increasing tick order and split in the middle by LMDB, is about
    /// half full. Counting only the rows' own
    /// bytes let a store of random keys fill its map at 65% of the budget, and then even an
    /// eviction found no page to write (the many-writers test found it).
    func accountedBytes(keyCount: Int, recordCount: Int) -> Int {
        let pageSize = environment.pageSize
        let nodeHeader = 8, pointer = 2
        let node = nodeHeader + keyCount + recordCount
        // LMDB moves a value to overflow pages when its node exceeds about half a page.
        let nodeMax = (pageSize - 16) / 2
        let entryBytes: Int
        if node > nodeMax {
            let overflowPages = (recordCount + 16 + pageSize - 1) / pageSize
            entryBytes = Self.leafShare(nodeHeader + keyCount + 8 + pointer, fill: 69) + overflowPages * pageSize
        } else {
            // Pages hold whole nodes: of nodes of a few hundred bytes and more, a page ~69% full
            // holds only so many (a 1.2 KB node: two to a 4 KiB page, so 2 KiB each, as measured).
            let perPage = max(1, (pageSize - 16) * 69 / (100 * (node + pointer)))
            entryBytes = max(Self.leafShare(node + pointer, fill: 69), pageSize / perPage)
        }
        let indexRow = nodeHeader + keyCount + 8 + pointer
        return entryBytes + Self.leafShare(indexRow, fill: 69) + Self.leafShare(indexRow, fill: 50)
    }

    /// The page bytes a leaf row of `bytes` takes in leaves `fill` percent full on average.
    private static func leafShare(_ bytes: Int, fill: Int) -> Int {
        (bytes * 100 + fill - 1) / fill
    }

    // MARK: Removing

    /// Removes the entry stored under `key`, if any.
    ///
    /// - Throws: `TierCacheError` when the deletion cannot be written (`diskFull`, `mapFull`, an
    ///   I/O failure): the entry is then a miss in this tier's process until a later write deletes
    ///   it, but the record is still in the file, where other processes sharing the store read it.
    public func removeEntry(forKey key: CacheKey) throws {
        try removeEntry(storageKey(key))
        recordUsageIfObserved()
    }

    /// Removes the key's older entry after a refused store. A removal a full disk or map kept
    /// from being written hides the key (``removeEntry(_:)``), and the refusal stands: thrown,
    /// it went uncounted and the caller saw an error where the contract promises an outcome.
    private func removeAfterRefusal(_ key: StorageKey) throws {
        do {
            try removeEntry(key)
        } catch let error as TierCacheError where error.code == .diskFull || error.code == .mapFull {
            // Hidden by `removeEntry(_:)`.
        }
    }

    /// Removes the record under `key`. When the deletion cannot be written (a full disk or map
    /// leaves no room even for that, an I/O error), the key is hidden (a miss here until a later
    /// write deletes it) and the failure thrown: no older value is read here after a removal or a
    /// refused store.
    private func removeEntry(_ key: StorageKey) throws {
        accessLog.forget(key.bytes)
        do {
            try write { txn in
                try key.bytes.withUnsafeBytes { keyBytes in
                    // Removing an absent key writes nothing of its own (the accesses lookups noted
                    // still are).
                    guard
                        try txn.get(environment.entries, keyBytes) != nil
                            || txn.get(environment.ticks, keyBytes) != nil
                    else { return }
                    var state = try txn.writeState()
                    try removeRecord(keyBytes, in: txn, state: &state)
                    try txn.setWriteState(state)
                }
            }
        } catch let error as TierCacheError {
            // Whatever kept the deletion from being written (a full map, an I/O error), the older
            // value must not be read after it: `TieredCache` removes a key whose store failed,
            // and a removal failing too would leave the old value to be served.
            hiddenKeys.hide(key.bytes)
            throw TierCacheError(
                error.code,
                "the removal could not be written (\(error.message)): the entry is hidden in this process "
                    + "until a write deletes it, and other processes sharing the store still read it",
                underlying: error.underlying)
        }
    }

    /// Removes every entry, and the dictionaries trained on them (an app's own dictionary stays).
    ///
    /// A trained dictionary is made of fragments of the values stored before it (common strings,
    /// an address that many responses repeat): kept, it outlived what an app removed on logout.
    /// The next ring of values stored trains a new one. Pages LMDB freed keep their old bytes
    /// until reused; encryption at rest covers them.
    public func removeAll() throws {
        accessLog.removeAll()
        let retired = try write { txn -> [UInt16] in
            // Before the commit, with the write lock held: a training that took its samples
            // earlier finds them forgotten when it installs, in a transaction after this one.
            trainer?.forgetSamples()
            try txn.clear(environment.entries)
            try txn.clear(environment.ticks)
            try txn.clear(environment.recency)
            // No record names a dictionary now; a tier in another process that compressed with
            // one retired here finds it gone when it writes, and compresses again.
            let retired = try txn.removableDictionaryRowIDs()
            for id in retired {
                try DictionaryRow.key(id).withUnsafeBytes { _ = try txn.delete(environment.meta, $0) }
            }
            try txn.setWriteState(WriteState(used: try dictionaryBytes(in: txn), clock: try txn.writeState().clock))
            return retired
        }
        for id in retired { dictionaries.forget(id) }
        recordUsageIfObserved()
    }

    /// Sets the usage gauges (one read transaction) when metrics are recorded.
    private func recordUsageIfObserved() {
        if counters.isRecordingMetrics, let usage = try? usage() { counters.recordUsage(usage) }
    }

    /// A write transaction that deletes; deleting needs a few free pages, so a full map is met
    /// by evicting and retrying like a store.
    func write<T>(_ body: (Transaction) throws -> T) throws -> T {
        do {
            for attempt in 0..<8 {
                do {
                    return try writeApplyingAccesses(body)
                } catch is LMDBEnvironment.MapFull {
                    // Readers pin the pages the deletion needs; try to free some, then wait for them.
                    try? evictCommitted(until: max(0, budget - capacity / 16), recountingIfUnder: true)
                    MapFullBackoff.wait(attempt: attempt, environment: environment)
                }
            }
            // `mapFull`, as a store's: a lookup tidying up an expired record takes it as a miss.
            throw TierCacheError(
                .mapFull,
                "the store at \(directory.path) stayed full; a long-running reader may be pinning its pages")
        } catch let error as TierCacheError {
            throw error
        } catch {
            throw TierCacheError(.storageFailure, "a write failed for \(directory.path)", underlying: "\(error)")
        }
    }

    // MARK: Usage

    /// The bytes accounted to entries and their number, against the capacity.
    public func usage() throws -> TierUsage {
        let (used, count) = try environment.read { txn in
            (try txn.writeState().used, txn.entryCount(environment.entries))
        }
        return TierUsage(bytes: used, entries: count, capacity: capacity, maxEntryBytes: maxRecordBytes)
    }

    /// Logs a refusal, and sets the usage gauges (a read transaction) when metrics are recorded.
    private func report(_ outcome: StoreOutcome, key: CacheKey) {
        recordUsageIfObserved()
        guard let logger, case .refused = outcome else { return }
        logger.logRefusal(outcome, key: key, loggedAs: logName(of: key), tier: name)
    }

    /// How logs name `key`: itself, or with hashed key names, whose point is a store that does not
    /// list its keys (logs are often kept and shipped), the first 8 bytes of its stored name in
    /// hexadecimal: one key is always named alike, so its lines can still be followed.
    func logName(of key: CacheKey) -> String {
        guard let encryption,
            let name = Array(key.rawValue.utf8).withUnsafeBytes({ encryption.storageName(forKey: $0) })
        else { return key.rawValue }
        return "#" + name.prefix(8).map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
    }

    /// The counters since the tier was opened, with its usage.
    public func statistics() -> TierStatistics {
        counters.snapshot(usage: try? usage())
    }

    /// Flushes every committed entry to disk now, whatever the ``Durability``.
    public func sync() throws {
        try environment.sync()
    }
}
