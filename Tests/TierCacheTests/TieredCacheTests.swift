import Foundation
import Testing
@_spi(TierCacheInternals) import TierCache

@Suite("TieredCache")
struct TieredCacheTests {
    let memory: MemoryTier
    let disk: DictionaryTier
    let cache: TieredCache

    init() throws {
        memory = try MemoryTier(capacity: 100_000)
        disk = DictionaryTier(name: "disk", medium: .disk, capacity: 1_000_000)
        cache = TieredCache(tiers: [memory, disk], policyTable: .standard)
    }

    @Test("A lower-tier hit is promoted to the tiers above")
    func promotion() async throws {
        _ = disk.store(entry(10), forKey: key("k"))
        let hit = try #require(await cache.lookup(key("k")))
        #expect(hit.tierName == "disk" && hit.tierIndex == 1)
        #expect(memory.entry(forKey: key("k")) == entry(10))
        #expect(await cache.lookup(key("k"))?.tierName == "memory")
    }

    @Test("A memory-only entry found in a lower memory tier is never promoted to disk")
    func memoryOnlyPromotion() async throws {
        let top = DictionaryTier(name: "top-disk", medium: .disk, capacity: 100_000)
        let lowerMemory = try MemoryTier(capacity: 100_000)
        let odd = TieredCache(tiers: [top, lowerMemory])
        _ = lowerMemory.store(entry(5), forKey: key("k"))
        #expect(await odd.lookup(key("k"))?.tierName == "memory")
        #expect(top.entry(forKey: key("k")) == nil)
    }

    @Test("Writes follow the storage policy of the URL's scheme")
    func storagePolicies() async throws {
        let https = try #require(URL(string: "https://example.com/a"))
        let http = try #require(URL(string: "http://example.com/a"))
        let ftp = try #require(URL(string: "ftp://example.com/a"))
        #expect(await cache.store(entry(10), forKey: key("s"), url: https).isStoredAnywhere)
        #expect(memory.entry(forKey: key("s")) != nil && disk.entry(forKey: key("s")) != nil)

        let report = await cache.store(entry(10), forKey: key("p"), url: http)
        #expect(memory.entry(forKey: key("p")) != nil)
        #expect(disk.entry(forKey: key("p")) == nil)
        guard case .refused(.policy(.allowedInMemoryOnly)) = report.outcomes[1].outcome else {
            Issue.record("disk outcome was \(report.outcomes[1].outcome)")
            return
        }

        let none = await cache.store(entry(10), forKey: key("f"), url: ftp)
        #expect(!none.isStoredAnywhere)
        #expect(await cache.entry(forKey: key("f")) == nil)

        let statistics = await cache.statistics()
        #expect(statistics[0].statistics.refusedByPolicy == 1)
        #expect(statistics[1].statistics.refusedByPolicy == 2)
    }

    @Test("A per-entry override narrows the policy and removes wider copies")
    func perEntryOverride() async throws {
        await cache.store(entry(10), forKey: key("k"), policy: .allowed)
        await cache.store(entry(20), forKey: key("k"), policy: .allowedInMemoryOnly)
        #expect(disk.entry(forKey: key("k")) == nil, "the older disk copy must not outlive a memory-only write")
        #expect(memory.entry(forKey: key("k"))?.size == 20)
    }

    @Test("The per-entry size rule refuses visibly, tier by tier")
    func tooLarge() async throws {
        // 10,000 bytes: over the memory tier's 5,000-byte limit, under the disk tier's 50,000.
        let report = await cache.store(entry(10_000), forKey: key("big"), policy: .allowed)
        guard case .refused(.tooLarge(_, 5_000)) = report.outcomes[0].outcome, case .stored = report.outcomes[1].outcome
        else {
            Issue.record("outcomes were \(report.outcomes)")
            return
        }
        #expect(await cache.statistics()[0].statistics.refusedTooLarge == 1)
        // A hit on disk is offered to memory, which refuses it again: still served from disk.
        #expect(await cache.lookup(key("big"))?.tierName == "disk")
    }

    @Test("Remove and remove-all reach every tier")
    func removal() async throws {
        await cache.store(entry(10), forKey: key("a"), policy: .allowed)
        await cache.store(entry(10), forKey: key("b"), policy: .allowed)
        try await cache.removeEntry(forKey: key("a"))
        #expect(memory.entry(forKey: key("a")) == nil && disk.entry(forKey: key("a")) == nil)
        try await cache.removeAll()
        #expect(memory.usage().entries == 0 && disk.usage().entries == 0)
    }

    @Test("A failing tier is counted and skipped; removals report it")
    func failingTier() async throws {
        let failing = FailingTier()
        let degraded = TieredCache(tiers: [memory, failing, disk])
        _ = disk.store(entry(10), forKey: key("k"))
        #expect(await degraded.lookup(key("k"))?.tierName == "disk")
        let report = await degraded.store(entry(10), forKey: key("j"), policy: .allowed)
        guard case .failed = report.outcomes[1].outcome else {
            Issue.record("outcome was \(report.outcomes[1].outcome)")
            return
        }
        #expect(report.isStoredAnywhere)
        await #expect(throws: TierCacheError.self) { try await degraded.removeEntry(forKey: key("j")) }
        #expect(disk.entry(forKey: key("j")) == nil, "the healthy tiers are still cleared")
        #expect(await degraded.statistics()[1].statistics.errors >= 3)
    }

