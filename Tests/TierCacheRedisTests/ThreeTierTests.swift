import Foundation
import Testing
import TierCache
import TierCacheLMDB

@testable import TierCacheRedis

/// Memory over LMDB over Redis, as the README shows it.
@Suite(.enabled(if: RedisServers.available, RedisServers.missingMessage), .timeLimit(.minutes(5)))
struct ThreeTierTests {
    @Test func aRedisHitIsPromotedAndMemoryOnlyEntriesNeverReachRedis() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tiercache-three-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let endpoint = try #require(RedisServers.standalone)
        let prefix = "three:\(UUID().uuidString):"

        // README:begin three-tiers
        let redis = try RedisTier(
            configuration: .init(
                deployment: .standalone(endpoint),  // or .cluster(seeds: […])
                keyPrefix: prefix, capacity: 64 << 20))
        let cache = TieredCache(tiers: [
            try MemoryTier(capacity: 16 << 20),
            try LMDBTier(directory: directory, configuration: .init(capacity: 256 << 20)),
            redis,
        ])
        // README:end

        // Another machine's cache stored this in Redis only. Its tier, like the checks' reads,
        // waits longer than the README's default 500 ms, and reads report failures: the whole
        // suite at once on two cores has stalled Redis past 500 ms (a store then threw, and a
        // failed read would have passed for a miss).
        let otherMachine = try RedisTier(
            configuration: .init(
                deployment: .standalone(endpoint), keyPrefix: prefix, capacity: 64 << 20,
                connectTimeout: .seconds(5), commandTimeout: .seconds(5)))
        let shared = try CacheKey("shared")
        #expect(
            try await otherMachine.store(CacheEntry(value: [1, 2, 3], storedAt: Date()), forKey: shared) == .stored)
        // A Redis stalled past 500 ms is a miss, as documented: asked again, a few times.
        var hit = await cache.lookup(shared)
        for _ in 0..<3 where hit == nil { hit = await cache.lookup(shared) }
        #expect(hit?.entry.value == [1, 2, 3] && hit?.tierIndex == 2)
        // Promoted: the next lookup is answered by memory.
        #expect(await cache.lookup(shared)?.tierIndex == 0)

        let private_ = try CacheKey("memory-only")
        _ = await cache.store(CacheEntry(value: [4], storedAt: Date()), forKey: private_, policy: .allowedInMemoryOnly)
        #expect(try await otherMachine.entryReportingFailures(forKey: private_) == nil)
        let everywhere = try CacheKey("everywhere")
        let report = await cache.store(CacheEntry(value: [5], storedAt: Date()), forKey: everywhere, policy: .allowed)
        if case .stored = report.outcomes[2].outcome {
            #expect(try await otherMachine.entryReportingFailures(forKey: everywhere)?.value == [5])
        } else {
            Issue.record("Redis did not store it: \(report.outcomes[2].outcome)")
        }
        try await otherMachine.removeAll()
    }
}
