import Foundation
import Logging
import Synchronization
@_spi(TierCacheInternals) import TierCache
import TierCacheRecords

/// A disk tier on SQLite: the persistent tier for every Apple platform (SQLite and zlib are in
/// every SDK), and on Linux beside `TierCacheLMDB`'s `LMDBTier`.
///
/// One database file, `cache.sqlite`, in the directory given, in WAL mode: one writer at a time
/// (across processes too), and readers never wait for it or for each other.
///
/// ## Capacity
/// The tier accounts each entry's bytes as SQLite lays them out (the record inline or on overflow
/// pages, its key twice, in the row and in the key index, and its recency index row, each scaled
/// by how full B-tree leaves are on average) and keeps that sum under ``fillLimit`` of capacity,
/// evicting least-recently-used entries in the same transaction as the store. Pages freed by
/// eviction are reused by later stores, so the database file stays within the capacity, whatever
/// the entries' shapes (a record of just over half a page takes a leaf to itself; a key over
/// about 1,000 bytes spills onto overflow pages in the key index too: both are charged). The
/// write-ahead log beside it is checkpointed every 4 MiB (every capacity / 16 in stores of
/// 4–64 MiB, every 256 KiB below 4 MiB: a quarter of a 1 MiB store) and truncated back to that
/// size; a reader that holds a snapshot while much is written can make it grow longer until the
/// reader ends.
///
/// ## The entry-size rule
/// An entry whose stored record (after compression and framing) exceeds
/// ``Configuration/maxEntryFraction`` of capacity (5% by default) is refused with
/// `RefusalReason.tooLarge(size:limit:)`, counted, and any older entry under its key removed.
///
/// ## Recency
/// A hit does not write: it notes the access in memory, and the next write transaction applies the
/// noted accesses in order before it evicts, as `TierCacheLMDB`'s tier does. The order is exact
/// unless more than 16,384 distinct keys are read between two writes (the notes past that are
/// dropped, never wrong); a write that fails gives the accesses it took back to the next. A lookup
/// writes only to delete a record it found expired, damaged or in an unknown format.
///
/// ## Integrity and crashes
/// Records are the shared `EntryRecord` format with zlib payloads (zlib's Adler-32 checks them) or
/// raw payloads with a checksum of their own, and carry their full key. A record that fails to
/// decode or verify is a miss, deleted and counted in `TierStatistics.corruptionsRemoved` (one in a
/// format version this code does not read, in `TierStatistics.unknownFormatRecords`). A
/// store returns once its transaction has committed, so a killed process keeps every committed
/// entry; what a power loss costs depends on ``Durability``. A database that SQLite finds damaged
/// (`SQLITE_CORRUPT`), at open or later, is emptied in place by SQLite's own reset (every process
/// using it sees the empty store), counted in `TierStatistics.storeResets` and reported to
/// ``Configuration/onStoreReset``; the operation that met the damage is a miss or is retried once,
/// and operations that met it together reset it once. A lookup that meets the store emptied under
/// it, its schema not yet made again (by this tier's reset or another process's), is a miss. A file whose header is not a database's
/// (`SQLITE_NOTADB`) cannot be reset in place: opening replaces it when no other tier has the store
/// open (a shared `flock` on `cache.sqlite.users` tells), and throws `damagedStore` otherwise;
/// met after opening, it is a typed error until the next open. With ``RecoveryPolicy/throwError``
/// opening throws instead of resetting. Two versions of TierCache with different schemas sharing a
/// directory (an app and an extension updated apart) reset each other's store at each open.
///
/// ## A full disk
/// A store that finds no room on the file system (`SQLITE_FULL`, or a write refused with `ENOSPC`,
/// `EDQUOT` or `EFBIG`) is refused with `RefusalReason.outOfSpace(detail:)` and counted in
/// `TierStatistics.refusedOutOfSpace`; what is stored stays readable, and stores succeed again
/// once space returns. The key's older entry is removed, or, when even that finds no room, hidden:
/// a miss in this tier until a later write deletes it. A process that lowers `RLIMIT_FSIZE` must
/// ignore `SIGXFSZ` (`signal(SIGXFSZ, SIG_IGN)`), whose default action kills it; the tier installs
/// no signal handlers of its own.
///
/// ## Several processes
/// Processes may open one directory at once: SQLite's locks serialise their writers (a writer waits
/// up to ``Configuration/busyTimeout`` for another's lock), and each sees the others' commits.
/// They should use the same capacity: each enforces its own at its writes.
public final class SQLiteTier: LocalCacheTier {
    /// The share of capacity that entries' accounted bytes may fill (7/8); the rest is room for
    /// B-tree interior pages and leaves fuller or emptier than the accounting's average.
    public static let fillLimit = 0.875
    /// The smallest capacity accepted (1 MiB).
    public static let minimumCapacity = DiskCapacity.minimum
    /// The database file's name in the tier's directory.
    public static let fileName = "cache.sqlite"

