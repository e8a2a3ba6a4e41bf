/// Keeping the tiers above a shared one coherent with it: what a shared tier's invalidations
/// (Redis's `CLIENT TRACKING`, or a store of your own that publishes changes) call.
extension TieredCache {
    /// Removes `keys` from every tier above position `tierIndex`, because the tier there (a store
    /// other processes write to) says they changed.
    ///
    /// A lookup that read one of those keys before this call and promotes it after does not put
    /// the old value back: promotions check the invalidations applied since they began, and undo
    /// themselves (TierCacheRedis's `RedisCoherence` article shows the interleavings).
    ///
    /// Tries every tier, then rethrows the first failure: a key that could not be removed may
    /// still be served, so the caller should flush (``invalidateAll(above:)``).
    public func invalidate(_ keys: [CacheKey], above tierIndex: Int) async throws(TierCacheError) {
        guard !keys.isEmpty else { return }
        // Bracketed, as a write is: a lookup that misses a tier this has passed and reads the old
        // value from one it has not reached yet (an LMDB commit under way) must not leave it
        // promoted above.
        invalidations.beginChange(keys)
        defer { invalidations.endChange(keys) }
        var firstError: TierCacheError?
        for slot in slots.prefix(max(0, tierIndex)) {
            for key in keys {
                do { try await Self.remove(key, from: slot) } catch {
                    slot.failed(error, during: "invalidation")
                    if firstError == nil { firstError = Self.tierError(error) }
                }
            }
        }
        if let firstError { throw firstError }
    }

    /// Empties every tier above position `tierIndex`: for when the tier there can no longer say
    /// what changed (its invalidations were lost with a connection, or it was flushed).
    /// Tries every tier, then rethrows the first failure.
    public func invalidateAll(above tierIndex: Int) async throws(TierCacheError) {
        invalidations.beginChange(nil)
        defer { invalidations.endChange(nil) }
        var firstError: TierCacheError?
        for slot in slots.prefix(max(0, tierIndex)) {
            do { try await slot.tier.removeAll() } catch {
                slot.failed(error, during: "invalidation")
                if firstError == nil { firstError = Self.tierError(error) }
            }
        }
        if let firstError { throw firstError }
    }

    /// A number that changes with every invalidation applied (``invalidate(_:above:)``,
    /// ``invalidateAll(above:)``), and every write or removal through a cache of several tiers:
    /// for a front end that reuses answers built from stored entries, to tell that one may have
    /// changed.
    package var changeCount: UInt64 { invalidations.mark() }

    /// After a promotion from a tier of medium `source` into the tiers at `stored` (from the
    /// lowest it stored in to the one above the hit, those the medium may go to), or a write
    /// (`mark` and `source` `nil`, `stored` every tier): removes `key` again when it was
    /// invalidated since `mark` (the entry promoted may be the old value), or from the tiers a
    /// suspension that began since `suspended` names (no invalidation would reach it there).
    ///
    /// An invalidated promotion is taken back from every tier at `reachable` (`stored` and the
    /// tiers above it, up to the first not suspended), as a change of the key: another lookup,
    /// begun once the invalidation had ended, may have read the old value from a tier this one
    /// stored in and copied it higher, and its own check found nothing to undo (the old value
    /// stayed in memory after `removeEntry(forKey:)` had returned). Bracketed as a change, the
    /// removal either follows that copy, or that lookup's check meets it and undoes itself. A
    /// promotion that stored nothing has nothing to take back. In a tier it did not store in,
    /// only a copy of the `promoted` value is removed: a write made meanwhile to the tiers above
    /// alone (`allowedInMemoryOnly`) is another value, and removed it was lost while its report
    /// said stored.
    /// Returns the positions it removed `key` from (or tried to).
    @discardableResult
    func undoPromotionIfInvalidated(
        _ key: CacheKey, since mark: UInt64?, _ suspended: TierSuspension.Snapshot, stored: Range<Int>,
        reachable: Range<Int>? = nil, from source: TierMedium? = nil, promoted: CacheEntry? = nil
    ) async -> Range<Int> {
        let (undone, asChange) = tiersToUndo(key, since: mark, suspended, stored: stored, reachable: reachable)
        if asChange { invalidations.beginChange(key) }
        defer { if asChange { invalidations.endChange(key) } }
        for position in undone where source.map({ Self.mayPromote(from: $0, to: slots[position].tier.medium) }) ?? true
        {
            let slot = slots[position]
            do {
                if !stored.contains(position), let promoted {
                    let current: CacheEntry?
                    if let local = slot.local {
                        current = try Self.synchronousEntry(local, key)
                    } else {
                        current = try await slot.tier.entry(forKey: key)
                    }
                    guard current?.value == promoted.value else { continue }
                }
                try await Self.remove(key, from: slot)
            } catch {
                slot.failed(error, during: "invalidation")
            }
        }
        return undone
    }

    /// ``undoPromotionIfInvalidated(_:since:_:stored:reachable:from:)`` for the local tiers a
    /// synchronous promotion or write stored in.
    @discardableResult
    func undoLocalPromotionIfInvalidated(
        _ key: CacheKey, since mark: UInt64?, _ suspended: TierSuspension.Snapshot, stored: Range<Int>,
        reachable: Range<Int>? = nil, from source: TierMedium? = nil, promoted: CacheEntry? = nil
    ) -> Range<Int> {
        let (undone, asChange) = tiersToUndo(key, since: mark, suspended, stored: stored, reachable: reachable)
        if asChange { invalidations.beginChange(key) }
        defer { if asChange { invalidations.endChange(key) } }
        for position in undone where source.map({ Self.mayPromote(from: $0, to: slots[position].tier.medium) }) ?? true
        {
            let slot = slots[position]
            guard let local = slot.local else { continue }
            do {
                if !stored.contains(position), let promoted, try local.entry(forKey: key)?.value != promoted.value {
                    continue
                }
                try local.removeEntry(forKey: key)
            } catch {
                slot.failed(error, during: "invalidation")
            }
        }
        return undone
    }

    /// Which tiers a promotion or write must remove `key` from again, and whether that is a change
    /// of the key (an invalidated promotion's).
    private func tiersToUndo(
        _ key: CacheKey, since mark: UInt64?, _ suspended: TierSuspension.Snapshot, stored: Range<Int>,
        reachable: Range<Int>?
    ) -> (tiers: Range<Int>, asChange: Bool) {
        if let mark, invalidations.wasInvalidated(key, since: mark) {
            guard !stored.isEmpty else { return (stored, false) }
            return (reachable.map { $0.lowerBound..<stored.upperBound } ?? stored, true)
        }
        return (stored.clamped(to: 0..<suspension.tiersSuspended(since: suspended)), false)
    }

    /// Removes `key` from `slot`'s tier, synchronously when it is local.
    private static func remove(_ key: CacheKey, from slot: TierSlot) async throws {
        if let local = slot.local {
            try removeSynchronously(key, from: local)
        } else {
            try await slot.tier.removeEntry(forKey: key)
        }
    }

    /// Calls the synchronous requirement (in an async context the async overload would be chosen).
    private static func removeSynchronously(_ key: CacheKey, from tier: any LocalCacheTier) throws {
        try tier.removeEntry(forKey: key)
    }
}
