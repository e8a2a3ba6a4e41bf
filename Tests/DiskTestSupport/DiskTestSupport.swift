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

/// How a `tiercache-harness` run ended, and what it printed.
public struct HarnessRun: Sendable {
    public let reason: Process.TerminationReason
    public let status: Int32
    public let output: String

    /// The first line printed (a command's outcome line).
    public var line: String { output.split(separator: "\n").first.map(String.init) ?? "" }
    /// Whether it exited with status 0.
    public var succeeded: Bool { reason == .exit && status == 0 }
}

/// The `tiercache` executable built beside the test bundle.
public func tiercacheExecutable() throws -> URL { try executableBesideTests("tiercache") }

/// Runs `tiercache` with `arguments`; its exit status and its output and errors together.
public func runTiercache(_ arguments: [String], in directory: URL? = nil) throws -> (status: Int32, output: String) {
    try runProcess(try tiercacheExecutable(), arguments, in: directory)
}

/// Runs `executable` with `arguments` to its end; its exit status and its output and errors
/// together (a process ended by a signal has that signal's number as its status). It runs in
/// `directory` when one is given, else in this process's current directory.
public func runProcess(
    _ executable: URL, _ arguments: [String], in directory: URL? = nil
) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// Runs `tiercache-harness` (or `executable`) with `arguments` to its end.
public func runHarness(_ arguments: [String], executable: URL? = nil) throws -> HarnessRun {
    let process = Process()
    process.executableURL = try executable ?? harnessExecutable()
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return HarnessRun(
        reason: process.terminationReason, status: process.terminationStatus,
        output: String(decoding: data, as: UTF8.self))
}

/// The numbers in a harness outcome line or summary (`opened reset=0 hits=300 ...`), by name.
public func outcomeFields(_ text: String) -> [String: Int] {
    var fields: [String: Int] = [:]
    for word in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
        let parts = word.split(separator: "=", maxSplits: 1)
        if parts.count == 2, let number = Int(parts[1]) { fields[String(parts[0])] = number }
    }
    return fields
}

/// Starts `tiercache-harness crash-writer` with `arguments`, reads its reports until it has
/// committed at least `count` entries, kills it with SIGKILL while it writes more, and returns
/// every number it reported committed (lines printed before the kill count too) and whether it
/// died of the signal.
public func killWriterAfterCommits(_ arguments: [String], count: Int) throws -> (committed: [Int], killed: Bool) {
    let process = Process()
    process.executableURL = try harnessExecutable()
    process.arguments = ["crash-writer"] + arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    var committed: [Int] = []
    var buffer = ""
    func takeLines() {
        while let newline = buffer.firstIndex(of: "\n") {
            let line = buffer[..<newline]
            buffer = String(buffer[buffer.index(after: newline)...])
            if line.hasPrefix("committed "), let number = Int(line.dropFirst("committed ".count)) {
                committed.append(number)
            }
        }
    }
    while committed.count < count {
        let chunk = output.fileHandleForReading.availableData
        guard !chunk.isEmpty else { break }
        buffer += String(decoding: chunk, as: UTF8.self)
        takeLines()
    }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    buffer += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    takeLines()
    return (committed, process.terminationReason == .uncaughtSignal)
}

/// The value `tiercache-harness crash-writer` writes for `index` (see CrashWriterCommand).
public func crashWriterValue(_ index: Int) -> [UInt8] {
    Array(String(repeating: "value \(index) ", count: 1 + index % 50).utf8)
}

/// Starts `processes` `tiercache-harness stress` writers on one store at once (writer numbers 0
/// up), each with `arguments`, waits for all of them, and returns how each ended with its output.
public func runStressWriters(
    store: String, processes: Int, seconds: String, arguments: [String]
) throws -> [(status: Int32, output: String)] {
    let started = try (0..<processes).map { number in
        let process = Process()
        process.executableURL = try harnessExecutable()
        process.arguments = ["stress", store, "--seconds", seconds, "--writer", String(number)] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        return (process, output)
    }
    return started.map { process, output in
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}

/// What is wrong with one `stress` writer's run, by the many-writers tests' rules (it exited 0,
/// read no wrong value and met no error, never saw usage over `capacity`, and read values others
/// wrote), and how many stores it made.
public func stressWriterProblems(status: Int32, output: String, capacity: Int) -> (problems: [String], stores: Int) {
    let fields = outcomeFields(output)
    var problems: [String] = []
    if status != 0 { problems.append("exit status \(status)") }
    if fields["wrong"] != 0 || fields["errors"] != 0 { problems.append("wrong values or errors") }
    if let largest = fields["largestUsage"] {
        if largest > capacity { problems.append("usage \(largest) over the capacity \(capacity)") }
    } else {
        problems.append("no usage reported")
    }
    if (fields["hits"] ?? 0) == 0 { problems.append("read nothing the others wrote") }
    return (problems, fields["stores"] ?? 0)
}

/// Writes `file` into `directory` (created) as `name`, with `flips` bits flipped, as damage on
/// disk would; `offset` draws each flipped byte's offset from `random` for a file of the given
/// size. Returns the offsets, for the failure message that lets a trial be replayed.
package func writeDamagedCopy(
    of file: [UInt8], to directory: URL, named name: String, flips: Int, random: inout SplitMix64,
    offset: (inout SplitMix64, _ size: Int) -> Int
) throws -> [Int] {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    var bytes = file
    var offsets: [Int] = []
    for _ in 0..<flips {
        let at = offset(&random, bytes.count)
        bytes[at] ^= UInt8(1) << (random.next() % 8)
        offsets.append(at)
    }
    try Data(bytes).write(to: directory.appendingPathComponent(name))
    return offsets
}

/// Stores 32 KiB incompressible entries (`full-0`, `full-1`, …, at most 200) into `tier` until a
/// store is refused for lack of space: the numbers stored, and the refusal's detail (`nil` if none
/// came). Any other outcome is thrown.
public func fillUntilOutOfSpace(_ tier: any LocalCacheTier) throws -> (stored: [Int], refusal: String?) {
    var stored: [Int] = []
    for index in 0..<200 {
        let outcome = try tier.store(
            entry(incompressible(32 << 10, seed: UInt64(index + 1))), forKey: key("full-\(index)"))
        if case .refused(.outOfSpace(let detail)) = outcome { return (stored, detail) }
        guard outcome == .stored else { throw UnexpectedOutcome(index: index, outcome: outcome) }
        stored.append(index)
    }
    return (stored, nil)
}

/// A store that was neither stored nor refused for lack of space while filling a disk.
public struct UnexpectedOutcome: Error, CustomStringConvertible {
    public let index: Int
    public let outcome: StoreOutcome
    public var description: String { "entry \(index): \(outcome)" }
}

/// A byte-flip campaign's trials (`TIERCACHE_DAMAGE_TRIALS`, 30 by default) and seed
/// (`TIERCACHE_DAMAGE_SEED`, random by default), announced with how to replay the run.
public func damageCampaignSettings(_ name: String) -> (trials: Int, seed: UInt64) {
    let environment = ProcessInfo.processInfo.environment
    let trials = environment["TIERCACHE_DAMAGE_TRIALS"].flatMap(Int.init) ?? 30
    let seed = environment["TIERCACHE_DAMAGE_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
    print("\(name): \(trials) trials, seed \(seed) (rerun with TIERCACHE_DAMAGE_SEED=\(seed))")
    return (trials, seed)
}
