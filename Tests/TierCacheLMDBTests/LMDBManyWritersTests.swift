import Foundation
import Testing

/// Several processes, each with several tasks, storing and reading one LMDB store at once: LMDB
/// serialises the writers across processes, and the tier's eviction, accounting and recovery
/// from a full map must hold under that.
@Suite("LMDBTier with many writers")
struct LMDBManyWritersTests {
    /// Seconds the writers run: 5 by default (CI); `TIERCACHE_WRITERS_SECONDS=30` for the long run.
    static var seconds: Double {
        ProcessInfo.processInfo.environment["TIERCACHE_WRITERS_SECONDS"].flatMap(Double.init) ?? 5
    }

    @Test("4 processes x 4 tasks on one store: no error, no value but one written for its key, never over capacity")
    func fourProcessesFourTasks() throws {
        let directory = TemporaryDirectory()
        let store = directory.url.appendingPathComponent("store").path
        // 4 MiB against 20,000 keys of 0.1-2.1 KB: the store is full within a second, so most of
        // the run evicts while other processes read and write.
        let common = ["--capacity", String(4 << 20), "--keys", "20000", "--tasks", "4"]
        var writers: [(Process, Pipe)] = []
        for number in 0..<4 {
            let process = Process()
            process.executableURL = try tiercacheExecutable()
            process.arguments = ["stress", store, "--seconds", String(Self.seconds), "--writer", String(number)] + common
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.run()
            writers.append((process, output))
        }
        var storesInAll = 0
        for (process, output) in writers {
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            print(text, terminator: "")
            #expect(process.terminationStatus == 0, "\(text)")
            let fields = Self.fields(text)
            #expect(fields["wrong"] == 0 && fields["errors"] == 0, "\(text)")
            let largest = try #require(fields["largestUsage"], "\(text)")
            #expect(largest <= 4 << 20)
            storesInAll += fields["stores"] ?? 0
            #expect((fields["hits"] ?? 0) > 0, "each writer read values the others wrote")
        }
        // Enough work to matter even on a slow machine (here a 5 s run makes about 2,000 stores,
        // filling the store to its budget).
        #expect(storesInAll > 200, "\(storesInAll) stores")

        let verify = Process()
        verify.executableURL = try tiercacheExecutable()
        verify.arguments = ["stress", store, "--verify-only"] + common
        let output = Pipe()
        verify.standardOutput = output
        try verify.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        verify.waitUntilExit()
        #expect(verify.terminationStatus == 0, "\(text)")
        #expect((Self.fields(text)["found"] ?? 0) > 100, "\(text)")
    }

    /// `name=number` pairs of a summary line.
    static func fields(_ text: String) -> [String: Int] {
        var fields: [String: Int] = [:]
        for word in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let parts = word.split(separator: "=")
            if parts.count == 2, let number = Int(parts[1]) { fields[String(parts[0])] = number }
        }
        return fields
    }
}
