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

    /// After a promotion from position `index`, or a write (`mark` `nil`, `index` the tier
    /// count): removes what it stored above when `key` was invalidated since `mark` (the entry
    /// promoted may be the old value), or from the tiers a suspension that began since `suspended`
    /// names (no invalidation would reach it there).
    func undoPromotionIfInvalidated(
        _ key: CacheKey, since mark: UInt64?, _ suspended: TierSuspension.Snapshot, above index: Int
    ) async {
        for slot in slots.prefix(tiersToUndo(key, since: mark, suspended, above: index)) {
            do { try await Self.remove(key, from: slot) } catch { slot.failed(error, during: "invalidation") }
        }
    }

    /// ``undoPromotionIfInvalidated(_:since:_:above:)`` for the local tiers a synchronous
    /// promotion or write stored in.
    func undoLocalPromotionIfInvalidated(
        _ key: CacheKey, since mark: UInt64?, _ suspended: TierSuspension.Snapshot, above index: Int
    ) {
        for slot in slots.prefix(tiersToUndo(key, since: mark, suspended, above: index)) {
            guard let local = slot.local else { continue }
            do { try local.removeEntry(forKey: key) } catch { slot.failed(error, during: "invalidation") }
        }
    }

    /// How many tiers from the top a promotion or write must remove `key` from again.
    private func tiersToUndo(
        _ key: CacheKey, since mark: UInt64?, _ suspended: TierSuspension.Snapshot, above index: Int
    ) -> Int {
        if let mark, invalidations.wasInvalidated(key, since: mark) { return index }
        return min(index, suspension.tiersSuspended(since: suspended))
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
