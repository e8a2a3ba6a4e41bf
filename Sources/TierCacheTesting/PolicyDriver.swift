import TierCache
import TierCacheEviction

/// Drives a policy as `MemoryTier` does, for ``PolicyConformanceSuite``, and checks one rule of
/// the contract after every call.
///
/// It keeps what the policy's reports say (a slot is resident or remembered from the call that
/// admitted it to the call whose `departures` name it gone), as the tier does, and compares that
/// with what `isResident(_:)` and `remembers(_:)` answer. A slot the policy forgets goes to a new
/// object (a new key hash and size), as the tier gives it to the next new key.
struct PolicyDriver<Policy: EvictionPolicy> {
    typealias Check = PolicyConformanceSuite<Policy>.Check

    private let check: Check
    private let workload: PolicyWorkload
    private var policy: Policy
    /// For ``PolicyConformanceSuite/Check/prefetchChangesNothing``: the same policy given the
    /// same calls without prefetch hints, which `policy` gets before each request.
    private var unhinted: Policy?
    /// Each slot's object: its size, and its key's hash.
    private var sizes: [UInt64]
    private var hashes: [UInt64]
    /// What the policy's reports say it holds.
    private var reportedResident: Set<UInt32> = []
    private var reportedRemembered: Set<UInt32> = []
    /// Seeded, so that every run replays the same requests.
    private var random = SplitMix64(seed: 0x5EED)
    private var step = 0
    /// How many departures the last call listed (``settle(accessed:)``).
    private var departuresLastSettled = 0
    /// The slots of the next requests, drawn ahead, so that a hint names a slot requested
    /// ``hintDistance`` requests later, as the simulator's do.
    private var upcoming: [UInt32] = []
    /// How far ahead the simulator hints (its `prefetchDistance`).
    private static var hintDistance: Int { 8 }

    init(check: Check, workload: PolicyWorkload) {
        self.check = check
        self.workload = workload
        // No expected slot count, as the tier gives none: per-slot arrays must grow as slots appear.
        policy = Policy(context: PolicyContext(capacity: workload.capacity, readsDepartures: true))
        if check == .prefetchChangesNothing {
            unhinted = Policy(context: PolicyContext(capacity: workload.capacity, readsDepartures: true))
        }
        sizes = []
        hashes = []
        for _ in 0..<workload.slots {
            sizes.append(drawSize())
            hashes.append(nextRandom())
        }
    }

    /// Replays `requests` requests, with removals and new sizes among them, then empties the policy.
    mutating func replay(requests: Int) throws {
        for step in 0..<requests {
            self.step = step
            let slot = pickSlot()
            let roll = nextRandom() % 100
            if roll < 3, reportedRemembered.contains(slot) {
                try remove(slot)
                newObject(in: slot)
            } else if roll < 6, workload.largestSize > 1 {
                // The same key stored at a new size: the tier removes the slot first if it holds a
                // value (a resident size never changes), not if the policy only remembers it; now
                // and then the size is more than the policy admits.
                let hash = hashes[Int(slot)]
                if reportedResident.contains(slot) { try remove(slot) }
                hashes[Int(slot)] = hash
                let largest = min(policy.largestAdmissibleSize, workload.capacity)
                sizes[Int(slot)] = roll == 5 ? largest + 1 + nextRandom() % 100 : drawSize()
                try access(slot)
            } else {
                try access(slot)
            }
        }
        policy.removeAll()
        unhinted?.removeAll()
        let kept = (0..<workload.slots).filter { policy.isResident($0) || policy.remembers($0) }
        try expect(.removeForgets, kept.isEmpty, "removeAll() kept slots \(kept.prefix(10))")
    }

    private mutating func access(_ slot: UInt32) throws {
        let size = sizes[Int(slot)]
        let wasResident = policy.isResident(slot)
        let residentBefore = check == .hitsAreResidents ? residents() : []
        if unhinted != nil, let ahead = upcoming.last {
            // As the simulator hints: the slot requested a few requests ahead, so that what a
            // hint leaves behind is used requests later (a hint of the request's own slot just
            // before it refreshed whatever a stale one would have left).
            policy.prefetch(ahead, keyHash: keyHash(of: ahead))
        }
        let hash = keyHash(of: slot)
        let hit = policy.access(slot, size: size, keyHash: hash, position: 0)
        if let unhintedHit = unhinted?.access(slot, size: size, keyHash: hash, position: 0) {
            try expect(
                .prefetchChangesNothing, hit == unhintedHit,
                "a request for slot \(slot) was \(hit ? "a hit" : "a miss") after prefetch hints, "
                    + "\(unhintedHit ? "a hit" : "a miss") without them")
        }
        try expect(
            .hitsAreResidents, hit == wasResident,
            "a request for slot \(slot) was \(hit ? "a hit" : "a miss") while isResident said \(wasResident)")
        if hit, check == .hitsAreResidents {
            let gone = residentBefore.subtracting(residents())
            try expect(.hitsAreResidents, gone.isEmpty, "a hit on slot \(slot) evicted \(gone.sorted().prefix(10))")
        }
        if size > policy.largestAdmissibleSize {
            try expect(
                .refusesOversizedObjects, !policy.isResident(slot),
                "slot \(slot) of size \(size) is resident, past largestAdmissibleSize \(policy.largestAdmissibleSize)")
        }
        try settle(accessed: slot)
        try verify()
    }

