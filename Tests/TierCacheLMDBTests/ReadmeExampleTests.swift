import Foundation
import Testing
import TierCache
import TierCacheLMDB

/// Keeps the README's example compiling and true: the code between the markers below is the
/// README's quick-start block, character for character (the second test checks that).
@Suite("README example")
struct ReadmeExampleTests {
    @Test("The quick-start example runs")
    func quickStart() async throws {
        let temporary = TemporaryDirectory()
        let cacheDirectory = temporary.url
        // README:begin
        let memory = try MemoryTier(capacity: 64 << 20)                            // 64 MiB
        let disk = try LMDBTier(directory: cacheDirectory, capacity: 1 << 30)     // 1 GiB, zstd
        let cache = TieredCache(
            tiers: [memory, disk],
            policyTable: StoragePolicyTable(["https": .allowed, "http": .allowedInMemoryOnly], default: .notAllowed))

        let url = URL(string: "https://api.example.com/items/42")!
        let key = try CacheKey("GET \(url.absoluteString)")
        let report = await cache.store(CacheEntry(value: Data("{\"id\":42}".utf8), storedAt: Date()), forKey: key, url: url)
        print(report.outcomes.map { "\($0.tierName): \($0.outcome)" })           // memory: stored, lmdb: stored

        if let hit = await cache.lookup(key) {
            print("hit in \(hit.tierName), \(hit.entry.size) bytes")              // hit in memory, 9 bytes
        }
        for (tier, statistics) in await cache.statistics() {
            print(tier, statistics.hits, statistics.misses, statistics.usage?.bytes ?? 0)
        }
        // README:end
        #expect(report.isStoredAnywhere)
        #expect(await cache.lookup(key)?.tierName == "memory")
    }

    @Test("The README shows exactly the tested example")
    func readmeMatches() throws {
        let testFile = URL(fileURLWithPath: #filePath)
        let root = testFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: testFile, encoding: .utf8)
        let begin = try #require(source.range(of: "// README:begin\n"))
        let end = try #require(source.range(of: "        // README:end"))
        let example = source[begin.upperBound..<end.lowerBound]
            .split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("        ") ? String($0.dropFirst(8)) : String($0) }
            .joined(separator: "\n")
        #expect(readme.contains(example), "README.md's quick-start block differs from ReadmeExampleTests.swift")
    }
}
