import Foundation
import TierCache

// What the disk tiers' tests (LMDB and SQLite) share: temporary directories and file systems,
// keys and values, and the executables built beside the tests.

/// A fresh directory under the temporary directory, removed by `cleanUp()`.
public struct TemporaryDirectory: ~Copyable {
    public let url: URL
    public init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tiercache-test-\(UUID().uuidString)", isDirectory: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
}

public func key(_ text: String) -> CacheKey {
    guard let key = try? CacheKey(text) else { preconditionFailure("invalid test key \(text)") }
    return key
}

public func entry(_ value: [UInt8], expiresAt: Date? = nil) -> CacheEntry {
    CacheEntry(value: value, storedAt: Date(timeIntervalSince1970: 1_000), expiresAt: expiresAt)
}

/// Bytes that zstd cannot shrink.
public func incompressible(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: state >> 56)
    }
}

/// Bytes that compress well, like JSON.
public func compressible(_ count: Int) -> [UInt8] {
    Array(String(repeating: "{\"name\":\"value\",\"n\":1}", count: count / 22 + 1).utf8.prefix(count))
}

/// Mounts a small tmpfs for tests of full and read-only file systems; `nil` where the process
/// may not mount (not root), so the test skips with a message.
public final class TemporaryMount {
    public let url: URL
    private init(url: URL) { self.url = url }

    public static func make(sizeKiB: Int, readOnly: Bool = false) -> TemporaryMount? {
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

/// The `tiercache-harness` executable (crash-writer, damage-reader, …) built beside the test bundle.
public func harnessExecutable() throws -> URL { try executableBesideTests("tiercache-harness") }

/// The executable `name`, built beside the test bundle.
public func executableBesideTests(_ name: String) throws -> URL {
    let candidates = [
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name),
        Bundle.main.bundleURL.appendingPathComponent(name),
        Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name),
    ]
    guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
        throw MissingExecutable(name: name)
    }
    return found
}

/// An executable the tests start is not built beside them.
public struct MissingExecutable: Error, CustomStringConvertible {
    public let name: String
    public var description: String { "\(name) is not built beside the tests" }
}
