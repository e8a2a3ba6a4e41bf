import CSQLite
import Foundation
import Logging
@_spi(TierCacheInternals) import TierCache
import TierCacheRecords

extension SQLiteTier {
    // MARK: Storing

    /// Stores `entry` under `key` in one transaction, evicting least-recently-used entries to stay
    /// within the capacity. An entry whose record exceeds the per-entry limit, or already expired,
    /// or that does not fit on a full disk, is refused and the key's older entry removed.
    public func store(_ entry: CacheEntry, forKey key: CacheKey) throws -> StoreOutcome {
        let keyBytes = Array(key.rawValue.utf8)
        let outcome: StoreOutcome
        if entry.metadata.isExpired(at: clock.now()) {
            outcome = .refused(.alreadyExpired)
        } else if entry.value.count > EntryRecord.largestValue(inCapacity: capacity) {
            // Larger than the whole tier, however well it compresses (and than the 32 bits the
            // record format counts a value's size in).
            outcome = .refused(.tooLarge(size: entry.value.count, limit: maxRecordBytes))
        } else {
            let record = EntryRecord.encode(entry, fullKey: keyBytes, codec: codec)
            outcome =
                record.count > maxRecordBytes
                ? .refused(.tooLarge(size: record.count, limit: maxRecordBytes)) : try insert(record, under: keyBytes)
        }
        // Whatever refused the entry, no older value stays readable after it.
        if case .refused = outcome { try removeOrHide(keyBytes) }
        counters.record(outcome)
        report(outcome, key: key)
        return outcome
    }

    /// Writes `record` under `key`, evicting first; a full disk refuses it.
    private func insert(_ record: [UInt8], under key: [UInt8]) throws -> StoreOutcome {
        let cost = accountedBytes(keyCount: key.count, recordCount: record.count)
        let evicted: Int
        do {
            evicted = try write { connection, state throws(SQLiteFailure) in
                try put(record, under: key, cost: cost, in: connection, state: &state)
            }
        } catch {
            hiddenKeys.hide(key)
            guard error.code == .diskFull else { throw error }
            return .refused(.outOfSpace(detail: error.message))
        }
        counters.recordEvictions(evicted)
        return .stored
    }

    /// Replaces the row under `key` with `record`, evicting first; returns how many were evicted.
    private func put(
        _ record: [UInt8], under key: [UInt8], cost: Int, in connection: SQLiteConnection, state: inout WriteState
    ) throws(SQLiteFailure) -> Int {
        try delete(key, in: connection, state: &state)
        let evicted = try evict(in: connection, state: &state, until: budget - cost)
        state.clock += 1
        try connection.withStatement(.insert) {
            statement throws(SQLiteFailure) in
            try statement.bind(key, at: 1)
            try statement.bind(record, at: 2)
            try statement.bind(Int64(cost), at: 3)
            try statement.bind(state.clock, at: 4)
            try statement.run()
        }
        state.used += Int64(cost)
        state.entries += 1
        return evicted
    }

    /// The bytes an entry takes in the database: its row (the record inline, or its first part
    /// inline and the rest on overflow pages) and its two index rows, on the safe side of what
    /// SQLite lays out in 4 KiB pages.
    ///
    /// - A leaf holds as many whole cells as fit: a cell of over half a page is a page to itself
    ///   (a row of a 2–2.8 KiB record took 4 KiB, not the 3 KiB its bytes alone suggest). Leaves
    ///   filled in random order are about ln 2 (69%) full (Yao, 1978), so a leaf's page is shared
    ///   by 69% of the cells that fit it; the tick index, filled in increasing order, stays fuller,
    ///   but counting it at 69% too keeps the sum on the safe side.
    /// - A row larger than SQLite's inline limit keeps part of itself inline (SQLite's `K` or its
    ///   minimum) and the rest on overflow pages of a page less 4 bytes each. An index row has a
    ///   lower inline limit (about 1,000 bytes): a long key spills onto overflow pages in the key
    ///   index too, and the separator copies of keys in the index's interior pages carry their own
    ///   (one per leaf).
    func accountedBytes(keyCount: Int, recordCount: Int) -> Int {
        let rowHeader = 16
        let row = Self.spill(keyCount + recordCount + rowHeader, maxLocal: Self.pageSize - 35)
        let rowBytes = Self.leafShare(row.cell) + row.overflowPages * Self.pageSize
        let keyIndex = Self.spill(keyCount + 12, maxLocal: (Self.pageSize - 12) * 64 / 255 - 23)
        // Its share of the interior separators: one per leaf, a leaf holding 69% of what fits.
        let rowsPerLeaf = max(1, (Self.pageSize - 8) / keyIndex.cell * 69 / 100)
        let separatorShare = (keyIndex.cell + keyIndex.overflowPages * Self.pageSize + rowsPerLeaf - 1) / rowsPerLeaf
        let keyIndexBytes = Self.leafShare(keyIndex.cell) + keyIndex.overflowPages * Self.pageSize + separatorShare
        let tickIndexBytes = Self.leafShare(20 + 2)
        return rowBytes + keyIndexBytes + tickIndexBytes
    }

