import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import MetricsTestKit
import Testing
import TierCache
import TierCacheTesting

@testable import HTTPCaching

/// The primary key is built and checked once per request; a request whose key cannot be one
/// passes through uncached, counted in the statistics and the metrics and logged at `debug`.
@Suite("HTTPCache with invalid keys")
struct InvalidKeyTests {
    let clock = ManualCacheClock(start: epoch)

    func ok(_ fields: [(String, String)] = [("Cache-Control", "max-age=60")]) -> ScriptedOrigin.Reply {
        .respond(response(200, [("Date", HTTPDate.format(clock.now))] + fields), "hello")
    }

    @Test("An empty key from the key function: fetched every time, counted, logged once per request at debug")
    func emptyKey() async throws {
        let metrics = TestMetrics()
        let logs = InMemoryLogHandler()
        var logger = Logger(label: "test", factory: { _ in logs })
        logger.logLevel = .debug
        let memory = try MemoryTier(capacity: 1 << 20)
        let cache = HTTPCache(
            storage: TieredCache(tiers: [memory]),
            configuration: .init(key: { _ in "" }, clock: clock.cacheClock, logger: logger, metricsFactory: metrics))
        let origin = ScriptedOrigin([ok(), ok()])
        for _ in 0..<2 {
            #expect(try await cache.response(for: request(), transport: origin.transport).source == .network)
        }
        #expect(origin.received.count == 2)
        #expect(memory.usage().entries == 0)
        #expect(cache.statistics.invalidKeys == 2)
        #expect(try metrics.expectCounter("tiercache_http_invalid_keys_total").totalValue == 2)
        let lines = logs.entries.filter { $0.message.description.contains("cache key is invalid") }
        #expect(lines.count == 2 && lines.allSatisfy { $0.level == .debug })
    }

    @Test("A key function returning nil keeps the request out of the cache without counting it as invalid")
    func declinedKey() async throws {
        let cache = HTTPCache(
            storage: TieredCache(tiers: [try MemoryTier(capacity: 1 << 20)]),
            configuration: .init(key: { _ in nil }, clock: clock.cacheClock))
        let origin = ScriptedOrigin([ok()])
        #expect(try await cache.response(for: request(), transport: origin.transport).source == .network)
        #expect(cache.statistics.invalidKeys == 0)
    }

    @Test("A default key over the engine's limit is refused; one at the limit is used, variants and HEAD included")
    func limit() async throws {
        let memory = try MemoryTier(capacity: 8 << 20)
        let cache = HTTPCache(storage: TieredCache(tiers: [memory]), configuration: .init(clock: clock.cacheClock))
        let prefix = "GET https://example.com/"
        let atLimit =
            "https://example.com/"
            + String(repeating: "p", count: HTTPCache.maximumPrimaryKeyLength - prefix.utf8.count)
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60"), ("Vary", "Accept")])])
        let varied = request(atLimit, [("Accept", String(repeating: "a", count: 400))])
        #expect(try await cache.response(for: varied, transport: origin.transport).source == .network)
        #expect(try await cache.response(for: varied, transport: origin.transport).source == .cache)
        var head = varied
        head.method = .head
        #expect(try await cache.response(for: head, transport: origin.transport).source == .cache)
        #expect(cache.statistics.invalidKeys == 0)

        let over = request(atLimit + "p")
        origin.enqueue(ok())
        #expect(try await cache.response(for: over, transport: origin.transport).source == .network)
        #expect(cache.statistics.invalidKeys == 1)
    }
}
