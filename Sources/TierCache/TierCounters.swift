import Synchronization

/// Lock-free counters behind a tier's ``TierStatistics``.
///
/// Tiers shipped with TierCache use it, and a tier of your own can too: increment on each event,
/// and return ``snapshot(usage:)`` from ``CacheTier/statistics()``.
public final class TierCounters: Sendable {
    /// See ``TierStatistics/hits``.
    public let hits = Atomic<Int>(0)
    /// See ``TierStatistics/misses``.
    public let misses = Atomic<Int>(0)
    /// See ``TierStatistics/stores``.
    public let stores = Atomic<Int>(0)
    /// See ``TierStatistics/evictions``.
    public let evictions = Atomic<Int>(0)
    /// See ``TierStatistics/refusedTooLarge``.
    public let refusedTooLarge = Atomic<Int>(0)
    /// See ``TierStatistics/refusedExpired``.
    public let refusedExpired = Atomic<Int>(0)
    /// See ``TierStatistics/refusedOutOfSpace``.
    public let refusedOutOfSpace = Atomic<Int>(0)
    /// See ``TierStatistics/expirations``.
    public let expirations = Atomic<Int>(0)
    /// See ``TierStatistics/corruptionsRemoved``.
    public let corruptionsRemoved = Atomic<Int>(0)
    /// See ``TierStatistics/errors``.
    public let errors = Atomic<Int>(0)
    /// See ``TierStatistics/storeResets``.
    public let storeResets = Atomic<Int>(0)

    /// Creates counters at zero.
    public init() {}

    /// Counts a lookup's result.
    @inline(__always)
    public func recordLookup(hit: Bool) {
        if hit { hits.add(1, ordering: .relaxed) } else { misses.add(1, ordering: .relaxed) }
    }

    /// Counts the outcome of a store.
    @inline(__always)
    public func record(_ outcome: StoreOutcome) {
        switch outcome {
        case .stored: stores.add(1, ordering: .relaxed)
        case .refused(.tooLarge): refusedTooLarge.add(1, ordering: .relaxed)
        case .refused(.alreadyExpired): refusedExpired.add(1, ordering: .relaxed)
        case .refused(.outOfSpace): refusedOutOfSpace.add(1, ordering: .relaxed)
        case .refused(.policy): break  // counted by the tiered cache, which decides it
        }
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
        s.expirations = expirations.load(ordering: .relaxed)
        s.corruptionsRemoved = corruptionsRemoved.load(ordering: .relaxed)
        s.errors = errors.load(ordering: .relaxed)
        s.storeResets = storeResets.load(ordering: .relaxed)
        s.usage = usage
        return s
    }
}