    private static let pageSize = 4096

    /// A B-tree cell of `payload` bytes: its bytes in the page (with its cell pointer, and the
    /// overflow page number when it spills) and its overflow pages, by SQLite's rule (the file
    /// format's "cell payload overflow pages").
    private static func spill(_ payload: Int, maxLocal: Int) -> (cell: Int, overflowPages: Int) {
        let cellPointer = 2
        guard payload > maxLocal else { return (payload + cellPointer, 0) }
        let minLocal = (pageSize - 12) * 32 / 255 - 23
        let surplus = minLocal + (payload - minLocal) % (pageSize - 4)
        let local = surplus <= maxLocal ? surplus : minLocal
        return (local + 4 + cellPointer, (payload - local + pageSize - 5) / (pageSize - 4))
    }

    /// The page bytes a leaf cell of `bytes` takes: a page shared by the 69% of the cells that fit
    /// one (a whole page for a cell that fits only alone).
    private static func leafShare(_ bytes: Int) -> Int {
        let fitting = (pageSize - 8) / max(1, bytes)
        guard fitting > 1 else { return pageSize }
        return (pageSize * 100 + 69 * fitting - 1) / (69 * fitting)
    }

    // MARK: Removing

    /// Removes the entry stored under `key`, if any.
    ///
    /// - Throws: `TierCacheError` when the deletion cannot be written (`diskFull` when a full
    ///   disk leaves no room even for it; another process holding the write lock past the busy
    ///   timeout; an I/O failure): the entry is then a miss in this tier until a later write
    ///   deletes it, but the row is still in the file, where another process sharing the store (an
    ///   app extension) reads it, as does this app after a relaunch.
    public func removeEntry(forKey key: CacheKey) throws {
        try removeEntry(Array(key.rawValue.utf8))
        recordUsageIfObserved()
    }

    func removeEntry(_ key: [UInt8]) throws {
        if let failure = try removeOrHide(key) {
            throw TierCacheError(
                .diskFull,
                "the removal could not be written (the disk is full): the entry is hidden in this process "
                    + "until a write deletes it, and other processes sharing the store still read it",
                underlying: "\(failure)")
        }
    }

    /// Deletes the row under `key`; when the deletion cannot be written (a full disk leaves no
    /// room even for that, another process holds the write lock past the busy timeout, an I/O
    /// error), hides it instead (a miss here until a later write deletes it), so that no older
    /// value is read here after a removal or a refused store. A full disk's failure is returned
    /// (a refused store has said `outOfSpace` already; a removal throws it), any other thrown.
    @discardableResult
    func removeOrHide(_ key: [UInt8]) throws -> TierCacheError? {
        accessLog.forget(key)
        // (A `catch where` here crashes the Swift 6.3 compiler's ClosureLifetimeFixup pass.)
        do {
            try write { connection, state throws(SQLiteFailure) in try delete(key, in: connection, state: &state) }
            return nil
        } catch {
            hiddenKeys.hide(key)
            guard error.code == .diskFull else {
                throw TierCacheError(
                    error.code,
                    "the removal could not be written (\(error.message)): the entry is hidden in this process "
                        + "until a write deletes it, and other processes sharing the store still read it",
                    underlying: error.underlying)
            }
            return error
        }
    }

