import Foundation
import MetricsTestKit
import Testing
@_spi(TierCacheInternals) import TierCache
import TierCacheLMDB

@testable import TierCacheRedis

/// Upper tiers kept coherent with Redis through `CLIENT TRACKING`: two caches over the same Redis
/// prefix stand for two processes of a fleet (the soak test runs real processes).
@Suite(.enabled(if: RedisServers.available, RedisServers.missingMessage), .timeLimit(.minutes(5)))
struct RedisCoherenceTests {
    @Test("A write or delete through one cache removes the key from the other's memory and disk tiers")
    func writesElsewhereInvalidate() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tiercache-coherence-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let prefix = "coherence:\(UUID().uuidString):"
        let memory = try MemoryTier(capacity: 1 << 20)
        let disk = try LMDBTier(directory: directory, configuration: .init(capacity: 16 << 20))
        let a = TieredCache(tiers: [memory, disk, try RedisServers.tier(cluster: false, prefix: prefix)])
        let b = TieredCache(tiers: [
            try MemoryTier(capacity: 1 << 20), try RedisServers.tier(cluster: false, prefix: prefix),
        ])
        let events = CoherenceEvents()
        let coherence = try RedisCoherence(cache: a, configuration: .init(onEvent: events.record))
        let tracking = Task { await coherence.run() }
        defer { tracking.cancel() }
        #expect(await events.next { if case .flushed(reason: "tracking began") = $0 { true } else { false } } != nil)

        let key = try CacheKey("k")
        _ = await b.store(CacheEntry(value: [1], storedAt: Date()), forKey: key, policy: .allowed)
        #expect(await events.invalidation(of: key))
        #expect(await a.lookup(key)?.tierIndex == 2)  // read from Redis, promoted
        #expect(memory.entry(forKey: key)?.value == [1])
        #expect(try disk.entry(forKey: key)?.value == [1])

        _ = await b.store(CacheEntry(value: [2], storedAt: Date()), forKey: key, policy: .allowed)
        #expect(await events.invalidation(of: key))
        #expect(memory.entry(forKey: key) == nil)
        #expect(try disk.entry(forKey: key) == nil)
        #expect(await a.lookup(key)?.entry.value == [2])

