import Foundation
import Testing

/// `tiercache-proxy` started as a real process on a free port, as a user would run it.
final class ProxyProcess: Sendable {
    let process: Process
    let port: Int
    /// The port of the `--metrics` endpoint, when there is one.
    let metricsPort: Int?
    /// The first line it printed: its configuration summary.
    let summary: String
    private let output: Pipe

    /// Starts the proxy with `arguments` (after `--listen 127.0.0.1:0`) and waits for its
    /// "listening" line.
    init(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = try Self.executable()
        process.arguments = ["--listen", "127.0.0.1:0", "--log-level", "warning"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        self.output = output
        // Read the summary line (the proxy prints it once listening, or exits on bad options).
        var line = Data()
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        summary = String(decoding: line, as: UTF8.self)
        guard let range = summary.range(of: "listening on port "),
            let port = Int(summary[range.upperBound...].prefix { $0.isNumber })
        else {
            process.terminate()
            throw ProxyStartFailure(output: summary)
        }
        self.port = port
        if let range = summary.range(of: "metrics on port ") {
            metricsPort = Int(summary[range.upperBound...].prefix { $0.isNumber })
        } else {
            metricsPort = nil
        }
    }

    /// ``init(_:)`` on a Dispatch thread: it blocks until the proxy is listening, and on the
    /// concurrency pool (two threads here) a few of them at once starved the in-process origins
    /// of the tests running beside them.
    static func start(_ arguments: [String]) async throws -> ProxyProcess {
        try await RawHTTP.onDispatch { try ProxyProcess(arguments) }
    }

    var url: String { "http://127.0.0.1:\(port)" }

    /// Sends SIGTERM and returns the exit status.
    func stop() -> Int32 {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// ``stop()`` on a Dispatch thread (see ``start(_:)``).
    func stopped() async -> Int32 {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: self.stop()) }
        }
    }

    deinit { if process.isRunning { process.terminate() } }

    static func executable() throws -> URL {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
                "tiercache-proxy"),
            Bundle.main.bundleURL.appendingPathComponent("tiercache-proxy"),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("tiercache-proxy"),
        ]
        return try #require(
            candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
            "tiercache-proxy is not built beside the tests")
    }

    /// Runs the proxy with `arguments` expecting it to refuse them; returns its exit status and
    /// what it printed on standard error and on standard output. On a Dispatch thread (see
    /// ``start(_:)``): a test of two dozen refusals held a thread of the concurrency pool for
    /// seconds.
    static func refusal(_ arguments: [String]) async throws -> (status: Int32, message: String, output: String) {
        // Found here, in the test's task, where a failed `#require` is the test's.
        let executable = try executable()
        return try await RawHTTP.onDispatch { try blockingRefusal(executable, arguments) }
    }

    private static func blockingRefusal(
        _ executable: URL, _ arguments: [String]
    ) throws -> (status: Int32, message: String, output: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let errors = Pipe()
        let output = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Standard output is read after standard error closes: both are small, and the process
        // writes its error last.
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, message, printed)
    }
}

struct ProxyStartFailure: Error, CustomStringConvertible {
    let output: String
    var description: String { "the proxy did not start; it printed: \(output)" }
}
