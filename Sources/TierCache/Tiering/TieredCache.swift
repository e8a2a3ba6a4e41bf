import CoreMetrics
import Foundation
import Logging
import Synchronization

/// An ordered stack of tiers used as one cache: memory over disk over a shared server, or any
/// tiers of your own.
///
/// - **Reads** go top-down. A hit in a lower tier is promoted into the tiers above it that may
///   hold it: an entry found on disk or on a server was stored under ``StoragePolicy/allowed``,
///   so it goes into every tier above; an entry found in a memory tier goes only into memory
///   tiers above, since it may be ``StoragePolicy/allowedInMemoryOnly``.
/// - **Writes** go to every tier the entry's ``StoragePolicy`` permits; the others count a
///   policy refusal. ``StoreReport`` says what each tier did.
/// - **Removals** reach every tier.
/// - **Races.** A promotion never puts back a value that a write, a removal or an invalidation
///   (``invalidate(_:above:)``) replaced while the lookup was reading it: it checks for one when
///   it has stored, and undoes itself (the next lookup reads the lower tier again).
///
/// A tier that throws is counted (``TierStatistics/errors``) and skipped: a read treats it as a
/// miss, a write reports ``StoreReport/Outcome/failed(_:)`` for it. One failing tier degrades the
/// cache, it does not break it. Removals try every tier and then rethrow the first failure,
/// because a removal that silently failed could serve data the caller meant to delete.
///
/// Synchronous callers use ``localEntry(forKey:tiers:)``, which reads the ``LocalCacheTier``s only.
///
/// With a `Logger`, the cache logs a tier that starts failing (`warning`, with the error) and
/// its recovery (`notice`), once per change rather than per operation; failures in between are
/// logged at `debug`. Its metrics (cache-wide lookups and their duration, each tier's policy
/// refusals and errors) are listed in ``MetricLabels``.
public final class TieredCache: Sendable {
    /// A lookup's result: the entry and the tier that had it.
    public struct Hit: Sendable {
        /// The entry found.
        public var entry: CacheEntry
        /// The position in ``TieredCache/tiers`` of the tier that answered.
        public var tierIndex: Int
        /// The name of the tier that answered.
        public var tierName: String
    }

    /// What each tier did with a stored entry, in tier order.
    public struct StoreReport: Sendable {
        /// What one tier did.
        public enum Outcome: Sendable {
            /// The tier stored the entry.
            case stored
            /// The tier refused the entry (too large, excluded by the policy, already expired).
            case refused(RefusalReason)
            /// The tier failed; the error is counted in its statistics.
            case failed(TierCacheError)
        }
        /// Each tier's name and outcome, top to bottom.
        public var outcomes: [(tierName: String, outcome: Outcome)]

        /// Whether at least one tier stored the entry.
        public var isStoredAnywhere: Bool {
            outcomes.contains { if case .stored = $0.outcome { true } else { false } }
        }
    }

    let slots: [TierSlot]
    private let metrics: TieredCacheMetrics?
    /// What ``invalidate(_:above:)`` removed lately, for the promotions racing it.
    let invalidations = InvalidationLog()
    /// The turns of writes and removals of one key.
    let lanes = WriteLanes()
    /// The tiers at the top skipped for now (``suspendTiers(above:)``).
    let suspension = TierSuspension()
    /// The storage policy used by ``store(_:forKey:url:)``.
    public let policyTable: StoragePolicyTable

    /// Whether every tier is a ``LocalCacheTier``, so ``localEntry(forKey:tiers:)`` reads them all.
    public let isEntirelyLocal: Bool

    /// How many tiers at the top of the stack are local memory tiers: the ones a lookup can read
    /// without I/O (`localEntry(forKey:tiers: 0..<leadingMemoryTiers)`).
    public let leadingMemoryTiers: Int

    /// The tiers, top (consulted first) to bottom.
    public var tiers: [any CacheTier] { slots.map(\.tier) }

