import CLMDB
import Foundation
import Synchronization
import Testing
import TierCache
import TierCacheTesting

/// A fresh directory under the temporary directory, removed by `cleanUp()`.
struct TemporaryDirectory: ~Copyable {
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tiercache-test-\(UUID().uuidString)", isDirectory: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
}

func key(_ text: String) -> CacheKey {
    guard let key = try? CacheKey(text) else { preconditionFailure("invalid test key \(text)") }
    return key
}

func entry(_ value: [UInt8], expiresAt: Date? = nil) -> CacheEntry {
    CacheEntry(value: value, storedAt: Date(timeIntervalSince1970: 1_000), expiresAt: expiresAt)
}

/// Bytes that zstd cannot shrink.
func incompressible(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: state >> 56)
    }
}

/// Bytes that compress well, like JSON.
func compressible(_ count: Int) -> [UInt8] {
    Array(String(repeating: "{\"name\":\"value\",\"n\":1}", count: count / 22 + 1).utf8.prefix(count))
}

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

/// Mounts a small tmpfs for tests of full and read-only file systems; `nil` where the process
/// may not mount (not root), so the test skips with a message.
final class TemporaryMount {
    let url: URL
    private init(url: URL) { self.url = url }

    static func make(sizeKiB: Int, readOnly: Bool = false) -> TemporaryMount? {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tiercache-mount-\(UUID().uuidString)")
        guard (try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)) != nil else {
            return nil
        }
        let options = "size=\(sizeKiB)k" + (readOnly ? ",ro" : "")
        guard run("/bin/mount", ["-t", "tmpfs", "-o", options, "tmpfs", url.path]) == 0 else {
            try? FileManager.default.removeItem(at: url)
            return nil
        }
        return TemporaryMount(url: url)
    }

    deinit {
        _ = Self.run("/bin/umount", [url.path])
        try? FileManager.default.removeItem(at: url)
    }

    private static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// The `tiercache` executable built beside the test bundle.
func tiercacheExecutable() throws -> URL { try executableBesideTests("tiercache") }

/// Runs `tiercache` with `arguments`; its exit status and its output and errors together.
func runTiercache(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = try tiercacheExecutable()
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// The `tiercache-harness` executable (crash-writer, damage-reader, …) built beside the test bundle.
func harnessExecutable() throws -> URL { try executableBesideTests("tiercache-harness") }

private func executableBesideTests(_ name: String) throws -> URL {
    let candidates = [
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name),
        Bundle.main.bundleURL.appendingPathComponent(name),
        Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name),
    ]
    return try #require(
        candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
        "\(name) is not built beside the tests")
}