        try await b.removeEntry(forKey: key)
        #expect(await events.invalidation(of: key))
        #expect(await a.lookup(key) == nil)
        #expect(coherence.statistics.invalidatedKeys >= 3 && coherence.statistics.malformedPushes == 0)
        try await b.removeAll()
    }

    @Test("The README's example: a write through the coherent cache reaches Redis and is read back")
    func readmeExample() async throws {
        let endpoint = try #require(RedisServers.standalone)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tiercache-coherence-readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let prefix = "coherence:\(UUID().uuidString):"
        let key = try CacheKey("user:42")

        // README:begin coherence
        let cache = TieredCache(tiers: [
            try MemoryTier(capacity: 64 << 20),
            try LMDBTier(directory: directory, configuration: .init(capacity: 1 << 30)),
            try RedisTier(
                configuration: .init(deployment: .standalone(endpoint), keyPrefix: prefix, capacity: 4 << 30)),
        ])
        let coherence = try RedisCoherence(cache: cache)  // upper tiers emptied when tracking is lost
        let tracking = Task { await coherence.run() }  // for as long as the cache serves
        _ = await cache.store(CacheEntry(value: Array("Ada".utf8), storedAt: Date()), forKey: key, policy: .allowed)
        // README:end

        #expect(await cache.lookup(key)?.entry.value == Array("Ada".utf8))
        tracking.cancel()
        await tracking.value
        try await cache.removeAll()
    }

    @Test("A killed tracking connection flushes the upper tiers, and tracking comes back")
    func lostConnectionFlushes() async throws {
        let prefix = "coherence:\(UUID().uuidString):"
        let memory = try MemoryTier(capacity: 1 << 20)
        // The test expects exactly one tracking loss, the one it causes by killing the connection:
        // health checks are rare and their timeout long, so a slow one on a loaded machine is not a
        // second.
        let redis = try RedisServers.tier(cluster: false, prefix: prefix) { $0.commandTimeout = .seconds(5) }
        let a = TieredCache(tiers: [memory, redis])
        let b = TieredCache(tiers: [try RedisServers.tier(cluster: false, prefix: prefix)])
        let events = CoherenceEvents()
        let metrics = TestMetrics()
        let coherence = try RedisCoherence(
            cache: a,
            configuration: .init(healthCheckInterval: .seconds(60), metricsFactory: metrics, onEvent: events.record))
        let tracking = Task { await coherence.run() }
        defer { tracking.cancel() }
        #expect(await events.next { if case .flushed(reason: "tracking began") = $0 { true } else { false } } != nil)

        let local = try CacheKey("memory-only")
        _ = await a.store(CacheEntry(value: [1], storedAt: Date()), forKey: local, policy: .allowedInMemoryOnly)
        let id = try #require(coherence.trackingConnectionIDs.first)
        _ = try await redis.client.send(["CLIENT", "KILL", "ID", String(id)].map { Array($0.utf8) }, key: nil)
        #expect(await events.next { if case .trackingLost = $0 { true } else { false } } != nil)
        #expect(await events.next { if case .flushed(reason: "tracking began") = $0 { true } else { false } } != nil)
        #expect(memory.entry(forKey: local) == nil)
        #expect(coherence.statistics.trackingLosses == 1)

        // Tracking works again.
        let key = try CacheKey("k")
        _ = await b.store(CacheEntry(value: [1], storedAt: Date()), forKey: key, policy: .allowed)
        #expect(await events.invalidation(of: key))

        // The same, in the metrics.
        func flushes(_ cause: String) throws -> Int64 {
            try metrics.expectCounter("tiercache_coherence_flushes_total", [("cause", cause)]).totalValue
        }
        #expect(try flushes("tracking_began") == 2 && flushes("tracking_lost") == 1)
        #expect(try metrics.expectCounter("tiercache_coherence_tracking_losses_total").totalValue == 1)
        #expect(try metrics.expectCounter("tiercache_coherence_invalidated_keys_total").totalValue >= 1)
        try await b.removeAll()
    }

    @Test("With keepUpperTiers a loss flushes nothing")
    func keepUpperTiers() async throws {
        let prefix = "coherence:\(UUID().uuidString):"
        let memory = try MemoryTier(capacity: 1 << 20)
        let redis = try RedisServers.tier(cluster: false, prefix: prefix)
        let a = TieredCache(tiers: [memory, redis])
        let events = CoherenceEvents()
        let coherence = try RedisCoherence(
            cache: a, configuration: .init(afterLoss: .keepUpperTiers, onEvent: events.record))
        let tracking = Task { await coherence.run() }
        defer { tracking.cancel() }
        #expect(await events.next { if case .subscribed = $0 { true } else { false } } != nil)
        let local = try CacheKey("memory-only")
        _ = await a.store(CacheEntry(value: [1], storedAt: Date()), forKey: local, policy: .allowedInMemoryOnly)
        let id = try #require(coherence.trackingConnectionIDs.first)
        _ = try await redis.client.send(["CLIENT", "KILL", "ID", String(id)].map { Array($0.utf8) }, key: nil)
        #expect(await events.next { if case .subscribed = $0 { true } else { false } } != nil)
        #expect(memory.entry(forKey: local)?.value == [1])
        #expect(coherence.statistics.flushes == 0)
    }

    @Test("Every primary of a cluster is tracked: writes in every slot range invalidate")
    func clusterTracking() async throws {
        let prefix = "coherence:\(UUID().uuidString):"
        let memory = try MemoryTier(capacity: 1 << 20)
        let a = TieredCache(tiers: [memory, try RedisServers.tier(cluster: true, prefix: prefix)])
        let b = TieredCache(tiers: [try RedisServers.tier(cluster: true, prefix: prefix)])
        let events = CoherenceEvents()
        let coherence = try RedisCoherence(cache: a, configuration: .init(onEvent: events.record))
        let tracking = Task { await coherence.run() }
        defer { tracking.cancel() }
        // The flush, then the subscription's event, once the upper tiers are in use again.
        #expect(await events.next { if case .flushed(reason: "tracking began") = $0 { true } else { false } } != nil)
        let subscribed = await events.next { if case .subscribed = $0 { true } else { false } }
        guard case .subscribed(let nodes)? = subscribed else {
            Issue.record("never subscribed")
            return
        }
        #expect(nodes.count == 3)

        // Keys on every primary (30 keys spread over the 16,384 slots).
        let keys = try (0..<30).map { try CacheKey("key-\($0)") }
        for key in keys { _ = await a.store(CacheEntry(value: [1], storedAt: Date()), forKey: key, policy: .allowed) }
        #expect(await events.invalidations(of: Set(keys)))  // a's own writes
        for key in keys { _ = await a.lookup(key) }  // promoted again
        #expect(keys.allSatisfy { memory.entry(forKey: $0) != nil })
        for key in keys { _ = await b.store(CacheEntry(value: [2], storedAt: Date()), forKey: key, policy: .allowed) }
        #expect(await events.invalidations(of: Set(keys)))
        #expect(keys.allSatisfy { memory.entry(forKey: $0) == nil })
        try await b.removeAll()
    }

    @Test("A cache whose lowest tier is not Redis is refused")
    func needsRedisAtTheBottom() throws {
        #expect(throws: TierCacheError.self) {
            try RedisCoherence(cache: TieredCache(tiers: [try MemoryTier(capacity: 1 << 20)]))
        }
    }
}

