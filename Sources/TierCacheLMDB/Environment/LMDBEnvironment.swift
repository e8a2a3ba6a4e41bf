import CLMDB
import Foundation
import TierCache

/// An open LMDB environment with the tier's four databases.
///
/// `@unchecked Sendable` is safe because LMDB's environment handle is thread-safe, the
/// environment is opened with `MDB_NOTLS` (a read transaction is not tied to the thread that began
/// it), and every transaction is confined to one call of ``read(_:)`` or ``write(_:)``, which
/// begins and ends it on the calling thread. The database handles are plain integers fixed at open.
final class LMDBEnvironment: @unchecked Sendable {
    /// Entry records by storage key.
    let entries: MDB_dbi
    /// Storage key → the access tick last recorded for it.
    let ticks: MDB_dbi
    /// Access tick (big-endian) → storage key: least recently used first.
    let recency: MDB_dbi
    /// Format marker, capacity, accounted bytes, the tick clock.
    let meta: MDB_dbi
    let path: String
    let pageSize: Int

    private let handle: OpaquePointer

    /// Thrown by a write when the map is full; the tier evicts and retries.
    struct MapFull: Error {}

    init(handle: OpaquePointer, path: String, readOnly: Bool) throws(TierCacheError) {
        self.handle = handle
        self.path = path
        var stat = MDB_stat()
        mdb_env_stat(handle, &stat)
        self.pageSize = Int(stat.ms_psize)

        var txn: OpaquePointer?
        try LMDBStatus.check(
            Self.begin(handle, readOnly ? UInt32(MDB_RDONLY) : 0, &txn), "beginning a transaction", path: path)
        guard let txn else { throw TierCacheError(.storageFailure, "LMDB returned no transaction for \(path)") }
        var committed = false
        defer { if !committed { mdb_txn_abort(txn) } }

        var main = MDB_dbi()
        try LMDBStatus.check(mdb_dbi_open(txn, nil, 0, &main), "opening the main database", path: path)
        var mainStat = MDB_stat()
        mdb_stat(txn, main, &mainStat)

        func open(_ name: String) throws(TierCacheError) -> MDB_dbi {
            var dbi = MDB_dbi()
            let flags = readOnly ? 0 : UInt32(MDB_CREATE)
            let rc = mdb_dbi_open(txn, name, flags, &dbi)
            if rc == MDB_NOTFOUND || rc == MDB_INCOMPATIBLE {
                throw TierCacheError(
                    .foreignStore,
                    "\(path) holds an LMDB database that TierCache did not create; choose another directory")
            }
            try LMDBStatus.check(rc, "opening database \(name)", path: path)
            return dbi
        }
        // An environment with data but without our metadata belongs to someone else: leave it alone.
        if mainStat.ms_entries > 0 {
            var probe = MDB_dbi()
            guard mdb_dbi_open(txn, "tiercache.meta", 0, &probe) == MDB_SUCCESS else {
                throw TierCacheError(
                    .foreignStore,
                    "\(path) holds an LMDB database that TierCache did not create; choose another directory")
            }
        } else if readOnly {
            throw TierCacheError(.foreignStore, "\(path) holds no TierCache store")
        }
        meta = try open("tiercache.meta")
        entries = try open("tiercache.entries")
        ticks = try open("tiercache.ticks")
        recency = try open("tiercache.recency")
        try LMDBStatus.check(mdb_txn_commit(txn), "creating the databases", path: path)
        committed = true
    }

    deinit {
        mdb_env_close(handle)
    }

    /// Runs `body` in a read-only transaction. Pointers handed to `body` are valid only inside it.
    func read<T>(_ body: (Transaction) throws -> T) throws -> T {
        var txn: OpaquePointer?
        try LMDBStatus.check(Self.begin(handle, UInt32(MDB_RDONLY), &txn), "beginning a read", path: path)
        guard let txn else { throw TierCacheError(.storageFailure, "LMDB returned no transaction for \(path)") }
        defer { mdb_txn_abort(txn) }
        return try body(Transaction(txn: txn, environment: self))
    }

