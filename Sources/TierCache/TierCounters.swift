import CoreMetrics
import Synchronization

/// A tier's event counters: the numbers behind its ``TierStatistics``, and, when the tier was
/// given a name to record under, the same events sent to swift-metrics (see ``MetricLabels``).
///
/// Tiers shipped with TierCache use it, and a tier of your own can too: call the `record`
/// methods on each event, and return ``snapshot(usage:)`` from ``CacheTier/statistics()``.
///
/// The counters are atomics (relaxed: each is exact, a snapshot is not one instant across them).
/// With no metrics backend, each event costs one atomic add and one branch. The adds wrap rather
/// than trap on overflow (no count reaches 2^63 where an Int has 64 bits; where it has 32, on
/// watchOS's arm64_32, a count wraps past 2^31 - 1 rather than crash the app): a trapping add
/// compiles to a compare-and-swap loop, a wrapping one to a single `lock xadd`.
public final class TierCounters: Sendable {
    private let hits = Atomic<Int>(0)
    private let misses = Atomic<Int>(0)
    private let stores = Atomic<Int>(0)
    private let evictions = Atomic<Int>(0)
    private let refusedTooLarge = Atomic<Int>(0)
    private let refusedExpired = Atomic<Int>(0)
    private let refusedOutOfSpace = Atomic<Int>(0)
    private let refusedNotAdmitted = Atomic<Int>(0)
    private let expirations = Atomic<Int>(0)
    private let corruptionsRemoved = Atomic<Int>(0)
    private let dictionaryMisses = Atomic<Int>(0)
    private let unopenableRecords = Atomic<Int>(0)
    private let unknownFormatRecords = Atomic<Int>(0)
    private let recordsResealed = Atomic<Int>(0)
    private let errors = Atomic<Int>(0)
    private let storeResets = Atomic<Int>(0)
    private let metrics: TierMetrics?

    /// Counters at zero that record to no metrics backend.
    public init() {
        metrics = nil
    }

    /// Counters at zero that also record to swift-metrics, under ``MetricLabels``' names with
    /// dimension `tier` = `tierName`: through `metricsFactory`, or when it is `nil` the factory
    /// the process bootstrapped (read now: bootstrap before creating tiers).
    public init(tierName: String, metricsFactory: (any MetricsFactory)? = nil) {
        metrics = MetricsSystem.resolving(metricsFactory).map { TierMetrics(tierName: tierName, factory: $0) }
    }

    /// Whether events also go to a metrics backend (a tier may skip work only metrics need).
    public var isRecordingMetrics: Bool { metrics != nil }

    /// Starts timing a lookup for ``recordLookup(hit:timing:)``; reads the clock only when
    /// recording metrics.
    @inline(__always)
    public func startLookup() -> LookupTiming {
        LookupTiming(stopwatch: MetricsStopwatch(enabled: metrics != nil))
    }

    /// Counts a lookup's result, and with `timing` its duration.
    @inline(__always)
    public func recordLookup(hit: Bool, timing: LookupTiming? = nil) {
        if hit { hits.wrappingAdd(1, ordering: .relaxed) } else { misses.wrappingAdd(1, ordering: .relaxed) }
        recordLookupMetric(hit: hit, timing: timing)
    }

    /// Sends a lookup's result, and with `timing` its duration, to the metrics backend only: for
    /// the memory tier, which counts its lookups under its lock.
    @inline(__always)
    func recordLookupMetric(hit: Bool, timing: LookupTiming?) {
        guard let metrics else { return }
        (hit ? metrics.hits : metrics.misses).increment()
        timing?.stopwatch.stop(into: metrics.lookupDuration)
    }

    /// Sends a stored entry to the metrics backend only: for the memory tier, which counts its
    /// stores under its lock.
    @inline(__always)
    func recordStoredMetric() {
        metrics?.stored.increment()
    }

    /// Counts the outcome of a store. Refusals by ``RefusalReason/policy(_:)`` and
    /// ``RefusalReason/suspended`` are left to the ``TieredCache``, which decides them.
    @inline(__always)
    public func record(_ outcome: StoreOutcome) {
        switch outcome {
        case .stored:
            stores.wrappingAdd(1, ordering: .relaxed)
            recordStoredMetric()
        case .refused(.tooLarge):
            refusedTooLarge.wrappingAdd(1, ordering: .relaxed)
            metrics?.refusedTooLarge.increment()
        case .refused(.alreadyExpired):
            refusedExpired.wrappingAdd(1, ordering: .relaxed)
            metrics?.refusedExpired.increment()
        case .refused(.outOfSpace):
            refusedOutOfSpace.wrappingAdd(1, ordering: .relaxed)
            metrics?.refusedOutOfSpace.increment()
        case .refused(.notAdmitted):
            refusedNotAdmitted.wrappingAdd(1, ordering: .relaxed)
            metrics?.refusedNotAdmitted.increment()
        case .refused(.policy), .refused(.suspended):
            break
        }
    }

