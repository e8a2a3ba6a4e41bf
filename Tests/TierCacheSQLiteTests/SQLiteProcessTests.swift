import DiskTestSupport
import Foundation
import Testing
@_spi(TierCacheInternals) import TierCache
import TierCacheSQLite

/// SQLiteTier across real processes: writers killed mid-commit, several processes writing one
/// store, damaged files read by a child process (so that a crash would be observed, not suffered).
@Suite("SQLiteTier across processes, crashes and damage")
struct SQLiteProcessTests {
    @Test(
        "A writer killed with SIGKILL mid-write leaves every committed entry readable (one thread; 8 threads)",
        arguments: [1, 8])
    func sigkillMidWrite(writers: Int) throws {
        let directory = TemporaryDirectory()
        let (committed, killed) = try killWriterAfterCommits(
            [directory.url.path, "--tier", "sqlite", "--writers", String(writers)], count: 300)
        #expect(killed)
        try #require(committed.count >= 300, "the writer stopped early")
        let tier = try SQLiteTier(directory: directory.url, capacity: 64 << 20)
        #expect(tier.storeResetReason == nil)
        for index in committed {
            let found = try tier.entry(forKey: key("entry-\(index)"))
            #expect(found?.value == crashWriterValue(index), "entry \(index), one of \(committed.count) committed")
            if found?.value != crashWriterValue(index) { break }
        }
        #expect(try tier.usage().entries >= Set(committed).count)
    }

    @Test("4 processes x 4 tasks on one store: no error, no value but one written for its key, never over capacity")
    func manyWriters() throws {
        let directory = TemporaryDirectory()
        let store = directory.url.appendingPathComponent("store").path
        let seconds = ProcessInfo.processInfo.environment["TIERCACHE_WRITERS_SECONDS"] ?? "4"
        let common = [
            "--tier", "sqlite", "--capacity", String(4 << 20), "--keys", "20000", "--tasks", "4", "--minimum-stores",
            "100",
        ]
        var storesInAll = 0
        for (status, text) in try runStressWriters(store: store, processes: 4, seconds: seconds, arguments: common) {
            print(text, terminator: "")
            let (problems, stores) = stressWriterProblems(status: status, output: text, capacity: 4 << 20)
            #expect(problems.isEmpty, "\(problems): \(text)")
            storesInAll += stores
        }
        #expect(storesInAll > 200, "\(storesInAll) stores")
        let verify = try runHarness(["stress", store, "--verify-only"] + common)
        #expect(verify.succeeded, "\(verify.output)")
        #expect((outcomeFields(verify.output)["found"] ?? 0) > 100, "\(verify.output)")
    }

    // MARK: The byte-flip campaign

    /// Entries `damage-reader --populate` writes (every tenth spans overflow pages).
    static let populatedEntries = 300

    /// Where the campaign flips bits: anywhere in the file (as damage on disk falls), in the first
    /// 100 bytes of each page (page headers and cell pointers: what SQLite follows), or in the
    /// file header.
    enum FlipTarget: String, CaseIterable, CustomTestStringConvertible {
        case anywhere, pageHeaders, fileHeader
        var testDescription: String { rawValue }
    }