    /// The check every opening makes of the SQLite library, for a library of `versionNumber`
    /// (`sqlite3_libversion_number()`'s form) named `version`: throws `storageFailure` below 3.35.0.
    @_spi(TierCacheInternals)
    public static func checkSQLiteLibrary(versionNumber: Int32, version: String) throws(TierCacheError) {
        try StoreOpening.checkLibrary(versionNumber: versionNumber, version: version)
    }

    /// The tier's name in statistics and reports.
    public let name: String
    /// Disk: the tier persists, so `allowedInMemoryOnly` entries are not stored in it.
    public var medium: TierMedium { .disk }
    /// The directory holding the store.
    public let directory: URL
    /// Why opening emptied the store (damage, or a schema this version does not read), or `nil`.
    public let storeResetReason: String?

    let file: URL
    let opening: StoreOpening
    let capacity: Int
    let budget: Int
    /// The largest record stored: the 5% rule's limit, or SQLite's row length limit less the longest
    /// key and a row's own fields, if that is lower.
    let maxRecordBytes: Int
    /// A row's bytes besides its key and record, at most: SQLite's record header and the cost and
    /// recency integers.
    static let rowOverheadBytes = 64
    let codec: ZlibCodec
    let clock: CacheClock
    let counters: TierCounters
    let logger: Logger?
    let onStoreReset: (@Sendable (URL, String) -> Void)?
    /// The one connection that writes, used under its lock.
    let writer: Locked<SQLiteConnection>
    let readers: ReaderPool
    let accessLog = AccessLog()
    /// Held shared while the tier is open: a store is replaced only by its sole user.
    let users: StoreUsersLock
    /// Counts the resets of the store this tier made, so that operations that met the same damage
    /// at once reset it once (see ``resetDamagedStore(because:seen:)``).
    let resetGeneration = Atomic<Int>(0)
    /// Keys whose removal a full disk refused: misses here until a later write deletes them.
    let hiddenKeys = HiddenKeys()