/// The failures a real Redis cannot be made to produce, from a server that speaks broken RESP.
@Suite(.timeLimit(.minutes(5)))
struct RedisCoherenceFailureTests {
    private func coherence(
        port: Int, events: CoherenceEvents, afterLoss: RedisCoherence.Configuration.AfterLoss = .flushUpperTiers
    ) throws -> (RedisCoherence, MemoryTier) {
        let memory = try MemoryTier(capacity: 1 << 20)
        let redis = try RedisTier(
            configuration: .init(
                deployment: .standalone(RedisEndpoint(host: "127.0.0.1", port: port)), capacity: 1 << 20,
                connectTimeout: .milliseconds(500), commandTimeout: .milliseconds(200)))
        let coherence = try RedisCoherence(
            cache: TieredCache(tiers: [memory, redis]),
            configuration: .init(afterLoss: afterLoss, healthCheckInterval: .seconds(60), onEvent: events.record))
        return (coherence, memory)
    }

    @Test(
        "A malformed push, a push of an unknown kind, and a key of another program are counted and flush",
        arguments: [
            (">1\r\n$10\r\ninvalidate\r\n", true),  // no argument
            (">2\r\n$10\r\ninvalidate\r\n*1\r\n:5\r\n", true),  // a key that is not a string
            (">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nm\r\n", true),  // pub/sub, not tracking
            (">2\r\n$10\r\ninvalidate\r\n*1\r\n$5\r\nother\r\n", false),  // not under the prefix
            (">2\r\n$10\r\ninvalidate\r\n_\r\n", false),  // FLUSHALL
        ])
    func badPushesFlush(push: String, isMalformed: Bool) async throws {
        let server = try await MisbehavingServer(.pushAfterTracking(push))
        let events = CoherenceEvents()
        // Kept at subscription: the only flush is the push's.
        let (coherence, memory) = try coherence(port: server.port, events: events, afterLoss: .keepUpperTiers)
        let local = try CacheKey("memory-only")
        _ = memory.store(CacheEntry(value: [1], storedAt: Date()), forKey: local)
        let tracking = Task { await coherence.run() }
        defer { tracking.cancel() }
        #expect(await events.next { if case .flushed = $0 { true } else { false } } != nil)
        #expect(memory.entry(forKey: local) == nil)
        #expect(coherence.statistics.malformedPushes == (isMalformed ? 1 : 0))
        tracking.cancel()
        try await server.shutdown()
    }

