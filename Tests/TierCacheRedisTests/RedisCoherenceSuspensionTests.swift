import Foundation
import Testing
import TierCache

@testable import TierCacheRedis

/// While coherence cannot receive invalidations, the tiers above Redis are skipped: a value
/// promoted or stored there then would be stale, without bound, once another process writes.
@Suite(
    .enabled(if: RedisProcess.cliPath != nil, "redis-server and redis-cli are not installed"), .timeLimit(.minutes(5)))
struct RedisCoherenceSuspensionTests {
    @Test("An ACL that allows commands but not CLIENT TRACKING: Redis answers, nothing is kept above it")
    func trackingRefusedSuspendsUpperTiers() async throws {
        // The user may read and write keys, but not run CLIENT (TRACKING, SETNAME, ID).
        let server = try await RedisProcess(arguments: ["--user", "app", "on", ">apppass", "~*", "+@all", "-client"])
        let endpoint = try RedisEndpoint(url: "redis://app:apppass@127.0.0.1:\(server.port)")
        func redis() throws -> RedisTier {
            try RedisTier(
                configuration: .init(
                    deployment: .standalone(endpoint), keyPrefix: "suspended:", capacity: 1 << 20,
                    commandTimeout: .seconds(5)))
        }
        let memory = try MemoryTier(capacity: 1 << 20)
        let cache = TieredCache(tiers: [memory, try redis()])
        let otherProcess = TieredCache(tiers: [try redis()])
        let events = CoherenceEvents()
        let coherence = try RedisCoherence(cache: cache, configuration: .init(onEvent: events.record))
        let tracking = Task { await coherence.run() }
        #expect(await events.next { if case .trackingLost = $0 { true } else { false } } != nil)
        #expect(cache.suspendedTiers == 1)

        let key = try CacheKey("k")
        let report = await cache.store(CacheEntry(value: [1], storedAt: Date()), forKey: key, policy: .allowed)
        guard case .refused(.suspended) = report.outcomes.first?.outcome, case .stored = report.outcomes.last?.outcome
        else {
            Issue.record("outcomes: \(report.outcomes)")
            return
        }
        #expect(await cache.lookup(key)?.tierIndex == 1, "read from Redis")
        #expect(memory.entry(forKey: key) == nil, "and not promoted")

        // Another process writes; no invalidation can come, and none is needed.
        _ = await otherProcess.store(CacheEntry(value: [2], storedAt: Date()), forKey: key, policy: .allowed)
        #expect(await cache.lookup(key)?.entry.value == [2])

        tracking.cancel()
        await tracking.value
        #expect(cache.suspendedTiers == 1, "still suspended once coherence stops")
        // Coherence stopping turns the data connections' tracking off: refused by the ACL, which
        // must not fail the reads behind it.
        #expect(await cache.lookup(key)?.tierIndex == 1)
        cache.resumeTiers()
        #expect(await cache.lookup(key)?.tierIndex == 1)
        #expect(memory.entry(forKey: key)?.value == [2], "resumed, the upper tier is used again")
    }

    /// Cancelled while subscribed, `run()` returned with the upper tiers in use and nothing to
    /// keep them coherent: its documentation says they stay suspended.
    @Test("Coherence cancelled while subscribed leaves the upper tiers suspended")
    func cancellationWhileSubscribedSuspends() async throws {
        let server = try await RedisProcess()
        let redis = try RedisTier(
            configuration: .init(
                deployment: .standalone(RedisEndpoint(host: "127.0.0.1", port: server.port)),
                keyPrefix: "cancelled:", capacity: 1 << 20))
        let cache = TieredCache(tiers: [try MemoryTier(capacity: 1 << 20), redis])
        let events = CoherenceEvents()
        let coherence = try RedisCoherence(cache: cache, configuration: .init(onEvent: events.record))
        let tracking = Task { await coherence.run() }
        #expect(await events.next { if case .subscribed = $0 { true } else { false } } != nil)
        #expect(cache.suspendedTiers == 0, "subscribed: in use")
        tracking.cancel()
        await tracking.value
        #expect(cache.suspendedTiers == 1)
    }
}
