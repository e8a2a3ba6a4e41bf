import CLMDB
import DiskTestSupport
import Foundation
import Synchronization
import Testing
import TierCache
import TierCacheTesting

/// Edits a store directly through LMDB, as damage on disk would. The tier must be closed.
func rawLMDBEdit(
    _ directory: URL, _ body: (OpaquePointer, MDB_dbi) -> Void, database: String = "tiercache.entries"
) throws {
    var env: OpaquePointer?
    try #require(mdb_env_create(&env) == 0)
    defer { mdb_env_close(env) }
    mdb_env_set_maxdbs(env, 8)
    try #require(mdb_env_open(env, directory.path, 0, 0o600) == 0)
    var txn: OpaquePointer?
    try #require(mdb_txn_begin(env, nil, 0, &txn) == 0)
    var dbi = MDB_dbi()
    try #require(mdb_dbi_open(txn, database, UInt32(MDB_CREATE), &dbi) == 0)
    body(txn!, dbi)
    try #require(mdb_txn_commit(txn) == 0)
}

func rawPut(_ txn: OpaquePointer, _ dbi: MDB_dbi, key: [UInt8], value: [UInt8]) {
    var key = key, value = value
    key.withUnsafeMutableBytes { k in
        value.withUnsafeMutableBytes { v in
            var mk = MDB_val(mv_size: k.count, mv_data: k.baseAddress)
            var mv = MDB_val(mv_size: v.count, mv_data: v.baseAddress)
            _ = mdb_put(txn, dbi, &mk, &mv, 0)
        }
    }
}

func rawGet(_ txn: OpaquePointer, _ dbi: MDB_dbi, key: [UInt8]) -> [UInt8]? {
    var key = key
    return key.withUnsafeMutableBytes { k -> [UInt8]? in
        var mk = MDB_val(mv_size: k.count, mv_data: k.baseAddress)
        var mv = MDB_val()
        guard mdb_get(txn, dbi, &mk, &mv) == 0 else { return nil }
        return [UInt8](UnsafeRawBufferPointer(start: mv.mv_data, count: mv.mv_size))
    }
}

/// Another process holding a read transaction open on a store (`tiercache-harness hold-reader`):
/// it pins the snapshot's pages and takes one slot of the reader table until it ends.
struct HeldReader {
    private let process = Process()
    private let input = Pipe()

    /// Starts the process and returns once its read transaction is open.
    init(directory: URL) throws {
        let output = Pipe()
        process.executableURL = try harnessExecutable()
        process.arguments = ["hold-reader", directory.path]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var said = ""
        while !said.contains("reading") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            said += String(decoding: chunk, as: UTF8.self)
        }
        try #require(said.contains("reading"), "hold-reader did not start: \(said)")
    }

    /// Ends the read and the process; returns its exit status.
    func end() throws -> Int32 {
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Kills the process mid-read, leaving its reader slot behind.
    func kill() {
        _ = Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
