import Foundation
import InMemoryLogging
import Logging
import MetricsTestKit
import NIOPosix
import Testing
import TierCache

@testable import TierCacheRedis

/// Redis failing in the ways production sees: garbage, broken connections, silence, a dead port.
/// (The suites that talk to servers have time limits: a hang is a failure, not a stuck CI. The
/// limits are 5 minutes, not 1: in a full parallel run on 2 cores the CPU-bound simulation tests
/// keep loopback tests waiting for a core for over a minute, and in one full run of three all the
/// 1-minute Redis suites timed out that way, with nothing hung.)
@Suite(.timeLimit(.minutes(5))) struct RedisFailureTests {
    private func tier(
        port: Int, mode: RedisTier.Configuration.FailureMode = .degrade, threshold: Int = 5
    ) throws -> RedisTier {
        try RedisTier(
            configuration: .init(
                deployment: .standalone(RedisEndpoint(host: "127.0.0.1", port: port)), capacity: 1 << 20,
                connectTimeout: .milliseconds(500), commandTimeout: .milliseconds(200), failureMode: mode,
                breakerThreshold: threshold, breakerOpenDuration: .seconds(60)))
    }

    @Test(arguments: [MisbehavingServer.Behaviour.garbage, .closeMidReply, .silent])
    func brokenServersAreMissesNotCrashes(_ behaviour: MisbehavingServer.Behaviour) async throws {
        let server = try await MisbehavingServer(behaviour)
        let tier = try tier(port: server.port)
        let key = try CacheKey("k")
        #expect(try await tier.entry(forKey: key) == nil)
        await #expect(throws: TierCacheError.self) {
            try await tier.store(CacheEntry(value: [1], storedAt: Date()), forKey: key)
        }
        // The lookup's failure, answered by a miss, is the tier's to count; the store's, thrown,
        // is its caller's (a TieredCache counts it).
        let statistics = tier.counterSnapshot
        #expect(statistics.errors == 1 && statistics.misses == 1)
        let strict = try self.tier(port: server.port, mode: .throwErrors)
        await #expect(throws: TierCacheError.self) { try await strict.entry(forKey: key) }
        // Asked to report failures, the degrading tier throws too (HTTPCache's tag records), and
        // counts the error as its failed lookups do.
        await #expect(throws: TierCacheError.self) { try await tier.entryReportingFailures(forKey: key) }
        #expect(tier.counterSnapshot.errors == 2 && tier.counterSnapshot.misses == 2)
        try await server.shutdown()
    }

    @Test(
        "Through a TieredCache, each failure is one error, in the statistics and the metric, whichever counts it",
        arguments: [RedisTier.Configuration.FailureMode.degrade, .throwErrors])
    func failuresAreCountedOnce(_ mode: RedisTier.Configuration.FailureMode) async throws {
        let server = try await MisbehavingServer(.garbage)
        let metrics = TestMetrics()
        let tier = try RedisTier(
            configuration: .init(
                deployment: .standalone(RedisEndpoint(host: "127.0.0.1", port: server.port)), capacity: 1 << 20,
                connectTimeout: .milliseconds(500), commandTimeout: .milliseconds(200), failureMode: mode,
                breakerThreshold: 100, metricsFactory: metrics),
            name: "shared")
        let cache = TieredCache(tiers: [tier], metricsFactory: metrics)
        let key = try CacheKey("k")
        for _ in 0..<3 { #expect(await cache.lookup(key) == nil) }
        #expect(await cache.statistics()[0].statistics.errors == 3)
        #expect(try metrics.expectCounter("tiercache_tier_errors_total", [("tier", "shared")]).totalValue == 3)
        try await server.shutdown()
    }

    /// One timeout closes the connection and fails every command pipelined on it, and each of
    /// their callers discards the connection; each counted the failure, so one slow reply under
    /// load opened the breaker ("consecutive failures" of the node), and the node's keys were
    /// misses for its open duration. (Driven through the pool's discards: commands made to share
    /// one connection by timing were not always pipelined on it in a loaded full run.)
    @Test("One connection's failure counts once against the breaker, however many commands it failed")
    func oneConnectionFailureCountsOnce() async throws {
        let server = try await MisbehavingServer(.silent)
        let pool = RedisConnectionPool(
            endpoint: RedisEndpoint(host: "127.0.0.1", port: server.port), group: MultiThreadedEventLoopGroup.singleton,
            options: .init(
                size: 1, connectTimeout: .seconds(5), commandTimeout: .milliseconds(200),
                breaker: .init(failureThreshold: 3, openDuration: .seconds(60)), tls: nil, tracking: nil))
        let connection = try await pool.connection()
        for _ in 0..<8 { pool.discard(connection) }
        #expect(!pool.isCircuitOpen)
        // Three connections failing are three failures.
        for _ in 0..<2 { pool.discard(try await pool.connection()) }
        #expect(pool.isCircuitOpen)
        pool.close()
        try await server.shutdown()
    }

    /// A hung server (stalled, stopped) still accepts connections. A connect counted as the
    /// node's success reset the count before each timeout: the breaker of a node that never
    /// answers never opened, and every command waited its whole timeout.
    @Test("A server that accepts connections and never answers opens the breaker")
    func silentServerOpensTheBreaker() async throws {
        let server = try await MisbehavingServer(.silent)
        let tier = try tier(port: server.port, threshold: 3)
        let key = try CacheKey("k")
        // One at a time: each times out on a connection of its own.
        for _ in 0..<3 { #expect(try await tier.entry(forKey: key) == nil) }
        #expect(tier.isCircuitOpen)
        try await server.shutdown()
    }

    @Test func aClosedPortIsAMissAndTheBreakerOpens() async throws {
        let server = try await MisbehavingServer(.silent)
        let port = server.port
        try await server.shutdown()  // nothing listens there now
        let tier = try tier(port: port, threshold: 3)
        let key = try CacheKey("k")
        for _ in 0..<3 { #expect(try await tier.entry(forKey: key) == nil) }
        #expect(tier.isCircuitOpen)
        // While open, nothing is tried: still a miss, counted as an error.
        #expect(try await tier.entry(forKey: key) == nil)
        #expect(tier.counterSnapshot.errors == 4)
    }

    @Test("Redis going away is logged once at warning, then at debug, and counted as errors")
    func failuresAreLoggedOnce() async throws {
        let server = try await MisbehavingServer(.silent)
        let port = server.port
        try await server.shutdown()  // nothing listens there now
        let logs = InMemoryLogHandler()
        var logger = Logger(label: "test", factory: { _ in logs })
        logger.logLevel = .debug
        let metrics = TestMetrics()
        let tier = try RedisTier(
            configuration: .init(
                deployment: .standalone(RedisEndpoint(host: "127.0.0.1", port: port)), capacity: 1 << 20,
                connectTimeout: .milliseconds(500), commandTimeout: .milliseconds(200), logger: logger,
                metricsFactory: metrics),
            name: "shared")
        let key = try CacheKey("k")
        for _ in 0..<3 { #expect(try await tier.entry(forKey: key) == nil) }
        #expect(logs.entries.map(\.level) == [.warning, .debug, .debug])
        #expect(logs.entries.first?.metadata["tier"] == "shared")
        #expect(try metrics.expectCounter("tiercache_tier_errors_total", [("tier", "shared")]).totalValue == 3)
        #expect(
            try metrics.expectCounter("tiercache_tier_lookups_total", [("tier", "shared"), ("result", "miss")])
                .totalValue == 3)
    }

    @Test func invalidConfigurationsAreRejected() {
        let endpoint = RedisEndpoint(host: "127.0.0.1", port: 1)
        #expect(throws: TierCacheError.self) {
            try RedisTier(configuration: .init(deployment: .standalone(endpoint), capacity: 0))
        }
        #expect(throws: TierCacheError.self) {
            try RedisTier(configuration: .init(deployment: .cluster(seeds: []), capacity: 1 << 20))
        }
        #expect(throws: TierCacheError.self) {
            try RedisTier(
                configuration: .init(deployment: .standalone(endpoint), capacity: 1 << 20, commandTimeout: .zero))
        }
        #expect(throws: TierCacheError.self) {
            try RedisTier(
                configuration: .init(deployment: .standalone(endpoint), capacity: 1 << 20, maxEntryFraction: 2))
        }
    }
}
