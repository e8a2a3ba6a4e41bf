import CoreMetrics
import Foundation
import InMemoryLogging
import Logging
import MetricsTestKit
import Synchronization
import Testing
import TierCache
import TierCacheTesting

/// Logging and metrics (swift-log, swift-metrics): every event a tier counts reaches the metrics
/// backend under the documented names, a failing tier is logged once per change, and nothing is
/// recorded when the process installed no backend.
@Suite("Logging and metrics")
struct ObservabilityTests {
    private func entry(_ size: Int, expiresAt: Date? = nil) -> CacheEntry {
        CacheEntry(value: Data(repeating: 7, count: size), storedAt: Date(), expiresAt: expiresAt)
    }

    private func logger(_ handler: InMemoryLogHandler) -> Logger {
        var logger = Logger(label: "test", factory: { _ in handler })
        logger.logLevel = .debug
        return logger
    }

    @Test("A memory tier's events reach the metrics backend under MetricLabels' names, with its name as `tier`")
    func memoryTierMetrics() throws {
        let metrics = TestMetrics()
        // 1,000 bytes, entries up to half of it. Each entry costs value + key + 64 bytes.
        let tier = try MemoryTier(.init(capacity: 1_000, maxEntryFraction: 0.5, name: "ram", metricsFactory: metrics))
        for name in ["a", "b", "c"] { _ = tier.store(entry(300), forKey: try CacheKey(name)) }  // 365 each: c evicts a
        _ = tier.store(entry(600), forKey: try CacheKey("big"))  // 665 > 500: too large
        _ = tier.store(entry(10, expiresAt: Date(timeIntervalSinceNow: -1)), forKey: try CacheKey("old"))
        #expect(tier.entry(forKey: try CacheKey("c")) != nil)
        #expect(tier.entry(forKey: try CacheKey("a")) == nil)

        let ram = [("tier", "ram")]
        #expect(try metrics.expectCounter("tiercache_tier_stores_total", ram + [("outcome", "stored")]).totalValue == 3)
        #expect(
            try metrics.expectCounter("tiercache_tier_stores_total", ram + [("outcome", "too_large")]).totalValue == 1)
        #expect(
            try metrics.expectCounter("tiercache_tier_stores_total", ram + [("outcome", "expired")]).totalValue == 1)
        #expect(try metrics.expectCounter("tiercache_tier_evictions_total", ram).totalValue == 1)
        #expect(try metrics.expectCounter("tiercache_tier_lookups_total", ram + [("result", "hit")]).totalValue == 1)
        #expect(try metrics.expectCounter("tiercache_tier_lookups_total", ram + [("result", "miss")]).totalValue == 1)
        #expect(try metrics.expectTimer("tiercache_tier_lookup_duration_seconds", ram).values.count == 2)
        #expect(try metrics.expectGauge("tiercache_tier_bytes", ram).lastValue == 730, "b and c, 365 bytes each")
        #expect(try metrics.expectGauge("tiercache_tier_entries", ram).lastValue == 2)
        tier.removeAll()
        #expect(try metrics.expectGauge("tiercache_tier_bytes", ram).lastValue == 0)

        let statistics = tier.statistics()
        #expect(statistics.stores == 3 && statistics.refusedTooLarge == 1 && statistics.refusedExpired == 1)
        #expect(
            statistics.evictions == 1 && statistics.hits == 1 && statistics.misses == 1,
            "statistics count the same events")
    }

    @Test("An entry a lookup finds expired is counted and leaves the usage gauges")
    func expiryOnLookupUpdatesTheGauges() throws {
        let metrics = TestMetrics()
        let clock = ManualCacheClock()
        let tier = try MemoryTier(
            .init(capacity: 1_000, maxEntryFraction: 0.5, name: "ram", clock: clock.cacheClock, metricsFactory: metrics)
        )
        _ = tier.store(entry(100, expiresAt: clock.now.addingTimeInterval(60)), forKey: try CacheKey("k"))
        let ram = [("tier", "ram")]
        #expect(try metrics.expectGauge("tiercache_tier_entries", ram).lastValue == 1)
        clock.advance(by: 61)
        #expect(tier.entry(forKey: try CacheKey("k")) == nil)
        #expect(try metrics.expectCounter("tiercache_tier_expirations_total", ram).totalValue == 1)
        #expect(try metrics.expectGauge("tiercache_tier_entries", ram).lastValue == 0)
        #expect(try metrics.expectGauge("tiercache_tier_bytes", ram).lastValue == 0)
    }

    @Test("Counters record nothing without a name, with the no-op factory, or when no backend was bootstrapped")
    func nothingRecordedWithoutBackend() {
        #expect(!TierCounters().isRecordingMetrics)
        #expect(!TierCounters(tierName: "x", metricsFactory: NOOPMetricsHandler.instance).isRecordingMetrics)
        // This test process never calls MetricsSystem.bootstrap, so the system factory is the no-op one.
        #expect(!TierCounters(tierName: "x").isRecordingMetrics)
        #expect(TierCounters(tierName: "x", metricsFactory: TestMetrics()).isRecordingMetrics)
    }

    @Test("A user's tier on TierCounters(tierName:) records like the shipped ones")
    func customTierRecords() throws {
        let metrics = TestMetrics()
        let counters = TierCounters(tierName: "mine", metricsFactory: metrics)
        counters.recordLookup(hit: true, timing: counters.startLookup())
        counters.record(.refused(.outOfSpace(detail: "full")))
        counters.record(.refused(.policy(.notAllowed)))  // decided by the tiered cache: not the tier's to count
        counters.recordEvictions(0)
        counters.recordExpiration()
        counters.recordCorruptionRemoved()
        counters.recordError()
        counters.recordStoreReset()
        let mine = [("tier", "mine")]
        #expect(try metrics.expectCounter("tiercache_tier_lookups_total", mine + [("result", "hit")]).totalValue == 1)
        #expect(
            try metrics.expectCounter("tiercache_tier_stores_total", mine + [("outcome", "out_of_space")]).totalValue
                == 1)
        #expect(
            metrics.counterTotal(label: "tiercache_tier_stores_total") == 1, "no policy refusal counted by the tier")
        #expect(try metrics.expectCounter("tiercache_tier_evictions_total", mine).totalValue == 0)
        for label in ["expirations", "corruptions_removed", "errors", "store_resets"] {
            #expect(try metrics.expectCounter("tiercache_tier_\(label)_total", mine).totalValue == 1, "\(label)")
        }
        let snapshot = counters.snapshot(usage: nil)
        #expect(snapshot.refusedOutOfSpace == 1 && snapshot.expirations == 1 && snapshot.corruptionsRemoved == 1)
        #expect(snapshot.errors == 1 && snapshot.storeResets == 1 && snapshot.hits == 1)
    }

    @Test("A tiered cache logs a failing tier once when it breaks and once when it recovers, and counts it")
    func failingTierIsLoggedOncePerChange() async throws {
        let metrics = TestMetrics()
        let logs = InMemoryLogHandler()
        let memory = try MemoryTier(.init(capacity: 1 << 20, metricsFactory: metrics))
        let flaky = FlakyTier()
        let cache = TieredCache(tiers: [memory, flaky], logger: logger(logs), metricsFactory: metrics)
        let key = try CacheKey("k")

        flaky.isBroken.store(true, ordering: .relaxed)
        for _ in 0..<3 { #expect(await cache.lookup(key) == nil) }
        #expect(logs.entries.map(\.level) == [.warning, .debug, .debug])
        #expect(logs.entries.first?.metadata["tier"] == "flaky")
        #expect(try metrics.expectCounter("tiercache_tier_errors_total", [("tier", "flaky")]).totalValue == 3)

        flaky.isBroken.store(false, ordering: .relaxed)
        for _ in 0..<2 { #expect(await cache.lookup(key) == nil) }
        #expect(logs.entries.map(\.level) == [.warning, .debug, .debug, .notice], "one recovery line, then quiet")

        // Memory-only: the remote tier's refusal is the cache's decision, counted under its name.
        await cache.store(entry(10), forKey: key, policy: .allowedInMemoryOnly)
        #expect(
            try metrics.expectCounter("tiercache_tier_stores_total", [("tier", "flaky"), ("outcome", "policy")])
                .totalValue == 1)
        #expect(await cache.lookup(key) != nil)
        #expect(cache.localEntry(forKey: key) != nil)
        #expect(try metrics.expectCounter("tiercache_lookups_total", [("result", "miss")]).totalValue == 5)
        #expect(try metrics.expectCounter("tiercache_lookups_total", [("result", "hit")]).totalValue == 2)
        #expect(try metrics.expectTimer("tiercache_lookup_duration_seconds").values.count == 7)
        let statistics = await cache.statistics()
        #expect(statistics[1].statistics.errors == 3 && statistics[1].statistics.refusedByPolicy == 1)

        // A suspended tier's refusal is the cache's decision too.
        cache.suspendTiers(above: 1)
        await cache.store(entry(11), forKey: key, policy: .allowed)
        #expect(
            try metrics.expectCounter(
                "tiercache_tier_stores_total", [("tier", memory.name), ("outcome", "suspended")]
            ).totalValue == 1)
    }

    /// A tier that answers its failures with a miss (Redis's degrade mode) while its writes
    /// throw: each miss between two failed writes was logged as a recovery, each write as a new
    /// failure at warning, the flood the streak exists to prevent.
    @Test("A tier whose lookups answer failures as misses recovers when a write succeeds, not at each miss")
    func degradedLookupsDoNotEndAFailure() async throws {
        let logs = InMemoryLogHandler()
        let flaky = FlakyTier()
        flaky.missesWhileBroken.store(true, ordering: .relaxed)
        let cache = TieredCache(tiers: [flaky], logger: logger(logs))
        let key = try CacheKey("k")
        flaky.isBroken.store(true, ordering: .relaxed)
        for _ in 0..<3 {
            await cache.store(entry(1), forKey: key, policy: .allowed)
            #expect(await cache.lookup(key) == nil)
        }
        #expect(logs.entries.map(\.level) == [.warning, .debug, .debug])
        flaky.isBroken.store(false, ordering: .relaxed)
        await cache.store(entry(1), forKey: key, policy: .allowed)
        #expect(logs.entries.map(\.level) == [.warning, .debug, .debug, .notice])
    }

    /// On a full disk a tier refuses stores as out of space, and its removals (after a write it
    /// may not keep, by policy) fail: each refusal was a success that logged a recovery between
    /// two failures.
    @Test("A tier refusing stores for lack of space is not logged as recovered by the refusal")
    func outOfSpaceIsNoRecovery() async throws {
        let logs = InMemoryLogHandler()
        let cache = TieredCache(tiers: [try MemoryTier(capacity: 1 << 20), FullDiskTier()], logger: logger(logs))
        let key = try CacheKey("k")
        for _ in 0..<2 {
            await cache.store(entry(1), forKey: key, policy: .allowedInMemoryOnly)  // its removal fails
            await cache.store(entry(1), forKey: key, policy: .allowed)  // refused: out of space
        }
        #expect(logs.entries.map(\.level) == [.warning, .debug], "\(logs.entries.map(\.message))")
    }

    @Test("Without a logger, a failing tier logs nothing and is still counted")
    func noLoggerStillCounts() async throws {
        let flaky = FlakyTier()
        flaky.isBroken.store(true, ordering: .relaxed)
        let cache = TieredCache(tiers: [flaky], metricsFactory: NOOPMetricsHandler.instance)
        #expect(await cache.lookup(try CacheKey("k")) == nil)
        #expect(await cache.statistics()[0].statistics.errors == 1)
    }
}

