import Testing
import TierCacheEviction
import TierCacheTesting

/// Every built-in online policy keeps the contract `MemoryTier` relies on, and a policy that
/// breaks a rule fails the check for that rule, before a tier would stop on it.
@Suite("Policy conformance")
struct PolicyConformanceTests {
    @Test(arguments: PolicyConformanceSuite<LRUPolicy>.Check.allCases)
    func builtInPolicies(_ check: PolicyConformanceSuite<LRUPolicy>.Check) throws {
        func run<Policy: EvictionPolicy>(_ type: Policy.Type) throws {
            let named = try #require(PolicyConformanceSuite<Policy>.Check(rawValue: check.rawValue))
            try PolicyConformanceSuite(type).run(named)
        }
        try run(LRUPolicy.self)
        try run(FIFOPolicy.self)
        try run(CLOCKPolicy.self)
        try run(SIEVEPolicy.self)
        try run(S3FIFOPolicy.self)
        try run(ARCPolicy.self)
        try run(TwoQPolicy.self)
        try run(LIRSPolicy.self)
        try run(WTinyLFUPolicy.self)
    }

    @Test("A policy that evicts nothing fails the capacity check")
    func neverEvicts() {
        let failure = #expect(throws: PolicyConformanceSuite<NeverEvictingPolicy>.Failure.self) {
            try PolicyConformanceSuite(NeverEvictingPolicy.self).run(.staysWithinCapacity)
        }
        #expect(failure?.message.contains("past the capacity") == true, "\(String(describing: failure))")
    }

    @Test("A policy whose remove keeps the slot fails the removal check")
    func keepsRemovedSlot() {
        #expect(throws: PolicyConformanceSuite<KeepsRemovedSlotPolicy>.Failure.self) {
            try PolicyConformanceSuite(KeepsRemovedSlotPolicy.self).run(.removeForgets)
        }
    }

    @Test("A policy that evicts without listing departures fails the departures check, and only that one")
    func silentDepartures() throws {
        #expect(throws: PolicyConformanceSuite<SilentLRU>.Failure.self) {
            try PolicyConformanceSuite(SilentLRU.self).run(.reportsDepartures)
        }
        for check in PolicyConformanceSuite<SilentLRU>.Check.allCases where check != .reportsDepartures {
            try PolicyConformanceSuite(SilentLRU.self).run(check)
        }
    }

    /// Departures that are never one call's (no `SlotQueues.beginRequest()`): a superset, so the
    /// departures check passed it, and a `MemoryTier` stopped on it.
    @Test("A policy whose departures only grow fails the departures check, as the tier would stop")
    func hoardedDepartures() {
        let failure = #expect(throws: PolicyConformanceSuite<HoardsDeparturesPolicy>.Failure.self) {
            try PolicyConformanceSuite(HoardsDeparturesPolicy.self).run(.reportsDepartures)
        }
        #expect(failure?.message.contains("more with every call") == true, "\(String(describing: failure))")
    }

    @Test("A policy that remembers every object it ever saw fails the history check, and only that one")
    func hoardsHistory() throws {
        let failure = #expect(throws: PolicyConformanceSuite<HoardingLRU>.Failure.self) {
            try PolicyConformanceSuite(HoardingLRU.self).run(.boundedHistory)
        }
        #expect(failure?.message.contains("remembers") == true, "\(String(describing: failure))")
        for check in PolicyConformanceSuite<HoardingLRU>.Check.allCases where check != .boundedHistory {
            try PolicyConformanceSuite(HoardingLRU.self).run(check)
        }
    }

    @Test("A policy that reads key hashes without declaring usesKeyHash fails the declaration check")
    func undeclaredKeyHash() throws {
        let failure = #expect(throws: PolicyConformanceSuite<UndeclaredHashLRU>.Failure.self) {
            try PolicyConformanceSuite(UndeclaredHashLRU.self).run(.declaresKeyHash)
        }
        #expect(failure?.message.contains("usesKeyHash") == true, "\(String(describing: failure))")
        try PolicyConformanceSuite(DeclaredHashLRU.self).run(.declaresKeyHash)
    }

    @Test("A policy that admits objects past the size it says it admits fails the oversized check")
    func admitsOversized() {
        #expect(throws: PolicyConformanceSuite<UnderstatedLRU>.Failure.self) {
            try PolicyConformanceSuite(UnderstatedLRU.self).run(.refusesOversizedObjects)
        }
    }

    @Test("A policy whose retention list leaves out residents fails the listing check")
    func listsTooFew() {
        #expect(throws: PolicyConformanceSuite<ForgetfulListingLRU>.Failure.self) {
            try PolicyConformanceSuite(ForgetfulListingLRU.self).run(.listsResidents)
        }
    }

    /// (It hides the hits of every seventh slot number, so the reuse check, which compares hits
    /// under two numberings, fails too.)
    @Test("A policy that reports a hit as a miss fails the hits check, and only that and the reuse check")
    func missReportedOnHit() throws {
        let failure = #expect(throws: PolicyConformanceSuite<HitHidingLRU>.Failure.self) {
            try PolicyConformanceSuite(HitHidingLRU.self).run(.hitsAreResidents)
        }
        #expect(
            failure?.message.contains("was a miss while isResident said true") == true, "\(String(describing: failure))"
        )
        for check in PolicyConformanceSuite<HitHidingLRU>.Check.allCases
        where ![.hitsAreResidents, .reusedSlotsStartFresh].contains(check) {
            try PolicyConformanceSuite(HitHidingLRU.self).run(check)
        }
    }

    @Test("A policy whose prefetch hints count as requests fails the prefetch check, and only that one")
    func prefetchThatDecides() throws {
        let failure = #expect(throws: PolicyConformanceSuite<HintCountingLRU>.Failure.self) {
            try PolicyConformanceSuite(HintCountingLRU.self).run(.prefetchChangesNothing)
        }
        #expect(failure?.message.contains("prefetch") == true, "\(String(describing: failure))")
        for check in PolicyConformanceSuite<HintCountingLRU>.Check.allCases where check != .prefetchChangesNothing {
            try PolicyConformanceSuite(HintCountingLRU.self).run(check)
        }
    }

    @Test("A policy that evicts on a hit fails the hits check")
    func evictsOnHit() {
        let failure = #expect(throws: PolicyConformanceSuite<HitEvictingLRU>.Failure.self) {
            try PolicyConformanceSuite(HitEvictingLRU.self).run(.hitsAreResidents)
        }
        #expect(failure?.message.contains("evicted") == true, "\(String(describing: failure))")
    }

    @Test("A policy that reads a reused slot's leftover reference bit fails the reuse check, and only that one")
    func leftoverTag() throws {
        let failure = #expect(throws: PolicyConformanceSuite<LeftoverBitCLOCK>.Failure.self) {
            try PolicyConformanceSuite(LeftoverBitCLOCK.self).run(.reusedSlotsStartFresh)
        }
        #expect(failure?.message.contains("reused slot") == true, "\(String(describing: failure))")
        for check in PolicyConformanceSuite<LeftoverBitCLOCK>.Check.allCases where check != .reusedSlotsStartFresh {
            try PolicyConformanceSuite(LeftoverBitCLOCK.self).run(check)
        }
    }

    /// The simulator reads no departures; a policy that decides otherwise then was simulated as
    /// a policy the tier does not run, and passed every check driven the tier's way.
    @Test("A policy that decides otherwise when its departures are not read fails the reuse check, and only that one")
    func decidesByReadDepartures() throws {
        let failure = #expect(throws: PolicyConformanceSuite<UnreadHalvingLRU>.Failure.self) {
            try PolicyConformanceSuite(UnreadHalvingLRU.self).run(.reusedSlotsStartFresh)
        }
        #expect(
            failure?.message.contains("driven as the simulator drives it") == true, "\(String(describing: failure))")
        for check in PolicyConformanceSuite<UnreadHalvingLRU>.Check.allCases where check != .reusedSlotsStartFresh {
            try PolicyConformanceSuite(UnreadHalvingLRU.self).run(check)
        }
    }

    @Test("A policy that reads the future fails the online check")
    func readsTheFuture() {
        #expect(throws: PolicyConformanceSuite<ClairvoyantLRU>.Failure.self) {
            try PolicyConformanceSuite(ClairvoyantLRU.self).run(.online)
        }
    }
}

