import DiskTestSupport
import Foundation
import Testing
@_spi(TierCacheInternals) import TierCache
import TierCacheLMDB

/// Damaged stores: the structure check, the "being checked" mark, `verify()`, and the byte-flip
/// campaign that runs a reader in a child process per damaged copy.
@Suite("LMDBTier with damaged stores")
struct LMDBDamageTests {
    /// Entries `damage-reader --populate` writes (every tenth spans LMDB overflow pages).
    static let populatedEntries = 300

    /// A store `damage-reader --populate` wrote, in a directory of its own.
    func populatedStore() throws -> TemporaryDirectory {
        let directory = TemporaryDirectory()
        let run = try runHarness([
            "damage-reader", directory.url.path, "--populate", "--count", "\(Self.populatedEntries)",
        ])
        try #require(run.reason == .exit && run.status == 0, "populating failed: \(run)")
        return directory
    }

    // MARK: The byte-flip campaign

    enum TrialOutcome: String, CaseIterable {
        case sound = "read back whole"
        case servedMisses = "served, damaged entries missed"
        case reset = "reset at open"
        case typedError = "typed error"
        case crashThenReset = "one crash, then a clean reopen"
    }

    /// Where the campaign flips bits: anywhere in data.mdb (as damage on disk falls), or in the
    /// first 64 bytes of pages (page headers and node pointers, what LMDB follows), where
    /// `tiercache inspect` without the check crashed in 55 of 300 trials.
    enum FlipTarget: String, CaseIterable, CustomTestStringConvertible {
        case anywhere
        case pageHeaders
        var testDescription: String { rawValue }
    }

