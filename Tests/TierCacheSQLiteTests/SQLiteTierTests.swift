import CSQLite
import DiskTestSupport
import Foundation
import Testing
@_spi(TierCacheInternals) import TierCache
import TierCacheRecords
@_spi(TierCacheInternals) import TierCacheSQLite

@Suite("SQLiteTier")
struct SQLiteTierTests {
    @Test("Values round-trip compressed and raw, and compressible ones take less room than they hold")
    func compression() throws {
        let directory = TemporaryDirectory()
        let tier = try SQLiteTier(directory: directory.url, capacity: 4 << 20)
        _ = try tier.store(entry(compressible(30_000)), forKey: key("json"))
        let compressedBytes = try tier.usage().bytes
        _ = try tier.store(entry(incompressible(30_000)), forKey: key("noise"))
        #expect(try tier.entry(forKey: key("json"))?.value == compressible(30_000))
        #expect(try tier.entry(forKey: key("noise"))?.value == incompressible(30_000))
        #expect(compressedBytes < 5_000)
        #expect(try tier.usage().bytes - compressedBytes > 30_000)
    }

    @Test("The 5% rule is exact on the stored record: at the limit it is stored, one byte over it is refused")
    func entrySizeRuleIsExact() throws {
        let directory = TemporaryDirectory()
        let tier = try SQLiteTier(directory: directory.url, capacity: 1 << 20)
        let limit = try tier.usage().maxEntryBytes
        #expect(limit == (1 << 20) / 20)
        // Incompressible values are stored raw: the record is its header, the key and the value.
        let name = "edge"
        let fits = incompressible(limit - EntryRecord.headerSize - name.utf8.count)
        #expect(try tier.store(entry(fits), forKey: key(name)) == .stored)
        let over = incompressible(fits.count + 1, seed: 2)
        #expect(try tier.store(entry(over), forKey: key(name)) == .refused(.tooLarge(size: limit + 1, limit: limit)))
        // The refused store removed the older entry: readers never see it after the refusal.
        #expect(try tier.entry(forKey: key(name)) == nil)
        #expect(tier.statistics().refusedTooLarge == 1)
    }

    @Test("Where 5% of the capacity passes SQLite's row length limit, the entry limit leaves room for the longest key")
    func entryLimitUnderSQLiteRowLimit() throws {
        let directory = TemporaryDirectory()
        let tier = try SQLiteTier(directory: directory.url, capacity: 1 << 40)
        // SQLite's default SQLITE_LIMIT_LENGTH, less a 16 KiB key and 64 bytes of the row's own.
        #expect(try tier.usage().maxEntryBytes == 1_000_000_000 - CacheKey.maximumUTF8Length - 64)
    }

    @Test("A value stored under a larger capacity is a miss for a tier opened smaller, left in place, not damage")
    func valueLargerThanTheTier() throws {
        let directory = TemporaryDirectory()
        let zeros = [UInt8](repeating: 0, count: 2 << 20)
        do {
            let large = try SQLiteTier(directory: directory.url, capacity: 64 << 20)
            #expect(try large.store(entry(zeros), forKey: key("zeros")) == .stored)
        }
        do {
            let small = try SQLiteTier(directory: directory.url, capacity: 1 << 20)
            #expect(try small.entry(forKey: key("zeros")) == nil)
            #expect(small.statistics().corruptionsRemoved == 0)
            #expect(try small.store(entry(zeros), forKey: key("other")) != .stored)
        }
        let again = try SQLiteTier(directory: directory.url, capacity: 64 << 20)
        #expect(try again.entry(forKey: key("zeros"))?.value == zeros)
    }