    private mutating func remove(_ slot: UInt32) throws {
        policy.remove(slot)
        unhinted?.remove(slot)
        try settle(accessed: nil)
        try expect(
            .removeForgets, !policy.isResident(slot) && !policy.remembers(slot),
            "remove(\(slot)) left it \(policy.isResident(slot) ? "resident" : "remembered")")
        reportedResident.remove(slot)
        reportedRemembered.remove(slot)
        try verify()
    }

    /// Reads the last call's reports, as the tier does after each call; fails a list of
    /// departures that only grows, on which the tier stops (``DepartureLeak``).
    private mutating func settle(accessed: UInt32?) throws {
        let listed = policy.departures.count
        try expect(
            .reportsDepartures,
            // Against the slots the policy remembers: the keys the tier holds, which its bound counts.
            !DepartureLeak.isLeaking(
                listed: listed, lastListed: departuresLastSettled, slots: reportedRemembered.count),
            "departures lists \(listed) slots while \(reportedRemembered.count) are remembered, more with every call: they are one call's (call SlotQueues.beginRequest() at the start of each access and removal); MemoryTier stops on this"
        )
        departuresLastSettled = listed
        var reported = Array(policy.departures)
        if let accessed { reported.append(accessed) }
        for slot in reported {
            if policy.isResident(slot) { reportedResident.insert(slot) } else { reportedResident.remove(slot) }
            if policy.remembers(slot) {
                reportedRemembered.insert(slot)
            } else if reportedRemembered.remove(slot) != nil || slot == accessed {
                newObject(in: slot)
            }
        }
    }

    /// Checks, after a call, the rules of the check that do not concern one request.
    private func verify() throws {
        switch check {
        case .staysWithinCapacity:
            let weight = residents().reduce(UInt64(0)) { $0 + sizes[Int($1)] }
            try expect(
                .staysWithinCapacity, weight <= workload.capacity,
                "resident objects weigh \(weight), past the capacity of \(workload.capacity)")
        case .reportsDepartures:
            for slot in 0..<workload.slots {
                let resident = policy.isResident(slot), remembers = policy.remembers(slot)
                try expect(
                    .reportsDepartures, resident == reportedResident.contains(slot),
                    "slot \(slot) is \(resident ? "" : "not ")resident, but departures said otherwise")
                try expect(
                    .reportsDepartures, remembers == reportedRemembered.contains(slot),
                    "slot \(slot) is \(remembers ? "" : "not ")remembered, but departures said otherwise")
                try expect(.reportsDepartures, !resident || remembers, "slot \(slot) is resident but not remembered")
            }
        case .listsResidents:
            let listed = policy.residentsByRetention
            let resident = residents()
            try expect(
                .listsResidents, listed.count == resident.count && Set(listed) == resident,
                "residentsByRetention lists \(listed.count) slots, \(resident.count) are resident")
        case .prefetchChangesNothing:
            guard let unhinted else { break }
            let differ = (0..<workload.slots).filter {
                policy.isResident($0) != unhinted.isResident($0) || policy.remembers($0) != unhinted.remembers($0)
            }
            try expect(
                .prefetchChangesNothing, differ.isEmpty,
                "with prefetch hints the policy holds or remembers otherwise than without, slots \(differ.prefix(10))")
        case .online, .hitsAreResidents, .refusesOversizedObjects, .removeForgets, .reusedSlotsStartFresh,
            .boundedHistory, .declaresKeyHash:
            break
        }
    }

    /// The resident slots, by `isResident(_:)`.
    private func residents() -> Set<UInt32> {
        Set((0..<workload.slots).filter { policy.isResident($0) })
    }

    private func expect(_ rule: Check, _ condition: Bool, _ message: @autoclosure () -> String) throws {
        guard rule == check, !condition else { return }
        throw PolicyConformanceSuite<Policy>.Failure(
            check: check, message: "\(Policy.name), \(workload.name), request \(step): \(message())")
    }

    // MARK: The workload

    private mutating func pickSlot() -> UInt32 {
        while upcoming.count <= Self.hintDistance { upcoming.append(workload.pickSlot(&random)) }
        return upcoming.removeFirst()
    }

    /// The key hash the tier and the simulator give a request for `slot`: 0 for a policy that
    /// does not declare `usesKeyHash` (``PolicyConformanceSuite/Check/declaresKeyHash``).
    private func keyHash(of slot: UInt32) -> UInt64 { Policy.usesKeyHash ? hashes[Int(slot)] : 0 }

    private mutating func drawSize() -> UInt64 { workload.drawSize(&random) }

    /// The tier gives a forgotten slot to the next new key: another object.
    private mutating func newObject(in slot: UInt32) {
        hashes[Int(slot)] = nextRandom()
        sizes[Int(slot)] = drawSize()
    }

    private mutating func nextRandom() -> UInt64 { random.next() }
}
