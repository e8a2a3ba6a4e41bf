import Foundation
import HTTPCaching
import HTTPTypes
import Synchronization
import Testing
import TierCache
import TierCacheLMDB
import TierCacheTesting

@testable import TierCacheRedis

/// Purging by tag across a fleet: two engines, each with memory and LMDB tiers of its own, share a
/// Redis tier, where the tags' purge records live. A purge through one reaches what the other
/// holds in its own tiers, within its recheck interval.
@Suite(.enabled(if: RedisServers.available, RedisServers.missingMessage), .timeLimit(.minutes(5)))
struct RedisTagPurgeTests {
    @Test func aPurgeThroughOneServerReachesAnothersOwnTiers() async throws {
        let endpoint = try #require(RedisServers.standalone)
        let clock = ManualCacheClock(start: Date())
        let prefix = "tags:\(UUID().uuidString):"
        let redis = try RedisTier(
            configuration: .init(deployment: .standalone(endpoint), keyPrefix: prefix, capacity: 64 << 20))
        var directories: [URL] = []
        defer { for directory in directories { try? FileManager.default.removeItem(at: directory) } }
        func server() throws -> HTTPCache {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tags-\(UUID().uuidString)")
            directories.append(directory)
            let tiers: [any CacheTier] = [
                try MemoryTier(capacity: 8 << 20), try LMDBTier(directory: directory, capacity: 64 << 20), redis,
            ]
            return HTTPCache(
                storage: TieredCache(tiers: tiers), configuration: .init(mode: .shared, clock: clock.cacheClock))
        }
        let (first, second) = (try server(), try server())
        let surrogateKey = try #require(HTTPField.Name("Surrogate-Key"))
        let version = Mutex(1)
        let origin: HTTPCache.Transport = { _, _ in
            let body = version.withLock { "v\($0)" }
            let fields: HTTPFields = [.cacheControl: "max-age=3600", surrogateKey: "product-7"]
            return (HTTPResponse(status: .ok, headerFields: fields), Data(body.utf8))
        }
        let page = HTTPRequest(method: .get, scheme: "https", authority: "shop.example.com", path: "/p/7")
        _ = try await first.response(for: page, transport: origin)
        let fromRedis = try await second.response(for: page, transport: origin)
        #expect(fromRedis.source == .cache && fromRedis.body == Data("v1".utf8), "the second server read Redis")
        #expect(try await second.response(for: page, transport: origin).source == .cache, "now in its memory tier")

        version.withLock { $0 = 2 }
        try await first.purge(tags: ["product-7"])
        clock.advance(by: 1)  // the second server's recheck interval
        let refetched = try await second.response(for: page, transport: origin)
        #expect(refetched.source == .network && refetched.body == Data("v2".utf8))
        #expect(second.statistics.purgedEntriesRemoved >= 1)
        let firstAgain = try await first.response(for: page, transport: origin)
        #expect(firstAgain.body == Data("v2".utf8), "the first server refetched or read the second's new copy")
        try await redis.removeAll()
    }
}
