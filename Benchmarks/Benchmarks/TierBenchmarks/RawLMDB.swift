import BenchCLMDB
import BenchCZstd
import Foundation

/// The physical baseline for the disk tier: LMDB and zstd called directly, with the same flags
/// and level as `LMDBTier`'s defaults, and nothing else (no accounting, recency, framing or
/// checksum of our own).
///
/// `@unchecked Sendable`: the benchmark runs one thread; the handles are used by that thread only.
final class RawLMDB: @unchecked Sendable {
    private var env: OpaquePointer?
    private var dbi = MDB_dbi()
    private let cctx = ZSTD_createCCtx()
    private let dctx = ZSTD_createDCtx()
    let directory: URL

    init(capacity: Int) {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("raw-lmdb-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        mdb_env_create(&env)
        mdb_env_set_mapsize(env, capacity)
        mdb_env_open(env, directory.path, UInt32(MDB_NOTLS | MDB_NORDAHEAD | MDB_NOMETASYNC), 0o600)
        var txn: OpaquePointer?
        mdb_txn_begin(env, nil, 0, &txn)
        mdb_dbi_open(txn, nil, 0, &dbi)
        mdb_txn_commit(txn)
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1)
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1)
    }

    deinit {
        mdb_env_close(env)
        ZSTD_freeCCtx(cctx)
        ZSTD_freeDCtx(dctx)
        try? FileManager.default.removeItem(at: directory)
    }

    /// Compresses `value` and puts it in its own transaction.
    func put(_ key: String, _ value: [UInt8]) {
        put(key, value, compressingWith: cctx)
    }

    /// Compresses `value` with `context` (one per thread: a zstd context is not thread-safe) and
    /// puts it in its own transaction; LMDB serialises concurrent callers, one commit each.
    func put(_ key: String, _ value: [UInt8], compressingWith context: OpaquePointer?) {
        var txn: OpaquePointer?
        mdb_txn_begin(env, nil, 0, &txn)
        compressAndPut(key, value, in: txn, compressingWith: context)
        mdb_txn_commit(txn)
    }

    /// Compresses each value and puts them all in one transaction: what a batch of concurrent
    /// stores costs LMDB at best.
    func putBatch(_ pairs: [(key: String, value: [UInt8])]) {
        var txn: OpaquePointer?
        mdb_txn_begin(env, nil, 0, &txn)
        for (key, value) in pairs { compressAndPut(key, value, in: txn, compressingWith: cctx) }
        mdb_txn_commit(txn)
    }

    private func compressAndPut(
        _ key: String, _ value: [UInt8], in txn: OpaquePointer?, compressingWith context: OpaquePointer?
    ) {
        var compressed = [UInt8](repeating: 0, count: ZSTD_compressBound(value.count))
        let size = compressed.withUnsafeMutableBytes { out in
            value.withUnsafeBytes { ZSTD_compress2(context, out.baseAddress, out.count, $0.baseAddress, $0.count) }
        }
        var key = key
        key.withUTF8 { k in
            compressed.withUnsafeMutableBytes { v in
                var mk = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
                var mv = MDB_val(mv_size: size, mv_data: v.baseAddress)
                mdb_put(txn, dbi, &mk, &mv, 0)
            }
        }
    }

    /// Gets and decompresses the value under `key`.
    func get(_ key: String, originalSize: Int) -> [UInt8]? {
        var key = key
        return key.withUTF8 { k -> [UInt8]? in
            var txn: OpaquePointer?
            mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn)
            defer { mdb_txn_abort(txn) }
            var mk = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
            var mv = MDB_val()
            guard mdb_get(txn, dbi, &mk, &mv) == 0 else { return nil }
            return [UInt8](unsafeUninitializedCapacity: originalSize) { buffer, count in
                count = ZSTD_decompressDCtx(dctx, buffer.baseAddress, originalSize, mv.mv_data, mv.mv_size)
            }
        }
    }
}
