import ArgumentParser
import Foundation
import TierCache
import TierCacheLMDB

/// Writes entries one by one and reports each commit on standard output, for the crash test:
/// the test kills this process with SIGKILL mid-write and checks every reported entry survived.
struct CrashWriterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash-writer",
        abstract: "Write numbered entries until killed, printing each committed number (for tests).",
        shouldDisplay: false)

    @Argument var directory: String
    @Option var capacity = 64 << 20
    @Option var count = 1_000_000
    @Option(help: "The first entry's number (scripts/crash-loop continues where the last run stopped).")
    var start = 0

    func run() throws {
        let tier = try LMDBTier(directory: URL(fileURLWithPath: directory), capacity: capacity)
        // The kill loop kills only after this line: a kill while the store is being checked at
        // open resets it by design (see LMDBTier's "Damaged stores"), which is not what it tests.
        FileHandle.standardOutput.write(Data("opened\n".utf8))
        guard start >= 0, count >= 0, start <= Int.max - count else { throw ValidationError("--start and --count must be non-negative") }
        for index in start..<(start + count) {
            let outcome = try tier.store(
                CacheEntry(value: Self.value(index), storedAt: Date(timeIntervalSince1970: Double(index))),
                forKey: try CacheKey("entry-\(index)"))
            guard outcome == .stored else { throw ValidationError("entry \(index) was \(outcome)") }
            // Unbuffered, so the test sees each line the moment the commit returns.
            FileHandle.standardOutput.write(Data("committed \(index)\n".utf8))
        }
    }

    /// The value written for `index`; the test recomputes it to compare.
    static func value(_ index: Int) -> [UInt8] {
        Array(String(repeating: "value \(index) ", count: 1 + index % 50).utf8)
    }
}