    /// Opens the store in `directory`, creating the directory (owner-only permissions) and the
    /// database when absent.
    ///
    /// - Throws: `TierCacheError` with code `TierCacheError.Code.invalidConfiguration` (capacity
    ///   below ``minimumCapacity``, a fraction outside `(0, 0.5]`, a compression level outside 1...9),
    ///   `TierCacheError.Code.notADirectory`, `TierCacheError.Code.permissionDenied`,
    ///   `TierCacheError.Code.foreignStore` (the file is another program's SQLite database), or,
    ///   with ``RecoveryPolicy/throwError``, `TierCacheError.Code.damagedStore` and
    ///   `TierCacheError.Code.incompatibleVersion`; `TierCacheError.Code.storageFailure` when the
    ///   process runs on a SQLite older than 3.35.0.
    public init(directory: URL, configuration: Configuration) throws(TierCacheError) {
        try StoreOpening.checkLibrary()
        try DiskCapacity.check(configuration.capacity)
        guard let codec = ZlibCodec(level: configuration.compressionLevel) else {
            throw TierCacheError(
                .invalidConfiguration, "compression level must be in 1...9; got \(configuration.compressionLevel)")
        }
        let timeout = configuration.busyTimeout.components
        // Both parts: -0.5 s is 0 seconds and minus half a second's attoseconds.
        guard timeout.seconds >= 0, timeout.attoseconds >= 0, timeout.seconds < Int64(Int32.max / 1000) else {
            throw TierCacheError(
                .invalidConfiguration, "busyTimeout must be 0 to 24 days; got \(configuration.busyTimeout)")
        }
        try DiskCapacity.checkEntryFraction(configuration.maxEntryFraction)
        let sizeLimit = try EntrySizeLimit(fraction: configuration.maxEntryFraction, capacity: configuration.capacity)
        try StoreDirectory.prepare(directory)
        let file = directory.appendingPathComponent(Self.fileName)
        let opening = StoreOpening(
            file: file, capacity: configuration.capacity, durability: configuration.durability,
            busyTimeoutMilliseconds: Int32(timeout.seconds * 1000 + timeout.attoseconds / 1_000_000_000_000_000))
        let opened = try opening.open(recovery: configuration.recovery)

        self.name = configuration.name
        self.directory = directory
        self.file = file
        self.opening = opening
        self.capacity = configuration.capacity
        self.budget = Int(Double(configuration.capacity) * Self.fillLimit)
        self.codec = codec
        self.clock = configuration.clock
        self.logger = configuration.logger
        self.onStoreReset = configuration.onStoreReset
        self.counters = TierCounters(tierName: configuration.name, metricsFactory: configuration.metricsFactory)
        // SQLite's length limit (a billion bytes by default) bounds the whole row, the key and
        // the row's own fields as well as the record: a record at the limit under a long key was
        // refused by SQLite (SQLITE_TOOBIG, a storage failure) rather than by the tier.
        self.maxRecordBytes = min(
            sizeLimit.maxBytes, opened.writer.lengthLimit - CacheKey.maximumUTF8Length - Self.rowOverheadBytes)
        self.writer = Locked(opened.writer)
        self.users = opened.users
        self.readers = ReaderPool(idleLimit: 16) { () throws(SQLiteFailure) in try opening.connect() }
        self.storeResetReason = opened.resetReason
        if let reason = opened.resetReason { reportReset(reason) }
    }

    /// Opens the store in `directory` with default settings and the given capacity in bytes.
    public convenience init(directory: URL, capacity: Int) throws(TierCacheError) {
        try self.init(directory: directory, configuration: Configuration(capacity: capacity))
    }

    // MARK: Reading

    /// What a lookup found.
    enum Lookup {
        case hit(CacheEntry)
        case miss
        case unusable(Unusable)
    }

    /// Why a stored record is not served.
    enum Unusable {
        /// Past its expiry hint.
        case expired
        /// Fails to decode or verify.
        case damaged
        /// In a format version this code does not read (a newer TierCache wrote it).
        case unknownFormat
    }

