import TierCache

/// A tier that reports every lookup and store to a ``LiveCurveSampler`` and otherwise behaves exactly
/// like the tier it wraps (same name, medium, capacity, statistics). Wrapping a `LocalCacheTier`
/// keeps the synchronous path, so a `TieredCache` of local tiers stays suspension-free.
public struct SampledTier<Base: CacheTier>: CacheTier {
    public let base: Base
    public let sampler: LiveCurveSampler

    public init(_ base: Base, sampler: LiveCurveSampler) {
        self.base = base
        self.sampler = sampler
    }

    public var name: String { base.name }
    public var medium: TierMedium { base.medium }

    public func entry(forKey key: CacheKey) async throws -> CacheEntry? {
        sampler.recordLookup(key)
        return try await base.entry(forKey: key)
    }

    public func store(_ entry: CacheEntry, forKey key: CacheKey) async throws -> StoreOutcome {
        let outcome = try await base.store(entry, forKey: key)
        sampler.recordStore(bytes: entry.value.count)
        return outcome
    }

    public func removeEntry(forKey key: CacheKey) async throws { try await base.removeEntry(forKey: key) }
    public func removeAll() async throws { try await base.removeAll() }
    public func usage() async throws -> TierUsage { try await base.usage() }
    public func statistics() async -> TierStatistics { await base.statistics() }
}

extension SampledTier: LocalCacheTier where Base: LocalCacheTier {
    public func entry(forKey key: CacheKey) throws -> CacheEntry? {
        sampler.recordLookup(key)
        return try base.entry(forKey: key)
    }

    public func store(_ entry: CacheEntry, forKey key: CacheKey) throws -> StoreOutcome {
        let outcome = try base.store(entry, forKey: key)
        sampler.recordStore(bytes: entry.value.count)
        return outcome
    }

    public func removeEntry(forKey key: CacheKey) throws { try base.removeEntry(forKey: key) }
    public func removeAll() throws { try base.removeAll() }
    public func usage() throws -> TierUsage { try base.usage() }
    public func statistics() -> TierStatistics { base.statistics() }
}
