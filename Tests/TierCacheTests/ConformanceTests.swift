import Testing
import TierCache
import TierCacheTesting

@Suite("Conformance of the in-memory tiers")
struct ConformanceTests {
    @Test(arguments: TierConformanceSuite.Check.allCases, MemoryTier.EvictionPolicy.allCases)
    func memoryTier(_ check: TierConformanceSuite.Check, policy: MemoryTier.EvictionPolicy) async throws {
        let suite = TierConformanceSuite(isPersistent: false) { _ in try MemoryTier(capacity: 1 << 20, policy: policy) }
        try await suite.run(check)
    }

    @Test(arguments: TierConformanceSuite.Check.allCases)
    func userWrittenTier(_ check: TierConformanceSuite.Check) async throws {
        let suite = TierConformanceSuite(isPersistent: false) { _ in DictionaryTier(capacity: 1 << 20) }
        try await suite.run(check)
    }

    @Test("A tier that breaks the contract fails the suite")
    func brokenTierFails() async throws {
        // A tier that never evicts breaks the capacity rule; the suite must say so.
        let suite = TierConformanceSuite(isPersistent: false) { _ in NeverEvictingTier() }
        await #expect(throws: TierConformanceSuite.Failure.self) { try await suite.run(.capacity) }
    }
}

/// Stores everything and reports usage past capacity: the suite must catch it.
final class NeverEvictingTier: LocalCacheTier {
    let name = "broken"
    let medium = TierMedium.memory
    private let inner = DictionaryTier(capacity: .max / 2)
    func entry(forKey key: CacheKey) -> CacheEntry? { inner.entry(forKey: key) }
    func store(_ entry: CacheEntry, forKey key: CacheKey) -> StoreOutcome {
        entry.size > 1 << 15 ? .refused(.tooLarge(size: entry.size, limit: 1 << 15)) : inner.store(entry, forKey: key)
    }
    func removeEntry(forKey key: CacheKey) { inner.removeEntry(forKey: key) }
    func removeAll() { inner.removeAll() }
    func usage() -> TierUsage {
        var usage = inner.usage()
        usage.capacity = 1 << 20
        usage.maxEntryBytes = 1 << 15
        return usage
    }
    func statistics() -> TierStatistics { inner.statistics() }
}
