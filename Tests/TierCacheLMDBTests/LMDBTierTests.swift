import Crypto
import DiskTestSupport
import Foundation
import Testing
import TierCache
import TierCacheEncryption
import TierCacheLMDB
import TierCacheTesting

@Suite("LMDBTier storage")
struct LMDBTierTests {
    @Test("The 5% rule is exact: a record of the limit is stored, one byte more is refused")
    func entrySizeRuleIsExact() throws {
        let directory = TemporaryDirectory()
        let tier = try LMDBTier(directory: directory.url, capacity: 4 << 20)
        let limit = try tier.usage().maxEntryBytes
        #expect(limit == Int(Double(4 << 20) * 0.05))
        // Incompressible values are stored raw: the record is a 32-byte header plus the value.
        #expect(try tier.store(entry(incompressible(limit - 32)), forKey: key("fits")) == .stored)
        #expect(
            try tier.store(entry(incompressible(limit - 31)), forKey: key("over"))
                == .refused(.tooLarge(size: limit + 1, limit: limit)))
        // The rule counts stored bytes: a compressible value far over the limit fits once compressed.
        #expect(try tier.store(entry(compressible(limit * 4)), forKey: key("json")) == .stored)
        #expect(try tier.entry(forKey: key("json"))?.value == compressible(limit * 4))
        #expect(tier.statistics().refusedTooLarge == 1)
    }

    /// 5% of 100 GiB is 5 GiB: a value under it was refused as over it (past 32 bits), and one
    /// just under 4 GiB failed in LMDB as a storage error.
    @Test("The largest entry is 5% of the capacity, and never above the 4 GiB a record's size counts")
    func largestEntryWithin32Bits() throws {
        let directory = TemporaryDirectory()
        // LMDB's map is reserved address space: a file of a few pages on disk.
        let tier = try LMDBTier(directory: directory.url, capacity: 100 << 30)
        #expect(try tier.usage().maxEntryBytes == Int(UInt32.max))
    }

    @Test("A value larger than the whole tier is refused however well it compresses (its record would read as damage)")
    func valueLargerThanTheTier() throws {
        let directory = TemporaryDirectory()
        let tier = try LMDBTier(directory: directory.url, capacity: 4 << 20)
        let zeros = [UInt8](repeating: 0, count: 5 << 20)
        #expect(
            try tier.store(CacheEntry(value: zeros, storedAt: Date()), forKey: CacheKey("zeros"))
                == .refused(.tooLarge(size: 5 << 20, limit: tier.usage().maxEntryBytes)))
        let fits = [UInt8](repeating: 0, count: 4 << 20)
        #expect(try tier.store(CacheEntry(value: fits, storedAt: Date()), forKey: CacheKey("fits")) == .stored)
        #expect(try tier.entry(forKey: CacheKey("fits"))?.value == fits)
    }

    @Test("Compressible values shrink on disk; incompressible ones are stored raw and verified")
    func compression() throws {
        let directory = TemporaryDirectory()
        let tier = try LMDBTier(directory: directory.url, capacity: 8 << 20)
        _ = try tier.store(entry(compressible(50_000)), forKey: key("json"))
        let report = try LMDBTier.inspect(directory: directory.url)
        #expect(report.compressionRatio > 10)
        _ = try tier.store(entry(incompressible(50_000)), forKey: key("random"))
        #expect(try tier.entry(forKey: key("random"))?.value == incompressible(50_000))
        #expect(try tier.entry(forKey: key("json"))?.value == compressible(50_000))
    }

    @Test("Writing many times the capacity keeps the files within capacity plus the lock file")
    func filesStayWithinCapacity() throws {
        let directory = TemporaryDirectory()
        let capacity = 4 << 20
        let tier = try LMDBTier(directory: directory.url, configuration: .init(capacity: capacity, durability: .none))
        var written = 0, index = 0
        while written < 6 * capacity {
            let value = incompressible(1 + (index * 7_919) % 40_000, seed: UInt64(index))
            #expect(try tier.store(entry(value), forKey: key("k\(index)")) == .stored)
            written += value.count
            index += 1
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        let sizes = try files.map {
            try FileManager.default.attributesOfItem(atPath: directory.url.appendingPathComponent($0).path)[.size]
                as? Int ?? 0
        }
        let dataSize =
            try FileManager.default.attributesOfItem(atPath: directory.url.appendingPathComponent("data.mdb").path)[
                .size] as? Int ?? 0
        #expect(dataSize <= capacity)
        #expect(sizes.reduce(0, +) <= capacity + 64 * 1024, "files: \(zip(files, sizes).map { "\($0)=\($1)" })")
        let usage = try tier.usage()
        #expect(usage.bytes <= Int(Double(capacity) * LMDBTier.fillLimit))
        #expect(tier.statistics().evictions > 0)
        #expect(try tier.entry(forKey: key("k\(index - 1)")) != nil, "the newest entry survives eviction")
    }

    /// Stores an incompressible 40,000-byte entry under `k<index>` for each index: about 41,050
    /// bytes each with its pages, so 19 fill the budget of a 1 MiB store.
    private func storeLargeEntries(_ indices: Range<Int>, in tier: LMDBTier) throws {
        for index in indices {
            _ = try tier.store(entry(incompressible(40_000, seed: UInt64(index))), forKey: key("k\(index)"))
        }
    }

    @Test("Eviction follows recency, including reads made between writes")
    func lruOrder() throws {
        let directory = TemporaryDirectory()
        let tier = try LMDBTier(directory: directory.url, configuration: .init(capacity: 1 << 20, durability: .none))
        // Each 40,000-byte entry takes 10 overflow pages plus its rows (about 41,050 bytes), so 19
        // fit in the 786,432-byte budget (75% of 1 MiB): the twentieth store evicts exactly one.
        try storeLargeEntries(0..<10, in: tier)
        _ = try tier.entry(forKey: key("k0"))  // k1 is now the oldest
        try storeLargeEntries(10..<20, in: tier)
        #expect(try tier.entry(forKey: key("k0")) != nil, "a recently read entry survives")
        #expect(try tier.entry(forKey: key("k1")) == nil, "the least recently used entry goes first")
        #expect(try tier.entry(forKey: key("k2")) != nil, "only as many entries as needed are evicted")
        #expect(tier.statistics().evictions == 1)
    }

    @Test("Overwriting the least recently used entry of a full store counts its bytes once and evicts the next oldest")
    func overwritingTheOldestEntry() throws {
        let directory = TemporaryDirectory()
        let tier = try LMDBTier(directory: directory.url, configuration: .init(capacity: 1 << 20, durability: .none))
        // Nineteen entries of 40,000 bytes fill the budget (`lruOrder`); k0 is the oldest.
        try storeLargeEntries(0..<19, in: tier)
        #expect(tier.statistics().evictions == 0)
        // Its new value (12 pages where the old took 10) no longer fits beside the other eighteen.
        let larger = incompressible(48_000, seed: 99)
        #expect(try tier.store(entry(larger), forKey: key("k0")) == .stored)
        #expect(try tier.entry(forKey: key("k0"))?.value == larger)
        #expect(try tier.entry(forKey: key("k1")) == nil, "the next oldest made room")
        #expect(try tier.entry(forKey: key("k2")) != nil)
        #expect(tier.statistics().evictions == 1, "the overwrite is not an eviction")
        for index in 0..<19 { try tier.removeEntry(forKey: key("k\(index)")) }
        #expect(try tier.usage().bytes == 0, "every byte counted in was counted out")
    }

    @Test("Expired entries are misses by the injected clock and are deleted")
    func expiry() throws {
        let directory = TemporaryDirectory()
        let clock = ManualCacheClock()
        let tier = try LMDBTier(
            directory: directory.url, configuration: .init(capacity: 1 << 20, clock: clock.cacheClock))
        _ = try tier.store(entry([1, 2, 3], expiresAt: clock.now.addingTimeInterval(10)), forKey: key("k"))
        #expect(try tier.entry(forKey: key("k"))?.value == [1, 2, 3])
        clock.advance(by: 10)
        #expect(try tier.entry(forKey: key("k")) == nil)
        #expect(try tier.usage().entries == 0)
        #expect(tier.statistics().expirations == 1)
    }

    @Test("Keys longer than LMDB's 511 bytes are hashed and still told apart")
    func longKeys() throws {
        let directory = TemporaryDirectory()
        let tier = try LMDBTier(directory: directory.url, capacity: 1 << 20)
        let base = String(repeating: "https://example.com/path?", count: 40)  // 1,000 bytes
        _ = try tier.store(entry([1]), forKey: key(base + "a"))
        _ = try tier.store(entry([2]), forKey: key(base + "b"))
        #expect(try tier.entry(forKey: key(base + "a"))?.value == [1])
        #expect(try tier.entry(forKey: key(base + "b"))?.value == [2])
        #expect(try LMDBTier.inspect(directory: directory.url).largest.contains { $0.key == base + "a" })
    }

    @Test("The directory is created owner-only")
    func directoryPermissions() throws {
        let directory = TemporaryDirectory()
        let nested = directory.url.appendingPathComponent("a/b")
        _ = try LMDBTier(directory: nested, capacity: 1 << 20)
        let permissions = try FileManager.default.attributesOfItem(atPath: nested.path)[.posixPermissions] as? Int
        #expect(permissions == 0o700)
    }

    @Test("Entries persist across reopening, and inspect reads them")
    func persistenceAndInspect() throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try LMDBTier(directory: directory.url, capacity: 2 << 20)
            for index in 0..<20 { _ = try tier.store(entry(incompressible(1_000 + index)), forKey: key("k\(index)")) }
        }
        let report = try LMDBTier.inspect(directory: directory.url, top: 3)
        #expect(report.entries == 20 && report.capacity == 2 << 20 && report.largest.count == 3)
        #expect(report.largest.first?.originalBytes == 1_019)
        let reopened = try LMDBTier(directory: directory.url, capacity: 2 << 20)
        #expect(try reopened.entry(forKey: key("k19"))?.value == incompressible(1_019))
    }
}