    @Test(
        "A tracking connection that never answers is a counted loss; the upper tiers are flushed once, not at every retry"
    )
    func silentServer() async throws {
        let server = try await MisbehavingServer(.silent)
        let events = CoherenceEvents()
        let (coherence, _) = try coherence(port: server.port, events: events)
        let tracking = Task { await coherence.run() }
        defer { tracking.cancel() }
        #expect(await events.next { if case .trackingLost = $0 { true } else { false } } != nil)
        #expect(await events.next { if case .flushed = $0 { true } else { false } } != nil)
        for _ in 0..<2 { #expect(await events.next { if case .trackingLost = $0 { true } else { false } } != nil) }
        #expect(coherence.statistics.trackingLosses >= 3 && coherence.statistics.flushes == 1)
        tracking.cancel()
        try await server.shutdown()
    }
}

@Suite struct TrackingMessageTests {
    let prefix = Array("p:".utf8)

    @Test("Invalidations map keys back to the tier's cache keys; a flush is null")
    func decodes() throws {
        let push = RESPValue.push([.bulkString(Array("invalidate".utf8)), .array([.bulkString(Array("p:a".utf8))])])
        #expect(TrackingMessage.decode(push, prefix: prefix) == .success(.invalidate([try CacheKey("a")])))
        let flush = RESPValue.push([.bulkString(Array("invalidate".utf8)), .null])
        #expect(
            TrackingMessage.decode(flush, prefix: prefix) == .success(.invalidateAll(.serverFlushed)))
    }

    @Test("Keys that cannot be the tier's invalidate everything; other shapes are malformed")
    func refuses() {
        let foreign = RESPValue.push([.bulkString(Array("invalidate".utf8)), .array([.bulkString([0xFF, 0xFE])])])
        #expect(
            TrackingMessage.decode(foreign, prefix: prefix)
                == .success(.invalidateAll(.foreignKey)))
        let invalidUTF8 = RESPValue.push([
            .bulkString(Array("invalidate".utf8)), .array([.bulkString(Array("p:".utf8) + [0xFF])]),
        ])
        #expect(
            TrackingMessage.decode(invalidUTF8, prefix: prefix)
                == .success(.invalidateAll(.foreignKey)))
        #expect(TrackingMessage.decode(.array([]), prefix: prefix) == .failure(.shape("a push without a kind")))
        #expect(
            TrackingMessage.decode(.push([.bulkString(Array("message".utf8))]), prefix: prefix)
                == .failure(.unknownKind("message")))
        #expect(
            TrackingMessage.decode(.push([.bulkString(Array("invalidate".utf8)), .integer(1)]), prefix: prefix)
                == .failure(.shape("invalidate with an argument that is neither keys nor null")))
    }
}

/// The events a coherence reports, awaited in order by a test.
final class CoherenceEvents: Sendable {
    private let stream: AsyncStream<RedisCoherence.Event>
    private let continuation: AsyncStream<RedisCoherence.Event>.Continuation

    init() { (stream, continuation) = AsyncStream.makeStream() }

    var record: @Sendable (RedisCoherence.Event) -> Void { { [continuation] in continuation.yield($0) } }

    /// The next event that `matches`, skipping the others; `nil` if none comes within a minute
    /// (a bound for a failing test, not a wait for an event: events end the wait; a loaded machine
    /// may take many seconds to deliver one).
    func next(_ matches: @escaping @Sendable (RedisCoherence.Event) -> Bool) async -> RedisCoherence.Event? {
        let stream = self.stream
        return await withTaskGroup(of: RedisCoherence.Event?.self) { group in
            group.addTask {
                for await event in stream where matches(event) { return event }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(60))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Waits for an invalidation naming `key`.
    func invalidation(of key: CacheKey) async -> Bool {
        await invalidations(of: [key])
    }

    /// Waits until invalidations have named every key of `keys`, in any order.
    func invalidations(of keys: Set<CacheKey>) async -> Bool {
        let missing = Locked(keys)
        return await next { event in
            missing.withLock { missing in
                if case .invalidated(let named) = event { missing.subtract(named) }
                return missing.isEmpty
            }
        } != nil
    }
}