// README:begin policy-conformance
@Test(arguments: PolicyConformanceSuite<MyPolicy>.Check.allCases)
func policyConformance(_ check: PolicyConformanceSuite<MyPolicy>.Check) throws {
    try PolicyConformanceSuite(MyPolicy.self).run(check)
}
// README:end

/// A user's policy, as the README's example names it: SIEVE under another name.
struct MyPolicy: EvictionPolicyVariant {
    static let name = "mine"
    var base: SIEVEPolicy
    init(context: PolicyContext) { base = SIEVEPolicy(context: context) }
}

/// LRU that lists no departures: the tier would keep every evicted value.
struct SilentLRU: EvictionPolicy {
    static let name = "silent LRU"
    private var lru: LRUPolicy
    init(context: PolicyContext) { lru = LRUPolicy(context: context) }
    mutating func access(_ slot: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        lru.access(slot, size: size, keyHash: keyHash, position: position)
    }
    mutating func remove(_ slot: UInt32) { lru.remove(slot) }
    mutating func removeAll() { lru.removeAll() }
    func isResident(_ slot: UInt32) -> Bool { lru.isResident(slot) }
    func remembers(_ slot: UInt32) -> Bool { lru.remembers(slot) }
    var departures: ArraySlice<UInt32> { [] }
    var largestAdmissibleSize: UInt64 { lru.largestAdmissibleSize }
    var residentsByRetention: [UInt32] { lru.residentsByRetention }
}

