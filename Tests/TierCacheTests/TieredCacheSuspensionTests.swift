import Foundation
import Testing

@testable import TierCache

/// `TieredCache.suspendTiers(above:)`: what keeps upper tiers coherent with a shared one skips
/// them while it cannot hear of the shared tier's changes, and nothing racing the suspension
/// leaves a value there.
@Suite("TieredCache: suspended upper tiers")
struct TieredCacheSuspensionTests {
    let key = CacheKey(digestOf: "k".utf8)
    func entry(_ byte: UInt8) -> CacheEntry { CacheEntry(value: [byte], storedAt: Date()) }

    @Test("Suspended tiers are neither read, promoted into nor written; resumed, they are")
    func suspendedTiersAreSkipped() async throws {
        let memory = try MemoryTier(capacity: 1 << 20)
        let shared = DictionaryTier(name: "shared", medium: .remote, capacity: 1 << 20)
        let cache = TieredCache(tiers: [memory, shared])
        _ = memory.store(entry(1), forKey: key)  // an older value above
        _ = shared.store(entry(2), forKey: key)

        cache.suspendTiers(above: 1)
        #expect(cache.suspendedTiers == 1)
        let hit = await cache.lookup(key)
        #expect(hit?.entry.value == [2] && hit?.tierIndex == 1, "the suspended tier is not read")
        #expect(memory.entry(forKey: key)?.value == [1], "nor promoted into")
        #expect(cache.localEntry(forKey: key)?.tierIndex == 1, "the synchronous read skips it too")

        let report = await cache.store(entry(3), forKey: key, policy: .allowed)
        #expect(report.outcomes.map(\.tierName) == [memory.name, "shared"])
        guard case .refused(.suspended) = report.outcomes[0].outcome else {
            Issue.record("the suspended tier's outcome is \(report.outcomes[0].outcome)")
            return
        }
        #expect(memory.entry(forKey: key) == nil, "the write removes the older value from the suspended tier")
        #expect(shared.entry(forKey: key)?.value == [3])
        let counted = await cache.statistics()
        #expect(counted.map(\.statistics.refusedWhileSuspended) == [1, 0], "the refusal is counted for its tier")

        cache.resumeTiers()
        #expect(cache.suspendedTiers == 0)
        #expect(await cache.lookup(key)?.tierIndex == 1)
        #expect(memory.entry(forKey: key)?.value == [3], "promoted again once resumed")
        #expect(cache.localEntry(forKey: key)?.tierIndex == 0)
    }

    @Test("A suspension names at most the tiers there are")
    func suspensionIsClamped() async throws {
        let memory = try MemoryTier(capacity: 1 << 20)
        let cache = TieredCache(tiers: [memory])
        _ = memory.store(entry(1), forKey: key)
        cache.suspendTiers(above: 7)
        #expect(cache.suspendedTiers == 1)
        #expect(await cache.lookup(key) == nil)
        cache.suspendTiers(above: -3)
        #expect(cache.suspendedTiers == 0)
        #expect(await cache.lookup(key)?.entry.value == [1])
    }

    @Test("A promotion that began before a suspension does not stay in the suspended tier")
    func racingPromotionIsUndone() async throws {
        // No flush: only the lookup's own check can undo it.
        let memory = try await lookUp { $0.suspendTiers(above: 1) }
        #expect(memory.entry(forKey: key) == nil)
    }

    @Test("A write that began before a suspension does not stay in the suspended tier")
    func racingWriteIsUndone() async throws {
        let memory = try MemoryTier(capacity: 1 << 20)
        let shared = GatedTier()
        let cache = TieredCache(tiers: [memory, shared])
        shared.changes.close()
        async let report = cache.store(entry(1), forKey: key, policy: .allowed)
        await shared.changes.waitUntilHeld()
        #expect(memory.entry(forKey: key)?.value == [1], "the write has passed the memory tier")
        cache.suspendTiers(above: 1)
        shared.changes.open()
        #expect(await report.isStoredAnywhere)
        #expect(memory.entry(forKey: key) == nil)
        cache.resumeTiers()
        #expect(await cache.lookup(key)?.tierIndex == 1)
    }

