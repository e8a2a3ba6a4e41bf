import CLMDB
import CZstd
import Foundation
import Synchronization
import TierCache

/// The disk tiers' baseline: LMDB and zstd called directly, with `LMDBTier`'s environment flags
/// and compression level and nothing of its own: no accounting, recency, eviction, framing,
/// checksum of its own, or group commit (one write transaction per store). It refuses a record
/// (compressed, as `LMDBTier` measures it) above the subject's per-entry limit (`tooLarge`), and
/// evicts nothing: when the map is full a store throws (``BaselineLimits/outgrown(_:capacity:)``),
/// since from there on the two would not do the same work.
///
/// `@unchecked Sendable`: the environment is opened with `MDB_NOTLS`, so read transactions may
/// run on any thread, and LMDB serialises write transactions itself; the zstd contexts, which are
/// not thread-safe, are only reached through `contexts`, a `Mutex`-guarded pool from which each
/// call takes a pair for its own use and returns it.
final class RawLMDBZstdTier: LocalCacheTier, @unchecked Sendable {
    /// One compression and one decompression context, used by one call at a time.
    ///
    /// `@unchecked Sendable`: the pointers are owned by whoever took the pair from the pool,
    /// and only that call uses them until it puts the pair back.
    private struct Contexts: @unchecked Sendable {
        let compression: OpaquePointer
        let decompression: OpaquePointer
    }

    let name = "raw LMDB+zstd"
    let medium = TierMedium.disk
    private let env: OpaquePointer
    private let dbi: MDB_dbi
    private let capacity: Int
    private let maxEntryBytes: Int
    private let contexts = Mutex<[Contexts]>([])

    /// The largest map the baseline reserves: 1 TiB of address space (a sparse file).
    static let largestMapSize = 1 << 40

    /// A negative `capacity` (a user's tier may report one) counts as 0, as in `MinimalLRUTier`;
    /// `maxEntryBytes` is the subject's per-entry limit (``BaselineLimits/maxEntryBytes(_:capacity:)``).
    init(directory: URL, capacity: Int, maxEntryBytes: Int? = nil) throws {
        self.capacity = max(capacity, 0)
        self.maxEntryBytes = BaselineLimits.maxEntryBytes(maxEntryBytes, capacity: self.capacity)
        var env: OpaquePointer?
        guard mdb_env_create(&env) == 0, let env else {
            throw TierCacheError(.storageFailure, "mdb_env_create failed")
        }
        self.env = env
        let flags = UInt32(MDB_NOTLS | MDB_NORDAHEAD | MDB_NOMETASYNC | MDB_NOSYNC)
        // The map is address space reserved, not disk used: at most 1 TiB, since a tier of unknown
        // capacity reports `Int.max`, and LMDB cannot map that (ENOMEM: the baseline never opened).
        var status = mdb_env_set_mapsize(env, min(max(capacity, 1 << 20), Self.largestMapSize))
        if status == 0 { status = mdb_env_set_maxreaders(env, 512) }
        if status == 0 { status = mdb_env_open(env, directory.path, flags, 0o600) }
        var txn: OpaquePointer?
        var dbi = MDB_dbi()
        if status == 0 { status = mdb_txn_begin(env, nil, 0, &txn) }
        if status == 0 { status = mdb_dbi_open(txn, nil, 0, &dbi) }
        if status == 0 { status = mdb_txn_commit(txn) } else if txn != nil { mdb_txn_abort(txn) }
        guard status == 0 else {
            mdb_env_close(env)
            throw TierCacheError(.storageFailure, "cannot open raw LMDB: \(String(cString: mdb_strerror(status)))")
        }
        self.dbi = dbi
    }

    deinit {
        mdb_env_close(env)
        for pair in contexts.withLock({ $0 }) {
            ZSTD_freeCCtx(pair.compression)
            ZSTD_freeDCtx(pair.decompression)
        }
    }

    private func withContexts<T>(_ body: (Contexts) throws -> T) throws -> T {
        let pair: Contexts
        if let pooled = contexts.withLock({ $0.popLast() }) {
            pair = pooled
        } else {
            guard let compression = ZSTD_createCCtx(), let decompression = ZSTD_createDCtx() else {
                throw TierCacheError(.storageFailure, "cannot create zstd contexts")
            }
            ZSTD_CCtx_setParameter(compression, ZSTD_c_compressionLevel, 1)
            pair = Contexts(compression: compression, decompression: decompression)
        }
        defer { contexts.withLock { $0.append(pair) } }
        return try body(pair)
    }