    @Test("A tier the policy excludes, whose older entry could not be removed, is reported failed, not only refused")
    func failedRemovalUnderANarrowerPolicy() async throws {
        let degraded = TieredCache(tiers: [memory, FailingTier()])
        let report = await degraded.store(entry(10), forKey: key("k"), policy: .allowedInMemoryOnly)
        #expect(report.isStoredAnywhere)
        guard case .failed = report.outcomes[1].outcome else {
            Issue.record("outcome was \(report.outcomes[1].outcome)")
            return
        }
        let healthy = await cache.store(entry(10), forKey: key("k"), policy: .allowedInMemoryOnly)
        guard case .refused(.policy(.allowedInMemoryOnly)) = healthy.outcomes[1].outcome else {
            Issue.record("outcome was \(healthy.outcomes[1].outcome)")
            return
        }
    }

    /// The older entry stayed in the tier whose store threw: served, and promoted, once the
    /// tiers above had let the newer one go.
    @Test("A tier whose store fails loses the key's older entry", arguments: [false, true])
    func failedStoreRemovesTheOlderEntry(synchronously: Bool) async throws {
        let lower = try StoreFailingTier()
        let tiered = TieredCache(tiers: [memory, lower])
        #expect(await tiered.store(entry(10, byte: 1), forKey: key("k"), policy: .allowed).outcomes.count == 2)
        lower.storesFail.withLock { $0 = true }
        let report =
            synchronously
            ? tiered.storeLocally(entry(10, byte: 2), forKey: key("k"), policy: .allowed)
            : await tiered.store(entry(10, byte: 2), forKey: key("k"), policy: .allowed)
        #expect(report.outcomes.map(\.tierName) == [memory.name, lower.name])
        guard case .failed = report.outcomes[1].outcome else {
            Issue.record("the failing tier's outcome: \(report.outcomes[1].outcome)")
            return
        }
        memory.removeEntry(forKey: key("k"))  // as an eviction would
        #expect(await tiered.lookup(key("k")) == nil, "the older entry came back")
    }

    @Test("Synchronous callers read through the local tiers")
    func synchronousLookup() throws {
        _ = disk.store(entry(10), forKey: key("k"))
        let hit = try #require(cache.localEntry(forKey: key("k")))
        #expect(hit.tierName == "disk")
        #expect(memory.entry(forKey: key("k")) != nil)
        #expect(cache.localEntry(forKey: key("absent")) == nil)
    }

    @Test("Lookups limited to some tiers read only those, and still promote into every tier above")
    func partialLookups() async throws {
        #expect(cache.leadingMemoryTiers == 1)
        #expect(
            TieredCache(tiers: [disk, memory]).leadingMemoryTiers == 0, "memory under a disk tier is not at the top")
        _ = disk.store(entry(10), forKey: key("k"))
        #expect(
            cache.localEntry(forKey: key("k"), tiers: 0..<cache.leadingMemoryTiers) == nil, "the disk tier was not read"
        )
        #expect(disk.statistics().hits == 0)
        let hit = try #require(await cache.lookup(key("k"), from: cache.leadingMemoryTiers))
        #expect(hit.tierName == "disk")
        #expect(memory.statistics().misses == 1, "the memory tier was read once, by the limited lookup")
        #expect(memory.entry(forKey: key("k")) == entry(10), "promoted into the tier it skipped")
        #expect(cache.localEntry(forKey: key("k"), tiers: 5..<9) == nil, "a range past the stack reads nothing")
        #expect(await cache.lookup(key("k"), from: 7) == nil)
    }
}

/// A memory tier whose stores throw while `storesFail` is set (a disk that fails a commit).
final class StoreFailingTier: LocalCacheTier {
    let name = "store-failing"
    let medium = TierMedium.disk
    let storesFail = Locked(false)
    private let inner: MemoryTier

    init() throws { inner = try MemoryTier(capacity: 1 << 20) }

    func entry(forKey key: CacheKey) -> CacheEntry? { inner.entry(forKey: key) }
    func store(_ entry: CacheEntry, forKey key: CacheKey) throws -> StoreOutcome {
        if storesFail.withLock({ $0 }) { throw TierCacheError(.storageFailure, "the test's commit failed") }
        return inner.store(entry, forKey: key)
    }
    func removeEntry(forKey key: CacheKey) { inner.removeEntry(forKey: key) }
    func removeAll() { inner.removeAll() }
    func usage() -> TierUsage { inner.usage() }
    func statistics() -> TierStatistics { inner.statistics() }
}

/// A tier whose storage is broken: every operation throws.
final class FailingTier: CacheTier {
    let name = "failing"
    let medium = TierMedium.remote
    private func fail() -> TierCacheError { TierCacheError(.storageFailure, "the test's tier is broken") }
    func entry(forKey key: CacheKey) async throws -> CacheEntry? { throw fail() }
    func store(_ entry: CacheEntry, forKey key: CacheKey) async throws -> StoreOutcome { throw fail() }
    func removeEntry(forKey key: CacheKey) async throws { throw fail() }
    func removeAll() async throws { throw fail() }
    func usage() async throws -> TierUsage { throw fail() }
    func statistics() async -> TierStatistics { TierStatistics() }
}