    @Test(
        "Stores with 8 flipped bytes end as served misses, a typed error, a reset, or one crash then a clean reopen",
        arguments: FlipTarget.allCases)
    func byteFlipCampaign(_ target: FlipTarget) throws {
        let (trials, seed) = damageCampaignSettings("byte-flip campaign (\(target))")
        let original = try populatedStore()
        let dataFile = try Data(contentsOf: original.url.appendingPathComponent("data.mdb"))
        var random = SplitMix64(seed: seed)
        let bytes = [UInt8](dataFile)
        var tally: [TrialOutcome: Int] = [:]

        for trial in 0..<trials {
            let copy = TemporaryDirectory()
            let flips = try writeDamagedCopy(
                of: bytes, to: copy.url, named: "data.mdb", flips: 8, random: &random
            ) { random, size in
                switch target {
                case .anywhere: Int(random.next() % UInt64(size))
                case .pageHeaders: Int(random.next() % UInt64(size / 4096)) * 4096 + Int(random.next() % 64)
                }
            }
            let context = "trial \(trial), seed \(seed), flipped offsets \(flips)"

            let first = try runHarness(["damage-reader", copy.url.path, "--count", "\(Self.populatedEntries)"])
            let outcome: TrialOutcome
            if first.reason == .uncaughtSignal {
                // At most one crash: the second open finds the mark the crashed check left and
                // resets the store instead of reading it again.
                let second = try runHarness(["damage-reader", copy.url.path, "--count", "\(Self.populatedEntries)"])
                #expect(second.reason == .exit && second.status == 0, "crashed twice: \(second), \(context)")
                let numbers = outcomeFields(second.line)
                #expect(
                    second.line.hasPrefix("opened") && numbers["reset"] == 1 && numbers["storeResets"] == 1,
                    "\(second.line), \(context)")
                #expect(numbers["misses"] == Self.populatedEntries, "\(second.line), \(context)")
                outcome = .crashThenReset
            } else if first.line.hasPrefix("error ") {
                #expect(first.reason == .exit && first.status == 3, "\(first), \(context)")
                print("byte-flip campaign (\(target)) trial \(trial): \(first.line)")
                outcome = .typedError
            } else {
                #expect(
                    first.reason == .exit && first.status == 0 && first.line.hasPrefix("opened"), "\(first), \(context)"
                )
                let numbers = outcomeFields(first.line)
                // Never a wrong value: a damaged entry is a miss, never someone else's bytes.
                #expect(numbers["wrong"] == 0, "\(first.line), \(context)")
                #expect(
                    (numbers["hits"] ?? 0) + (numbers["misses"] ?? 0) == Self.populatedEntries,
                    "\(first.line), \(context)")
                if numbers["reset"] == 1 {
                    #expect(
                        numbers["misses"] == Self.populatedEntries && numbers["storeResets"] == 1,
                        "\(first.line), \(context)")
                    outcome = .reset
                } else {
                    #expect(numbers["storeResets"] == 0, "\(first.line), \(context)")
                    outcome = numbers["hits"] == Self.populatedEntries ? .sound : .servedMisses
                }
            }
            tally[outcome, default: 0] += 1
        }
        print(
            "byte-flip campaign (\(target)) outcomes: "
                + TrialOutcome.allCases.map { "\($0.rawValue) \(tally[$0] ?? 0)" }.joined(separator: ", "))
        #expect(tally.values.reduce(0, +) == trials)
    }

    // MARK: The check at open

    @Test("A structurally damaged store is reset at open, counted and reported, or refused with throwError")
    func structuralDamageResets() throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try LMDBTier(directory: directory.url, capacity: 1 << 20)
            _ = try tier.store(entry([1, 2, 3]), forKey: key("k"))
        }
        // Both meta pages claim one more entry in the main database than its pages hold: LMDB
        // would not notice; the walk's counts must.
        try editMetaPages(directory.url) { page in
            let offset = 88 + 32  // MDB_meta's main database record, then md_entries
            page[offset] &+= 1
        }
        let strict = LMDBTier.Configuration(capacity: 1 << 20, recovery: .throwError)
        #expect(throws: TierCacheError.self) { _ = try LMDBTier(directory: directory.url, configuration: strict) }
        do {
            _ = try LMDBTier(directory: directory.url, configuration: strict)
        } catch {
            #expect(error.code == .damagedStore)
            #expect(error.message.contains("main"), "\(error.message)")
        }
        let reasons = Reasons()
        let configuration = LMDBTier.Configuration(
            capacity: 1 << 20, onStoreReset: { _, reason in reasons.append(reason) })
        let tier = try LMDBTier(directory: directory.url, configuration: configuration)
        #expect(tier.didResetDamagedStore)
        #expect(tier.statistics().storeResets == 1)
        #expect(reasons.all.count == 1 && reasons.all.first == tier.storeResetReason)
        #expect(try tier.entry(forKey: key("k")) == nil)
        #expect(try tier.store(entry([4]), forKey: key("k")) == .stored)
    }

    @Test("A sound store is not reset, and reopening it does not reset it either")
    func soundStoreIsKept() throws {
        let directory = try populatedStore()
        for _ in 0..<2 {
            let tier = try LMDBTier(directory: directory.url, capacity: 64 << 20)
            #expect(!tier.didResetDamagedStore && tier.storeResetReason == nil)
            #expect(tier.statistics().storeResets == 0)
            #expect(try tier.usage().entries == Self.populatedEntries)
        }
    }

    // MARK: The mark

    @Test("A mark left by a process that died while checking resets the store instead of reading it")
    func staleMarkResets() throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try LMDBTier(directory: directory.url, capacity: 1 << 20)
            _ = try tier.store(entry([1]), forKey: key("k"))
        }
        try writeMark(directory.url, "checking pid 999999")
        let strict = LMDBTier.Configuration(capacity: 1 << 20, recovery: .throwError)
        // Refused, and still refused: the mark stays until the store is reset or destroyed.
        for _ in 0..<2 {
            do {
                _ = try LMDBTier(directory: directory.url, configuration: strict)
                Issue.record("opened a store a process died checking")
            } catch {
                #expect(error.code == .damagedStore)
            }
        }
        let tier = try LMDBTier(directory: directory.url, capacity: 1 << 20)
        #expect(tier.didResetDamagedStore)
        #expect(tier.storeResetReason?.contains("pid 999999") == true)
        #expect(tier.statistics().storeResets == 1)
        #expect(try tier.entry(forKey: key("k")) == nil)
        #expect(try readMark(directory.url).isEmpty, "the mark is cleared after a check that finished")
    }

    @Test(
        "A process killed while checking leaves its mark, and the next open resets the store rather than checking it again"
    )
    func killedWhileChecking() throws {
        let directory = TemporaryDirectory()
        let populate = try runHarness([
            "damage-reader", directory.url.path, "--populate", "--no-sync", "--count", "20000",
        ])
        try #require(populate.reason == .exit && populate.status == 0, "\(populate)")
        let markPath = directory.url.appendingPathComponent("tiercache.check").path
        // Start an opener and kill it the moment its mark is on disk (the check of 20,000 entries
        // takes long enough in a debug build to be caught; if every attempt finishes first, skip).
        var killed = false
        for _ in 0..<20 where !killed {
            let opener = Process()
            opener.executableURL = try harnessExecutable()
            opener.arguments = ["damage-reader", directory.url.path, "--count", "0"]
            opener.standardOutput = FileHandle.nullDevice
            opener.standardError = FileHandle.nullDevice
            try opener.run()
            while opener.isRunning, !killed {
                if let size = try? FileManager.default.attributesOfItem(atPath: markPath)[.size] as? Int, size > 0 {
                    kill(opener.processIdentifier, SIGKILL)
                    killed = true
                }
            }
            opener.waitUntilExit()
            // It had finished after all, or finished its check (clearing the mark) just before
            // the signal came.
            if killed,
                try opener.terminationReason != .uncaughtSignal || !readMark(directory.url).hasPrefix("checking pid")
            {
                killed = false
            }
        }
        guard killed else {
            print("skipping: the check always finished before it could be interrupted")
            return
        }
        #expect(try readMark(directory.url).hasPrefix("checking pid"))
        let tier = try LMDBTier(directory: directory.url, capacity: 64 << 20)
        #expect(tier.didResetDamagedStore && tier.statistics().storeResets == 1)
        #expect(try tier.usage().entries == 0)
        #expect(try readMark(directory.url).isEmpty)
    }

    @Test("A mark found while another tier has the store open is not grounds for deleting it under that tier")
    func markWithLiveUserDoesNotReset() throws {
        let directory = TemporaryDirectory()
        let first = try LMDBTier(directory: directory.url, capacity: 1 << 20)
        _ = try first.store(entry([1]), forKey: key("k"))
        try writeMark(directory.url, "checking pid 999999")
        do {
            _ = try LMDBTier(directory: directory.url, capacity: 1 << 20)
            Issue.record("opened beside a live tier despite a stale mark")
        } catch {
            #expect(error.code == .damagedStore)
        }
        #expect(try first.entry(forKey: key("k"))?.value == [1], "the live tier's store was left alone")
    }

    @Test("An opener waits for a live process that is checking the store, and does not take its mark for a dead one's")
    func liveCheckerIsWaitedFor() throws {
        guard FileManager.default.fileExists(atPath: "/proc/locks") else {
            print("skipping: needs /proc/locks to see the opener wait")
            return
        }
        let directory = try populatedStore()
        // Play a live process checking the store: hold the open lock and write the mark.
        let markPath = directory.url.appendingPathComponent("tiercache.check").path
        let fd = open(markPath, O_RDWR | O_CREAT, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        try #require(flock(fd, LOCK_EX) == 0)
        try writeMark(directory.url, "checking pid \(getpid())")

        let reader = Process()
        reader.executableURL = try harnessExecutable()
        reader.arguments = ["damage-reader", directory.url.path, "--count", "\(Self.populatedEntries)"]
        let output = Pipe()
        reader.standardOutput = output
        try reader.run()
        // Wait until the kernel lists the reader as blocked on our lock (/proc/locks marks
        // waiters with "->"), then finish the "check": clear the mark and let go.
        let pid = reader.processIdentifier
        var blocked = false
        for _ in 0..<6_000 where !blocked {  // up to a minute: a loaded machine starts processes slowly
            let locks = (try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? ""
            blocked = locks.split(separator: "\n").contains {
                $0.contains("->") && $0.contains("FLOCK") && $0.contains(" \(pid) ")
            }
            if !blocked { usleep(10_000) }
        }
        #expect(blocked, "the reader did not wait for the open lock")
        try writeMark(directory.url, "")
        flock(fd, LOCK_UN)
        let line = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        reader.waitUntilExit()
        let numbers = outcomeFields(line)
        #expect(numbers["reset"] == 0 && numbers["hits"] == Self.populatedEntries, "\(line)")
    }

    // MARK: verify()

    @Test("verify() finds a sound store sound and names a damaged record")
    func verifyFindsDamagedRecord() throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try LMDBTier(directory: directory.url, capacity: 4 << 20)
            _ = try tier.store(entry(compressible(5_000)), forKey: key("k"))
            _ = try tier.store(entry(incompressible(20_000)), forKey: key("large"))
            _ = try tier.store(entry([7]), forKey: key("other"))
            let report = try tier.verify()
            #expect(report.isSound && report.entries == 3 && report.structuralDamage == nil)
            #expect(report.pagesWalked >= 5, "20,000 bytes take five 4 KiB overflow pages")
        }
        try rawLMDBEdit(directory.url) { txn, dbi in
            guard var record = rawGet(txn, dbi, key: Array("large".utf8)) else { return }
            record[record.count - 1] ^= 0xFF
            rawPut(txn, dbi, key: Array("large".utf8), value: record)
        }
        let tier = try LMDBTier(directory: directory.url, capacity: 4 << 20)
        #expect(!tier.didResetDamagedStore, "a damaged record is not structural damage")
        let report = try tier.verify()
        #expect(report.structuralDamage == nil)
        #expect(report.damagedRecords == 1 && report.damagedRecordKeys == ["large"])
        #expect(try LMDBTier.verify(directory: directory.url).damagedRecords == 1)
    }

    @Test("verify() and inspect count a record of a newer format version apart, not as damage")
    func verifyCountsNewerFormatsApart() throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try LMDBTier(directory: directory.url, capacity: 4 << 20)
            _ = try tier.store(entry(compressible(5_000)), forKey: key("k"))
            _ = try tier.store(entry([7]), forKey: key("other"))
        }
        try rawLMDBEdit(directory.url) { txn, dbi in
            guard var record = rawGet(txn, dbi, key: Array("k".utf8)) else { return }
            record[0] = 99  // the format version
            rawPut(txn, dbi, key: Array("k".utf8), value: record)
        }
        for report in [
            try LMDBTier(directory: directory.url, capacity: 4 << 20).verify(),
            try LMDBTier.verify(directory: directory.url),
        ] {
            #expect(report.isSound && report.damagedRecords == 0 && report.unknownFormatRecords == 1)
        }
        let inspection = try LMDBTier.inspect(directory: directory.url)
        #expect(inspection.damagedRecords == 0 && inspection.unknownFormatRecords == 1)

        // Both reports decode from their own JSON, and from 0.1.0's, which lacks the new count.
        let verification = try LMDBTier.verify(directory: directory.url)
        #expect(
            try JSONDecoder().decode(LMDBVerification.self, from: JSONEncoder().encode(verification)) == verification)
        #expect(try JSONDecoder().decode(LMDBInspection.self, from: JSONEncoder().encode(inspection)) == inspection)
        var earlierVerification = verification, earlierInspection = inspection
        earlierVerification.unknownFormatRecords = 0
        earlierInspection.unknownFormatRecords = 0
        #expect(
            try JSONDecoder().decode(LMDBVerification.self, from: withoutUnknownFormatCount(verification))
                == earlierVerification)
        #expect(
            try JSONDecoder().decode(LMDBInspection.self, from: withoutUnknownFormatCount(inspection))
                == earlierInspection)
    }

    /// `report`'s JSON as TierCache 0.1.0 wrote it: without `unknownFormatRecords`.
    private func withoutUnknownFormatCount(_ report: some Encodable) throws -> Data {
        var object = try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(report)) as? [String: Any])
        try #require(object.removeValue(forKey: "unknownFormatRecords") != nil)
        return try JSONSerialization.data(withJSONObject: object)
    }

    @Test("A byte count or capacity near UInt64.max in the meta table is damage the tier survives, not a trap")
    func hugeCountsInMeta() throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try LMDBTier(directory: directory.url, capacity: 4 << 20)
            _ = try tier.store(entry(compressible(5_000)), forKey: key("k"))
        }
        // The state row (used bytes, clock) as bit rot could leave it: the next store added its
        // cost to Int.max.
        try rawLMDBEdit(
            directory.url,
            { txn, dbi in
                rawPut(
                    txn, dbi, key: Array("state".utf8),
                    value: [UInt8](repeating: 0xFF, count: 8) + [UInt8](repeating: 0, count: 8))
            }, database: "tiercache.meta")
        do {
            let tier = try LMDBTier(directory: directory.url, capacity: 4 << 20)
            #expect(try tier.store(entry([1, 2, 3]), forKey: key("new")) == .stored)
            #expect(try tier.entry(forKey: key("new"))?.value == [1, 2, 3])
            // The eviction that found nothing left to evict recounted the bytes.
            #expect(try tier.usage().bytes < 4 << 20)
        }
        // The recorded capacity: inspect converted it to Int; opening refuses it as another capacity.
        try rawLMDBEdit(
            directory.url,
            { txn, dbi in rawPut(txn, dbi, key: Array("capacity".utf8), value: [UInt8](repeating: 0xFF, count: 8)) },
            database: "tiercache.meta")
        #expect(try LMDBTier.inspect(directory: directory.url).capacity == .max)
        let error = #expect(throws: TierCacheError.self) { try LMDBTier(directory: directory.url, capacity: 4 << 20) }
        #expect(error?.code == .invalidConfiguration)
        // A negative number of entries to list is refused (it trapped).
        let negative = #expect(throws: TierCacheError.self) { try LMDBTier.inspect(directory: directory.url, top: -1) }
        #expect(negative?.code == .invalidConfiguration)
    }

    /// Counts damaged low: nothing was ever evicted, every store of a new key was refused once
    /// the map filled, and the clock's ticks, reused, replaced other keys' recency rows.
    @Test("A state row damaged to zero: stores go on, evicting the least recently used, and the count is recounted")
    func zeroedStateRow() throws {
        let directory = TemporaryDirectory()
        let value = { (index: Int) in incompressible(20_000, seed: UInt64(index + 1)) }
        do {
            let tier = try LMDBTier(directory: directory.url, capacity: 1 << 20)
            for index in 0..<40 { _ = try tier.store(entry(value(index)), forKey: key("k\(index)")) }
        }
        try rawLMDBEdit(
            directory.url,
            { txn, dbi in rawPut(txn, dbi, key: Array("state".utf8), value: [UInt8](repeating: 0, count: 16)) },
            database: "tiercache.meta")
        let tier = try LMDBTier(directory: directory.url, capacity: 1 << 20)
        for index in 40..<160 {
            #expect(try tier.store(entry(value(index)), forKey: key("k\(index)")) == .stored, "k\(index)")
        }
        #expect(tier.statistics().refusedOutOfSpace == 0)
        // The newest stay, the oldest went: eviction still takes the least recently used.
        #expect(try tier.entry(forKey: key("k159"))?.value == value(159))
        #expect(try tier.entry(forKey: key("k158"))?.value == value(158))
        for index in 0..<40 { #expect(try tier.entry(forKey: key("k\(index)")) == nil, "k\(index) was never evicted") }
        #expect(try tier.usage().bytes <= 1 << 20)
    }

    @Test("tiercache inspect --verify exits 0 for a sound store, 1 with the damage for a damaged one, 3 for none")
    func inspectVerify() throws {
        let directory = try populatedStore()
        let missing = try runHarness(
            ["inspect", directory.url.appendingPathComponent("typo").path, "--verify"],
            executable: tiercacheExecutable())
        #expect(missing.reason == .exit && missing.status == 3, "\(missing)")
        let sound = try runHarness(["inspect", directory.url.path, "--verify"], executable: tiercacheExecutable())
        #expect(sound.reason == .exit && sound.status == 0, "\(sound)")
        try editMetaPages(directory.url) { page in page[88 + 32] &+= 1 }
        let damaged = try runHarness(["inspect", directory.url.path, "--verify"], executable: tiercacheExecutable())
        #expect(damaged.reason == .exit && damaged.status == 1, "\(damaged)")
        #expect(throws: TierCacheError.self) { _ = try LMDBTier.inspect(directory: directory.url) }
    }

    // MARK: Helpers

    /// Edits both LMDB meta pages (the first 4 KiB pages of data.mdb) in place.
    func editMetaPages(_ directory: URL, _ edit: (inout [UInt8]) -> Void) throws {
        let url = directory.appendingPathComponent("data.mdb")
        var bytes = [UInt8](try Data(contentsOf: url))
        let pageSize = 4096
        for start in [0, pageSize] {
            var page = Array(bytes[start..<(start + pageSize)])
            edit(&page)
            bytes.replaceSubrange(start..<(start + pageSize), with: page)
        }
        try Data(bytes).write(to: url)
    }

    func writeMark(_ directory: URL, _ text: String) throws {
        let path = directory.appendingPathComponent("tiercache.check").path
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        let bytes = Array(text.utf8)
        #expect(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
    }

    func readMark(_ directory: URL) throws -> String {
        String(decoding: try Data(contentsOf: directory.appendingPathComponent("tiercache.check")), as: UTF8.self)
    }
}

/// Reasons passed to `onStoreReset`, collected from whichever thread calls it.
final class Reasons: Sendable {
    private let storage = Locked<[String]>([])
    func append(_ reason: String) { storage.withLock { $0.append(reason) } }
    var all: [String] { storage.withLock { $0 } }
}