    @Test("A write a suspension emptied again reports the tier suspended: kept in memory alone, it is stored nowhere")
    func racingWriteReportsWhatStayed() async throws {
        let memory = try MemoryTier(capacity: 1 << 20)
        let shared = GatedTier()
        let cache = TieredCache(tiers: [memory, shared])
        shared.changes.close()
        // The shared tier is refused by the policy, and its older entry's removal is held.
        async let report = cache.store(entry(1), forKey: key, policy: .allowedInMemoryOnly)
        await shared.changes.waitUntilHeld()
        #expect(memory.entry(forKey: key)?.value == [1])
        cache.suspendTiers(above: 1)
        shared.changes.open()
        let outcomes = await report.outcomes
        #expect(memory.entry(forKey: key) == nil)
        guard case .refused(.suspended) = outcomes[0].outcome else {
            Issue.record("the memory tier's outcome: \(outcomes[0].outcome)")
            return
        }
        #expect(!(await report.isStoredAnywhere))
    }

    @Test("A synchronous write stores in the local tiers only, and skips the suspended ones")
    func storeLocally() async throws {
        let memory = try MemoryTier(capacity: 1 << 20)
        let disk = DictionaryTier(name: "disk", capacity: 1 << 20)
        let shared = GatedTier()
        let cache = TieredCache(tiers: [memory, disk, shared])

        let report = cache.storeLocally(entry(1), forKey: key, policy: .allowedInMemoryOnly)
        #expect(report.outcomes.map(\.tierName) == [memory.name, "disk"], "the network tier is not reached")
        guard case .stored = report.outcomes[0].outcome, case .refused(.policy) = report.outcomes[1].outcome else {
            Issue.record("outcomes: \(report.outcomes)")
            return
        }
        #expect(memory.entry(forKey: key)?.value == [1])
        #expect(try await shared.entry(forKey: key) == nil)

        cache.suspendTiers(above: 1)
        let suspended = cache.storeLocally(entry(2), forKey: key, policy: .allowed)
        guard case .refused(.suspended) = suspended.outcomes[0].outcome, case .stored = suspended.outcomes[1].outcome
        else {
            Issue.record("outcomes: \(suspended.outcomes)")
            return
        }
        #expect(memory.entry(forKey: key) == nil && disk.entry(forKey: key)?.value == [2])
        let counted = await cache.statistics()
        #expect(counted.map(\.statistics.refusedWhileSuspended) == [1, 0, 0])
        #expect(counted.map(\.statistics.refusedByPolicy) == [0, 1, 0])
    }

    @Test("A synchronous write is a change a racing promotion sees: the old value is not put back")
    func storeLocallyIsBracketed() async throws {
        let memory = try await lookUp { _ = $0.storeLocally(entry(2), forKey: key, policy: .allowed) }
        #expect(memory.entry(forKey: key)?.value != [1], "the promotion of the old value is undone")
    }

    /// Looks `key` up in a cache of a memory tier over a shared tier holding `entry(1)`, runs
    /// `meanwhile` while the lookup is held in the shared tier's read, and returns the memory tier
    /// once the lookup has answered.
    private func lookUp(meanwhile: (TieredCache) -> Void) async throws -> MemoryTier {
        let memory = try MemoryTier(capacity: 1 << 20)
        let shared = GatedTier()
        let cache = TieredCache(tiers: [memory, shared])
        _ = try await shared.store(entry(1), forKey: key)
        shared.reads.close()
        async let hit = cache.lookup(key)
        await shared.reads.waitUntilHeld()
        meanwhile(cache)
        shared.reads.open()
        #expect(await hit?.entry.value == [1], "the lookup answers with what it read")
        return memory
    }
}