    /// Counts `count` entries evicted to make room.
    @inline(__always)
    public func recordEvictions(_ count: Int) {
        guard count > 0 else { return }
        evictions.wrappingAdd(count, ordering: .relaxed)
        metrics?.evictions.increment(by: count)
    }

    /// Counts an entry dropped because its expiry hint passed.
    public func recordExpiration() {
        expirations.wrappingAdd(1, ordering: .relaxed)
        metrics?.expirations.increment()
    }

    /// Counts a damaged entry removed.
    public func recordCorruptionRemoved() {
        corruptionsRemoved.wrappingAdd(1, ordering: .relaxed)
        metrics?.corruptionsRemoved.increment()
    }

    /// Counts a record removed because the dictionary it was compressed with is gone.
    public func recordDictionaryMiss() {
        dictionaryMisses.wrappingAdd(1, ordering: .relaxed)
        metrics?.dictionaryMisses.increment()
    }

    /// Counts a sealed record removed because it could not be opened (unknown key, or altered).
    public func recordUnopenableRecord() {
        unopenableRecords.wrappingAdd(1, ordering: .relaxed)
        metrics?.unopenableRecords.increment()
    }

    /// Counts a record in a format version this code does not read.
    public func recordUnknownFormat() {
        unknownFormatRecords.wrappingAdd(1, ordering: .relaxed)
        metrics?.unknownFormatRecords.increment()
    }

    /// Counts a record sealed again under the current key.
    public func recordResealed() {
        recordsResealed.wrappingAdd(1, ordering: .relaxed)
        metrics?.recordsResealed.increment()
    }

    /// Counts an operation that failed.
    public func recordError() {
        errors.wrappingAdd(1, ordering: .relaxed)
        metrics?.errors.increment()
    }

    /// Counts a damaged store deleted and started afresh.
    public func recordStoreReset() {
        storeResets.wrappingAdd(1, ordering: .relaxed)
        metrics?.storeResets.increment()
    }

    /// Sets the bytes and entries gauges (no-op without metrics). Local tiers call it after each
    /// change; a tier whose usage needs I/O to learn may call it when it learns it.
    public func recordUsage(_ usage: TierUsage) {
        guard let metrics else { return }
        metrics.bytes.record(usage.bytes)
        metrics.entries.record(usage.entries)
    }

    /// The counters' current values, with `usage` attached.
    public func snapshot(usage: TierUsage?) -> TierStatistics {
        var s = TierStatistics()
        s.hits = hits.load(ordering: .relaxed)
        s.misses = misses.load(ordering: .relaxed)
        s.stores = stores.load(ordering: .relaxed)
        s.evictions = evictions.load(ordering: .relaxed)
        s.refusedTooLarge = refusedTooLarge.load(ordering: .relaxed)
        s.refusedExpired = refusedExpired.load(ordering: .relaxed)
        s.refusedOutOfSpace = refusedOutOfSpace.load(ordering: .relaxed)
        s.refusedNotAdmitted = refusedNotAdmitted.load(ordering: .relaxed)
        s.expirations = expirations.load(ordering: .relaxed)
        s.corruptionsRemoved = corruptionsRemoved.load(ordering: .relaxed)
        s.dictionaryMisses = dictionaryMisses.load(ordering: .relaxed)
        s.unopenableRecords = unopenableRecords.load(ordering: .relaxed)
        s.unknownFormatRecords = unknownFormatRecords.load(ordering: .relaxed)
        s.recordsResealed = recordsResealed.load(ordering: .relaxed)
        s.errors = errors.load(ordering: .relaxed)
        s.storeResets = storeResets.load(ordering: .relaxed)
        s.usage = usage
        return s
    }

    /// When a lookup started, for its duration metric (empty when no metrics are recorded).
    public struct LookupTiming: Sendable {
        fileprivate let stopwatch: MetricsStopwatch
    }
}