@Suite("tiercache inspect")
struct InspectCommandTests {
    func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try runTiercache(arguments)
    }

    @Test("Prints the store's summary as JSON for machines")
    func json() throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try LMDBTier(directory: directory.url, capacity: 2 << 20)
            for index in 0..<7 {
                _ = try tier.store(entry(incompressible(2_000 * (index + 1))), forKey: key("item-\(index)"))
            }
        }
        let (status, output) = try run(["inspect", directory.url.path, "--json", "--top", "2"])
        #expect(status == 0)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let report = try decoder.decode(LMDBInspection.self, from: Data(output.utf8))
        #expect(report.entries == 7 && report.capacity == 2 << 20)
        #expect(report.largest.map(\.key) == ["item-6", "item-5"])
        #expect(report.compressionRatio == 1, "random values are stored raw")
        let (textStatus, text) = try run(["inspect", directory.url.path])
        #expect(textStatus == 0 && text.contains("7 entries") && text.contains("item-6"))
    }

    /// A key may hold any character; printed raw, an escape sequence in one rewrote the terminal
    /// and a newline split the line a script reads.
    @Test("Prints keys' control characters as escapes")
    func controlCharactersInKeys() throws {
        let parent = TemporaryDirectory()
        // Named like an option: still the directory to verify, given after `--`.
        let directory = parent.url.appendingPathComponent("-odd")
        do {
            let tier = try LMDBTier(directory: directory, capacity: 2 << 20)
            _ = try tier.store(entry(incompressible(4_000)), forKey: key("evil\u{1B}[2J\nkey"))
        }
        let (status, text) = try run(["inspect", directory.path])
        #expect(status == 0)
        #expect(!text.contains("\u{1B}") && text.contains("evil\\u{1B}[2J\\nkey"), "\(text)")
        let (verifyStatus, verified) = try runTiercache(["inspect", "--verify", "--", "-odd"], in: parent.url)
        #expect(verifyStatus == 0 && verified.contains("records      sound"), "\(verified)")
    }

    @Test("Shows each dictionary with its age and the ratio with and without it, and counts sealed records")
    func dictionariesAndSealedRecords() throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try LMDBTier(
                directory: directory.url,
                configuration: LMDBDictionaryTests.automatic)
            for (index, value) in LMDBDictionaryTests.responses(300).enumerated() {
                _ = try tier.store(entry(value), forKey: key("r\(index)"))
            }
        }
        let (status, text) = try run(["inspect", directory.url.path])
        #expect(status == 0)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("dictionary   #1 ") }, "\(text)")
        #expect(
            line.contains("trained on") && line.contains(" s old") && line.contains("with it")
                && line.contains("without"), "\(line)")
        #expect(text.contains("records compressed with a dictionary: "), "\(text)")

        let sealedDirectory = TemporaryDirectory()
        do {
            let encryption = try EncryptionAtRest(currentKey: .init(id: 7, key: SymmetricKey(size: .bits256)))
            let tier = try LMDBTier(
                directory: sealedDirectory.url, configuration: .init(capacity: 4 << 20, encryption: encryption))
            for index in 0..<3 { _ = try tier.store(entry(compressible(500)), forKey: key("s\(index)")) }
        }
        let (sealedStatus, sealedText) = try run(["inspect", sealedDirectory.url.path])
        #expect(
            sealedStatus == 0 && sealedText.contains("sealed       3 records (key 7: 3); 3 not opened"), "\(sealedText)"
        )
    }

    @Test("Refuses a negative --top, and --top with --verify, as usage errors")
    func badTop() throws {
        let directory = TemporaryDirectory()
        for (arguments, message) in [
            (["--top=-3"], "--top must be zero or positive"), (["--verify", "--top", "2"], "--verify walks"),
        ] {
            let (status, output) = try run(["inspect", directory.url.path] + arguments)
            #expect(status == 64 && output.contains(message), "\(arguments): \(output)")
        }
    }

    @Test("Names the problem and fails for a directory without a store")
    func missingStore() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let (status, output) = try run(["inspect", directory.url.path])
        // A failure of the work, not a usage error (64, with the usage text after it).
        #expect(status == 1)
        #expect(output.contains("holds no LMDB tier store") && !output.contains("USAGE"), "\(output)")
        #expect(
            !FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("data.mdb").path),
            "inspect creates nothing")
    }
}