    @Test("Eviction is least-recently-used, with reads applied at the next write")
    func leastRecentlyUsed() throws {
        let directory = TemporaryDirectory()
        let tier = try SQLiteTier(directory: directory.url, capacity: 1 << 20)
        var stored = 0
        // Fill until the first eviction, reading entry 0 before every store.
        while tier.statistics().evictions == 0 {
            _ = try tier.entry(forKey: key("e0"))
            #expect(
                try tier.store(entry(incompressible(40_000, seed: UInt64(stored + 1))), forKey: key("e\(stored)"))
                    == .stored)
            stored += 1
            try #require(stored < 100, "a 1 MiB tier took 100 entries of 40 kB")
        }
        #expect(stored > 10)
        #expect(try tier.entry(forKey: key("e0")) != nil, "the entry read before every store stays")
        #expect(try tier.entry(forKey: key("e1")) == nil, "the least recently used one goes first")
        #expect(try tier.entry(forKey: key("e2")) != nil)
        let usage = try tier.usage()
        #expect(usage.bytes <= Int(Double(usage.capacity) * SQLiteTier.fillLimit))
    }

    @Test("The database file stays within the capacity while 4 times the capacity is written", arguments: [1, 8])
    func fileStaysWithinCapacity(megabytes: Int) throws {
        let directory = TemporaryDirectory()
        let capacity = megabytes << 20
        let tier = try SQLiteTier(directory: directory.url, capacity: capacity)
        var random = SplitMix64(seed: 7)
        var written = 0
        var index = 0
        while written < 4 * capacity {
            // Sizes from a few bytes to the 5% limit, most of them small, keys of varied lengths.
            let size = Int(random.next() % 4 == 0 ? random.next() % UInt64(capacity / 25) : random.next() % 3_000)
            let name = "key-\(index)-" + String(repeating: "k", count: Int(random.next() % 200))
            _ = try tier.store(entry(incompressible(size, seed: random.next())), forKey: key(name))
            written += size
            index += 1
        }
        try tier.sync()
        let file = fileSize(databaseFile(directory.url))
        print(
            "SQLiteTier at \(megabytes) MiB: \(index) stores, file \(file) bytes (\(file * 100 / capacity)% of capacity)"
        )
        #expect(file <= capacity)
        #expect(try tier.usage().bytes <= Int(Double(capacity) * SQLiteTier.fillLimit))
    }

    /// Entry shapes SQLite lays out larger than their bytes: a record of just over half a page
    /// (one row to a leaf), and keys over the key index's inline limit (overflow pages in the
    /// index, and in its interior pages' copies).
    static let wastefulShapes: [(valueSize: Int, keyPadding: Int)] = [
        (1_990, 0), (2_400, 0), (100, 1_010), (2_000, 1_000),
    ]

    @Test(
        "The database file stays within the capacity for entry shapes SQLite lays out wastefully",
        arguments: wastefulShapes)
    func fileStaysWithinCapacityForWastefulShapes(valueSize: Int, keyPadding: Int) throws {
        let directory = TemporaryDirectory()
        let capacity = 2 << 20
        let tier = try SQLiteTier(directory: directory.url, capacity: capacity)
        var written = 0
        var index = 0
        while written < 3 * capacity {
            let name = "key-\(index)-" + String(repeating: "k", count: keyPadding)
            #expect(try tier.store(entry(incompressible(valueSize, seed: UInt64(index))), forKey: key(name)) == .stored)
            written += valueSize + name.utf8.count
            index += 1
        }
        try tier.sync()
        let file = fileSize(databaseFile(directory.url))
        print(
            "SQLiteTier, \(valueSize)-byte values under keys padded by \(keyPadding): file \(file * 100 / capacity)% of capacity"
        )
        #expect(file <= capacity, "\(file * 100 / capacity)% of the capacity")
        // Not so cautious that most of the capacity is left unused.
        #expect(file >= capacity / 2, "\(file * 100 / capacity)% of the capacity")
    }

    @Test("removeAll empties the store and gives its pages back to the file system")
    func removeAllShrinksTheFile() throws {
        let directory = TemporaryDirectory()
        let tier = try SQLiteTier(directory: directory.url, capacity: 4 << 20)
        for index in 0..<60 {
            _ = try tier.store(entry(incompressible(40_000, seed: UInt64(index))), forKey: key("e\(index)"))
        }
        try tier.sync()
        let full = fileSize(databaseFile(directory.url))
        try tier.removeAll()
        try tier.sync()
        #expect(try tier.usage() == TierUsage(bytes: 0, entries: 0, capacity: 4 << 20, maxEntryBytes: (4 << 20) / 20))
        #expect(fileSize(databaseFile(directory.url)) < full / 10)
    }

    @Test("Entries, recency and accounting persist across reopening")
    func persistence() throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try SQLiteTier(directory: directory.url, capacity: 2 << 20)
            for index in 0..<10 { _ = try tier.store(entry(compressible(1_000 + index)), forKey: key("e\(index)")) }
            try tier.removeEntry(forKey: key("e3"))
        }
        let reopened = try SQLiteTier(directory: directory.url, capacity: 2 << 20)
        #expect(try reopened.usage().entries == 9)
        #expect(try reopened.entry(forKey: key("e3")) == nil)
        #expect(try reopened.entry(forKey: key("e9"))?.value == compressible(1_009))
        #expect(reopened.storeResetReason == nil)
    }

    @Test("Bad settings are refused with invalidConfiguration, naming the setting")
    func invalidConfiguration() {
        let directory = TemporaryDirectory()
        let bad: [(SQLiteTier.Configuration, String)] = [
            (.init(capacity: 1 << 19), "capacity"),
            (.init(capacity: 1 << 20, maxEntryFraction: 0), "maxEntryFraction"),
            (.init(capacity: 1 << 20, maxEntryFraction: .nan), "maxEntryFraction"),
            (.init(capacity: 1 << 20, maxEntryFraction: 0.6), "maxEntryFraction"),
            (.init(capacity: 1 << 20, compressionLevel: 0), "compression level"),
            (.init(capacity: 1 << 20, compressionLevel: 10), "compression level"),
            (.init(capacity: 1 << 20, busyTimeout: .seconds(-1)), "busyTimeout"),
            (.init(capacity: 1 << 20, busyTimeout: .milliseconds(-500)), "busyTimeout"),
        ]
        for (configuration, setting) in bad {
            #expect {
                try SQLiteTier(directory: directory.url, configuration: configuration)
            } throws: { error in
                let error = error as? TierCacheError
                return error?.code == .invalidConfiguration && error?.message.contains(setting) == true
            }
        }
    }

    @Test("A file where the directory should be is notADirectory")
    func notADirectory() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let file = directory.url.appendingPathComponent("file")
        try Data("x".utf8).write(to: file)
        #expect(throws: TierCacheError.self) { try SQLiteTier(directory: file, capacity: 1 << 20) }
        #expect((try? SQLiteTier(directory: file, capacity: 1 << 20)) == nil)
        // A path through the file too (it was permissionDenied, which sent users to fix
        // permissions).
        for path in [file, file.appendingPathComponent("store")] {
            do {
                _ = try SQLiteTier(directory: path, capacity: 1 << 20)
                Issue.record("opened at \(path.path)")
            } catch {
                #expect(error.code == .notADirectory)
            }
        }
    }

    @Test("Another program's SQLite database is refused as foreignStore and left as it is")
    func foreignDatabase() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let file = databaseFile(directory.url)
        try rawSQLite(file, "CREATE TABLE notes(text TEXT); INSERT INTO notes VALUES ('keep me');")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        let before = try Data(contentsOf: file)
        do {
            _ = try SQLiteTier(directory: directory.url, capacity: 1 << 20)
            Issue.record("opened another program's database")
        } catch {
            #expect(error.code == .foreignStore)
        }
        #expect(try Data(contentsOf: file) == before)
        // Its permissions too: the other program's readers keep their access.
        let permissions = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(permissions == 0o644)
    }

    @Test("A store of another schema version is an error with throwError, and emptied (counted, reported) by default")
    func incompatibleVersion() throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try SQLiteTier(directory: directory.url, capacity: 1 << 20)
            _ = try tier.store(entry([1, 2, 3]), forKey: key("old"))
        }
        try rawSQLite(databaseFile(directory.url), "PRAGMA user_version = 99")
        do {
            _ = try SQLiteTier(directory: directory.url, configuration: .init(capacity: 1 << 20, recovery: .throwError))
            Issue.record("opened a store of schema version 99")
        } catch {
            #expect(error.code == .incompatibleVersion)
        }
        let reports = Locked<[String]>([])
        let tier = try SQLiteTier(
            directory: directory.url,
            configuration: .init(
                capacity: 1 << 20, onStoreReset: { _, reason in reports.withLock { $0.append(reason) } }))
        #expect(tier.storeResetReason?.contains("schema version 99") == true)
        #expect(reports.withLock { $0.count } == 1)
        #expect(tier.statistics().storeResets == 1)
        #expect(try tier.entry(forKey: key("old")) == nil)
        #expect(try tier.store(entry([4]), forKey: key("new")) == .stored)
    }

    @Test(
        "A damaged file header (its magic, or a schema format SQLite calls unsupported) is damagedStore with throwError, and an emptied store by default",
        arguments: ["magic", "schema format"])
    func damagedHeader(damage: String) throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try SQLiteTier(directory: directory.url, capacity: 1 << 20)
            _ = try tier.store(entry([1, 2, 3]), forKey: key("a"))
            try tier.sync()
        }
        let file = databaseFile(directory.url)
        var bytes = [UInt8](try Data(contentsOf: file))
        if damage == "magic" {
            for offset in 0..<16 { bytes[offset] = 0x5A }
        } else {
            bytes[47] ^= 0x10  // schema format 4 becomes 20: "unsupported file format", at every open
        }
        try Data(bytes).write(to: file)
        do {
            _ = try SQLiteTier(directory: directory.url, configuration: .init(capacity: 1 << 20, recovery: .throwError))
            Issue.record("opened a file whose header is damaged")
        } catch {
            #expect(error.code == .damagedStore)
        }
        let tier = try SQLiteTier(directory: directory.url, capacity: 1 << 20)
        #expect(tier.storeResetReason != nil)
        #expect(tier.statistics().storeResets == 1)
        #expect(try tier.entry(forKey: key("a")) == nil)
        #expect(try tier.store(entry([4]), forKey: key("b")) == .stored)
        #expect(try tier.entry(forKey: key("b"))?.value == [4])
    }

    /// An app and its extension updated apart share a store: the older one meets records of a
    /// newer format. They are misses and deleted (a local store), counted as what they are, not
    /// as damage.
    @Test("A record in a format version this code does not read is a miss, deleted and counted apart from damage")
    func unknownFormatVersion() throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try SQLiteTier(directory: directory.url, capacity: 1 << 20)
            _ = try tier.store(entry([1, 2, 3]), forKey: key("newer"))
            _ = try tier.store(entry([4]), forKey: key("kept"))
        }
        try rawSQLite(
            databaseFile(directory.url),
            "UPDATE entries SET record = x'09' || substr(record, 2) WHERE key = CAST('newer' AS BLOB);")
        let tier = try SQLiteTier(directory: directory.url, capacity: 1 << 20)
        #expect(try tier.entry(forKey: key("newer")) == nil)
        let statistics = tier.statistics()
        #expect(statistics.unknownFormatRecords == 1 && statistics.corruptionsRemoved == 0)
        #expect(try tier.usage().entries == 1)
        #expect(try tier.entry(forKey: key("kept"))?.value == [4])
    }

    /// `DELETE … RETURNING` came with SQLite 3.35: an older library is named as the cause at
    /// opening, where it used to pass for a damaged store, emptied at every open.
    @Test("A SQLite library older than 3.35 is refused with its version named")
    func oldSQLiteLibrary() throws {
        let error = #expect(throws: TierCacheError.self) {
            try SQLiteTier.checkSQLiteLibrary(versionNumber: 3_034_001, version: "3.34.1")
        }
        #expect(error?.code == .storageFailure)
        #expect(error.map { "\($0)".contains("3.35.0") && "\($0)".contains("3.34.1") } == true)
        try SQLiteTier.checkSQLiteLibrary(
            versionNumber: sqlite3_libversion_number(), version: String(cString: sqlite3_libversion()))
    }

    @Test(
        "Damaged records are misses, deleted and counted: a flipped payload, a record under another key, a zstd payload"
    )
    func damagedRecords() throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try SQLiteTier(directory: directory.url, capacity: 1 << 20)
            _ = try tier.store(entry(incompressible(2_000)), forKey: key("raw"))
            _ = try tier.store(entry(compressible(2_000)), forKey: key("zlib"))
            _ = try tier.store(entry([7, 7, 7]), forKey: key("moved"))
            _ = try tier.store(entry(compressible(500)), forKey: key("zstd"))
        }
        // Flip the last byte of two payloads; give "moved" another key's record; mark a zlib
        // payload as a zstd frame (flag bit 0 instead of bit 3).
        try rawSQLite(
            databaseFile(directory.url),
            """
            UPDATE entries SET record = substr(record, 1, length(record) - 1) || x'00' WHERE key IN (CAST('raw' AS BLOB), CAST('zlib' AS BLOB));
            UPDATE entries SET record = (SELECT record FROM entries WHERE key = CAST('raw' AS BLOB)) WHERE key = CAST('moved' AS BLOB);
            UPDATE entries SET record = substr(record, 1, 1) || x'03' || substr(record, 3) WHERE key = CAST('zstd' AS BLOB);
            """)
        let tier = try SQLiteTier(directory: directory.url, capacity: 1 << 20)
        for name in ["raw", "zlib", "moved", "zstd"] {
            #expect(try tier.entry(forKey: key(name)) == nil, "\(name)")
        }
        #expect(tier.statistics().corruptionsRemoved == 4)
        #expect(try tier.usage().entries == 0)
    }

    @Test(
        "Counts out of range in the file (a clock or byte count near Int64.max, a negative cost) are damage, not a trap",
        arguments: [
            "UPDATE state SET clock = 9223372036854775807", "UPDATE state SET used = 9223372036854775807",
            "UPDATE state SET entries = -9223372036854775808",
            "UPDATE entries SET cost = -9223372036854775808 WHERE key = CAST('k' AS BLOB)",
        ])
    func countsOutOfRange(_ damage: String) throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try SQLiteTier(directory: directory.url, capacity: 1 << 20)
            _ = try tier.store(entry(compressible(2_000)), forKey: key("k"))
            try tier.sync()
        }
        try rawSQLite(databaseFile(directory.url), damage)
        let tier = try SQLiteTier(directory: directory.url, capacity: 1 << 20)
        // Over the same key: the delete reads its cost; the write reads the state.
        #expect(try tier.store(entry([1, 2, 3]), forKey: key("k")) == .stored)
        #expect(try tier.entry(forKey: key("k"))?.value == [1, 2, 3])
        let usage = try tier.usage()
        #expect(usage.entries == 1 && usage.bytes > 0 && usage.bytes < 1 << 20)
    }

    /// A row's cost damaged to a value in range (nothing flags it), then the row deleted: the
    /// bytes used went below 0 and were clamped to 0, the difference kept for good, and the file
    /// grew past the capacity with nothing evicted. The accounts are counted again from the rows.
    @Test("Accounts that drifted below a deleted row's cost are counted again from the rows")
    func accountsBelowARowsCostAreCountedAgain() throws {
        let directory = TemporaryDirectory()
        let capacity = 1 << 20
        do {
            let tier = try SQLiteTier(directory: directory.url, capacity: capacity)
            for index in 0..<40 {
                _ = try tier.store(entry(incompressible(20_000, seed: UInt64(index))), forKey: key("old\(index)"))
            }
            try tier.sync()
        }
        try rawSQLite(
            databaseFile(directory.url), "UPDATE entries SET cost = 1099511627776 WHERE key = CAST('old0' AS BLOB)")
        let tier = try SQLiteTier(directory: directory.url, capacity: capacity)
        try tier.removeEntry(forKey: key("old0"))
        let recounted = try tier.usage()
        #expect(recounted.entries > 1 && recounted.bytes > 20_000 * recounted.entries)
        for index in 0..<40 {
            _ = try tier.store(entry(incompressible(20_000, seed: UInt64(100 + index))), forKey: key("new\(index)"))
        }
        try tier.sync()
        #expect(fileSize(databaseFile(directory.url)) <= capacity)
        #expect(tier.statistics().evictions > 0)
    }

    @Test("Lookups that meet a damaged table together empty the store once, count it once, and it works after")
    func damageMetByConcurrentLookups() async throws {
        let directory = TemporaryDirectory()
        let file = databaseFile(directory.url)
        do {
            let tier = try SQLiteTier(directory: directory.url, capacity: 4 << 20)
            for index in 0..<200 { _ = try tier.store(entry(compressible(2_000 + index)), forKey: key("e\(index)")) }
            try tier.sync()
        }
        // Overwrite the key index's root page (the file header and the state table stay sound, so
        // the store opens, and lookups meet the damage).
        let root = try rootPage(of: "sqlite_autoindex_entries_1", in: file)
        var bytes = [UInt8](try Data(contentsOf: file))
        for offset in (root - 1) * 4096..<root * 4096 { bytes[offset] = 0xA5 }
        try Data(bytes).write(to: file)

        let resets = Locked(0)
        let tier = try SQLiteTier(
            directory: directory.url,
            configuration: .init(capacity: 4 << 20, onStoreReset: { _, _ in resets.withLock { $0 += 1 } }))
        #expect(tier.storeResetReason == nil, "the header is sound: the damage is met later")
        let found = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<8 {
                group.addTask { try tier.entry(forKey: key("e\(index)")) == nil ? 0 : 1 }
            }
            return try await group.reduce(0, +)
        }
        #expect(found == 0)
        #expect(tier.statistics().storeResets == 1)
        #expect(resets.withLock { $0 } == 1)
        #expect(try tier.store(entry([1, 2]), forKey: key("after")) == .stored)
        #expect(try tier.entry(forKey: key("after"))?.value == [1, 2])
        #expect(try tier.usage().entries == 1)
    }

    @Test(
        "A store emptied under the tier, its schema not made again yet (a reset in flight): lookups miss, usage is empty, writes make the schema"
    )
    func schemaMissingMidReset() throws {
        let directory = TemporaryDirectory()
        let tier = try SQLiteTier(directory: directory.url, capacity: 1 << 20)
        _ = try tier.store(entry(compressible(2_000)), forKey: key("k"))
        #expect(try tier.entry(forKey: key("k")) != nil)
        try emptyAsAnotherProcessWould(databaseFile(directory.url))
        #expect(try tier.entry(forKey: key("k")) == nil)
        #expect(try tier.usage().entries == 0)
        #expect(tier.statistics().errors == 0)
        try emptyAsAnotherProcessWould(databaseFile(directory.url))
        #expect(try tier.usage().bytes == 0)
        try emptyAsAnotherProcessWould(databaseFile(directory.url))
        #expect(try tier.store(entry([1, 2, 3]), forKey: key("k")) == .stored)
        #expect(try tier.entry(forKey: key("k"))?.value == [1, 2, 3])
        #expect(try tier.usage().entries == 1)
    }

    @Test("sync() leaves every committed entry in the database file, with an empty write-ahead log")
    func syncCheckpoints() throws {
        let directory = TemporaryDirectory()
        let tier = try SQLiteTier(directory: directory.url, capacity: 2 << 20)
        for index in 0..<20 { _ = try tier.store(entry(compressible(3_000 + index)), forKey: key("e\(index)")) }
        try tier.sync()
        #expect(fileSize(directory.url.appendingPathComponent("cache.sqlite-wal")) == 0)
        let copy = TemporaryDirectory()
        try FileManager.default.createDirectory(at: copy.url, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: databaseFile(directory.url), to: databaseFile(copy.url))
        let fromCopy = try SQLiteTier(directory: copy.url, capacity: 2 << 20)
        #expect(try fromCopy.entry(forKey: key("e19"))?.value == compressible(3_019))
    }

    @Test("sync() while another connection reads a snapshot fails, saying so, and succeeds once the reader is done")
    func syncBlockedByReader() throws {
        let directory = TemporaryDirectory()
        let tier = try SQLiteTier(
            directory: directory.url, configuration: .init(capacity: 2 << 20, busyTimeout: .milliseconds(20)))
        _ = try tier.store(entry(compressible(3_000)), forKey: key("before"))
        var reader: OpaquePointer?
        try #require(sqlite3_open(databaseFile(directory.url).path, &reader) == SQLITE_OK)
        defer { sqlite3_close(reader) }
        try #require(sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM entries;", nil, nil, nil) == SQLITE_OK)
        _ = try tier.store(entry(compressible(3_001)), forKey: key("after"))
        #expect(throws: TierCacheError.self) { try tier.sync() }
        try #require(sqlite3_exec(reader, "COMMIT", nil, nil, nil) == SQLITE_OK)
        try tier.sync()
        #expect(fileSize(directory.url.appendingPathComponent("cache.sqlite-wal")) == 0)
    }

    @Test(
        "A removal another connection's write lock keeps out throws, and the entry is a miss until a write deletes it")
    func removalBlockedByWriter() throws {
        let directory = TemporaryDirectory()
        let tier = try SQLiteTier(
            directory: directory.url, configuration: .init(capacity: 2 << 20, busyTimeout: .milliseconds(20)))
        _ = try tier.store(entry(compressible(3_000)), forKey: key("old"))
        var writer: OpaquePointer?
        try #require(sqlite3_open(databaseFile(directory.url).path, &writer) == SQLITE_OK)
        defer { sqlite3_close(writer) }
        try #require(sqlite3_exec(writer, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
        #expect(throws: TierCacheError.self) { try tier.removeEntry(forKey: key("old")) }
        // The row is still in the file, but no older value is read after a removal.
        #expect(try tier.entry(forKey: key("old")) == nil)
        try #require(sqlite3_exec(writer, "COMMIT", nil, nil, nil) == SQLITE_OK)
        _ = try tier.store(entry([1]), forKey: key("other"))
        #expect(try rowCount(in: databaseFile(directory.url)) == 1)
        #expect(try tier.usage().entries == 1)
    }

    @Test("The store's files are readable by their owner only")
    func ownerOnly() throws {
        let directory = TemporaryDirectory()
        let tier = try SQLiteTier(directory: directory.url, capacity: 1 << 20)
        _ = try tier.store(entry([1]), forKey: key("a"))
        let permissions =
            try FileManager.default.attributesOfItem(atPath: databaseFile(directory.url).path)[.posixPermissions]
            as? Int
        #expect(permissions == 0o600)
    }
}