    /// Creates a cache over `tiers`, listed top (fastest) to bottom.
    ///
    /// - Parameters:
    ///   - tiers: the tiers, fastest first.
    ///   - policyTable: the storage policy per URL scheme, for ``store(_:forKey:url:)``.
    ///   - logger: where tier failures and recoveries are logged; `nil`, the default, logs nothing.
    ///   - metricsFactory: where metrics are recorded (``MetricLabels``); `nil`, the default,
    ///     means the factory the process bootstrapped when the cache is created.
    public init(
        tiers: [any CacheTier], policyTable: StoragePolicyTable = StoragePolicyTable(), logger: Logger? = nil,
        metricsFactory: (any MetricsFactory)? = nil
    ) {
        let factory = MetricsSystem.resolving(metricsFactory)
        self.slots = tiers.map { TierSlot($0, logger: logger, metricsFactory: factory) }
        self.metrics = factory.map(TieredCacheMetrics.init)
        self.isEntirelyLocal = slots.allSatisfy { $0.local != nil }
        self.leadingMemoryTiers = slots.prefix { $0.local != nil && $0.tier.medium == .memory }.count
        self.policyTable = policyTable
    }

    // MARK: Reading

    /// The entry under `key` from the first tier that has it, promoted into the tiers above.
    ///
    /// `firstTier` skips the tiers above it, for a caller that has just read them (with
    /// ``localEntry(forKey:tiers:)``) and found nothing; a hit is still promoted into them.
    public func lookup(_ key: CacheKey, from firstTier: Int = 0) async -> Hit? {
        let stopwatch = MetricsStopwatch(enabled: metrics != nil)
        let hit = await lookupUntimed(key, from: firstTier)
        metrics?.record(hit: hit != nil, stopwatch)
        return hit
    }

    private func lookupUntimed(_ key: CacheKey, from firstTier: Int) async -> Hit? {
        let mark = invalidations.mark()
        let suspended = suspension.snapshot()
        let skipped = suspended.suspendedTiers  // at most slots.count: suspendTiers clamps it
        for index in min(max(skipped, firstTier), slots.count)..<slots.count {
            let slot = slots[index]
            let found: CacheEntry?
            do {
                // A local tier is called synchronously: no suspension point on the hit path.
                if let local = slot.local {
                    found = try Self.synchronousEntry(local, key)
                } else {
                    found = try await slot.tier.entry(forKey: key)
                }
            } catch {
                slot.failedLookup(error)
                continue
            }
            // A hit shows the tier working; a miss may be a failure answered as one.
            if found != nil { slot.succeeded() } else { slot.succeededLookup() }
            guard let entry = found else { continue }
            if index > skipped {
                // From the tier just above up, asking before each store whether the key changed
                // since the lookup began: a write that returned meanwhile is never overwritten,
                // not even until the undo below (top first, memory held the old value while a
                // disk below committed it, and every reader got it). The top tier is written
                // last, just before the final check.
                var lowestStored = index
                for position in (skipped..<index).reversed()
                where Self.mayPromote(from: slot.tier.medium, to: slots[position].tier.medium) {
                    if invalidations.wasInvalidated(key, since: mark) { break }
                    await storeIgnoringFailure(entry, forKey: key, in: slots[position])
                    lowestStored = position
                }
                await undoPromotionIfInvalidated(
                    key, since: mark, suspended, stored: lowestStored..<index, reachable: skipped..<index,
                    from: slot.tier.medium, promoted: entry)
            }
            return Hit(entry: entry, tierIndex: index, tierName: slot.tier.name)
        }
        return nil
    }

    /// The entry under `key`, or `nil`. See ``lookup(_:from:)``.
    public func entry(forKey key: CacheKey) async -> CacheEntry? {
        await lookup(key)?.entry
    }

    /// Like ``lookup(_:from:)``, without suspending: reads and promotes through the
    /// ``LocalCacheTier``s only and skips the others (a network tier).
    ///
    /// `tiers` limits the read to those positions (`0..<leadingMemoryTiers`: memory only, for a
    /// caller that must not touch a disk); a hit is promoted into every local tier above it.
    public func localEntry(forKey key: CacheKey, tiers: Range<Int>? = nil) -> Hit? {
        guard let (entry, index) = localRead(key, tiers: tiers) else { return nil }
        return Hit(entry: entry, tierIndex: index, tierName: slots[index].tier.name)
    }