    @Test(
        "Stores with 8 flipped bytes end as served misses, a reset, or a typed error; never a crash or a wrong value",
        arguments: FlipTarget.allCases)
    func byteFlipCampaign(_ target: FlipTarget) throws {
        let (trials, seed) = damageCampaignSettings("SQLite byte-flip campaign (\(target))")
        let original = TemporaryDirectory()
        let populate = try runHarness([
            "damage-reader", original.url.path, "--tier", "sqlite", "--populate", "--count", "\(Self.populatedEntries)",
        ])
        try #require(populate.succeeded, "populating failed: \(populate)")
        let file = try Data(contentsOf: original.url.appendingPathComponent(SQLiteTier.fileName))
        var random = SplitMix64(seed: seed)
        let bytes = [UInt8](file)
        var tally: [String: Int] = [:]
        for trial in 0..<trials {
            let copy = TemporaryDirectory()
            let flips = try writeDamagedCopy(
                of: bytes, to: copy.url, named: SQLiteTier.fileName, flips: 8, random: &random
            ) { random, size in
                switch target {
                case .anywhere: Int(random.next() % UInt64(size))
                case .pageHeaders: Int(random.next() % UInt64(size / 4096)) * 4096 + Int(random.next() % 100)
                case .fileHeader: Int(random.next() % 100)
                }
            }
            let context = "trial \(trial), seed \(seed), flipped offsets \(flips)"
            let run = try runHarness([
                "damage-reader", copy.url.path, "--tier", "sqlite", "--count", "\(Self.populatedEntries)",
            ])
            #expect(run.reason == .exit, "a crash: \(run), \(context)")
            let outcome: String
            if run.line.hasPrefix("error ") {
                #expect(run.status == 3, "\(run), \(context)")
                outcome = "typed error"
            } else {
                #expect(run.succeeded && run.line.hasPrefix("opened"), "\(run), \(context)")
                let numbers = outcomeFields(run.line)
                #expect(numbers["wrong"] == 0, "never another entry's bytes: \(run.line), \(context)")
                #expect(numbers["errors"] == 0, "\(run.line), \(context)")
                #expect(
                    (numbers["hits"] ?? 0) + (numbers["misses"] ?? 0) == Self.populatedEntries,
                    "\(run.line), \(context)")
                outcome =
                    if numbers["reset"] == 1 {
                        "reset at open"
                    } else if (numbers["storeResets"] ?? 0) > 0 {
                        "reset when met"
                    } else if numbers["hits"] == Self.populatedEntries {
                        "read back whole"
                    } else {
                        "served, damaged entries missed"
                    }
            }
            tally[outcome, default: 0] += 1
        }
        print("SQLite byte-flip campaign (\(target)) outcomes: \(tally.sorted { $0.key < $1.key })")
        #expect(tally.values.reduce(0, +) == trials)
    }

    // MARK: A full disk

    @Test(
        "On a real 3 MiB file system (tmpfs): SQLITE_FULL refuses the store, stored entries read back, freed space is used again"
    )
    func fullDisk() throws {
        guard let mount = TemporaryMount.make(sizeKiB: 3 << 10) else {
            print(
                "SQLite disk-full test: no tmpfs could be mounted here (needs root); the RLIMIT_FSIZE probe covers it")
            return
        }
        let ballast = mount.url.appendingPathComponent("ballast")
        try Data(count: 1 << 20).write(to: ballast)
        // The capacity (16 MiB) is over the file system's size: the disk, not the tier, is the limit.
        let tier = try SQLiteTier(
            directory: mount.url.appendingPathComponent("store"),
            configuration: .init(capacity: 16 << 20, durability: .full))
        var (stored, refusal) = try fillUntilOutOfSpace(tier)
        let detail = try #require(refusal, "3 MiB filled without a refusal")
        print("SQLite disk-full test: \(stored.count) entries stored, then refused: \(detail)")
        #expect(stored.count > 10)
        #expect(tier.statistics().refusedOutOfSpace == 1)
        // A new value for a stored key, refused: the older value is never read after it.
        let replaced = stored.removeLast()
        let refusedAgain = try tier.store(entry(incompressible(64 << 10, seed: 99)), forKey: key("full-\(replaced)"))
        #expect(refusedAgain.isStored == false, "\(refusedAgain)")
        #expect(try tier.entry(forKey: key("full-\(replaced)")) == nil)
        for index in stored {
            #expect(
                try tier.entry(forKey: key("full-\(index)"))?.value == incompressible(32 << 10, seed: UInt64(index + 1))
            )
        }
        try FileManager.default.removeItem(at: ballast)
        #expect(try tier.store(entry(Array("back".utf8)), forKey: key("after")) == .stored)
        #expect(try tier.entry(forKey: key("after"))?.value == Array("back".utf8))
    }

    #if os(Linux)
    @Test(
        "Under a file-size limit (RLIMIT_FSIZE, in a child process): refused as out of space, read back, stored again once lifted"
    )
    func fileSizeLimit() throws {
        let directory = TemporaryDirectory()
        let run = try runHarness(["disk-full-probe", directory.url.path, "--tier", "sqlite"])
        #expect(run.succeeded, "\(run)")
        let fields = outcomeFields(run.line)
        #expect((fields["stored"] ?? 0) > 10, "\(run.line)")
        #expect(fields["readBack"] == fields["stored"], "\(run.line)")
        #expect(fields["refusedOutOfSpace"] == 1, "\(run.line)")
        #expect(run.line.hasSuffix("afterLimitLifted=stored"), "\(run.line)")
        // A removal that returned is one every reader of the store sees; one the full disk kept
        // from the file throws (it returned, hidden from this instance alone).
        #expect(
            run.line.contains("removal=threw") || run.line.contains("removal=returned visibleElsewhere=false"),
            "\(run.line)")
    }
    #endif
}