    /// Runs `body` in a write transaction and commits it; aborts if `body` throws.
    /// Throws ``MapFull`` when the map has no room, so the caller can evict and retry.
    func write<T>(_ body: (Transaction) throws -> T) throws -> T {
        var txn: OpaquePointer?
        try LMDBStatus.check(mdb_txn_begin(handle, nil, 0, &txn), "beginning a write", path: path)
        guard let txn else { throw TierCacheError(.storageFailure, "LMDB returned no transaction for \(path)") }
        let result: T
        do {
            result = try body(Transaction(txn: txn, environment: self))
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        let rc = mdb_txn_commit(txn)  // frees the transaction whatever it returns
        if rc == MDB_MAP_FULL { throw MapFull() }
        try LMDBStatus.check(rc, "committing a write", path: path)
        return result
    }

    /// The environment's flags now (`mdb_env_get_flags`).
    var flags: UInt32 {
        var flags: UInt32 = 0
        mdb_env_get_flags(handle, &flags)
        return flags
    }

    /// Syncs commits as `durability` says from now on (LMDB changes these flags on an open
    /// environment).
    func setDurability(_ durability: LMDBTier.Durability) throws(TierCacheError) {
        let syncFlags = UInt32(MDB_NOSYNC | MDB_NOMETASYNC)
        try LMDBStatus.check(mdb_env_set_flags(handle, syncFlags, 0), "changing how commits sync", path: path)
        if durability.environmentFlags != 0 {
            try LMDBStatus.check(
                mdb_env_set_flags(handle, durability.environmentFlags, 1), "changing how commits sync", path: path)
        }
    }

    /// Clears reader slots left behind by processes that died mid-read; returns how many.
    @discardableResult
    func clearStaleReaders() -> Int { Self.clearStaleReaders(handle) }

    private static func clearStaleReaders(_ handle: OpaquePointer) -> Int {
        var dead: Int32 = 0
        guard mdb_reader_check(handle, &dead) == MDB_SUCCESS else { return 0 }
        return Int(dead)
    }

    /// `mdb_txn_begin`, tried once more after clearing the slots of processes that died mid-read
    /// when they left the reader table full (`MDB_READERS_FULL`): a long-running process, or one
    /// that only reads (and never clears them at open), would otherwise fail every read until
    /// some writer opened the store again.
    private static func begin(_ handle: OpaquePointer, _ flags: UInt32, _ txn: inout OpaquePointer?) -> Int32 {
        let rc = mdb_txn_begin(handle, nil, flags, &txn)
        guard rc == MDB_READERS_FULL, clearStaleReaders(handle) > 0 else { return rc }
        return mdb_txn_begin(handle, nil, flags, &txn)
    }

    /// Flushes written data to disk, whatever the durability mode.
    func sync() throws(TierCacheError) {
        try LMDBStatus.check(mdb_env_sync(handle, 1), "syncing", path: path)
    }
}

/// One LMDB transaction (never stored beyond its call), valid inside the ``LMDBEnvironment/read(_:)`` or
/// ``LMDBEnvironment/write(_:)`` call that made it.
struct Transaction {
    let txn: OpaquePointer
    let environment: LMDBEnvironment

    private func fail(_ rc: Int32, _ what: String) throws -> Never {
        if rc == MDB_MAP_FULL || rc == MDB_TXN_FULL { throw LMDBEnvironment.MapFull() }
        throw LMDBStatus.error(rc, what, path: environment.path)
    }

    /// The value under `key`, pointing into the map: copy or decode it before the transaction ends.
    func get(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let rc = mdb_get(txn, dbi, &k, &v)
        if rc == MDB_NOTFOUND { return nil }
        if rc != MDB_SUCCESS { try fail(rc, "reading") }
        return UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
    }

    func put(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = mdb_put(txn, dbi, &k, &v, 0)
        if rc != MDB_SUCCESS { try fail(rc, "writing") }
    }

    /// Deletes `key`; returns whether it was there.
    @discardableResult
    func delete(_ dbi: MDB_dbi, _ key: UnsafeRawBufferPointer) throws -> Bool {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        let rc = mdb_del(txn, dbi, &k, nil)
        if rc == MDB_NOTFOUND { return false }
        if rc != MDB_SUCCESS { try fail(rc, "deleting") }
        return true
    }

    /// The last key of `dbi` in key order, copied.
    func lastKey(_ dbi: MDB_dbi) throws -> [UInt8]? {
        var last: [UInt8]?
        try scan(dbi, from: MDB_LAST) { key, _ in
            last = [UInt8](key)
            return false
        }
        return last
    }

    /// The first key and value of `dbi` in key order, copied.
    func first(_ dbi: MDB_dbi) throws -> (key: [UInt8], value: [UInt8])? {
        var first: (key: [UInt8], value: [UInt8])?
        try scan(dbi) { key, value in
            first = ([UInt8](key), [UInt8](value))
            return false
        }
        return first
    }

