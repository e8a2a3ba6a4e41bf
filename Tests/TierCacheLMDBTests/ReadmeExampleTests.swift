import DiskTestSupport
import Foundation
import Testing
import TierCache
import TierCacheLMDB

/// Keeps the README's quick-start example compiling and true: the code between the markers is
/// the README's block, character for character (`ReadmeSnippetTests` checks that).
@Suite("README example")
struct ReadmeExampleTests {
    @Test("The quick-start example runs")
    func quickStart() async throws {
        let temporary = TemporaryDirectory()
        let cacheDirectory = temporary.url
        // README:begin quick-start
        let memory = try MemoryTier(capacity: 64 << 20)  // 64 MiB
        let disk = try LMDBTier(directory: cacheDirectory, capacity: 1 << 30)  // 1 GiB, zstd
        let cache = TieredCache(
            tiers: [memory, disk],
            policyTable: StoragePolicyTable(["https": .allowed, "http": .allowedInMemoryOnly], default: .notAllowed))

        let url = URL(string: "https://api.example.com/items/42")!
        let key = try CacheKey("GET \(url.absoluteString)")
        let report = await cache.store(
            CacheEntry(value: Data("{\"id\":42}".utf8), storedAt: Date()), forKey: key, url: url)
        print(report.outcomes.map { "\($0.tierName): \($0.outcome)" })  // memory: stored, lmdb: stored

        if let hit = await cache.lookup(key) {
            print("hit in \(hit.tierName), \(hit.entry.size) bytes")  // hit in memory, 9 bytes
        }
        for (tier, statistics) in await cache.statistics() {
            print(tier, statistics.hits, statistics.misses, statistics.usage?.bytes ?? 0)
        }
        // README:end
        #expect(report.isStoredAnywhere)
        #expect(await cache.lookup(key)?.tierName == "memory")
    }
}