@Suite("SQLiteTier opened twice in one process")
struct SQLiteTierLockTests {
    /// This process's POSIX locks on the file at `path`, from `/proc/locks` (Linux).
    static func locksHeld(on path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        let inode = try #require(attributes[.systemFileNumber] as? UInt64)
        let pid = ProcessInfo.processInfo.processIdentifier
        let table = try String(contentsOfFile: "/proc/locks", encoding: .utf8)
        return table.split(separator: "\n").filter { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return fields.count > 5 && fields[4] == "\(pid)" && fields[5].hasSuffix(":\(inode)")
        }.count
    }

    @Test("Opening a second tier on a directory leaves the first one's locks on the database file in place")
    func secondOpenKeepsLocks() throws {
        #if os(Linux)
        let directory = TemporaryDirectory()
        let first = try SQLiteTier(directory: directory.url, capacity: 1 << 20)
        #expect(try first.store(entry(incompressible(100)), forKey: key("a")) == .stored)
        let database = directory.url.appendingPathComponent("cache.sqlite").path
        let before = try Self.locksHeld(on: database)
        #expect(before > 0, "a connection in WAL mode holds a lock on the database file")
        let second = try SQLiteTier(directory: directory.url, capacity: 1 << 20)
        #expect(try Self.locksHeld(on: database) == before)
        #expect(try second.entry(forKey: key("a")) != nil)
        #expect(try first.entry(forKey: key("a")) != nil)
        #endif
    }
}
