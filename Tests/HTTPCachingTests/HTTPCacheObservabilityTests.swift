import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import MetricsTestKit
import Testing
import TierCache
import TierCacheTesting

@testable import HTTPCaching

/// The engine's metrics count what its statistics count, under `MetricLabels`' `http…` names,
/// and an offline fallback is logged with how old the served response is.
@Suite("HTTPCache logging and metrics")
struct HTTPCacheObservabilityTests {
    let clock = ManualCacheClock(start: epoch)

    func ok(_ fields: [(String, String)]) -> ScriptedOrigin.Reply {
        .respond(response(200, [("Date", HTTPDate.format(clock.now))] + fields), "hello")
    }

    @Test("Misses, hits, revalidations, stores and not-storable reasons reach the metrics backend")
    func requestMetrics() async throws {
        let metrics = TestMetrics()
        let cache = HTTPCache(
            storage: TieredCache(tiers: [try MemoryTier(capacity: 1 << 20)], metricsFactory: metrics),
            configuration: .init(clock: clock.cacheClock, metricsFactory: metrics))
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")])])
        _ = try await cache.response(for: request(), transport: origin.transport)  // miss, stored
        _ = try await cache.response(for: request(), transport: origin.transport)  // hit
        clock.advance(by: 120)
        origin.enqueue(.respond(response(304, [("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")]), ""))
        _ = try await cache.response(for: request(), transport: origin.transport)  // not modified
        origin.enqueue(ok([("Cache-Control", "no-store")]))
        // A miss, not storable.
        _ = try await cache.response(for: request("https://example.com/b"), transport: origin.transport)

        func requests(_ result: String) throws -> Int64 {
            try metrics.expectCounter("tiercache_http_requests_total", [("result", result)]).totalValue
        }
        #expect(
            try requests("miss") == 2 && requests("hit") == 1 && requests("not_modified") == 1
                && requests("modified") == 0)
        // The first response, then its freshened copy after the 304.
        #expect(try metrics.expectCounter("tiercache_http_stores_total", [("outcome", "stored")]).totalValue == 2)
        #expect(
            try metrics.expectCounter(
                "tiercache_http_stores_total", [("outcome", "not_storable"), ("reason", "noStore")]
            ).totalValue == 1)
        let statistics = cache.statistics
        #expect(statistics.misses == 2 && statistics.hits == 1 && statistics.revalidatedNotModified == 1)
        #expect(statistics.stores == 2 && statistics.notStorable[.noStore] == 1, "the statistics count the same events")
    }

    @Test("An offline fallback is logged at notice with the response's age, and counted as stale served")
    func offlineFallbackIsLogged() async throws {
        let metrics = TestMetrics()
        let logs = InMemoryLogHandler()
        let cache = HTTPCache(
            storage: TieredCache(tiers: [try MemoryTier(capacity: 1 << 20)]),
            configuration: .init(
                clock: clock.cacheClock, logger: Logger(label: "test", factory: { _ in logs }), metricsFactory: metrics)
        )
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60")])])
        _ = try await cache.response(for: request(), transport: origin.transport)
        clock.advance(by: 3_600)
        origin.enqueue(.fail(.notConnectedToInternet))
        #expect(try await cache.response(for: request(), transport: origin.transport).source == .staleFallback)
        let line = try #require(logs.entries.first)
        #expect(line.level == .notice && line.metadata["age"] == "3600")
        #expect(line.metadata["url"] == "https://example.com/a")
        #expect(try metrics.expectCounter("tiercache_http_stale_served_total").totalValue == 1)
    }
}