    /// ``localEntry(forKey:tiers:)`` without the ``Hit``: for the HTTP engine's hit path, which
    /// needs only the entry (and not a copy of the tier's name per hit).
    package func localValue(forKey key: CacheKey, tiers: Range<Int>? = nil) -> CacheEntry? {
        localRead(key, tiers: tiers)?.entry
    }

    /// The synchronous lookup both local entry points share, counted and timed once here.
    private func localRead(_ key: CacheKey, tiers: Range<Int>?) -> (entry: CacheEntry, tierIndex: Int)? {
        let stopwatch = MetricsStopwatch(enabled: metrics != nil)
        let found = localReadUntimed(key, tiers: tiers)
        metrics?.record(hit: found != nil, stopwatch)
        return found
    }

    private func localReadUntimed(_ key: CacheKey, tiers: Range<Int>?) -> (entry: CacheEntry, tierIndex: Int)? {
        let mark = invalidations.mark()
        let suspended = suspension.snapshot()
        let skipped = suspended.suspendedTiers  // at most slots.count: suspendTiers clamps it
        for index in (tiers ?? 0..<slots.count).clamped(to: skipped..<slots.count) {
            let slot = slots[index]
            guard let tier = slot.local else { continue }
            let found: CacheEntry?
            do {
                found = try tier.entry(forKey: key)
            } catch {
                slot.failedLookup(error)
                continue
            }
            // A hit shows the tier working; a miss may be a failure answered as one.
            if found != nil { slot.succeeded() } else { slot.succeededLookup() }
            guard let entry = found else { continue }
            if index > skipped {
                // As in `lookupUntimed(_:from:)`: upwards, checking before each store.
                var lowestStored = index
                for position in (skipped..<index).reversed()
                where Self.mayPromote(from: tier.medium, to: slots[position].tier.medium) {
                    let above = slots[position]
                    guard let local = above.local else { continue }
                    if invalidations.wasInvalidated(key, since: mark) { break }
                    do { _ = try local.store(entry, forKey: key) } catch { above.failed(error, during: "promotion") }
                    lowestStored = position
                }
                undoLocalPromotionIfInvalidated(
                    key, since: mark, suspended, stored: lowestStored..<index, reachable: skipped..<index,
                    from: tier.medium, promoted: entry)
            }
            return (entry, index)
        }
        return nil
    }

    /// Calls the synchronous requirement (in an async context the async overload would be chosen).
    static func synchronousEntry(_ tier: any LocalCacheTier, _ key: CacheKey) throws -> CacheEntry? {
        try tier.entry(forKey: key)
    }

    /// An entry found in a memory tier may be memory-only, so it only moves into memory tiers;
    /// one found elsewhere was stored under `.allowed` and may go anywhere.
    static func mayPromote(from source: TierMedium, to target: TierMedium) -> Bool {
        source != .memory || target == .memory
    }

    private func storeIgnoringFailure(_ entry: CacheEntry, forKey key: CacheKey, in slot: TierSlot) async {
        do { _ = try await slot.tier.store(entry, forKey: key) } catch { slot.failed(error, during: "promotion") }
    }

    // MARK: Writing

    /// Stores `entry` in every tier that `policy` permits (and that is not suspended:
    /// ``suspendTiers(above:)``). A tier that refuses the entry, or whose store fails, is asked
    /// to remove the key's older entry, which would otherwise be served once the tiers above
    /// let the new one go.
    ///
    /// Writes and removals of one key through this method and ``removeEntry(forKey:)`` take turns
    /// (in lanes by key): each reaches every tier before the next begins, so no tier is left with
    /// an older value than another. (Synchronous ones take turns among themselves, not with these.)
    @discardableResult
    public func store(_ entry: CacheEntry, forKey key: CacheKey, policy: StoragePolicy) async -> StoreReport {
        await changing(key) {
            let suspended = suspension.snapshot()
            var outcomes: [(tierName: String, outcome: StoreReport.Outcome)] = []
            outcomes.reserveCapacity(slots.count)
            for (index, slot) in slots.enumerated() {
                let outcome: StoreReport.Outcome
                if let refusal = refusal(of: slot, at: index, policy, suspended) {
                    // An older entry stored under a wider policy, or before a suspension, must not
                    // outlive this write.
                    outcome = slot.removedForRefusal(
                        refusal, await Result.of { try await slot.tier.removeEntry(forKey: key) })
                } else {
                    let result = await Result.of { try await slot.tier.store(entry, forKey: key) }
                    if case .failure = result {
                        // The tier may still hold the key's older entry, to be served (and
                        // promoted) once the tiers above let go of this one: it goes, if it can.
                        _ = await Result.of { try await slot.tier.removeEntry(forKey: key) }
                    }
                    outcome = slot.stored(result)
                }
                outcomes.append((slot.tier.name, outcome))
            }
            let undone = await undoPromotionIfInvalidated(key, since: nil, suspended, stored: slots.indices)
            for index in undone { Self.reportSuspended(&outcomes[index].outcome) }
            return StoreReport(outcomes: outcomes)
        }
    }