    /// Removes every entry, and gives the freed pages back to the file system.
    public func removeAll() throws {
        try write { connection, state throws(SQLiteFailure) in
            try connection.execute("DELETE FROM entries")
            state = WriteState(used: 0, entries: 0, clock: state.clock)
        }
        // The hidden keys and the noted reads need nothing more: `write` deleted the keys hidden
        // before it (and forgot them once committed) and applied the reads; a key hidden since,
        // by a store refused meanwhile, stays hidden until the next write deletes it.
        try? writer.withLock { connection throws(SQLiteFailure) in try connection.execute("PRAGMA incremental_vacuum") }
        recordUsageIfObserved()
    }

    /// Deletes the record under `key` if it is still unusable: a store may have replaced it since
    /// the lookup saw it.
    func removeIfUnusable(_ key: [UInt8], now: Date) throws -> Bool {
        try write { connection, state throws(SQLiteFailure) in
            let stillUnusable = try connection.withStatement(.lookup) {
                statement throws(SQLiteFailure) in
                try statement.bind(key, at: 1)
                guard try statement.step() else { return false }
                return try statement.withBlob(at: 0) { record in
                    if case .unusable = decode(record, key: key, now: now) { true } else { false }
                }
            }
            if stillUnusable { try delete(key, in: connection, state: &state) }
            return stillUnusable
        }
    }

    // MARK: Transactions

    /// The `state` row, read and written back by each write transaction.
    struct WriteState {
        var used: Int64
        var entries: Int64
        var clock: Int64
    }

    /// Runs `body` in a write transaction with the store's state, after deleting the hidden keys'
    /// rows and applying the accesses lookups noted, and writes the state back. Damage met on the
    /// way empties the store and runs `body` again, once; so does a schema another process's reset
    /// left missing, once it is made again.
    func write<T: Sendable>(
        _ body: (SQLiteConnection, inout WriteState) throws(SQLiteFailure) -> T
    ) throws(TierCacheError) -> T {
        var attempt = 0
        while true {
            let generation = resetGeneration.load(ordering: .acquiring)
            var applied: [[UInt8]] = []
            do {
                let result = try writer.withLock { connection throws(SQLiteFailure) in
                    // Taken and forgotten under the writer's lock: a snapshot taken before it
                    // deleted the row a write committed meanwhile had stored anew.
                    let hidden = hiddenKeys.snapshot()
                    let result = try connection.writeTransaction { () throws(SQLiteFailure) in
                        var state = try readState(connection)
                        for key in hidden { try delete(key, in: connection, state: &state) }
                        applied = accessLog.drain()
                        try apply(accesses: applied, in: connection, state: &state)
                        let result = try body(connection, &state)
                        try connection.withStatement(.writeState) {
                            statement throws(SQLiteFailure) in
                            try statement.bind(max(0, state.used), at: 1)
                            try statement.bind(max(0, state.entries), at: 2)
                            try statement.bind(state.clock, at: 3)
                            try statement.run()
                        }
                        return result
                    }
                    hiddenKeys.forget(hidden)
                    return result
                }
                return result
            } catch  where error.isDamage && attempt == 0 {
                attempt += 1
                resetDamagedStore(because: error, seen: generation)
            } catch  where error.primaryCode == SQLITE_ERROR && attempt == 0 && restoreMissingSchema() {
                attempt += 1
            } catch {
                // Rolled back: the accesses it applied wait for the next write (a full disk is
                // when the order matters most).
                accessLog.restore(applied)
                // Not counted: thrown (see `entry(forKey:)`).
                throw error.tierError(at: file.path)
            }
        }
    }

    /// Whether `failure`, an `SQLITE_ERROR` ("no such table"), came from a store emptied under it:
    /// this tier reset it since `seen` (the schema is missing between the emptying and its making
    /// again, and a reader can look in between), or another process's reset left the schema
    /// missing, and it is made again now. Either way the store held nothing meanwhile. The check
    /// takes the writer's lock, so a reset of this tier still under way has finished when it answers.
    func storeWasEmptied(under failure: SQLiteFailure, seen: Int) -> Bool {
        failure.primaryCode == SQLITE_ERROR
            && (restoreMissingSchema() || resetGeneration.load(ordering: .acquiring) != seen)
    }

