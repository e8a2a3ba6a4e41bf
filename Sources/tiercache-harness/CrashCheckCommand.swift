import ArgumentParser
import Foundation
import TierCache
import TierCacheLMDB

/// Reads back what `tiercache-harness crash-writer` committed and compares every value, for
/// `scripts/crash-loop`: after each SIGKILL, entries `0...through` must all be there, each equal
/// to the value the writer wrote for its number.
struct CrashCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash-check",
        abstract:
            "Check that crash-writer's committed entries all read back with their values (for scripts/crash-loop).")

    @Argument var directory: String
    @Option var capacity = 64 << 20
    @Option(help: "The last committed entry's number; entries 0 through it are checked.")
    var through: Int?
    @Option(
        help:
            "A file of committed entries' numbers, one per line (from several writers, which commit out of order); each is checked."
    )
    var committed: String?
    @Option(help: "The disk tier: lmdb or sqlite.")
    var tier = HarnessTier.lmdb

    func run() throws {
        let opened = try self.tier.open(directory, capacity: capacity)
        if let reason = opened.resetReason {
            throw CrashCheckFailure(description: "the store was reset at open: \(reason)")
        }
        let tier = opened.tier
        let numbers = try checkedNumbers()
        var missing: [Int] = []
        var wrong: [Int] = []
        for index in numbers {
            guard let entry = try tier.entry(forKey: try CacheKey("entry-\(index)")) else {
                missing.append(index)
                continue
            }
            if entry.value != CrashWriterCommand.value(index) { wrong.append(index) }
        }
        guard missing.isEmpty, wrong.isEmpty else {
            throw CrashCheckFailure(
                description:
                    "of \(numbers.count) committed entries: \(missing.count) missing (first \(missing.prefix(5))), \(wrong.count) with another value (first \(wrong.prefix(5)))"
            )
        }
        // Whether dictionaries were in play (crash-writer --dictionaries): the records naming one.
        let withDictionary =
            try (tier as? LMDBTier)?.storedDictionaries().isEmpty ?? true
            ? 0 : LMDBTier.inspect(directory: URL(fileURLWithPath: directory)).recordsByDictionary.values.reduce(0, +)
        print(
            "checked \(numbers.count) entries: all present, all equal"
                + (withDictionary > 0 ? " (\(withDictionary) stored with a dictionary)" : ""))
    }

    /// The numbers `--through` or `--committed` names.
    private func checkedNumbers() throws -> [Int] {
        switch (through, committed) {
        case (let through?, nil):
            return through >= 0 ? Array(0...through) : []
        case (nil, let path?):
            let text: String
            do {
                text = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw ValidationError("cannot read \(path): \(error.localizedDescription)")
            }
            return try text.split(whereSeparator: \.isNewline).map { line in
                guard let number = Int(line.trimmingCharacters(in: .whitespaces)), number >= 0 else {
                    throw ValidationError("\(path): \"\(line)\" is not an entry number")
                }
                return number
            }
        default:
            throw ValidationError("give exactly one of --through and --committed")
        }
    }
}

/// A check that found entries missing or changed (an error, not a usage mistake: no usage text).
struct CrashCheckFailure: Error, CustomStringConvertible {
    let description: String
}
