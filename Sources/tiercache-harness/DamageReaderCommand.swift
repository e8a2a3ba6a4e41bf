import ArgumentParser
import Foundation
import TierCache
import TierCacheLMDB

/// Opens a store the way an app does at launch, reads back every entry `--populate` wrote, then
/// writes a few more, and prints one line describing what happened: for the damage campaign
/// test, which runs it in a child process so that a crash is observed rather than suffered.
struct DamageReaderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "damage-reader",
        abstract: "Open a store, read entries 0..<count and write a few, printing one outcome line (for tests).")

    @Argument var directory: String
    @Option var capacity = 64 << 20
    @Option var count = 1_000
    @Flag(help: "Write entries 0..<count (every tenth a few pages of incompressible bytes) instead of reading.")
    var populate = false
    @Flag(help: "With --populate: do not fsync each commit (for building large stores quickly).")
    var noSync = false
    @Flag(
        help: "Time opening the store with the check (alone) and without it (beside an open tier), and a full verify.")
    var timeOpen = false
    @Option(help: "The disk tier: lmdb or sqlite.")
    var tier = HarnessTier.lmdb

    /// Entry `index`'s value: text that compresses, and for every tenth entry bytes that do not
    /// (stored in LMDB overflow pages).
    static func value(_ index: Int) -> [UInt8] {
        guard index % 10 == 0 else { return CrashWriterCommand.value(index) }
        var state = UInt64(index) &+ 0x9E37_79B9_7F4A_7C15
        return (0..<(5_000 + index % 7 * 1_000)).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
    }

    func run() throws {
        if populate {
            let tier = try self.tier.open(directory, capacity: capacity, unsynced: noSync).tier
            for index in 0..<count {
                _ = try tier.store(
                    CacheEntry(value: Self.value(index), storedAt: Date()), forKey: try CacheKey("entry-\(index)"))
            }
            try HarnessTier.sync(tier)
            return
        }
        if timeOpen {
            guard tier == .lmdb else { throw ValidationError("--time-open times LMDB's check at open: --tier lmdb") }
            return try timeOpening()
        }
        let opened: HarnessTier.Opened
        do {
            opened = try self.tier.open(directory, capacity: capacity)
        } catch let error as TierCacheError {
            print("error \(error.code) \(error.message)")
            throw ExitCode(3)
        }
        let tier = opened.tier
        var hits = 0, misses = 0, wrong = 0, errors = 0
        for index in 0..<count {
            do {
                switch try tier.entry(forKey: try CacheKey("entry-\(index)")) {
                case let found? where found.value == Self.value(index): hits += 1
                case .some: wrong += 1
                case nil: misses += 1
                }
            } catch {
                errors += 1
            }
        }
        for index in 0..<8 {
            do {
                _ = try tier.store(
                    CacheEntry(value: Self.value(index), storedAt: Date()), forKey: try CacheKey("after-\(index)"))
            } catch {
                errors += 1
            }
        }
        let statistics = tier.statistics()
        print(
            "opened reset=\(opened.resetReason == nil ? 0 : 1) hits=\(hits) misses=\(misses) wrong=\(wrong) errors=\(errors) "
                + "corruptionsRemoved=\(statistics.corruptionsRemoved) storeResets=\(statistics.storeResets)"
                + (opened.resetReason.map { " reason=\($0.replacingOccurrences(of: " ", with: "_"))" } ?? ""))
    }
}

extension DamageReaderCommand {
    /// Prints the cost of the check at open: an open that checks (this process is the store's
    /// only user) against one that does not (another tier has it open), and a full `verify()`.
    private func timeOpening() throws {
        let url = URL(fileURLWithPath: directory)
        let clock = ContinuousClock()
        // CPU time too: on a shared machine the wall clock also counts other processes' turns.
        func cpuMilliseconds() -> Double {
            var time = timespec()
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
            return Double(time.tv_sec) * 1_000 + Double(time.tv_nsec) / 1_000_000
        }
        var checked: LMDBTier?
        let cpu0 = cpuMilliseconds()
        let checkedTime = try clock.measure { checked = try LMDBTier(directory: url, capacity: capacity) }
        let cpu1 = cpuMilliseconds()
        var unchecked: LMDBTier?
        let uncheckedTime = try clock.measure { unchecked = try LMDBTier(directory: url, capacity: capacity) }
        let cpu2 = cpuMilliseconds()
        var report: LMDBVerification?
        let verifyTime = try clock.measure { report = try checked?.verify() }
        let cpu3 = cpuMilliseconds()
        let entries = try unchecked?.usage().entries ?? 0
        let fileBytes =
            (try? FileManager.default.attributesOfItem(atPath: url.appendingPathComponent("data.mdb").path)[.size]
                as? Int) ?? 0
        print(
            "entries=\(entries) dataFileBytes=\(fileBytes) pagesWalked=\(report?.pagesWalked ?? 0) "
                + "checkedOpenMs=\(checkedTime.milliseconds) uncheckedOpenMs=\(uncheckedTime.milliseconds) "
                + "fullVerifyMs=\(verifyTime.milliseconds) checkedOpenCpuMs=\(String(format: "%.1f", cpu1 - cpu0)) "
                + "uncheckedOpenCpuMs=\(String(format: "%.1f", cpu2 - cpu1)) fullVerifyCpuMs=\(String(format: "%.1f", cpu3 - cpu2))"
        )
    }
}

extension Duration {
    fileprivate var milliseconds: String {
        let (seconds, attoseconds) = components
        return String(format: "%.1f", Double(seconds) * 1e3 + Double(attoseconds) / 1e15)
    }
}
