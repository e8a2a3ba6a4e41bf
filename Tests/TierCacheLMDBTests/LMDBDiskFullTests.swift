import DiskTestSupport
import Foundation
import InMemoryLogging
import Logging
import Testing
import TierCache
import TierCacheLMDB
import TierCacheTesting

/// A store on a full disk: the write that does not fit is refused with
/// `RefusalReason.outOfSpace` (typed and counted), what is stored stays readable, and the same
/// tier stores again once space returns.
@Suite("LMDBTier on a full disk")
struct LMDBDiskFullTests {
    @Test(
        "On a real 3 MiB file system (tmpfs): ENOSPC refuses the store, stored entries read back, freed space is used again"
    )
    func tmpfs() throws {
        guard let mount = TemporaryMount.make(sizeKiB: 3 << 10) else {
            print(
                "disk-full test: no tmpfs could be mounted here (needs root); the RLIMIT_FSIZE test covers a full disk instead"
            )
            return
        }
        print("disk-full test: ran on a tmpfs of 3 MiB")
        // Ballast to delete later, when the test gives space back.
        let ballast = mount.url.appendingPathComponent("ballast")
        try Data(count: 1 << 20).write(to: ballast)

        // The capacity (16 MiB) is over the file system's size: the disk, not the tier, is the limit.
        let logs = InMemoryLogHandler()
        let tier = try LMDBTier(
            directory: mount.url.appendingPathComponent("store"),
            configuration: .init(
                capacity: 16 << 20, durability: .full, logger: Logger(label: "test", factory: { _ in logs })))
        let (stored, refusal) = try fillUntilOutOfSpace(tier)
        let detail = try #require(refusal, "3 MiB filled without a refusal")
        #expect(detail.contains("no space left"))
        #expect(stored.count > 10)
        #expect(tier.statistics().refusedOutOfSpace == 1)
        // An operator hears of it: one warning, naming the entry.
        #expect(logs.entries.map(\.level) == [.warning])
        #expect(logs.entries.first?.metadata["key"].map { "\($0)" } == "full-\(stored.count)")
        for index in stored {
            #expect(
                try tier.entry(forKey: key("full-\(index)"))?.value == incompressible(32 << 10, seed: UInt64(index + 1))
            )
        }

        try FileManager.default.removeItem(at: ballast)
        let again = try tier.store(entry(Array("back".utf8)), forKey: key("after"))
        #expect(again == .stored, "the same tier stores again once space returns")
        #expect(try tier.entry(forKey: key("after"))?.value == Array("back".utf8))
    }

    @Test(
        "Over RLIMIT_FSIZE (EFBIG, reported by LMDB as a short write): refused, readable, and storing again once the limit is lifted"
    )
    func fileSizeLimit() throws {
        #if os(Linux)
        let directory = TemporaryDirectory()
        let process = Process()
        process.executableURL = try harnessExecutable()
        process.arguments = [
            "disk-full-probe", directory.url.appendingPathComponent("store").path, "--file-size-limit", String(2 << 20),
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        print("disk-full test: ran under RLIMIT_FSIZE of 2 MiB in a child process: \(text)", terminator: "")
        #expect(process.terminationStatus == 0, "\(text)")
        let fields = outcomeFields(text)
        let stored = try #require(fields["stored"], "\(text)")
        #expect(stored > 10 && fields["readBack"] == stored, "\(text)")
        #expect(fields["refusedOutOfSpace"] == 1)
        #expect(text.contains("file-size limit") && text.contains("afterLimitLifted=stored"), "\(text)")
        #endif
    }

    @Test(
        "A map that stays full while another process's reader pins its pages refuses as outOfSpace, and takes stores again once the reader ends"
    )
    func mapStaysFull() throws {
        let directory = TemporaryDirectory()
        let clock = ManualCacheClock()
        let tier = try LMDBTier(
            directory: directory.url,
            configuration: .init(capacity: 1 << 20, durability: .none, clock: clock.cacheClock))
        for index in 0..<15 {
            #expect(
                try tier.store(entry(incompressible(40_000, seed: UInt64(index))), forKey: key("k\(index)")) == .stored)
        }
        let expiring = entry([1, 2, 3], expiresAt: clock.now.addingTimeInterval(10))
        #expect(try tier.store(expiring, forKey: key("expiring")) == .stored)
        // From here on no page of the snapshot the other process reads, nor any freed after it, can
        // be reused.
        let reader = try HeldReader(directory: directory.url)

        // 15 entries of 40 kB pin about 600 kB of the 1 MiB map, so the map fills within a
        // dozen more stores, however many entries the tier evicts.
        var refusal: StoreOutcome?
        var index = 15
        while index < 100, refusal == nil {
            let outcome = try tier.store(entry(incompressible(40_000, seed: UInt64(index))), forKey: key("k\(index)"))
            if outcome != .stored { refusal = outcome }
            index += 1
        }
        if case .refused(.outOfSpace(let detail)) = refusal {
            #expect(detail.contains("stayed full"), "\(detail)")
        } else {
            Issue.record("expected an out-of-space refusal, got \(String(describing: refusal))")
        }
        #expect(tier.statistics().refusedOutOfSpace == 1)
        #expect(try tier.usage().bytes <= 1 << 20)
        // Evicting cannot make room while the reader pins what it frees: the tier gives up after
        // a bounded share, not after emptying itself.
        let held = try tier.usage().entries
        #expect(held >= 8, "the tier emptied itself: \(held) entries left")
        // A new value refused for a key stored before: its older value is not read after, though
        // the map had no room to delete it either.
        let overwritten = key("k\(index - 2)")
        #expect(try tier.entry(forKey: overwritten) != nil)
        let refused = try tier.store(entry(incompressible(40_000, seed: 2_000)), forKey: overwritten)
        #expect(refused != .stored, "\(refused)")
        #expect(try tier.entry(forKey: overwritten) == nil, "the older value was read after the refused store")
        // A store refused for its own reason (already expired) while the map has no room to
        // delete the older entry: the refusal, counted, not the removal's error.
        let expired = entry([9], expiresAt: clock.now.addingTimeInterval(-1))
        #expect(try tier.store(expired, forKey: key("k\(index - 3)")) == .refused(.alreadyExpired))
        #expect(try tier.entry(forKey: key("k\(index - 3)")) == nil)
        #expect(tier.statistics().refusedExpired == 1)
        // An expired record that cannot be deleted while the map stays full is still a miss.
        clock.advance(by: 10)
        #expect(try tier.entry(forKey: key("expiring")) == nil)

        #expect(try reader.end() == 0)
        #expect(try tier.store(entry(incompressible(40_000, seed: 1_000)), forKey: key("after")) == .stored)
        #expect(try tier.entry(forKey: key("after"))?.value == incompressible(40_000, seed: 1_000))
        // That write deleted the hidden record: gone for every reader, not only this tier.
        let other = try LMDBTier(directory: directory.url, configuration: .init(capacity: 1 << 20, durability: .none))
        #expect(try other.entry(forKey: overwritten) == nil)
    }
}
