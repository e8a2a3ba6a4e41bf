import Foundation
import TierCache

/// How the runner calls a subject: each case through the interface an application would use.
enum SubjectDriver: Sendable {
    case tier(any CacheTier)
    case localTier(any LocalCacheTier)
    /// A tiered cache, and whether every tier is local (then lookups never suspend).
    case tiered(TieredCache, allLocal: Bool)

    static func tiered(_ cache: TieredCache) -> SubjectDriver {
        .tiered(cache, allLocal: cache.tiers.allSatisfy { $0 is any LocalCacheTier })
    }

    /// What the subject's baseline is chosen by: its tier's medium; for a tiered cache, that of
    /// its lowest tier not in memory (memory over a disk is compared with the disk's baseline, as
    /// the `memoryOverLMDB` preset is), else memory.
    var medium: TierMedium {
        switch self {
        case .tier(let tier): tier.medium
        case .localTier(let tier): tier.medium
        case .tiered(let cache, _): cache.tiers.last { $0.medium != .memory }?.medium ?? .memory
        }
    }

    /// The value's size on a hit, `nil` on a miss.
    @inline(__always)
    func get(_ key: CacheKey) async throws -> Int? {
        switch self {
        case .localTier(let tier): return try Self.localGet(tier, key)
        case .tier(let tier): return try await tier.entry(forKey: key)?.value.count
        case .tiered(let cache, let allLocal):
            if allLocal { return cache.localEntry(forKey: key)?.entry.value.count }
            return await cache.entry(forKey: key)?.value.count
        }
    }

    /// Stores `entry`, saying whether it was kept; a tiered cache reports its per-tier
    /// failures rather than throwing them (as in an app).
    @inline(__always)
    @discardableResult
    func set(_ entry: CacheEntry, forKey key: CacheKey) async throws -> WriteOutcome {
        switch self {
        case .localTier(let tier): try Self.localSet(tier, entry, key)
        case .tier(let tier): WriteOutcome(try await tier.store(entry, forKey: key))
        case .tiered(let cache, _): WriteOutcome(await cache.store(entry, forKey: key, policy: .allowed))
        }
    }

    @inline(__always)
    func remove(_ key: CacheKey) async throws {
        switch self {
        case .localTier(let tier): try Self.localRemove(tier, key)
        case .tier(let tier): try await tier.removeEntry(forKey: key)
        case .tiered(let cache, _): try await cache.removeEntry(forKey: key)
        }
    }

    /// Stores every object of `sequence` once, in id order (a prefilled subject).
    func storeEveryKey(of sequence: WorkloadRequests, keys: [CacheKey]) async throws {
        for object in sequence.sizes.indices {
            // A cancelled run (an interrupted `tiercache bench`) stops here too, as its loops do.
            if object & 63 == 0 { try Task.checkCancellation() }
            try await set(CacheEntry(value: sequence.value(for: UInt32(object)), storedAt: .now), forKey: keys[object])
        }
    }

    /// Throws unless the subject holds every one of `keys` (stored beforehand): a subject too
    /// small for them would time misses under the name of a get-hit benchmark.
    func requireEveryKey(_ keys: [CacheKey], of subject: String, valueSize: Int) async throws {
        var held = 0
        for key in keys where try await get(key) != nil { held += 1 }
        guard held == keys.count else {
            throw BenchmarkError.subjectUnavailable(
                subject: subject,
                reason: "it holds \(held) of the \(keys.count) keys of \(valueSize) bytes the get-hit benchmark "
                    + "stores, so it would time misses: give it more capacity, or register fewer keys")
        }
    }

    /// Each tier's statistics, top to bottom.
    func statistics() async -> [(tier: String, statistics: TierStatistics)] {
        switch self {
        case .localTier(let tier): [(tier.name, Self.localStatistics(tier))]
        case .tier(let tier): [(tier.name, await tier.statistics())]
        case .tiered(let cache, _): await cache.statistics().map { ($0.tierName, $0.statistics) }
        }
    }

    // In an async function Swift picks a tier's async overloads; these synchronous functions call
    // the synchronous ones, as `TieredCache` does for local tiers (no suspension, no executor hop).

    private static func localGet(_ tier: any LocalCacheTier, _ key: CacheKey) throws -> Int? {
        try tier.entry(forKey: key)?.value.count
    }

    private static func localSet(
        _ tier: any LocalCacheTier, _ entry: CacheEntry, _ key: CacheKey
    ) throws
        -> WriteOutcome
    {
        WriteOutcome(try tier.store(entry, forKey: key))
    }

    private static func localRemove(_ tier: any LocalCacheTier, _ key: CacheKey) throws {
        try tier.removeEntry(forKey: key)
    }

    private static func localStatistics(_ tier: any LocalCacheTier) -> TierStatistics {
        tier.statistics()
    }
}
