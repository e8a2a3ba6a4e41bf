/// Skipping the tiers above a shared one while they cannot be kept coherent with it.
extension TieredCache {
    /// Skips the tiers above position `tierIndex` until ``resumeTiers()``: lookups read from
    /// `tierIndex` down and promote nothing above it, and writes store nothing above it (their
    /// ``StoreReport`` says ``RefusalReason/suspended``, and the key's older entry there is
    /// removed). Removals and invalidations still reach every tier.
    ///
    /// For whatever keeps the upper tiers coherent with a shared tier (TierCacheRedis's
    /// `RedisCoherence`) while it cannot hear of that tier's changes: the upper tiers are not fed
    /// values that no invalidation would reach, and lookups answer from the shared tier. A lookup
    /// or write under way when this is called, that stores above `tierIndex` after it, removes
    /// what it stored. What the tiers held before is kept: empty them with
    /// ``invalidateAll(above:)`` when it may be stale.
    ///
    /// A later call replaces the earlier one; `tierIndex` is clamped to the tiers there are.
    public func suspendTiers(above tierIndex: Int) {
        suspension.suspend(min(max(0, tierIndex), slots.count))
    }

    /// Ends ``suspendTiers(above:)``: lookups and writes that begin after this use every tier.
    public func resumeTiers() { suspension.resume() }

    /// How many tiers at the top are suspended now (``suspendTiers(above:)``); 0 when none is.
    public var suspendedTiers: Int { suspension.snapshot().suspendedTiers }
}