    /// Stores `entry` in the ``LocalCacheTier``s that `policy` permits, without awaiting: for
    /// synchronous callers, which write the other tiers (a network tier) themselves. The report
    /// names the local tiers only.
    @discardableResult
    public func storeLocally(_ entry: CacheEntry, forKey key: CacheKey, policy: StoragePolicy) -> StoreReport {
        changingLocally(key) {
            let suspended = suspension.snapshot()
            var outcomes: [(tierName: String, outcome: StoreReport.Outcome)] = []
            for (index, slot) in slots.enumerated() {
                guard let local = slot.local else { continue }
                let outcome: StoreReport.Outcome
                if let refusal = refusal(of: slot, at: index, policy, suspended) {
                    outcome = slot.removedForRefusal(
                        refusal, Result { () throws -> Void in try local.removeEntry(forKey: key) })
                } else {
                    let result = Result { () throws -> StoreOutcome in try local.store(entry, forKey: key) }
                    // As in `store(_:forKey:policy:)`: no older entry outlives a failed write.
                    if case .failure = result { try? local.removeEntry(forKey: key) }
                    outcome = slot.stored(result)
                }
                outcomes.append((slot.tier.name, outcome))
            }
            let undone = undoLocalPromotionIfInvalidated(key, since: nil, suspended, stored: slots.indices)
            // The report lists the local tiers alone: the n-th local slot is the n-th outcome.
            // (Nearly always nothing was undone, and nothing is walked.)
            if !undone.isEmpty {
                for (number, index) in slots.indices.filter({ slots[$0].local != nil }).enumerated()
                where undone.contains(index) {
                    Self.reportSuspended(&outcomes[number].outcome)
                }
            }
            return StoreReport(outcomes: outcomes)
        }
    }

    /// A tier a suspension that began during the write emptied again: what it stored is gone,
    /// so the report says suspended, not stored (a write kept in memory alone was reported
    /// stored while it was nowhere).
    private static func reportSuspended(_ outcome: inout StoreReport.Outcome) {
        if case .stored = outcome { outcome = .refused(.suspended) }
    }

    /// Why a write does not store in `slot` (at `index`), or `nil` when it does. A refusal is
    /// counted.
    private func refusal(
        of slot: TierSlot, at index: Int, _ policy: StoragePolicy, _ suspended: TierSuspension.Snapshot
    ) -> RefusalReason? {
        if index < suspended.suspendedTiers {
            slot.recordRefusalWhileSuspended()
            return .suspended
        }
        guard policy.permits(slot.tier.medium) else {
            slot.recordRefusalByPolicy()
            return .policy(policy)
        }
        return nil
    }

    /// Stores `entry` under the policy that ``policyTable`` gives `url`'s scheme.
    @discardableResult
    public func store(_ entry: CacheEntry, forKey key: CacheKey, url: URL) async -> StoreReport {
        await store(entry, forKey: key, policy: policyTable.policy(for: url))
    }

    // MARK: Removing

    /// Removes `key` from every tier; tries them all, then rethrows the first failure.
    public func removeEntry(forKey key: CacheKey) async throws(TierCacheError) {
        try await changing(key) { () async throws(TierCacheError) in
            try await forEveryTier { try await $0.removeEntry(forKey: key) }
        }
    }