    /// Makes the schema again when it is missing (another process emptied the store and has not
    /// made it yet, or died before it did); whether it was missing and is back.
    private func restoreMissingSchema() -> Bool {
        (try? writer.withLock { connection throws in
            guard try connection.integer("SELECT count(*) FROM sqlite_schema WHERE name = 'state'") == 0 else {
                return false
            }
            try opening.prepare(connection)
            return true
        }) ?? false
    }

    private func readState(_ connection: SQLiteConnection) throws(SQLiteFailure) -> WriteState {
        try connection.withStatement(.readState) { statement throws(SQLiteFailure) in
            guard try statement.step() else {
                throw SQLiteFailure(code: SQLITE_CORRUPT, message: "the store's state row is missing")
            }
            return WriteState(
                used: try Self.accounted(statement.integer(at: 0), "used bytes"),
                entries: try Self.accounted(statement.integer(at: 1), "entry count"),
                clock: try Self.accounted(statement.integer(at: 2), "clock"))
        }
    }

    /// A count the store keeps (bytes, entries, ticks, an entry's cost), read back: in
    /// `0...2^62`, or the file is damaged (SQLite checks no page, and the schema no range), which
    /// empties the store as any damage does. In that range the additions and subtractions of the
    /// accounts cannot overflow; a value near `Int64.max` trapped the next store.
    static func accounted(_ value: Int64, _ what: String) throws(SQLiteFailure) -> Int64 {
        guard value >= 0, value <= 1 << 62 else {
            throw SQLiteFailure(code: SQLITE_CORRUPT, message: "the store's \(what) is out of range: \(value)")
        }
        return value
    }

    /// Gives each key read since the last write (`keys`, drained from the access log under the
    /// writer's lock) the next tick, in the order they were read.
    private func apply(
        accesses keys: [[UInt8]], in connection: SQLiteConnection, state: inout WriteState
    ) throws(SQLiteFailure) {
        for key in keys {
            state.clock += 1
            try connection.withStatement(.touch) {
                statement throws(SQLiteFailure) in
                try statement.bind(state.clock, at: 1)
                try statement.bind(key, at: 2)
                try statement.run()
            }
        }
    }

    /// Deletes the row under `key`, if any, taking back its accounted bytes.
    private func delete(_ key: [UInt8], in connection: SQLiteConnection, state: inout WriteState) throws(SQLiteFailure)
    {
        let cost = try connection.withStatement(.delete) {
            statement throws(SQLiteFailure) -> Int64? in
            try statement.bind(key, at: 1)
            return try statement.step() ? try Self.accounted(statement.integer(at: 0), "entry cost") : nil
        }
        guard let cost else { return }
        if cost > state.used || state.entries < 1 {
            // The accounts say the store held less than this row: they drifted (a damaged cost
            // or state cell still in range, which SQLite checks no more than any page). Clamped
            // to 0, the difference stayed for good, and the file grew past the capacity with
            // nothing evicted; counted again from the rows instead.
            try recount(in: connection, state: &state)
        } else {
            state.used -= cost
            state.entries -= 1
        }
    }

    /// Sets the accounted bytes and entries to what the rows hold (one scan of the table).
    private func recount(in connection: SQLiteConnection, state: inout WriteState) throws(SQLiteFailure) {
        state.used = try Self.accounted(
            connection.integer("SELECT coalesce(sum(cost), 0) FROM entries") ?? 0, "used bytes")
        state.entries = try Self.accounted(connection.integer("SELECT count(*) FROM entries") ?? 0, "entry count")
    }

