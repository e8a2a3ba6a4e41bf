import CoreMetrics
import Logging
import Synchronization

/// One tier of a ``TieredCache`` and what the cache counts for it: refusals by policy and while
/// suspended (decided by the cache, not the tier), failures it carried on past, and whether the tier is failing now,
/// so that a broken tier is logged once when it breaks and once when it recovers.
final class TierSlot: Sendable {
    let tier: any CacheTier
    let local: (any LocalCacheTier)?
    let refusedByPolicy = Atomic<Int>(0)
    let refusedWhileSuspended = Atomic<Int>(0)
    let errors = Atomic<Int>(0)
    private let streak = FailureStreak()
    /// Whether a lookup failed since the tier last recovered (``succeededLookup()``).
    private let lookupsFailed = Atomic<Bool>(false)
    private let logger: Logger?
    private let refusedByPolicyMetric: Counter?
    private let refusedWhileSuspendedMetric: Counter?
    private let errorsMetric: Counter?

    init(_ tier: any CacheTier, logger: Logger?, metricsFactory: (any MetricsFactory)?) {
        self.tier = tier
        self.local = tier as? any LocalCacheTier
        self.logger = logger
        let dimensions = [("tier", tier.name)]
        refusedByPolicyMetric = metricsFactory.map {
            Counter(label: MetricLabels.tierStores, dimensions: dimensions + [("outcome", "policy")], factory: $0)
        }
        refusedWhileSuspendedMetric = metricsFactory.map {
            Counter(label: MetricLabels.tierStores, dimensions: dimensions + [("outcome", "suspended")], factory: $0)
        }
        errorsMetric = metricsFactory.map {
            Counter(label: MetricLabels.tierErrors, dimensions: dimensions, factory: $0)
        }
    }

    func recordRefusalByPolicy() {
        refusedByPolicy.wrappingAdd(1, ordering: .relaxed)
        refusedByPolicyMetric?.increment()
    }

    func recordRefusalWhileSuspended() {
        refusedWhileSuspended.wrappingAdd(1, ordering: .relaxed)
        refusedWhileSuspendedMetric?.increment()
    }

    /// ``failed(_:during:)`` for a lookup, which ``succeededLookup()`` needs to know of.
    func failedLookup(_ error: any Error) {
        lookupsFailed.store(true, ordering: .relaxed)
        failed(error, during: "lookup")
    }

    /// Counts a failed operation; logs it at `warning` if the tier was working until now.
    func failed(_ error: any Error, during operation: StaticString) {
        errors.wrappingAdd(1, ordering: .relaxed)
        errorsMetric?.increment()
        let isFirst = streak.noteFailure()
        guard let logger else { return }
        let metadata: Logger.Metadata = ["tier": "\(tier.name)", "operation": "\(operation)", "error": "\(error)"]
        if isFirst {
            logger.warning("tier failed; carrying on without it until it recovers", metadata: metadata)
        } else {
            logger.debug("tier still failing; carrying on without it", metadata: metadata)
        }
    }

    /// Notes a successful write or a hit (one relaxed load while the tier is healthy); logs the
    /// recovery of a tier that was failing.
    @inline(__always)
    func succeeded() {
        guard streak.isFailing else { return }
        // Cleared before the streak ends: a lookup failing in between sets it again, for the
        // streak it is part of, rather than losing it to this clearing.
        lookupsFailed.store(false, ordering: .relaxed)
        guard streak.noteSuccess() else { return }
        logger?.notice("tier recovered", metadata: ["tier": "\(tier.name)"])
    }

    /// Notes a lookup that did not throw (one relaxed load while the tier is healthy). It ends a
    /// streak of failures only if lookups failed in it: a tier that answers its failures with a
    /// miss (`RedisTier`'s degrade mode) has every lookup "succeed" while its writes fail, and
    /// each lookup between two failed writes logged a recovery, each write a new failure.
    @inline(__always)
    func succeededLookup() {
        guard streak.isFailing, lookupsFailed.load(ordering: .relaxed) else { return }
        succeeded()
    }

    /// What a write reports for this tier, given what its store did: a failure is counted.
    func stored(_ result: Result<StoreOutcome, any Error>) -> TieredCache.StoreReport.Outcome {
        switch result {
        case .success(.stored):
            succeeded()
            return .stored
        case .success(.refused(let reason)):
            // A full disk's refusal is no sign of health: its removals fail meanwhile (a SQLite
            // tier throws `diskFull`), and counted a success it logged a recovery between each
            // two of them.
            if case .outOfSpace = reason {} else { succeeded() }
            return .refused(reason)
        case .failure(let error):
            failed(error, during: "store")
            return .failed(TieredCache.tierError(error))
        }
    }

    /// What a write this tier refused (`refusal`) reports, given what removing the key's older
    /// entry did: if that failed, the older entry may outlive the write, and the tier failed.
    func removedForRefusal(
        _ refusal: RefusalReason, _ removal: Result<Void, any Error>
    ) -> TieredCache.StoreReport.Outcome {
        switch removal {
        case .success: return .refused(refusal)
        case .failure(let error):
            failed(error, during: "removal")
            return .failed(TieredCache.tierError(error))
        }
    }
}

/// A ``TieredCache``'s own metric handles: cache-wide lookups and their duration.
struct TieredCacheMetrics: Sendable {
    let hits: Counter
    let misses: Counter
    let lookupDuration: CoreMetrics.Timer

    init(factory: any MetricsFactory) {
        hits = Counter(label: MetricLabels.lookups, dimensions: [("result", "hit")], factory: factory)
        misses = Counter(label: MetricLabels.lookups, dimensions: [("result", "miss")], factory: factory)
        lookupDuration = CoreMetrics.Timer(label: MetricLabels.lookupDuration, factory: factory)
    }

    @inline(__always)
    func record(hit: Bool, _ stopwatch: MetricsStopwatch) {
        (hit ? hits : misses).increment()
        stopwatch.stop(into: lookupDuration)
    }
}
