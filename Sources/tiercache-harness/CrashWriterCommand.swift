import ArgumentParser
import Foundation
@_spi(TierCacheInternals) import TierCache
import TierCacheLMDB

/// Writes entries to a disk tier (`--tier`) and reports each commit on standard output, for the crash test: the test kills
/// this process with SIGKILL mid-write and checks every reported entry survived. With
/// `--writers N`, N threads store at once (writer w takes numbers start + w, start + w + N, ...),
/// so their stores share group commits. With `--dictionaries`, small values are compressed with a
/// dictionary the tier trains while it writes (its row must be committed before any record that
/// names it, whenever the kill comes).
struct CrashWriterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash-writer",
        abstract: "Write numbered entries until killed, printing each committed number (for tests).")

    @Argument var directory: String
    @Option var capacity = 64 << 20
    @Option var count = 1_000_000
    @Option(help: "The first entry's number (scripts/crash-loop continues where the last run stopped).")
    var start = 0
    @Option(help: "Threads storing at once (1 to 64).")
    var writers = 1
    @Flag(help: "Compress with dictionaries the tier trains (a 64 KiB sample ring, so the first train within a run).")
    var dictionaries = false
    @Option(help: "The disk tier: lmdb or sqlite.")
    var tier = HarnessTier.lmdb

    /// Small enough that a run trains: the values are a few to a few hundred bytes.
    static let training = LMDBTier.DictionaryTraining(dictionarySize: 4 << 10, sampleBytes: 64 << 10)

    func run() throws {
        guard start >= 0, count >= 0, start <= Int.max - count else {
            throw ValidationError("--start and --count must be non-negative")
        }
        guard (1...64).contains(writers) else { throw ValidationError("--writers must be 1 to 64") }
        guard !dictionaries || self.tier == .lmdb else { throw ValidationError("--dictionaries needs --tier lmdb") }
        let tier = try self.tier.open(
            directory, capacity: capacity,
            lmdb: .init(capacity: capacity, dictionary: dictionaries ? .automatic(Self.training) : .off)
        ).tier
        // The kill loop kills only after this line: a kill while the store is being checked at
        // open resets it by design (see LMDBTier's "Damaged stores"), which is not what it tests.
        FileHandle.standardOutput.write(Data("opened\n".utf8))
        let numbers = start..<(start + count)
        let failure = FirstFailure()
        let done = DispatchGroup()
        for writer in 0..<writers {
            done.enter()
            let thread = Thread {
                defer { done.leave() }
                do {
                    for index in stride(from: numbers.lowerBound + writer, to: numbers.upperBound, by: writers) {
                        try Self.write(index, to: tier)
                    }
                } catch {
                    failure.note(error)
                }
            }
            thread.start()
        }
        done.wait()
        if let message = failure.message { throw ValidationError(message) }
    }

    private static func write(_ index: Int, to tier: any LocalCacheTier) throws {
        let outcome = try tier.store(
            CacheEntry(value: value(index), storedAt: Date(timeIntervalSince1970: Double(index))),
            forKey: try CacheKey("entry-\(index)"))
        guard outcome == .stored else { throw ValidationError("entry \(index) was \(outcome)") }
        // One unbuffered write per line (whole lines, even from several threads), so the test sees
        // each line the moment the commit returns.
        FileHandle.standardOutput.write(Data("committed \(index)\n".utf8))
    }

    /// The value written for `index`; the test recomputes it to compare.
    static func value(_ index: Int) -> [UInt8] {
        Array(String(repeating: "value \(index) ", count: 1 + index % 50).utf8)
    }
}

/// The first error any writer thread met.
private final class FirstFailure: Sendable {
    private let first = Locked<String?>(nil)

    var message: String? { first.withLock { $0 } }

    func note(_ error: any Error) {
        first.withLock { $0 = $0 ?? "\(error)" }
    }
}