    /// The entry stored under `key`, or nil. A record that fails to decode or verify is removed,
    /// counted and missed; an entry past its expiry hint is removed and missed.
    public func entry(forKey key: CacheKey) throws -> CacheEntry? {
        let timing = counters.startLookup()
        if hiddenKeys.hides(Array(key.rawValue.utf8)) {
            counters.recordLookup(hit: false, timing: timing)
            return nil
        }
        let now = clock.now()
        let generation = resetGeneration.load(ordering: .acquiring)
        let lookup: Lookup
        do {
            lookup = try readers.withReader { connection throws(SQLiteFailure) in
                try connection.withStatement(.lookup) {
                    statement throws(SQLiteFailure) in
                    try statement.bind(utf8: key.rawValue, at: 1)
                    guard try statement.step() else { return .miss }
                    return try statement.withBlob(at: 0) { decode($0, key: key.rawValue.utf8, now: now) }
                }
            }
        } catch {
            counters.recordLookup(hit: false, timing: timing)
            if error.isDamage {
                resetDamagedStore(because: error, seen: generation)
                return nil
            }
            if storeWasEmptied(under: error, seen: generation) { return nil }
            // Not counted: the error is thrown, and a `TieredCache` counts what it carries on past.
            throw error.tierError(at: file.path)
        }
        switch lookup {
        case .hit(let entry):
            counters.recordLookup(hit: true, timing: timing)
            accessLog.noteAccess(Array(key.rawValue.utf8))
            return entry
        case .miss:
            counters.recordLookup(hit: false, timing: timing)
            return nil
        case .unusable(let reason):
            counters.recordLookup(hit: false, timing: timing)
            // Deleting is tidying up: on a full disk or a busy store the answer is still a miss (a
            // damaged record's deletion failing otherwise is counted: the tier answers in its
            // place; an expired one's is left to the next lookup or eviction).
            let removed: Bool
            do {
                removed = try removeIfUnusable(Array(key.rawValue.utf8), now: now)
            } catch {
                if reason == .damaged, (error as? TierCacheError)?.code != .diskFull { counters.recordError() }
                return nil
            }
            guard removed else { return nil }
            switch reason {
            case .expired:
                counters.recordExpiration()
            case .damaged:
                counters.recordCorruptionRemoved()
                logger?.warning(
                    "damaged entry removed (a miss)", metadata: ["tier": "\(name)", "key": "\(key.rawValue)"])
            case .unknownFormat:
                counters.recordUnknownFormat()
                logger?.info(
                    "entry in a format version this TierCache does not read removed (a miss)",
                    metadata: ["tier": "\(name)", "key": "\(key.rawValue)"])
            }
            return nil
        }
    }

    /// Decodes a stored record for `key`: the entry, or why it is unusable (a record naming another
    /// key is damage: keys are stored whole). A value larger than the tier's capacity is a miss
    /// left in place, not decompressed: a process using the store with a larger capacity may
    /// have written it (and decompressing would allocate what it declares).
    func decode(_ record: UnsafeRawBufferPointer, key: some Sequence<UInt8>, now: Date?) -> Lookup {
        let header: EntryRecord.Header
        do {
            header = try EntryRecord.header(of: record)
        } catch {
            return .unusable(error.isUnknownFormatVersion ? .unknownFormat : .damaged)
        }
        guard let fullKey = header.fullKey, fullKey.elementsEqual(key) else { return .unusable(.damaged) }
        if let now, header.metadata.isExpired(at: now) { return .unusable(.expired) }
        let largest = EntryRecord.largestValue(inCapacity: capacity)
        guard header.originalSize <= largest else { return .miss }
        guard let value = try? EntryRecord.value(of: header, codec: codec, largestValue: largest) else {
            return .unusable(.damaged)
        }
        return .hit(CacheEntry(value: value, storedAt: header.metadata.storedAt, expiresAt: header.metadata.expiresAt))
    }

    // MARK: Usage

    /// The bytes accounted to entries and their number, against the capacity.
    public func usage() throws -> TierUsage {
        let generation = resetGeneration.load(ordering: .acquiring)
        do {
            let (used, count) = try readers.withReader { connection throws(SQLiteFailure) in
                try connection.withStatement(.usage) { statement throws(SQLiteFailure) in
                    try statement.step() ? (statement.integer(at: 0), statement.integer(at: 1)) : (0, 0)
                }
            }
            return TierUsage(
                bytes: Int(clamping: max(0, used)), entries: Int(clamping: max(0, count)), capacity: capacity,
                maxEntryBytes: maxRecordBytes)
        } catch  where storeWasEmptied(under: error, seen: generation) {
            return TierUsage(bytes: 0, entries: 0, capacity: capacity, maxEntryBytes: maxRecordBytes)
        } catch {
            throw error.tierError(at: file.path)
        }
    }

    /// The counters since the tier was opened, with its usage.
    public func statistics() -> TierStatistics {
        counters.snapshot(usage: try? usage())
    }

    /// Sets the usage gauges when metrics are recorded.
    func recordUsageIfObserved() {
        if counters.isRecordingMetrics, let usage = try? usage() { counters.recordUsage(usage) }
    }
}
