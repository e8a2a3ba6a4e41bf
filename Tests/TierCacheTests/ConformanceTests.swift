import Foundation
import Testing
@_spi(TierCacheInternals) import TierCache
import TierCacheEviction
import TierCacheTesting

@Suite("Conformance of the in-memory tiers")
struct ConformanceTests {
    @Test(arguments: TierConformanceSuite.Check.allCases, MemoryTier.EvictionPolicy.allCases)
    func memoryTier(_ check: TierConformanceSuite.Check, policy: MemoryTier.EvictionPolicy) async throws {
        let suite = TierConformanceSuite(isPersistent: false) { _, clock in
            try MemoryTier(.init(capacity: 1 << 20, policy: policy, clock: clock))
        }
        try await suite.run(check)
    }

    /// A policy of the user's own, in a tier made with the suite's clock and a name: the whole
    /// configuration, not only a capacity (`init(_:policyType:)`).
    @Test(arguments: TierConformanceSuite.Check.allCases)
    func memoryTierWithAUsersPolicy(_ check: TierConformanceSuite.Check) async throws {
        let suite = TierConformanceSuite(isPersistent: false) { _, clock in
            try MemoryTier(.init(capacity: 1 << 20, name: "mine", clock: clock), policyType: MyPolicy.self)
        }
        try await suite.run(check)
        let tier = try MemoryTier(
            .init(capacity: 1 << 20, maxEntryFraction: 0.5, name: "mine"), policyType: MyPolicy.self)
        #expect(tier.name == "mine" && tier.usage().maxEntryBytes == 1 << 19)
    }

    @Test("The admission-rule policy keeps the policy contract")
    func admissionRulePolicyConforms() throws {
        try PolicyConformanceSuite(AdmitsOnSecondStore.self).runAll()
    }

    /// A policy whose admission rule keeps an entry out on its first store is a correct tier's:
    /// the suite stores again where it needs the entry, rather than fail the tier.
    @Test(arguments: TierConformanceSuite.Check.allCases)
    func memoryTierWithAnAdmissionRule(_ check: TierConformanceSuite.Check) async throws {
        let suite = TierConformanceSuite(isPersistent: false) { _, clock in
            try MemoryTier(.init(capacity: 1 << 20, clock: clock), policyType: AdmitsOnSecondStore.self)
        }
        try await suite.run(check)
    }

    @Test(arguments: TierConformanceSuite.Check.allCases)
    func userWrittenTier(_ check: TierConformanceSuite.Check) async throws {
        let suite = TierConformanceSuite(isPersistent: false) { _, clock in
            DictionaryTier(capacity: 1 << 20, clock: clock)
        }
        try await suite.run(check)
        // Made with the system's clock, as the README's example is.
        try await TierConformanceSuite(isPersistent: false) { _ in DictionaryTier(capacity: 1 << 20) }.run(check)
    }

    @Test("A tier that checks expiry only when storing fails the expiry check, given the suite's clock")
    func expiryCheckedOnlyOnStore() async throws {
        let suite = TierConformanceSuite(isPersistent: false) { _, clock in
            DictionaryTier(capacity: 1 << 20, clock: clock, checksExpiryOnRead: false)
        }
        await #expect(throws: TierConformanceSuite.Failure.self) { try await suite.run(.expiry) }
    }

