import ArgumentParser
import Foundation
import TierCache
import TierCacheLMDB

/// Reads back what `tiercache crash-writer` committed and compares every value, for
/// `scripts/crash-loop`: after each SIGKILL, entries `0...through` must all be there, each equal
/// to the value the writer wrote for its number.
struct CrashCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash-check",
        abstract: "Check that crash-writer's committed entries all read back with their values (for scripts/crash-loop).",
        shouldDisplay: false)

    @Argument var directory: String
    @Option var capacity = 64 << 20
    @Option(help: "The last committed entry's number; entries 0 through it are checked.")
    var through: Int

    func run() throws {
        let tier = try LMDBTier(directory: URL(fileURLWithPath: directory), capacity: capacity)
        if tier.didResetDamagedStore {
            throw CrashCheckFailure(description: "the store was reset at open: \(tier.storeResetReason ?? "no reason given")")
        }
        var missing: [Int] = []
        var wrong: [Int] = []
        for index in 0...max(through, 0) where through >= 0 {
            guard let entry = try tier.entry(forKey: try CacheKey("entry-\(index)")) else {
                missing.append(index)
                continue
            }
            if entry.value != CrashWriterCommand.value(index) { wrong.append(index) }
        }
        guard missing.isEmpty, wrong.isEmpty else {
            throw CrashCheckFailure(description:
                "of entries 0...\(through): \(missing.count) missing (first \(missing.prefix(5))), \(wrong.count) with another value (first \(wrong.prefix(5)))")
        }
        print("checked \(through + 1) entries: all present, all equal")
    }
}

/// A check that found entries missing or changed (an error, not a usage mistake: no usage text).
struct CrashCheckFailure: Error, CustomStringConvertible {
    let description: String
}