/// A tier that fails while `isBroken` is set and otherwise holds nothing.
final class FlakyTier: CacheTier {
    let name = "flaky"
    let medium = TierMedium.remote
    let isBroken = Atomic<Bool>(false)
    /// Whether a lookup answers a miss while broken rather than throwing.
    let missesWhileBroken = Atomic<Bool>(false)
    private func check() throws(TierCacheError) {
        if isBroken.load(ordering: .relaxed) { throw TierCacheError(.storageFailure, "the test's tier is broken") }
    }
    func entry(forKey key: CacheKey) async throws -> CacheEntry? {
        if !missesWhileBroken.load(ordering: .relaxed) { try check() }
        return nil
    }
    func store(_ entry: CacheEntry, forKey key: CacheKey) async throws -> StoreOutcome {
        try check()
        return .stored
    }
    func removeEntry(forKey key: CacheKey) async throws { try check() }
    func removeAll() async throws { try check() }
    func usage() async throws -> TierUsage {
        try check()
        return TierUsage(bytes: 0, entries: 0, capacity: 1, maxEntryBytes: 1)
    }
    func statistics() async -> TierStatistics { TierStatistics() }
}

/// A tier on a full disk: stores are refused as out of space, removals fail.
final class FullDiskTier: CacheTier {
    let name = "full"
    let medium = TierMedium.disk
    func entry(forKey key: CacheKey) async throws -> CacheEntry? { nil }
    func store(_ entry: CacheEntry, forKey key: CacheKey) async throws -> StoreOutcome {
        .refused(.outOfSpace(detail: "the test's disk is full"))
    }
    func removeEntry(forKey key: CacheKey) async throws { throw TierCacheError(.diskFull, "the test's disk is full") }
    func removeAll() async throws {}
    func usage() async throws -> TierUsage { TierUsage(bytes: 0, entries: 0, capacity: 1, maxEntryBytes: 1) }
    func statistics() async -> TierStatistics { TierStatistics() }
}
