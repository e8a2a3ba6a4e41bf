import TierCache

/// A tier that reports every lookup and store to a ``LiveCurveSampler`` and otherwise behaves exactly
/// like the tier it wraps (same name, medium, capacity, statistics). Wrapping a `LocalCacheTier`
/// keeps the synchronous path, so a `TieredCache` of local tiers stays suspension-free.
///
/// Each store is recorded at what the tier charges for it, so that the sampler's capacities are
/// the tier's: for a `MemoryTier`, the value, the key's UTF-8 length and
/// `MemoryTier.perEntryOverhead`; for other tiers, the value (or what `entryOverhead` adds).
/// Stores the tier refused are recorded too: at the larger capacities the sampler estimates, an
/// entry refused as too large now may be kept.
public struct SampledTier<Base: CacheTier>: CacheTier {
    /// The tier that stores the entries.
    public let base: Base
    /// The sampler that sees every lookup and store.
    public let sampler: LiveCurveSampler
    /// Whether the tier is a `MemoryTier`, whose charge is `MemoryTier.cost(of:forKey:)`.
    private let chargesAsMemoryTier: Bool
    /// Bytes another tier charges an entry beyond its value.
    private let entryOverhead: Int

    /// Wraps `base`, reporting its traffic to `sampler`.
    ///
    /// - Parameters:
    ///   - base: the tier that stores the entries.
    ///   - sampler: the sampler that sees every lookup and store.
    ///   - entryOverhead: bytes the tier charges an entry beyond its value, for a tier other than
    ///     `MemoryTier` (whose charge, key and `MemoryTier.perEntryOverhead`, is known).
    public init(_ base: Base, sampler: LiveCurveSampler, entryOverhead: Int = 0) {
        self.base = base
        self.sampler = sampler
        chargesAsMemoryTier = base is MemoryTier
        self.entryOverhead = max(0, entryOverhead)
    }

    /// The bytes the tier charges for `entry` under `key`.
    private func charged(_ entry: CacheEntry, _ key: CacheKey) -> Int {
        chargesAsMemoryTier ? MemoryTier.cost(of: entry, forKey: key) : entry.value.count + entryOverhead
    }

    /// The wrapped tier's name.
    public var name: String { base.name }
    /// The wrapped tier's medium.
    public var medium: TierMedium { base.medium }

    /// Records the lookup, then looks `key` up in the wrapped tier.
    public func entry(forKey key: CacheKey) async throws -> CacheEntry? {
        sampler.recordLookup(key)
        return try await base.entry(forKey: key)
    }

    /// Records the lookup, then looks `key` up in the wrapped tier, which reports its failures.
    public func entryReportingFailures(forKey key: CacheKey) async throws -> CacheEntry? {
        sampler.recordLookup(key)
        return try await base.entryReportingFailures(forKey: key)
    }

    /// Stores in the wrapped tier, then records the stored bytes.
    public func store(_ entry: CacheEntry, forKey key: CacheKey) async throws -> StoreOutcome {
        let outcome = try await base.store(entry, forKey: key)
        sampler.recordStore(bytes: charged(entry, key))
        return outcome
    }

    /// Removes from the wrapped tier.
    public func removeEntry(forKey key: CacheKey) async throws { try await base.removeEntry(forKey: key) }
    /// Empties the wrapped tier.
    public func removeAll() async throws { try await base.removeAll() }
    /// The wrapped tier's usage.
    public func usage() async throws -> TierUsage { try await base.usage() }
    /// The wrapped tier's statistics.
    public func statistics() async -> TierStatistics { await base.statistics() }
}

extension SampledTier: LocalCacheTier where Base: LocalCacheTier {
    /// Records the lookup, then looks `key` up in the wrapped tier, synchronously.
    public func entry(forKey key: CacheKey) throws -> CacheEntry? {
        sampler.recordLookup(key)
        return try base.entry(forKey: key)
    }

    /// Stores in the wrapped tier, synchronously, then records the stored bytes.
    public func store(_ entry: CacheEntry, forKey key: CacheKey) throws -> StoreOutcome {
        let outcome = try base.store(entry, forKey: key)
        sampler.recordStore(bytes: charged(entry, key))
        return outcome
    }

    /// Removes from the wrapped tier, synchronously.
    public func removeEntry(forKey key: CacheKey) throws { try base.removeEntry(forKey: key) }
    /// Empties the wrapped tier, synchronously.
    public func removeAll() throws { try base.removeAll() }
    /// The wrapped tier's usage, synchronously.
    public func usage() throws -> TierUsage { try base.usage() }
    /// The wrapped tier's statistics, synchronously.
    public func statistics() -> TierStatistics { base.statistics() }
}