    /// Calls `body` with every key and value of `dbi`, in key order.
    func forEach(_ dbi: MDB_dbi, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        try scan(dbi) { key, value in
            try body(key, value)
            return true
        }
    }

    /// Calls `body` with the keys and values of `dbi`, in key order, until it returns `false`.
    func forEach(_ dbi: MDB_dbi, while body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try scan(dbi, body)
    }

    /// Walks `dbi` in key order while `body` returns `true`, from its first key (or from `start`,
    /// a cursor operation such as `MDB_LAST`).
    private func scan(
        _ dbi: MDB_dbi, from start: MDB_cursor_op = MDB_FIRST,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var cursor: OpaquePointer?
        let rc = mdb_cursor_open(txn, dbi, &cursor)
        if rc != MDB_SUCCESS { try fail(rc, "opening a cursor") }
        defer { mdb_cursor_close(cursor) }
        var k = MDB_val()
        var v = MDB_val()
        var op = start
        while true {
            let got = mdb_cursor_get(cursor, &k, &v, op)
            if got == MDB_NOTFOUND { return }
            if got != MDB_SUCCESS { try fail(got, "reading a cursor") }
            let goOn = try body(
                UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
                UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
            if !goOn { return }
            op = MDB_NEXT
        }
    }

    /// Empties `dbi`.
    func clear(_ dbi: MDB_dbi) throws {
        let rc = mdb_drop(txn, dbi, 0)
        if rc != MDB_SUCCESS { try fail(rc, "clearing") }
    }

    /// The bytes of the pages `dbi` occupies (branch, leaf and overflow), from its statistics:
    /// no walk.
    func pageBytes(_ dbi: MDB_dbi) -> Int {
        var stat = MDB_stat()
        mdb_stat(txn, dbi, &stat)
        return (Int(stat.ms_branch_pages) + Int(stat.ms_leaf_pages) + Int(stat.ms_overflow_pages)) * Int(stat.ms_psize)
    }

    func entryCount(_ dbi: MDB_dbi) -> Int {
        var stat = MDB_stat()
        mdb_stat(txn, dbi, &stat)
        return Int(stat.ms_entries)
    }

    // MARK: Metadata values

    func metaValue(_ name: String) throws -> UInt64? {
        var name = name
        return try name.withUTF8 { key throws -> UInt64? in
            guard let value = try get(environment.meta, UnsafeRawBufferPointer(key)), value.count == 8 else {
                return nil
            }
            return UInt64(littleEndian: value.loadUnaligned(as: UInt64.self))
        }
    }

    func setMetaValue(_ name: String, _ value: UInt64) throws {
        var name = name
        try name.withUTF8 { key in
            try withUnsafeBytes(of: value.littleEndian) { try put(environment.meta, UnsafeRawBufferPointer(key), $0) }
        }
    }
}

/// What every write reads and updates: the accounted bytes in use and the access-tick clock,
/// kept together in one metadata row so a write costs one read and one put for both.
struct WriteState {
    var used: Int
    var clock: UInt64
}

extension Transaction {
    private static let writeStateName = Array("state".utf8)

    func writeState() throws -> WriteState {
        var state = try Self.writeStateName.withUnsafeBytes { key in
            guard let value = try get(environment.meta, key), value.count == 16 else {
                return WriteState(used: 0, clock: 0)
            }
            let used = UInt64(littleEndian: value.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
            let clock = UInt64(littleEndian: value.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            // No map holds 2^62 bytes: a larger count is damage (the structural check at open
            // does not read it). Capped, every cost added to it stays in range, and the eviction
            // that follows, finding nothing left to evict, recounts it (`LMDBTier.evict`). A
            // count damaged low is recounted when the map fills with room by the accounts
            // (`LMDBTier.evictCommitted(until:recountingIfUnder:)`).
            return WriteState(used: Int(clamping: min(used, 1 << 62)), clock: clock)
        }
        // Never behind the newest tick in the recency index (one cursor step to its end): a
        // clock damaged low (or a row lost) gave new accesses ticks older than every entry's, so
        // eviction took the newest first, and a tick already in use replaced another key's row,
        // which was then never evicted.
        if let newest = try lastKey(environment.recency), newest.count == 8 {
            state.clock = max(
                state.clock, UInt64(bigEndian: newest.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }))
        }
        return state
    }

    func setWriteState(_ state: WriteState) throws {
        let words = (UInt64(max(0, state.used)).littleEndian, state.clock.littleEndian)
        try Self.writeStateName.withUnsafeBytes { key in
            try withUnsafeBytes(of: words) { try put(environment.meta, key, $0) }
        }
    }
}
