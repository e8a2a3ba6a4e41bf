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

        // Another machine's cache stored this in Redis only.
        let shared = try CacheKey("shared")
        #expect(try await redis.store(CacheEntry(value: [1, 2, 3], storedAt: Date()), forKey: shared) == .stored)
        let hit = await cache.lookup(shared)
        #expect(hit?.entry.value == [1, 2, 3] && hit?.tierIndex == 2)
        // Promoted: the next lookup is answered by memory.
        #expect(await cache.lookup(shared)?.tierIndex == 0)

        let private_ = try CacheKey("memory-only")
        _ = await cache.store(CacheEntry(value: [4], storedAt: Date()), forKey: private_, policy: .allowedInMemoryOnly)
        #expect(try await redis.entry(forKey: private_) == nil)
        let everywhere = try CacheKey("everywhere")
        _ = await cache.store(CacheEntry(value: [5], storedAt: Date()), forKey: everywhere, policy: .allowed)
        #expect(try await redis.entry(forKey: everywhere)?.value == [5])
        try await redis.removeAll()
    }
}
