import DiskTestSupport
import Foundation
import Testing
import TierCache
import TierCacheSQLite

/// Keeps the README's (and the DocC catalog's) SQLite example compiling and true: the code between
/// the markers is the README's block, character for character (`ReadmeSnippetTests` checks that).
@Suite("README example: the SQLite disk tier")
struct ReadmeSQLiteExampleTests {
    @Test("The SQLite example runs, and the entry it stores survives a relaunch")
    func sqliteExample() async throws {
        let temporary = TemporaryDirectory()
        let cachesDirectory = temporary.url
        // README:begin sqlite
        let disk = try SQLiteTier(
            directory: cachesDirectory.appendingPathComponent("images"), capacity: 256 << 20)  // 256 MiB, zlib
        let cache = TieredCache(tiers: [try MemoryTier(capacity: 32 << 20), disk])

        let key = try CacheKey("avatar/42")
        _ = await cache.store(CacheEntry(value: Data(count: 4_096), storedAt: Date()), forKey: key, policy: .allowed)
        print(await cache.lookup(key)?.tierName ?? "miss")  // memory
        print(try disk.usage().entries, disk.statistics().refusedTooLarge)  // 1 0
        // README:end
        #expect(await cache.lookup(key)?.tierName == "memory")
        let relaunched = try SQLiteTier(
            directory: cachesDirectory.appendingPathComponent("images"), capacity: 256 << 20)
        #expect(try relaunched.entry(forKey: key)?.value == [UInt8](repeating: 0, count: 4_096))
    }
}
