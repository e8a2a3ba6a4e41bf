import CoreMetrics
@_spi(TierCacheInternals) import TierCache

/// What ``HTTPCache`` counts: its ``HTTPCacheStatistics``, and the same events sent to
/// swift-metrics (``MetricLabels``' `http…` names) when a backend records them.
final class HTTPCacheCounters: Sendable {
    private let statistics = Locked(HTTPCacheStatistics())
    private let metrics: Metrics?

    init(metricsFactory: (any MetricsFactory)?) {
        metrics = MetricsSystem.resolving(metricsFactory).map(Metrics.init)
    }

    var snapshot: HTTPCacheStatistics { statistics.withLock { $0 } }

    /// `count` requests answered from the cache; `stale` when served stale.
    func recordHits(_ count: Int = 1, stale: Bool = false) {
        statistics.withLock {
            $0.hits += count
            if stale { $0.staleServes += count }
        }
        guard let metrics else { return }
        metrics.hits.increment(by: count)
        if stale { metrics.staleServed.increment(by: count) }
    }

    func recordMiss() {
        statistics.withLock { $0.misses += 1 }
        metrics?.misses.increment()
    }

    /// A revalidation answered 304 (`modified: false`) or with a new response.
    func recordRevalidation(modified: Bool) {
        statistics.withLock { if modified { $0.revalidatedModified += 1 } else { $0.revalidatedNotModified += 1 } }
        (modified ? metrics?.modified : metrics?.notModified)?.increment()
    }

    /// A stale response served after a failure (the request is counted where it was decided).
    func recordStaleServe() {
        statistics.withLock { $0.staleServes += 1 }
        metrics?.staleServed.increment()
    }

    func recordCoalesced() {
        statistics.withLock { $0.coalescedRequests += 1 }
        metrics?.coalesced.increment()
    }

    func recordInvalidation() {
        statistics.withLock { $0.invalidations += 1 }
        metrics?.invalidations.increment()
    }

    func recordCorruptEntryRemoved() {
        statistics.withLock { $0.corruptEntriesRemoved += 1 }
        metrics?.corruptEntriesRemoved.increment()
    }

    func recordInvalidKey() {
        statistics.withLock { $0.invalidKeys += 1 }
        metrics?.invalidKeys.increment()
    }

    func recordNotStorable(_ reason: Storability.Reason) {
        statistics.withLock { $0.notStorable[reason, default: 0] += 1 }
        metrics?.notStorable[reason]?.increment()
    }

    func recordRefusedByPolicy() {
        statistics.withLock { $0.refusedByPolicy += 1 }
        metrics?.refusedByPolicy.increment()
    }

    /// A purge of a URL (`ofTag: false`) or of one tag.
    func recordPurge(ofTag: Bool, mode: HTTPCache.PurgeMode) {
        statistics.withLock { $0.purges += 1 }
        metrics?.purges[PurgeKind(ofTag: ofTag, mode: mode)]?.increment()
    }

    func recordPurgedEntryRemoved() {
        statistics.withLock { $0.purgedEntriesRemoved += 1 }
        metrics?.purgedEntriesRemoved.increment()
    }

    func recordTagListRefused() {
        statistics.withLock { $0.tagListsRefused += 1 }
        metrics?.tagListRefused.increment()
    }

    /// What a purge counter is kept per.
    private struct PurgeKind: Hashable, Sendable {
        let ofTag: Bool
        let mode: HTTPCache.PurgeMode
    }

    /// A write of a response: kept by a tier, or refused by every tier (by policy when `policy`
    /// allows none, else as too large).
    func recordWrite(kept: Bool, policy: StoragePolicy) {
        if !kept && policy == .notAllowed { return recordRefusedByPolicy() }
        statistics.withLock { if kept { $0.stores += 1 } else { $0.refusedTooLarge += 1 } }
        (kept ? metrics?.stored : metrics?.refusedTooLarge)?.increment()
    }

    /// The handles, created once.
    private struct Metrics: Sendable {
        let hits, misses, notModified, modified: Counter
        let staleServed, coalesced, invalidations, corruptEntriesRemoved: Counter
        let stored, refusedByPolicy, refusedTooLarge, invalidKeys: Counter
        let purgedEntriesRemoved, tagListRefused: Counter
        let notStorable: [Storability.Reason: Counter]
        let purges: [PurgeKind: Counter]

        init(factory: any MetricsFactory) {
            func counter(_ label: String, _ dimensions: [(String, String)] = []) -> Counter {
                Counter(label: label, dimensions: dimensions, factory: factory)
            }
            hits = counter(MetricLabels.httpRequests, [("result", "hit")])
            misses = counter(MetricLabels.httpRequests, [("result", "miss")])
            notModified = counter(MetricLabels.httpRequests, [("result", "not_modified")])
            modified = counter(MetricLabels.httpRequests, [("result", "modified")])
            staleServed = counter(MetricLabels.httpStaleServed)
            coalesced = counter(MetricLabels.httpCoalesced)
            invalidations = counter(MetricLabels.httpInvalidations)
            corruptEntriesRemoved = counter(MetricLabels.httpCorruptEntriesRemoved)
            invalidKeys = counter(MetricLabels.httpInvalidKeys)
            stored = counter(MetricLabels.httpStores, [("outcome", "stored")])
            refusedByPolicy = counter(MetricLabels.httpStores, [("outcome", "policy")])
            refusedTooLarge = counter(MetricLabels.httpStores, [("outcome", "too_large")])
            tagListRefused = counter(MetricLabels.httpStores, [("outcome", "tag_list_refused")])
            purgedEntriesRemoved = counter(MetricLabels.httpPurgedEntriesRemoved)
            var purges: [PurgeKind: Counter] = [:]
            for ofTag in [false, true] {
                for mode in [HTTPCache.PurgeMode.hard, .soft] {
                    purges[PurgeKind(ofTag: ofTag, mode: mode)] = counter(
                        MetricLabels.httpPurges, [("target", ofTag ? "tag" : "url"), ("mode", mode.rawValue)])
                }
            }
            self.purges = purges
            notStorable = Dictionary(
                uniqueKeysWithValues: Storability.Reason.allCases.map {
                    ($0, counter(MetricLabels.httpStores, [("outcome", "not_storable"), ("reason", $0.rawValue)]))
                })
        }
    }
}
