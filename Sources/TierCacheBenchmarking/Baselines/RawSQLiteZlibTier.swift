import CSQLite
import CZlib
import Foundation
import Synchronization
import TierCache
import TierCacheSQLite

/// The SQLite tier's baseline: SQLite and zlib called directly, with `SQLiteTier`'s settings (WAL,
/// the same `synchronous`, zlib level 1) and nothing of its own: no accounting, recency, eviction,
/// framing or checksum of its own. A lookup is one `SELECT` and one `uncompress`; a store is one
/// `INSERT OR REPLACE` in its own transaction. As the raw LMDB baseline, it refuses a record above
/// the subject's per-entry limit (`tooLarge`) and evicts nothing: once its database file outgrows
/// the capacity (looked at every ``sizeCheckInterval`` stores), a store throws
/// (``BaselineLimits/outgrown(_:capacity:)``); a full disk refuses.
///
/// Each connection (with its prepared statements) is used by one call at a time: readers are
/// taken from `readers`, a `Mutex`-guarded pool, and put back after; the writer is only used
/// inside `writer`'s lock.
final class RawSQLiteZlibTier: LocalCacheTier {
    /// A connection and its prepared statements (the delete's too: prepared for each removal, it
    /// slowed the baseline of delete-bearing mixes, which `SQLiteTier` runs from its own cache).
    ///
    /// `@unchecked Sendable`: owned by whoever took it from the pool or holds the writer's lock.
    private final class Connection: @unchecked Sendable {
        let handle: OpaquePointer
        let select: OpaquePointer
        let insert: OpaquePointer
        let delete: OpaquePointer

        init(path: String, synchronous: String) throws {
            var handle: OpaquePointer?
            guard
                sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
                    == SQLITE_OK, let handle
            else {
                sqlite3_close_v2(handle)
                throw TierCacheError(.storageFailure, "cannot open raw SQLite at \(path)")
            }
            sqlite3_busy_timeout(handle, 5_000)
            let setup = """
                PRAGMA journal_mode = WAL; PRAGMA synchronous = \(synchronous);
                CREATE TABLE IF NOT EXISTS entries(key BLOB PRIMARY KEY, value BLOB NOT NULL);
                """
            var select: OpaquePointer?
            var insert: OpaquePointer?
            var delete: OpaquePointer?
            guard sqlite3_exec(handle, setup, nil, nil, nil) == SQLITE_OK,
                sqlite3_prepare_v2(handle, "SELECT value FROM entries WHERE key = ?1", -1, &select, nil) == SQLITE_OK,
                sqlite3_prepare_v2(handle, "INSERT OR REPLACE INTO entries VALUES (?1, ?2)", -1, &insert, nil)
                    == SQLITE_OK,
                sqlite3_prepare_v2(handle, "DELETE FROM entries WHERE key = ?1", -1, &delete, nil) == SQLITE_OK,
                let select, let insert, let delete
            else {
                let message = String(cString: sqlite3_errmsg(handle))
                sqlite3_finalize(select)
                sqlite3_finalize(insert)
                sqlite3_finalize(delete)
                sqlite3_close_v2(handle)
                throw TierCacheError(.storageFailure, "cannot set up raw SQLite: \(message)")
            }
            (self.handle, self.select, self.insert, self.delete) = (handle, select, insert, delete)
        }

        deinit {
            sqlite3_finalize(select)
            sqlite3_finalize(insert)
            sqlite3_finalize(delete)
            sqlite3_close_v2(handle)
        }
    }

    let name = "raw SQLite+zlib"
    let medium = TierMedium.disk
    private let path: String
    private let synchronous: String
    private let capacity: Int
    private let maxEntryBytes: Int
    /// How many stores pass between looks at the database file's size: a `stat` each, a
    /// microsecond against a store's tens (a `SQLiteTier` checks its accounts on every store).
    static let sizeCheckInterval = 64
    /// The writer's connection, and the stores since the file's size was last looked at.
    private let writer: Mutex<(connection: Connection, storesSinceSizeCheck: Int)>
    private let readers = Mutex<[Connection]>([])

