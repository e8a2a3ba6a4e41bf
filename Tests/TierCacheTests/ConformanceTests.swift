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

    /// A tier admitting entries of 1% of its capacity: the writers wrote 48 values of half that
    /// each, under the capacity in all, and the check failed a correct tier for counting no
    /// eviction.
    @Test("concurrentEviction overflows a tier whose entry limit is well under 5%")
    func concurrentEvictionWithASmallEntryLimit() async throws {
        try await TierConformanceSuite(isPersistent: false) { _ in
            try MemoryTier(.init(capacity: 1 << 20, maxEntryFraction: 0.01))
        }.run(.concurrentEviction)
    }

    /// A persistent tier whose removals and replacements do not reach its files (an append-only
    /// log without deletion records): reopened, removed values came back, and the check passed.
    @Test("A persistent tier that forgets its removals on reopening fails the persistence check")
    func removalsThatDoNotPersistFail() async throws {
        await #expect(throws: TierConformanceSuite.Failure.self) {
            try await TierConformanceSuite(isPersistent: true) { directory in
                AppendOnlyTier(directory: directory, persistsRemovals: false)
            }.run(.persistence)
        }
        try await TierConformanceSuite(isPersistent: true) { directory in
            AppendOnlyTier(directory: directory, persistsRemovals: true)
        }.run(.persistence)
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
            // As many hits as misses made these two pass.
            (.swapsHitsAndMisses, .statistics),
            // With one date for every writer, another entry's metadata was the same.
            (.keepsFirstMetadata, .concurrentUse),
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
        /// Each hit is counted as a miss, and each miss as a hit.
        case swapsHitsAndMisses
        /// A store over a key keeps the metadata of the entry it replaces (kept apart from the
        /// value, as a tier with an index of dates might).
        case keepsFirstMetadata
    }
    let name = "slipping"
    let medium = TierMedium.memory
    private let slip: Slip?
    private let state = Locked<(entries: [CacheKey: CacheEntry], bytes: Int, emptied: Bool)>(([:], 0, false))
    private let counters = TierCounters(tierName: "slipping")

    init(_ slip: Slip?) { self.slip = slip }

    func entry(forKey key: CacheKey) -> CacheEntry? {
        guard var found = state.withLock({ $0.entries[key] }) else {
            counters.recordLookup(hit: slip == .swapsHitsAndMisses)
            return nil
        }
        counters.recordLookup(hit: slip != .swapsHitsAndMisses)
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
            if slip == .keepsFirstMetadata, let old = state.entries[key] {
                state.entries[key] = CacheEntry(
                    value: entry.value, storedAt: old.metadata.storedAt, expiresAt: old.metadata.expiresAt)
            } else {
                state.entries[key] = entry
            }
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

/// A "persistent" tier whose files are a log in memory per directory, kept across instances:
/// stores append to it; removals and replacements reach it only with `persistsRemovals`, else only
/// the instance's own view.
final class AppendOnlyTier: LocalCacheTier {
    let name = "append-only"
    let medium = TierMedium.disk
    private static let logs = Locked<[String: [(CacheKey, CacheEntry)]]>([:])
    private let path: String
    private let persistsRemovals: Bool
    private let view: Locked<[CacheKey: CacheEntry]>
    private let counters = TierCounters(tierName: "append-only")

    init(directory: URL, persistsRemovals: Bool) {
        path = directory.path
        self.persistsRemovals = persistsRemovals
        // Replayed from the log: the last value stored under each key.
        let log = Self.logs.withLock { $0[directory.path] ?? [] }
        view = Locked(Dictionary(log, uniquingKeysWith: { _, last in last }))
    }

    func entry(forKey key: CacheKey) -> CacheEntry? {
        let found = view.withLock { $0[key] }
        counters.recordLookup(hit: found != nil)
        return found
    }
    func store(_ entry: CacheEntry, forKey key: CacheKey) -> StoreOutcome {
        guard !entry.metadata.isExpired(at: Date()) else { return .refused(.alreadyExpired) }
        view.withLock { $0[key] = entry }
        // Without `persistsRemovals` a key's first value stays the log's last (no replacement).
        Self.logs.withLock { logs in
            if persistsRemovals || !(logs[path] ?? []).contains(where: { $0.0 == key }) {
                logs[path, default: []].append((key, entry))
            }
        }
        return .stored
    }
    func removeEntry(forKey key: CacheKey) {
        view.withLock { _ = $0.removeValue(forKey: key) }
        if persistsRemovals { Self.logs.withLock { $0[path]?.removeAll { $0.0 == key } } }
    }
    func removeAll() {
        view.withLock { $0 = [:] }
        Self.logs.withLock { $0[path] = [] }
    }
    func usage() -> TierUsage {
        view.withLock { view in
            TierUsage(
                bytes: view.values.reduce(0) { $0 + $1.size }, entries: view.count, capacity: 1 << 20,
                maxEntryBytes: 1 << 15)
        }
    }
    func statistics() -> TierStatistics { counters.snapshot(usage: usage()) }
}
