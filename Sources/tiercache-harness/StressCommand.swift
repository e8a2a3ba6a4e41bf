import ArgumentParser
import Dispatch
import Foundation
@_spi(TierCacheInternals) import TierCache
import TierCacheLMDB

/// One of several processes writing and reading one disk store (`--tier`) at once, for the many-writers test
/// and `scripts/many-writers`: each task stores and reads random keys of a shared key space for a
/// while, checks every value it reads by content, and watches the store's usage against its
/// capacity. Prints one summary line; exits 1 if anything went wrong.
///
/// A value names the key, the writer and a sequence number, followed by bytes generated from
/// those three: a reader can tell a value written for another key, a torn value or one mixed
/// from two writes, whoever wrote it.
struct StressCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stress",
        abstract: "Write and read one disk store from several tasks, checking every value read (for tests).")

    @Argument var directory: String
    @Option var capacity = 4 << 20
    @Option var seconds = 5.0
    @Option(
        help:
            "Stores each task makes at least: it runs past --seconds (up to 120 s more) until it has, so that a slow disk does not leave a test's run without the work it checks."
    )
    var minimumStores = 0
    @Option var tasks = 4
    @Option(help: "Keys shared by every writer.")
    var keys = 2000
    @Option(help: "This process's number, put in the values it writes.")
    var writer = 0
    @Flag(help: "Only read every key once and check what is there (after the writers stopped).")
    var verifyOnly = false
    @Option(help: "The disk tier: lmdb or sqlite.")
    var tier = HarnessTier.lmdb

    /// What one task saw.
    struct Tally: Sendable {
        var stores = 0, refused = 0, reads = 0, hits = 0, wrong = 0, errors = 0
        var largestUsage = 0
        var firstProblems: [String] = []

        mutating func note(_ problem: String) {
            if firstProblems.count < 3 { firstProblems.append(problem) }
        }

        mutating func add(_ other: Tally) {
            stores += other.stores
            refused += other.refused
            reads += other.reads
            hits += other.hits
            wrong += other.wrong
            errors += other.errors
            largestUsage = max(largestUsage, other.largestUsage)
            for problem in other.firstProblems { note(problem) }
        }
    }

    func run() throws {
        guard tasks > 0, keys > 0, seconds > 0 else {
            throw ValidationError("--tasks, --keys and --seconds must be positive")
        }
        let tier = try self.tier.open(directory, capacity: capacity).tier
        if verifyOnly { return try verify(tier) }
        let deadline = Date().addingTimeInterval(seconds)
        let lastDeadline = deadline.addingTimeInterval(120)
        let minimumStores = self.minimumStores
        let tallies = Locked([Tally](repeating: Tally(), count: tasks))
        let (keys, writer, capacity) = (self.keys, self.writer, self.capacity)
        DispatchQueue.concurrentPerform(iterations: tasks) { task in
            var tally = Tally()
            var random = SplitMix64(seed: UInt64(writer) << 32 | UInt64(task))
            var sequence = 0
            while Date() < deadline || (tally.stores < minimumStores && Date() < lastDeadline) {
                let keyNumber = Int(random.next() % UInt64(keys))
                do {
                    let key = try CacheKey("stress-\(keyNumber)")
                    if random.next() % 2 == 0 {
                        sequence += 1
                        let value = Self.value(key: keyNumber, writer: writer * 1000 + task, sequence: sequence)
                        if try tier.store(CacheEntry(value: value, storedAt: Date()), forKey: key) == .stored {
                            tally.stores += 1
                        } else {
                            tally.refused += 1
                        }
                    } else {
                        tally.reads += 1
                        if let entry = try tier.entry(forKey: key) {
                            tally.hits += 1
                            if let problem = Self.check(entry.value, key: keyNumber) {
                                tally.wrong += 1
                                tally.note("key \(keyNumber): \(problem)")
                            }
                        }
                    }
                    if (tally.stores + tally.reads) % 64 == 0 {
                        let usage = try tier.usage()
                        tally.largestUsage = max(tally.largestUsage, usage.bytes)
                        if usage.bytes > capacity { tally.note("usage \(usage.bytes) over capacity \(capacity)") }
                    }
                } catch {
                    tally.errors += 1
                    tally.note("\(error)")
                }
            }
            tallies.withLock { $0[task] = tally }
        }
        var total = Tally()
        for tally in tallies.withLock({ $0 }) { total.add(tally) }
        print(
            "writer \(writer): stores=\(total.stores) refused=\(total.refused) reads=\(total.reads) hits=\(total.hits) wrong=\(total.wrong) errors=\(total.errors) largestUsage=\(total.largestUsage) capacity=\(capacity)"
                + (total.firstProblems.isEmpty ? "" : " problems: \(total.firstProblems.joined(separator: "; "))"))
        if total.wrong > 0 || total.errors > 0 || total.largestUsage > capacity { throw ExitCode(1) }
    }

    /// Reads every key once and checks each value found; exits 1 on a wrong value or usage over
    /// capacity.
    private func verify(_ tier: any LocalCacheTier) throws {
        var found = 0, wrong = 0
        for keyNumber in 0..<keys {
            guard let entry = try tier.entry(forKey: try CacheKey("stress-\(keyNumber)")) else { continue }
            found += 1
            if let problem = Self.check(entry.value, key: keyNumber) {
                wrong += 1
                if wrong <= 3 { print("key \(keyNumber): \(problem)") }
            }
        }
        let usage = try tier.usage()
        print("verify: found=\(found) wrong=\(wrong) usage=\(usage.bytes) capacity=\(capacity)")
        if wrong > 0 || usage.bytes > capacity { throw ExitCode(1) }
    }

    /// `key=K writer=W seq=N|` then 64 to 2,111 bytes generated from the three numbers.
    static func value(key: Int, writer: Int, sequence: Int) -> [UInt8] {
        var bytes = Array("key=\(key) writer=\(writer) seq=\(sequence)|".utf8)
        var random = SplitMix64(seed: UInt64(truncatingIfNeeded: key &* 1_000_003 &+ writer &* 7919 &+ sequence))
        let count = 64 + Int(random.next() % 2048)
        for _ in 0..<count { bytes.append(UInt8(truncatingIfNeeded: random.next())) }
        return bytes
    }

    /// Why `bytes` is not a value written for `key`, or `nil` when it is one.
    static func check(_ bytes: [UInt8], key: Int) -> String? {
        guard let bar = bytes.firstIndex(of: UInt8(ascii: "|")) else { return "no header" }
        let fields = String(decoding: bytes[..<bar], as: UTF8.self).split(separator: " ")
        let numbers = fields.compactMap { $0.split(separator: "=").last.flatMap { Int($0) } }
        guard fields.count == 3, numbers.count == 3 else {
            return "header '\(String(decoding: bytes[..<bar], as: UTF8.self))'"
        }
        guard numbers[0] == key else { return "a value written for key \(numbers[0])" }
        return value(key: numbers[0], writer: numbers[1], sequence: numbers[2]) == bytes
            ? nil : "the bytes differ from what was written"
    }
}
