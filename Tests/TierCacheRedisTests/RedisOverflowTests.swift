import Foundation
import NIOCore
import Testing
@_spi(TierCacheInternals) import TierCache

@testable import TierCacheRedis

/// Numbers that used to trap: expiries infinitely far, NaN or absurdly far away, timeouts and
/// waits of `Int64.max` seconds, and huge or negative counts from a broken server. Each test
/// crashed the process before the conversion was made saturating or the value rejected.
@Suite(.timeLimit(.minutes(5))) struct RedisOverflowTests {
    /// A tier on `server`.
    private func tier(
        _ server: MisbehavingServer, connectTimeout: Duration = .seconds(5), commandTimeout: Duration = .seconds(5)
    ) throws -> RedisTier {
        try RedisTier(
            configuration: .init(
                deployment: .standalone(RedisEndpoint(host: "127.0.0.1", port: server.port)), capacity: 1 << 20,
                connectTimeout: connectTimeout, commandTimeout: commandTimeout))
    }

    /// `text` as a RESP bulk string.
    private static func bulk(_ text: String) -> String { "$\(text.utf8.count)\r\n\(text)\r\n" }

    @Test("An expiry infinitely or absurdly far away, or NaN, means no TTL; others a TTL of at least 1 ms")
    func ttlIsSaturating() {
        let now = Date(timeIntervalSinceReferenceDate: 1_000)
        let ttl = { (seconds: Double) in
            RedisTier.ttlMilliseconds(until: Date(timeIntervalSinceReferenceDate: seconds), now: now)
        }
        #expect(ttl(.infinity) == nil)
        #expect(ttl(.nan) == nil)
        #expect(ttl(1e16) == nil)
        #expect(ttl(.greatestFiniteMagnitude) == nil)
        #expect(ttl(1_001.5) == 1_500)
        #expect(ttl(1_000.000_1) == 1)
        #expect(ttl(Date.distantFuture.timeIntervalSinceReferenceDate) != nil)
        // Not asked for (an expired entry is refused first), but no trap either.
        #expect(ttl(-.infinity) == 1)
    }

    @Test("Entries expiring at infinity or absurdly far away are stored without PX; at NaN, refused as expired")
    func farExpiriesAreStoredWithoutTTL() async throws {
        let sets = Locked<[[String]]>([])
        let server = try await MisbehavingServer(
            .scripted { command in
                if command.first == "SET" { sets.withLock { $0.append(command) } }
                return "+OK\r\n"
            })
        let tier = try tier(server)
        for (index, expiry) in [Double.infinity, 1e300].enumerated() {
            let entry = CacheEntry(
                value: [1], storedAt: Date(), expiresAt: Date(timeIntervalSinceReferenceDate: expiry))
            #expect(try await tier.store(entry, forKey: CacheKey("k\(index)")) == .stored)
        }
        // `Metadata.isExpired(at:)` calls a NaN expiry passed (`<=` is `!(now < expiry)`).
        let nan = CacheEntry(value: [1], storedAt: Date(), expiresAt: Date(timeIntervalSinceReferenceDate: .nan))
        #expect(try await tier.store(nan, forKey: CacheKey("nan")) == .refused(.alreadyExpired))
        let soon = CacheEntry(value: [1], storedAt: Date(), expiresAt: Date().addingTimeInterval(60))
        #expect(try await tier.store(soon, forKey: CacheKey("soon")) == .stored)
        let commands = sets.withLock { $0 }
        #expect(commands.map { $0.contains("PX") } == [false, false, true])
        try await server.shutdown()
    }

    @Test("Timeouts past NIO's Int64 nanoseconds saturate; a negative breakerOpenDuration is rejected")
    func timeoutsSaturate() async throws {
        #expect(RedisTier.timeAmount(.seconds(Int64.max)) == .nanoseconds(.max))
        #expect(
            RedisTier.timeAmount(
                Duration(secondsComponent: .max, attosecondsComponent: 999_999_999_999_999_999)) == .nanoseconds(.max))
        #expect(RedisTier.timeAmount(.nanoseconds(Int64.max) - .nanoseconds(1)) == .nanoseconds(Int64.max - 1))
        #expect(RedisTier.timeAmount(.milliseconds(1_500)) == .milliseconds(1_500))
        let server = try await MisbehavingServer(.scripted { _ in "$-1\r\n" })
        let tier = try tier(server, connectTimeout: .seconds(Int64.max), commandTimeout: .seconds(Int64.max))
        #expect(try await tier.entry(forKey: CacheKey("k")) == nil)
        #expect(tier.counterSnapshot.errors == 0)
        try await server.shutdown()
        #expect(throws: TierCacheError.self) {
            try RedisTier(
                configuration: .init(
                    deployment: .standalone(RedisEndpoint(host: "127.0.0.1", port: 1)), capacity: 1 << 20,
                    breakerOpenDuration: .seconds(-1)))
        }
    }

    @Test("STRLEN lengths near Int64.max from a broken server saturate the usage")
    func hugeLengthsSaturate() async throws {
        let server = try await MisbehavingServer(
            .scripted { command in
                switch command.first {
                case "SCAN": "*2\r\n$1\r\n0\r\n*2\r\n" + Self.bulk("tiercache:a") + Self.bulk("tiercache:b")
                case "STRLEN": ":9223372036854775807\r\n"
                default: "+OK\r\n"
                }
            })
        let usage = try await tier(server).usage()
        #expect(usage.bytes == Int.max && usage.entries == 2)
        try await server.shutdown()
    }

    /// A server with no keys whose `INFO stats` answers are `reports`, one each time.
    private static func serverReporting(_ answers: [String]) async throws -> MisbehavingServer {
        let reports = Locked(answers)
        return try await MisbehavingServer(
            .scripted { command in
                switch command.first {
                case "INFO": Self.bulk(reports.withLock { $0.isEmpty ? "" : $0.removeFirst() })
                case "SCAN": "*2\r\n$1\r\n0\r\n*0\r\n"
                default: "+OK\r\n"
                }
            })
    }

    @Test("evicted_keys that are negative, or sum past Int.max, are clamped")
    func hostileEvictionCounts() async throws {
        let server = try await Self.serverReporting([
            "evicted_keys:-9223372036854775808", "evicted_keys:5",
            "evicted_keys:9223372036854775807\r\nevicted_keys:9223372036854775807",
        ])
        let tier = try tier(server)
        #expect(await tier.statistics().evictions == 0)  // the baseline: a negative count is none
        #expect(await tier.statistics().evictions == 5)  // not 5 - Int.min
        #expect(await tier.statistics().evictions == Int.max)
        try await server.shutdown()
    }

    /// Beside a live connection the pool tried a new one on every command that found a free slot,
    /// with no backoff, and failed the command when the connect failed.
    @Test("A node that refuses new connections: commands go on the live one, and the pool waits to reconnect")
    func refusedConnectBesideALiveOne() async throws {
        let server = try await MisbehavingServer(.scripted { $0.first == "GET" ? "$-1\r\n" : "+OK\r\n" })
        let tier = try tier(server)
        let key = try CacheKey("k")
        #expect(try await tier.entry(forKey: key) == nil)
        // The listener closes; the connection it accepted stays. A second connection is refused.
        try await server.shutdown()
        for _ in 0..<5 { #expect(try await tier.entry(forKey: key) == nil) }
        #expect(tier.counterSnapshot.errors == 0, "a command failed for want of a second connection")
        #expect(!tier.isCircuitOpen)
    }

    /// Against one baseline, a restart's lower count hid every eviction after it until the new
    /// count passed the old one.
    @Test("Evictions after a server restart (its evicted_keys back near 0) are counted from 0")
    func evictionsAcrossARestart() async throws {
        let server = try await Self.serverReporting([
            "evicted_keys:100", "evicted_keys:150", "evicted_keys:20", "evicted_keys:30",
        ])
        let tier = try tier(server)
        #expect(await tier.statistics().evictions == 0)
        #expect(await tier.statistics().evictions == 50)
        #expect(await tier.statistics().evictions == 70, "restarted: its 20 are new")
        #expect(await tier.statistics().evictions == 80)
        try await server.shutdown()
    }

    /// Coherence over a tier on `port`.
    private func coherence(port: Int, _ configuration: RedisCoherence.Configuration) throws -> RedisCoherence {
        let redis = try RedisTier(
            configuration: .init(
                deployment: .standalone(RedisEndpoint(host: "127.0.0.1", port: port)), capacity: 1 << 20,
                connectTimeout: .milliseconds(500), commandTimeout: .milliseconds(200)))
        return try RedisCoherence(
            cache: TieredCache(tiers: [try MemoryTier(capacity: 1 << 20), redis]), configuration: configuration)
    }

    @Test("Coherence rejects a health check interval or reconnect delays that are not positive")
    func coherenceRejectsBadWaits() {
        for configuration in [
            RedisCoherence.Configuration(healthCheckInterval: .zero),
            .init(reconnectDelay: .milliseconds(-1)), .init(maximumReconnectDelay: .seconds(-1)),
            .init(reconnectDelay: .zero), .init(maximumReconnectDelay: .zero),
        ] {
            #expect(throws: TierCacheError.self) { try coherence(port: 1, configuration) }
        }
    }

    @Test("Health checks and reconnects Int64.max seconds apart wait (clamped) until cancelled, not trap")
    func hugeWaitsAreClamped() async throws {
        #expect(RedisCoherence.clampedWait(.seconds(Int64.max)) == RedisCoherence.longestWait)
        #expect(RedisCoherence.clampedWait(.seconds(1)) == .seconds(1))
        let forever = Duration.seconds(Int64.max)
        // Subscribed, so `run()` waits for its first health check.
        let server = try await MisbehavingServer(.pushAfterTracking(""))
        let events = CoherenceEvents()
        let subscribed = try coherence(
            port: server.port, .init(healthCheckInterval: forever, onEvent: events.record))
        let tracking = Task { await subscribed.run() }
        #expect(await events.next { if case .subscribed = $0 { true } else { false } } != nil)
        // Cancelled in its health check's wait, or before it: either way the wait's deadline is
        // computed first, which trapped for Int64.max seconds.
        tracking.cancel()
        await tracking.value
        try await server.shutdown()
        // Nothing listens, so `run()` waits to subscribe again.
        let lostEvents = CoherenceEvents()
        let lost = try coherence(
            port: server.port,
            .init(reconnectDelay: forever, maximumReconnectDelay: forever, onEvent: lostEvents.record))
        let retrying = Task { await lost.run() }
        #expect(await lostEvents.next { if case .trackingLost = $0 { true } else { false } } != nil)
        retrying.cancel()  // in the reconnect wait or before it, as above
        await retrying.value
    }
}