    /// Empties every tier; tries them all, then rethrows the first failure.
    public func removeAll() async throws(TierCacheError) {
        try await changing(nil) { () async throws(TierCacheError) in
            try await forEveryTier { try await $0.removeAll() }
        }
    }

    /// Removes `key` from the local tiers without suspending (for synchronous callers; a network
    /// tier is not reached). Tries them all, then rethrows the first failure.
    public func removeLocalEntry(forKey key: CacheKey) throws(TierCacheError) {
        try changingLocally(key) { () throws(TierCacheError) in
            var firstError: TierCacheError?
            for slot in slots {
                guard let local = slot.local else { continue }
                do { try local.removeEntry(forKey: key) } catch {
                    slot.failed(error, during: "removal")
                    if firstError == nil { firstError = Self.tierError(error) }
                }
            }
            if let firstError { throw firstError }
        }
    }

    /// Empties the local tiers without suspending (for synchronous callers; a network tier is not
    /// reached), as one change: a lookup that reads a lower tier before it is emptied does not
    /// leave what it read promoted into a tier emptied before (its promotion is undone). Tries
    /// them all, then rethrows the first failure.
    public func removeAllLocally() throws(TierCacheError) {
        try changingLocally(nil) { () throws(TierCacheError) in
            var firstError: TierCacheError?
            for slot in slots {
                guard let local = slot.local else { continue }
                do { try local.removeAll() } catch {
                    slot.failed(error, during: "removal")
                    if firstError == nil { firstError = Self.tierError(error) }
                }
            }
            if let firstError { throw firstError }
        }
    }

    /// Runs `change`, a write or removal of `key` (`nil`: of every key) that changes the tiers one
    /// after another: a lookup that reads the old value from a lower tier meanwhile must not
    /// leave it promoted above (its promotion is undone; see ``InvalidationLog``). One tier has
    /// nothing to promote into.
    private func changing<Result, Failure: Error>(
        _ key: CacheKey?, _ change: () async throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        guard slots.count > 1 else { return try await change() }
        if let key { await lanes.enter(key) }
        defer { if let key { lanes.leave(key) } }
        invalidations.beginChange(key)
        defer { invalidations.endChange(key) }
        return try await change()
    }

    /// ``changing(_:_:)`` for a synchronous change.
    private func changingLocally<Result, Failure: Error>(
        _ key: CacheKey?, _ change: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        guard slots.count > 1 else { return try change() }
        invalidations.beginChange(key)
        defer { invalidations.endChange(key) }
        guard let key else { return try change() }
        return try lanes.withSynchronousTurn(key, change)
    }

    private func forEveryTier(_ body: (any CacheTier) async throws -> Void) async throws(TierCacheError) {
        var firstError: TierCacheError?
        for slot in slots {
            do { try await body(slot.tier) } catch {
                slot.failed(error, during: "removal")
                if firstError == nil { firstError = Self.tierError(error) }
            }
        }
        if let firstError { throw firstError }
    }

    static func tierError(_ error: any Error) -> TierCacheError {
        error as? TierCacheError
            ?? TierCacheError(.storageFailure, "a tier failed", underlying: String(describing: error))
    }

    // MARK: Statistics

    /// Each tier's statistics, top to bottom, with the refusals (by policy, while suspended) and
    /// errors this cache counted for it added in.
    public func statistics() async -> [(tierName: String, statistics: TierStatistics)] {
        var reports: [(tierName: String, statistics: TierStatistics)] = []
        for slot in slots {
            var statistics = await slot.tier.statistics()
            statistics.refusedByPolicy += slot.refusedByPolicy.load(ordering: .relaxed)
            statistics.refusedWhileSuspended += slot.refusedWhileSuspended.load(ordering: .relaxed)
            statistics.errors += slot.errors.load(ordering: .relaxed)
            reports.append((slot.tier.name, statistics))
        }
        return reports
    }
}

extension Result where Failure == any Error {
    /// `init(catching:)` for an async body.
    fileprivate static func of(_ body: () async throws -> Success) async -> Self {
        do { return .success(try await body()) } catch { return .failure(error) }
    }
}