    /// A negative `capacity` (a user's tier may report one) counts as 0, as in `MinimalLRUTier`;
    /// `maxEntryBytes` is the subject's per-entry limit (``BaselineLimits/maxEntryBytes(_:capacity:)``).
    init(directory: URL, capacity: Int, maxEntryBytes: Int? = nil, durability: SQLiteTier.Durability) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("raw.sqlite").path
        synchronous = durability == .full ? "FULL" : "NORMAL"
        self.capacity = max(capacity, 0)
        self.maxEntryBytes = BaselineLimits.maxEntryBytes(maxEntryBytes, capacity: self.capacity)
        writer = Mutex((try Connection(path: path, synchronous: synchronous), 0))
    }

    func entry(forKey key: CacheKey) throws -> CacheEntry? {
        let connection = try readers.withLock { $0.popLast() } ?? Connection(path: path, synchronous: synchronous)
        defer { readers.withLock { $0.append(connection) } }
        let statement = connection.select
        defer { sqlite3_reset(statement) }
        var key = key.rawValue
        key.withUTF8 { bytes in
            _ = tiercache_sqlite3_bind_blob_transient(statement, 1, bytes.baseAddress, Int32(bytes.count))
        }
        let found = sqlite3_step(statement)
        if found == SQLITE_DONE { return nil }
        // Any other failure is one: read as a miss, it would be a store, and not counted.
        guard found == SQLITE_ROW else { throw TierCacheError(.storageFailure, "raw SQLite select: \(found)") }
        let data = sqlite3_column_blob(statement, 0)
        let count = Int(sqlite3_column_bytes(statement, 0))
        guard let data, count >= 4 else { return nil }
        // The value's size, then the zlib stream.
        let size = Int(UInt32(littleEndian: data.loadUnaligned(as: UInt32.self)))
        guard size <= capacity else { throw TierCacheError(.storageFailure, "bad raw record") }
        let value = try [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var produced = uLongf(size)
            let status = uncompress(
                buffer.baseAddress, &produced, (data + 4).assumingMemoryBound(to: Bytef.self), uLong(count - 4))
            guard status == Z_OK || size == 0 else { throw TierCacheError(.storageFailure, "bad zlib stream") }
            initialized = Int(produced)
        }
        return CacheEntry(value: value, storedAt: .distantPast)
    }

    func store(_ entry: CacheEntry, forKey key: CacheKey) throws -> StoreOutcome {
        // A larger value would be refused by the read's bound check: refuse it here instead.
        guard entry.value.count <= capacity else {
            return .refused(.tooLarge(size: entry.value.count, limit: capacity))
        }
        let bound = Int(compressBound(uLong(entry.value.count)))
        let record = try [UInt8](unsafeUninitializedCapacity: 4 + bound) { buffer, initialized in
            guard let base = buffer.baseAddress else { throw TierCacheError(.storageFailure, "no buffer") }
            UnsafeMutableRawPointer(base).storeBytes(of: UInt32(entry.value.count).littleEndian, as: UInt32.self)
            var written = uLongf(bound)
            let status = entry.value.withUnsafeBytes { value in
                compress2(
                    base + 4, &written, value.baseAddress?.assumingMemoryBound(to: Bytef.self), uLong(value.count), 1)
            }
            guard status == Z_OK else { throw TierCacheError(.storageFailure, "zlib failed") }
            initialized = 4 + Int(written)
        }
        guard record.count <= maxEntryBytes else {
            return .refused(.tooLarge(size: record.count, limit: maxEntryBytes))
        }
        let (status, outgrown) = writer.withLock { writer -> (Int32, Bool) in
            let statement = writer.connection.insert
            defer { sqlite3_reset(statement) }
            var key = key.rawValue
            key.withUTF8 { bytes in
                _ = tiercache_sqlite3_bind_blob_transient(statement, 1, bytes.baseAddress, Int32(bytes.count))
            }
            record.withUnsafeBytes { bytes in
                _ = tiercache_sqlite3_bind_blob_transient(statement, 2, bytes.baseAddress, Int32(bytes.count))
            }
            let status = sqlite3_step(statement)
            writer.storesSinceSizeCheck += 1
            guard writer.storesSinceSizeCheck >= Self.sizeCheckInterval else { return (status, false) }
            writer.storesSinceSizeCheck = 0
            return (status, Self.fileSize(path) > capacity)
        }
        if outgrown { throw BaselineLimits.outgrown(name, capacity: capacity) }
        if status & 0xFF == SQLITE_FULL { return .refused(.outOfSpace(detail: "the disk is full")) }
        guard status == SQLITE_DONE else { throw TierCacheError(.storageFailure, "raw SQLite insert: \(status)") }
        return .stored
    }

    func removeEntry(forKey key: CacheKey) throws {
        let status = writer.withLock { writer -> Int32 in
            let statement = writer.connection.delete
            defer { sqlite3_reset(statement) }
            var key = key.rawValue
            key.withUTF8 { bytes in
                _ = tiercache_sqlite3_bind_blob_transient(statement, 1, bytes.baseAddress, Int32(bytes.count))
            }
            return sqlite3_step(statement)
        }
        guard status == SQLITE_DONE else { throw TierCacheError(.storageFailure, "raw SQLite delete: \(status)") }
    }

    func removeAll() throws {
        let status = writer.withLock { sqlite3_exec($0.connection.handle, "DELETE FROM entries", nil, nil, nil) }
        guard status == SQLITE_OK else { throw TierCacheError(.storageFailure, "raw SQLite: \(status)") }
    }

    /// The database file and its write-ahead log, and the rows counted.
    func usage() throws -> TierUsage {
        let entries = try writer.withLock { writer -> Int in
            var statement: OpaquePointer?
            defer { sqlite3_finalize(statement) }
            guard
                sqlite3_prepare_v2(writer.connection.handle, "SELECT count(*) FROM entries", -1, &statement, nil)
                    == SQLITE_OK, sqlite3_step(statement) == SQLITE_ROW
            else { throw TierCacheError(.storageFailure, "raw SQLite: cannot count the rows") }
            return Int(sqlite3_column_int64(statement, 0))
        }
        return TierUsage(
            bytes: Self.fileSize(path) + Self.fileSize(path + "-wal"), entries: entries, capacity: capacity,
            maxEntryBytes: maxEntryBytes)
    }

    /// The size of the file at `path`, 0 when it cannot be read.
    private static func fileSize(_ path: String) -> Int {
        var status = stat()
        return stat(path, &status) == 0 ? Int(status.st_size) : 0
    }

    func statistics() -> TierStatistics {
        var statistics = TierStatistics()
        statistics.usage = try? usage()
        return statistics
    }
}