/// LRU of half the capacity when its departures are not read (as in the simulator).
struct UnreadHalvingLRU: EvictionPolicyVariant {
    static let name = "unread-halving LRU"
    var base: LRUPolicy
    init(context: PolicyContext) {
        base = LRUPolicy(
            context: context.readsDepartures
                ? context
                : PolicyContext(
                    capacity: max(1, context.capacity / 2), expectedSlots: context.expectedSlots,
                    readsDepartures: false))
    }
}

/// LRU that remembers every slot it ever saw until it is removed: in a tier, every key ever
/// stored would stay in the key table.
struct HoardingLRU: EvictionPolicyVariant {
    static let name = "hoarding LRU"
    var base: LRUPolicy
    private var seen: Set<UInt32> = []
    init(context: PolicyContext) { base = LRUPolicy(context: context) }
    mutating func access(_ slot: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        seen.insert(slot)
        return base.access(slot, size: size, keyHash: keyHash, position: position)
    }
    mutating func remove(_ slot: UInt32) {
        seen.remove(slot)
        base.remove(slot)
    }
    mutating func removeAll() {
        seen.removeAll()
        base.removeAll()
    }
    func remembers(_ slot: UInt32) -> Bool { seen.contains(slot) }
}

/// LRU that keeps out objects whose key hash is odd, without declaring that it reads key hashes:
/// given 0 for every hash, as the tier and the simulator would, it admits everything.
struct UndeclaredHashLRU: EvictionPolicyVariant {
    static let name = "undeclared-hash LRU"
    var base: LRUPolicy
    init(context: PolicyContext) { base = LRUPolicy(context: context) }
    mutating func access(_ slot: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        guard keyHash & 1 == 0 || base.isResident(slot) else { return false }
        return base.access(slot, size: size, keyHash: keyHash, position: position)
    }
}

/// The same, declaring it: it then gets the hashes everywhere, and passes.
struct DeclaredHashLRU: EvictionPolicyVariant {
    static let name = "declared-hash LRU"
    static var usesKeyHash: Bool { true }
    var base: UndeclaredHashLRU
    init(context: PolicyContext) { base = UndeclaredHashLRU(context: context) }
}

/// LRU that says it reads the future: the tier refuses offline policies.
struct ClairvoyantLRU: EvictionPolicyVariant {
    static let name = "clairvoyant LRU"
    static var needsFuture: Bool { true }
    var base: LRUPolicy
    init(context: PolicyContext) { base = LRUPolicy(context: context) }
}