    /// Deletes least-recently-used rows until the accounted bytes are at most `target`; returns how
    /// many it deleted.
    private func evict(
        in connection: SQLiteConnection, state: inout WriteState, until target: Int
    ) throws(SQLiteFailure) -> Int {
        var evicted = 0
        while state.used > Int64(target) {
            let removed = try connection.withStatement(.evictOldest) { statement throws(SQLiteFailure) -> Int64? in
                try statement.step() ? try Self.accounted(statement.integer(at: 0), "entry cost") : nil
            }
            guard let removed else {
                // Nothing left to evict while bytes are still accounted (an entry always fits the
                // budget: it is at most half the capacity): the count had drifted, through a
                // damaged cost column. Start again from zero.
                state.used = 0
                state.entries = 0
                break
            }
            state.used -= removed
            state.entries -= 1
            evicted += 1
        }
        return evicted
    }

    // MARK: Damage

    /// Empties a store SQLite found damaged, in place (every process using it sees the empty
    /// store), makes its schema again under the same lock, and counts and reports it, unless this
    /// tier has reset it since `seen` (read before the operation that met the damage): operations
    /// that met the same damage at once reset it once. If emptying fails, the next operation meets
    /// the damage again and reports it as an error.
    func resetDamagedStore(because failure: SQLiteFailure, seen: Int) {
        let reason = "damaged: \(failure.message)"
        let outcome = writer.withLock { connection -> Result<Bool, any Error> in
            guard resetGeneration.load(ordering: .acquiring) == seen else { return .success(false) }
            let result = Result { () throws -> Bool in
                try connection.resetDatabase()
                try opening.prepare(connection)
                // Under the writer's lock, as the emptying: cleared after it, the set lost a key
                // a store refused on a full disk hid meanwhile, and its older value was read again.
                accessLog.removeAll()
                hiddenKeys.removeAll()
                return true
            }
            // Counted even when it failed half-way: an operation that met the damage before must
            // not empty the store a second time.
            resetGeneration.add(1, ordering: .releasing)
            return result
        }
        switch outcome {
        case .success(false):
            return
        case .success(true):
            readers.closeIdle()
            reportReset(reason)
        case .failure(let error):
            counters.recordError()
            logger?.error(
                "damaged store could not be emptied",
                metadata: ["tier": "\(name)", "file": "\(file.path)", "reason": "\(reason)", "error": "\(error)"])
        }
    }

    /// Counts, logs and reports a store emptied because of `reason`.
    func reportReset(_ reason: String) {
        counters.recordStoreReset()
        logger?.error(
            "damaged store emptied; its entries are lost",
            metadata: ["tier": "\(name)", "file": "\(file.path)", "reason": "\(reason)"])
        onStoreReset?(file, reason)
    }

    /// Logs a refusal, and sets the usage gauges when metrics are recorded.
    private func report(_ outcome: StoreOutcome, key: CacheKey) {
        recordUsageIfObserved()
        logger?.logRefusal(outcome, key: key, tier: name)
    }
}

extension SQLiteTier {
    /// Moves every committed entry from the write-ahead log into the database file, syncs it and
    /// truncates the log: afterwards the database file alone holds the store (for a backup or a
    /// copy), whatever the ``Durability``.
    ///
    /// - Throws: `TierCacheError.Code.storageFailure` when another connection (a
    ///   reader's snapshot, a writer in another process) kept the checkpoint from finishing within
    ///   the busy timeout: the database file alone is then not the whole store.
    public func sync() throws {
        let (busy, logFrames, checkpointed): (Int64, Int64, Int64)
        do {
            (busy, logFrames, checkpointed) = try writer.withLock { connection throws(SQLiteFailure) in
                // A blocked checkpoint is no error to SQLite: its row says so.
                try connection.withStatement("PRAGMA wal_checkpoint(TRUNCATE)") { statement throws(SQLiteFailure) in
                    guard try statement.step() else { return (0, 0, 0) }
                    return (statement.integer(at: 0), statement.integer(at: 1), statement.integer(at: 2))
                }
            }
        } catch {
            throw error.tierError(at: file.path)
        }
        guard busy == 0, checkpointed >= logFrames else {
            throw TierCacheError(
                .storageFailure,
                "sync of \(file.path) checkpointed \(checkpointed) of \(logFrames) write-ahead log frames: another connection held the store past the busy timeout"
            )
        }
    }
}
