import DiskTestSupport
import Foundation
import InMemoryLogging
import Logging
import MetricsTestKit
import Testing
import TierCache

@testable import TierCacheLMDB

/// What the disk tier tells an operator: a reset store (`error`), a damaged entry (`warning`),
/// refusals (`debug`), and metrics that count the same events as its statistics.
@Suite("LMDB tier logging and metrics")
struct LMDBObservabilityTests {
    private func logger(_ handler: InMemoryLogHandler) -> Logger {
        var logger = Logger(label: "test", factory: { _ in handler })
        logger.logLevel = .debug
        return logger
    }

    @Test("Stores, refusals, evictions and lookups reach the metrics backend; the gauges follow the usage")
    func metricsFollowTheStore() throws {
        let directory = TemporaryDirectory()
        let metrics = TestMetrics()
        let logs = InMemoryLogHandler()
        let tier = try LMDBTier(
            directory: directory.url,
            configuration: .init(
                capacity: 1 << 20, name: "disk", logger: logger(logs), metricsFactory: metrics))
        _ = try tier.store(entry([1, 2, 3]), forKey: key("a"))
        // Over 5% of 1 MiB after compression: refused, and logged at debug with the reason.
        #expect(try tier.store(entry(incompressible(60_000)), forKey: key("big")) != .stored)
        #expect(try tier.entry(forKey: key("a"))?.value == [1, 2, 3])
        #expect(try tier.entry(forKey: key("absent")) == nil)

        let disk = [("tier", "disk")]
        #expect(
            try metrics.expectCounter("tiercache_tier_stores_total", disk + [("outcome", "stored")]).totalValue == 1)
        #expect(
            try metrics.expectCounter("tiercache_tier_stores_total", disk + [("outcome", "too_large")]).totalValue == 1)
        #expect(try metrics.expectCounter("tiercache_tier_lookups_total", disk + [("result", "hit")]).totalValue == 1)
        #expect(try metrics.expectCounter("tiercache_tier_lookups_total", disk + [("result", "miss")]).totalValue == 1)
        #expect(try metrics.expectTimer("tiercache_tier_lookup_duration_seconds", disk).values.count == 2)
        let usage = try tier.usage()
        #expect(usage.entries == 1 && usage.bytes > 0)
        #expect(try metrics.expectGauge("tiercache_tier_bytes", disk).lastValue == Double(usage.bytes))
        #expect(try metrics.expectGauge("tiercache_tier_entries", disk).lastValue == 1)
        try tier.removeEntry(forKey: key("a"))
        #expect(try metrics.expectGauge("tiercache_tier_entries", disk).lastValue == 0)
        #expect(logs.entries.map(\.level) == [.debug], "one refusal, at debug: \(logs.entries)")
        #expect(logs.entries.first?.metadata["key"] == "big")
    }

    @Test("A damaged entry is logged as a warning and counted under corruptions_removed")
    func damagedEntryIsReported() throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try LMDBTier(directory: directory.url, capacity: 1 << 20)
            _ = try tier.store(entry(compressible(5_000)), forKey: key("k"))
        }
        try rawLMDBEdit(directory.url) { txn, dbi in
            guard var record = rawGet(txn, dbi, key: Array("k".utf8)) else { return }
            record[record.count - 1] ^= 0xFF
            rawPut(txn, dbi, key: Array("k".utf8), value: record)
        }
        let metrics = TestMetrics()
        let logs = InMemoryLogHandler()
        let tier = try LMDBTier(
            directory: directory.url,
            configuration: .init(
                capacity: 1 << 20, logger: logger(logs), metricsFactory: metrics))
        #expect(try tier.entry(forKey: key("k")) == nil)
        #expect(
            try metrics.expectCounter("tiercache_tier_corruptions_removed_total", [("tier", "lmdb")]).totalValue == 1)
        #expect(logs.entries.map(\.level) == [.warning])
        #expect(logs.entries.first?.metadata["key"] == "k")
    }

    @Test("A store reset at open is logged as an error, with the reason, and counted")
    func storeResetIsReported() throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try LMDBTier(directory: directory.url, capacity: 1 << 20)
            _ = try tier.store(entry([1]), forKey: key("k"))
        }
        // The mark of a process that died while checking the store: the next open resets it.
        try Data("checking pid 999999".utf8).write(to: directory.url.appendingPathComponent("tiercache.check"))
        let metrics = TestMetrics()
        let logs = InMemoryLogHandler()
        let tier = try LMDBTier(
            directory: directory.url,
            configuration: .init(
                capacity: 1 << 20, logger: logger(logs), metricsFactory: metrics))
        #expect(tier.didResetDamagedStore)
        #expect(try metrics.expectCounter("tiercache_tier_store_resets_total", [("tier", "lmdb")]).totalValue == 1)
        let line = try #require(logs.entries.first)
        #expect(line.level == .error)
        #expect(line.metadata["reason"].map { "\($0)".contains("pid 999999") } == true)
        #expect(line.metadata["directory"] == "\(directory.url.path)")
    }
}
