/// The entries of a ``MemoryTier`` under one eviction policy: a map from keys to costed entries
/// that keeps its total cost within a capacity by evicting as its policy says (``PolicyStore``).
///
/// Not thread-safe: the tier guards it with a lock. The tier's own rules (the entry-size limit,
/// expiry) are applied before a store reaches it, so every policy sees the same requests.
protocol EvictingStore {
    /// The sum of the resident entries' costs; never above the capacity after a store.
    var totalCost: Int { get }
    /// The number of resident entries.
    var count: Int { get }
    /// The lookups and stores the tier counted under its lock (kept across ``removeAll()``).
    var requests: RequestCounts { get set }
    /// The largest entry cost the policy can admit (S3-FIFO's small queue bounds it).
    var largestAdmissibleCost: Int { get }

    /// A request that finds `key`: returns its entry, and the policy counts the hit; adds to
    /// `evicted` the entries the policy evicted in answer (none for the built-in policies).
    mutating func lookup(_ key: CacheKey, evicted: inout Int) -> CacheEntry?

    /// Stores `entry` (whose cost is at most the capacity), evicting as the policy says until the
    /// capacity and the entry-count limit hold. Returns how many entries were evicted, and
    /// whether the policy admitted the entry (LIRS in byte mode, or a policy of your own, may
    /// not: the key's older entry is gone either way).
    mutating func store(_ entry: CacheEntry, cost: Int, for key: CacheKey) -> StoreResult

    /// Removes `key`'s entry, if any; the policy forgets it.
    mutating func remove(_ key: CacheKey)

    mutating func removeAll()

    /// Resident keys, the next to be evicted last (for tests and diagnostics; O(n)).
    var keysByRetention: [CacheKey] { get }
}

/// What a store did (``EvictingStore/store(_:cost:for:)``).
struct StoreResult {
    /// The entries the policy evicted.
    var evicted: Int
    /// Whether the policy admitted the entry stored.
    var admitted: Bool
    /// Whether the entry was refused because every slot id is in use
    /// (`PolicyContext.maximumSlotCount` keys resident or remembered).
    var slotsExhausted = false
}

/// The requests a ``MemoryTier`` counts under the lock each holds, rather than with an atomic
/// add apiece; ``MemoryTier/statistics()`` adds them to its ``TierCounters``' figures.
struct RequestCounts {
    var hits = 0
    var misses = 0
    /// Stores of an entry (refusals are counted by the counters).
    var stores = 0
}