    @Test("The directory a check gives the tier exists, as documented", arguments: TierConformanceSuite.Check.allCases)
    func directoryExists(_ check: TierConformanceSuite.Check) async throws {
        let suite = TierConformanceSuite(isPersistent: false) { directory in
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory),
                isDirectory.boolValue
            else { throw TierCacheError(.notADirectory, "\(directory.path) does not exist") }
            return DictionaryTier(capacity: 1 << 20)
        }
        try await suite.run(check)
    }

    /// A tier bounded by a count alone reports a capacity of 2^60 bytes (an entry limit of 2^60/20):
    /// the suite cannot write that much, and says so, rather than allocate it or overflow.
    @Test(
        "Capacities and entry limits past what the suite writes fail their checks with a message",
        arguments: [
            TierConformanceSuite.Check.entrySizeRule, .capacity,
        ])
    func tooLargeToExercise(_ check: TierConformanceSuite.Check) async throws {
        let suite = TierConformanceSuite(isPersistent: false) { _ in
            try MemoryTier(capacity: .max, maxEntryCount: 1_000)
        }
        let failure = await #expect(throws: TierConformanceSuite.Failure.self) { try await suite.run(check) }
        #expect(
            failure?.message.contains("make the tier with a test capacity") == true, "\(String(describing: failure))")
    }

    @Test("A tier that breaks the contract fails the suite")
    func brokenTierFails() async throws {
        // A tier that never evicts breaks the capacity rule; the suite must say so, with one
        // writer and with several.
        let suite = TierConformanceSuite(isPersistent: false) { _ in NeverEvictingTier() }
        await #expect(throws: TierConformanceSuite.Failure.self) { try await suite.run(.capacity) }
        let failure = await #expect(throws: TierConformanceSuite.Failure.self) {
            try await suite.run(.concurrentEviction)
        }
        #expect(failure?.message.contains("exceeds capacity") == true, "\(String(describing: failure))")
    }

    /// A tier that works until it is emptied, and one whose byte count drifts when a key is
    /// stored over: each passes the other checks' first steps, and its own check catches it.
    @Test(
        "A tier unusable after removeAll, whose accounting drifts under overwrites, or that tears values, fails its check",
        arguments: [
            (SlippingTier.Slip.forgetsAfterRemoveAll, TierConformanceSuite.Check.removeAll),
            (.countsOverwritesTwice, .overwrite),
            (.tearsValues, .concurrentUse),
            (.countsNothing, .statistics),
            (.countsHitsTwice, .statistics),
        ])
    func slippingTierFails(_ slip: SlippingTier.Slip, _ check: TierConformanceSuite.Check) async throws {
        let suite = TierConformanceSuite(isPersistent: false) { _ in SlippingTier(slip) }
        await #expect(throws: TierConformanceSuite.Failure.self) { try await suite.run(check) }
        // Without the slip, the same tier passes.
        try await TierConformanceSuite(isPersistent: false) { _ in SlippingTier(nil) }.run(check)
    }
}

/// A dictionary tier with one slip of the contract, or none.
final class SlippingTier: LocalCacheTier {
    enum Slip: Sendable {
        /// After `removeAll`, stores report `.stored` and keep nothing.
        case forgetsAfterRemoveAll
        /// A store over a key adds its bytes without taking the old entry's away.
        case countsOverwritesTwice
        /// A read returns the value with its last byte changed: one no writer stored.
        case tearsValues
        /// Its statistics stay at zero.
        case countsNothing
        /// Each hit is counted twice.
        case countsHitsTwice
    }
    let name = "slipping"
    let medium = TierMedium.memory
    private let slip: Slip?
    private let state = Locked<(entries: [CacheKey: CacheEntry], bytes: Int, emptied: Bool)>(([:], 0, false))
    private let counters = TierCounters(tierName: "slipping")

    init(_ slip: Slip?) { self.slip = slip }

    func entry(forKey key: CacheKey) -> CacheEntry? {
        guard var found = state.withLock({ $0.entries[key] }) else {
            counters.recordLookup(hit: false)
            return nil
        }
        counters.recordLookup(hit: true)
        if slip == .countsHitsTwice { counters.recordLookup(hit: true) }
        if slip == .tearsValues, !found.value.isEmpty { found.value[found.value.count - 1] &+= 1 }
        return found
    }
    func store(_ entry: CacheEntry, forKey key: CacheKey) -> StoreOutcome {
        let outcome = storeCounted(entry, forKey: key)
        counters.record(outcome)
        return outcome
    }
    private func storeCounted(_ entry: CacheEntry, forKey key: CacheKey) -> StoreOutcome {
        guard entry.size <= 1 << 15 else { return .refused(.tooLarge(size: entry.size, limit: 1 << 15)) }
        guard !entry.metadata.isExpired(at: Date()) else { return .refused(.alreadyExpired) }
        return state.withLock { state in
            if slip == .forgetsAfterRemoveAll, state.emptied { return .stored }
            if let old = state.entries[key], slip != .countsOverwritesTwice { state.bytes -= old.size }
            state.entries[key] = entry
            state.bytes += entry.size
            return .stored
        }
    }
    func removeEntry(forKey key: CacheKey) {
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: key) { state.bytes -= old.size }
        }
    }
    func removeAll() { state.withLock { $0 = ([:], 0, true) } }
    func usage() -> TierUsage {
        state.withLock {
            TierUsage(bytes: $0.bytes, entries: $0.entries.count, capacity: 1 << 20, maxEntryBytes: 1 << 15)
        }
    }
    func statistics() -> TierStatistics {
        slip == .countsNothing ? TierStatistics() : counters.snapshot(usage: usage())
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