/// LRU that says it admits a tenth of its capacity, and admits up to all of it.
struct UnderstatedLRU: EvictionPolicyVariant {
    static let name = "understated LRU"
    var base: LRUPolicy
    init(context: PolicyContext) { base = LRUPolicy(context: context) }
    var largestAdmissibleSize: UInt64 { base.largestAdmissibleSize / 10 }
}

/// LRU whose retention list leaves out its oldest resident.
struct ForgetfulListingLRU: EvictionPolicyVariant {
    static let name = "forgetful listing LRU"
    var base: LRUPolicy
    init(context: PolicyContext) { base = LRUPolicy(context: context) }
    var residentsByRetention: [UInt32] { Array(base.residentsByRetention.dropFirst()) }
}

/// LRU that answers a hit on every seventh slot as a miss: the tier would store its value again
/// over the one it holds.
struct HitHidingLRU: EvictionPolicyVariant {
    static let name = "hit-hiding LRU"
    var base: LRUPolicy
    init(context: PolicyContext) { base = LRUPolicy(context: context) }
    mutating func access(_ slot: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        base.access(slot, size: size, keyHash: keyHash, position: position) && !slot.isMultiple(of: 7)
    }
}

/// LRU that drops its oldest resident on every hit, telling no one: a hit in the tier would lose
/// another key's value.
struct HitEvictingLRU: EvictionPolicyVariant {
    static let name = "hit-evicting LRU"
    var base: LRUPolicy
    init(context: PolicyContext) { base = LRUPolicy(context: context) }
    mutating func access(_ slot: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        let hit = base.access(slot, size: size, keyHash: keyHash, position: position)
        if hit, let oldest = base.residentsByRetention.last, oldest != slot { base.remove(oldest) }
        return hit
    }
}

/// LRU that takes a prefetch hint of a resident slot as a request (refreshing its recency): what
/// it keeps in the simulator, which hints, differs from what it keeps in a tier, which does not.
struct HintCountingLRU: EvictionPolicyVariant {
    static let name = "hint-counting LRU"
    var base: LRUPolicy
    init(context: PolicyContext) { base = LRUPolicy(context: context) }
    mutating func prefetch(_ slot: UInt32, keyHash: UInt64) {
        if base.isResident(slot) { _ = base.access(slot, size: 1, keyHash: keyHash, position: 0) }
    }
}

/// CLOCK that sets a slot's reference bit on a hit but does not clear it on admission, trusting
/// `SlotQueues.tag(of:)` to be 0 for a new object: true of the simulator's fresh ids, not of a
/// slot the tier reuses, where a new object inherits the last one's second chance.
struct LeftoverBitCLOCK: EvictionPolicy {
    static let name = "leftover-bit CLOCK"
    private static let cache: UInt8 = 1
    private var queues: SlotQueues
    private let capacity: UInt64

    init(context: PolicyContext) {
        queues = SlotQueues(queueCount: 1, reserving: context.expectedSlots, notingDepartures: context.readsDepartures)
        capacity = context.capacity
    }

    mutating func access(_ slot: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        queues.beginRequest()
        if queues.queue(of: slot) == Self.cache {
            queues.setTag(1, of: slot)
            return true
        }
        guard size <= capacity else { return false }
        while queues.weight(Self.cache) + size > capacity, let oldest = queues.popTail(Self.cache) {
            if queues.tag(of: oldest) != 0 {
                queues.setTag(0, of: oldest)
                queues.pushHead(oldest, Self.cache)
            }
        }
        queues.setSize(size, of: slot)
        queues.pushHead(slot, Self.cache)
        return false
    }

    mutating func remove(_ slot: UInt32) {
        queues.beginRequest()
        queues.remove(slot)
    }

    mutating func removeAll() { queues.removeAll() }
    func isResident(_ slot: UInt32) -> Bool { queues.queue(of: slot) != SlotQueues.none }
    func remembers(_ slot: UInt32) -> Bool { isResident(slot) }
    var departures: ArraySlice<UInt32> { queues.departures }
    var largestAdmissibleSize: UInt64 { capacity }
    var residentsByRetention: [UInt32] { queues.members(of: Self.cache) }
}
