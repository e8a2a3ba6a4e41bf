import CLMDB
import DiskTestSupport
import Foundation
import Testing
import TierCache
import TierCacheLMDB

@Suite("LMDBTier bad input and failures")
struct LMDBFailureTests {
    func code(_ body: () throws -> Void) -> TierCacheError.Code? {
        do {
            try body()
            return nil
        } catch let error as TierCacheError {
            return error.code
        } catch {
            return nil
        }
    }

    @Test(
        "Capacities, fractions and levels out of range are configuration errors",
        arguments: [
            LMDBTier.Configuration(capacity: 0),
            LMDBTier.Configuration(capacity: -1),
            LMDBTier.Configuration(capacity: LMDBTier.minimumCapacity - 1),
            LMDBTier.Configuration(capacity: 1 << 20, maxEntryFraction: 0),
            LMDBTier.Configuration(capacity: 1 << 20, maxEntryFraction: 2),
            // Over half: an entry that could never fit beside the rest (the tier fills 75%),
            // which emptied the store and then was refused as a full disk.
            LMDBTier.Configuration(capacity: 1 << 20, maxEntryFraction: 0.9),
            LMDBTier.Configuration(capacity: 1 << 20, maxEntryFraction: .nan),
            LMDBTier.Configuration(capacity: 1 << 20, compressionLevel: 0),
            LMDBTier.Configuration(capacity: 1 << 20, compressionLevel: 99),
            LMDBTier.Configuration(capacity: 1 << 20, maxReaders: 0),
        ])
    func invalidConfiguration(_ configuration: LMDBTier.Configuration) {
        let directory = TemporaryDirectory()
        #expect(
            code { _ = try LMDBTier(directory: directory.url, configuration: configuration) } == .invalidConfiguration)
    }

    @Test("destroy(directory:) refuses a store a tier has open, and deletes it once none has")
    func destroyRefusesAnOpenStore() throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try LMDBTier(directory: directory.url, capacity: 2 << 20)
            _ = try tier.store(CacheEntry(value: [1], storedAt: Date()), forKey: CacheKey("k"))
            #expect(code { try LMDBTier.destroy(directory: directory.url) } == .invalidConfiguration)
            #expect(try tier.entry(forKey: CacheKey("k"))?.value == [1], "the open store is untouched")
        }
        try LMDBTier.destroy(directory: directory.url)
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("data.mdb").path))
    }

    @Test("Reopening with another capacity is refused with a message naming the stored one")
    func capacityMismatch() throws {
        let directory = TemporaryDirectory()
        _ = try LMDBTier(directory: directory.url, capacity: 2 << 20)
        #expect(code { _ = try LMDBTier(directory: directory.url, capacity: 1 << 20) } == .invalidConfiguration)
        try LMDBTier.destroy(directory: directory.url)
        _ = try LMDBTier(directory: directory.url, capacity: 1 << 20)
    }

    @Test(
        "A reader slot left by a process killed mid-read is reclaimed when the table is full; live readers filling it are named"
    )
    func readerTableFull() throws {
        let directory = TemporaryDirectory()
        // The first process to open the store sizes the reader table: one slot.
        let tier = try LMDBTier(directory: directory.url, configuration: .init(capacity: 1 << 20, maxReaders: 1))
        #expect(try tier.store(entry([1, 2, 3]), forKey: key("k")) == .stored)

        let live = try HeldReader(directory: directory.url)
        var failure: TierCacheError?
        do { _ = try tier.entry(forKey: key("k")) } catch { failure = error as? TierCacheError }
        #expect(failure?.code == .storageFailure)
        #expect(failure?.message.contains("maxReaders") == true, "\(String(describing: failure))")
        #expect(try live.end() == 0)

        let killed = try HeldReader(directory: directory.url)
        killed.kill()
        #expect(try tier.entry(forKey: key("k"))?.value == [1, 2, 3])
    }

    @Test("A path that is a file is not a directory")
    func pathIsAFile() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let file = directory.url.appendingPathComponent("file")
        try Data("x".utf8).write(to: file)
        #expect(code { _ = try LMDBTier(directory: file, capacity: 1 << 20) } == .notADirectory)
        // A path through the file too (it was permissionDenied, which sent users to fix
        // permissions).
        let below = file.appendingPathComponent("store")
        #expect(code { _ = try LMDBTier(directory: below, capacity: 1 << 20) } == .notADirectory)
    }

    @Test("A garbage data file is reset by default, or reported as damaged")
    func damagedFile() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        try Data(incompressible(64 * 1024)).write(to: directory.url.appendingPathComponent("data.mdb"))
        let strict = LMDBTier.Configuration(capacity: 1 << 20, recovery: .throwError)
        #expect(code { _ = try LMDBTier(directory: directory.url, configuration: strict) } == .damagedStore)
        let tier = try LMDBTier(directory: directory.url, capacity: 1 << 20)
        #expect(tier.didResetDamagedStore)
        #expect(try tier.store(entry([1]), forKey: key("k")) == .stored)
    }

    @Test("Another program's LMDB database is left untouched")
    func foreignStore() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        try rawLMDBEdit(
            directory.url, { txn, dbi in rawPut(txn, dbi, key: Array("theirs".utf8), value: [1]) },
            database: "their-data")
        #expect(code { _ = try LMDBTier(directory: directory.url, capacity: 1 << 20) } == .foreignStore)
        #expect(code { _ = try LMDBTier.inspect(directory: directory.url) } == .foreignStore)
    }

    /// A record in a format version this code does not read (a newer TierCache sharing the store)
    /// is deleted too, and counted as such, not as damage.
    @Test("A damaged record is a miss, is deleted and is counted", arguments: ["header", "payload", "version"])
    func damagedRecord(_ damage: String) throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try LMDBTier(directory: directory.url, capacity: 1 << 20)
            _ = try tier.store(entry(compressible(5_000)), forKey: key("k"))
            _ = try tier.store(entry([7]), forKey: key("other"))
        }
        try rawLMDBEdit(directory.url) { txn, dbi in
            guard var record = rawGet(txn, dbi, key: Array("k".utf8)) else { return }
            switch damage {
            case "header": record[1] = 0xFF  // unknown flags
            case "version": record[0] = 99
            default: record[record.count - 1] ^= 0xFF
            }
            rawPut(txn, dbi, key: Array("k".utf8), value: record)
        }
        let tier = try LMDBTier(directory: directory.url, capacity: 1 << 20)
        #expect(try tier.entry(forKey: key("k")) == nil)
        let statistics = tier.statistics()
        #expect(statistics.corruptionsRemoved == (damage == "version" ? 0 : 1))
        #expect(statistics.unknownFormatRecords == (damage == "version" ? 1 : 0))
        #expect(try tier.usage().entries == 1)
        #expect(try tier.entry(forKey: key("other"))?.value == [7])
    }

    @Test("A record found under another key than its own is a miss, deleted and counted, never that key's value")
    func recordUnderAnotherKey() throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try LMDBTier(directory: directory.url, capacity: 1 << 20)
            _ = try tier.store(entry([1, 0, 0, 0]), forKey: key("item?id=1000"))
        }
        // What a flipped bit of the key does where LMDB keeps it ("0" to "1"): the record is there,
        // whole, under the other key.
        try rawLMDBEdit(directory.url) { txn, dbi in
            guard let record = rawGet(txn, dbi, key: Array("item?id=1000".utf8)) else { return }
            rawPut(txn, dbi, key: Array("item?id=1001".utf8), value: record)
        }
        let tier = try LMDBTier(directory: directory.url, capacity: 1 << 20)
        #expect(try tier.entry(forKey: key("item?id=1001")) == nil)
        #expect(tier.statistics().corruptionsRemoved == 1)
        #expect(try tier.entry(forKey: key("item?id=1000"))?.value == [1, 0, 0, 0])
        #expect(try LMDBTier.verify(directory: directory.url).isSound)
    }

    // A full disk: LMDBDiskFullTests.

    @Test("A read-only file system is a permission error")
    func readOnlyFileSystem() throws {
        guard let mount = TemporaryMount.make(sizeKiB: 64, readOnly: true) else {
            print("skipping: cannot mount a read-only tmpfs here (needs root)")
            return
        }
        #expect(
            code { _ = try LMDBTier(directory: mount.url.appendingPathComponent("cache"), capacity: 1 << 20) }
                == .permissionDenied)
        #expect(code { _ = try LMDBTier(directory: mount.url, capacity: 1 << 20) } == .permissionDenied)
    }

    @Test("removeAll while other tasks read and write leaves a consistent, empty-able tier")
    func removeAllDuringReads() async throws {
        let directory = TemporaryDirectory()
        let tier = try LMDBTier(directory: directory.url, configuration: .init(capacity: 4 << 20, durability: .none))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for index in 0..<200 {
                        let name = "w\(worker)-\(index % 20)"
                        _ = try tier.store(entry(Array(name.utf8)), forKey: key(name))
                        if let found = try tier.entry(forKey: key(name)) { #expect(found.value == Array(name.utf8)) }
                    }
                }
            }
            group.addTask { for _ in 0..<20 { try tier.removeAll() } }
            try await group.waitForAll()
        }
        try tier.removeAll()
        #expect(try tier.usage().entries == 0 && tier.usage().bytes == 0)
    }
}