    func entry(forKey key: CacheKey) throws -> CacheEntry? {
        var key = key.rawValue
        let value = try key.withUTF8 { keyBytes -> [UInt8]? in
            var txn: OpaquePointer?
            let status = mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn)
            guard status == 0 else { throw TierCacheError(.storageFailure, "mdb_txn_begin: \(status)") }
            defer { mdb_txn_abort(txn) }
            var mdbKey = MDB_val(
                mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            var mdbValue = MDB_val()
            let found = mdb_get(txn, dbi, &mdbKey, &mdbValue)
            if found == MDB_NOTFOUND { return nil }
            // Any other failure is one: read as a miss, it would be a store, and not counted.
            guard found == 0, let data = mdbValue.mv_data else {
                throw TierCacheError(.storageFailure, "mdb_get: \(String(cString: mdb_strerror(found)))")
            }
            let size = ZSTD_getFrameContentSize(data, mdbValue.mv_size)
            guard size <= UInt64(capacity) else { throw TierCacheError(.storageFailure, "bad zstd frame") }
            return try withContexts { pair in
                try [UInt8](unsafeUninitializedCapacity: Int(size)) { buffer, count in
                    let written = ZSTD_decompressDCtx(
                        pair.decompression, buffer.baseAddress, Int(size), data, mdbValue.mv_size)
                    guard ZSTD_isError(written) == 0 else { throw TierCacheError(.storageFailure, "bad zstd frame") }
                    count = written
                }
            }
        }
        return value.map { CacheEntry(value: $0, storedAt: .distantPast) }
    }

    func store(_ entry: CacheEntry, forKey key: CacheKey) throws -> StoreOutcome {
        // Refused as `MinimalLRUTier` refuses it: a larger value, stored, would fail reads' bound.
        let size = entry.value.count
        guard size <= capacity else { return .refused(.tooLarge(size: size, limit: capacity)) }
        let compressed = try withContexts { pair in
            try [UInt8](unsafeUninitializedCapacity: ZSTD_compressBound(entry.value.count)) { buffer, count in
                let written = entry.value.withUnsafeBytes {
                    ZSTD_compress2(pair.compression, buffer.baseAddress, buffer.count, $0.baseAddress, $0.count)
                }
                guard ZSTD_isError(written) == 0 else { throw TierCacheError(.storageFailure, "zstd failed") }
                count = written
            }
        }
        guard compressed.count <= maxEntryBytes else {
            return .refused(.tooLarge(size: compressed.count, limit: maxEntryBytes))
        }
        var key = key.rawValue
        let status = key.withUTF8 { keyBytes in
            compressed.withUnsafeBytes { valueBytes -> Int32 in
                var txn: OpaquePointer?
                var status = mdb_txn_begin(env, nil, 0, &txn)
                guard status == 0 else { return status }
                var mdbKey = MDB_val(
                    mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
                var mdbValue = MDB_val(
                    mv_size: valueBytes.count, mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
                status = mdb_put(txn, dbi, &mdbKey, &mdbValue, 0)
                if status == 0 { return mdb_txn_commit(txn) }
                mdb_txn_abort(txn)
                return status
            }
        }
        if status == MDB_MAP_FULL { throw BaselineLimits.outgrown(name, capacity: capacity) }
        guard status == 0 else {
            throw TierCacheError(.storageFailure, "mdb_put: \(String(cString: mdb_strerror(status)))")
        }
        return .stored
    }

    func removeEntry(forKey key: CacheKey) throws {
        var key = key.rawValue
        let status = key.withUTF8 { keyBytes -> Int32 in
            var txn: OpaquePointer?
            var status = mdb_txn_begin(env, nil, 0, &txn)
            guard status == 0 else { return status }
            var mdbKey = MDB_val(
                mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            status = mdb_del(txn, dbi, &mdbKey, nil)
            if status == 0 || status == MDB_NOTFOUND { return mdb_txn_commit(txn) }
            mdb_txn_abort(txn)
            return status
        }
        guard status == 0 else { throw TierCacheError(.storageFailure, "mdb_del: \(status)") }
    }

    func removeAll() throws {
        var txn: OpaquePointer?
        var status = mdb_txn_begin(env, nil, 0, &txn)
        if status == 0 {
            status = mdb_drop(txn, dbi, 0)
            if status == 0 { status = mdb_txn_commit(txn) } else { mdb_txn_abort(txn) }
        }
        guard status == 0 else { throw TierCacheError(.storageFailure, "mdb_drop: \(status)") }
    }

    func usage() throws -> TierUsage {
        var stat = MDB_stat()
        var info = MDB_envinfo()
        mdb_env_stat(env, &stat)
        mdb_env_info(env, &info)
        return TierUsage(
            bytes: (info.me_last_pgno + 1) * Int(stat.ms_psize), entries: Int(stat.ms_entries), capacity: capacity,
            maxEntryBytes: maxEntryBytes)
    }

    func statistics() -> TierStatistics {
        var statistics = TierStatistics()
        statistics.usage = try? usage()
        return statistics
    }
}
