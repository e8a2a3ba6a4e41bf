import TierCache
import TierCacheEviction

/// For ``PolicyConformanceSuite/Check/reusedSlotsStartFresh``: one replay through two instances
/// of the policy, one driven as `MemoryTier` drives it, the other as the simulator does; every
/// request must hit in both or in neither. The tier's is given slots as the tier gives them (a
/// slot the policy forgets goes to the next new key, the last freed first) and has its departures
/// read; the simulator's has a slot of its own for every object, as the simulator numbers a
/// trace's objects, is told how many objects to expect, and has no departures read. A policy
/// that reads what a slot's last object left (a reference bit, a count, a hash it did not set
/// again on admission), or decides otherwise when nobody reads its departures, decides otherwise
/// in the tier than in the simulation that recommended it.
struct SlotReuseComparison<Policy: EvictionPolicy> {
    private let workload: PolicyWorkload
    private let requests: Int
    private var reusing: Policy
    private var fresh: Policy
    /// The objects requests go to; replaced one by one, as keys are removed from a tier.
    private var pool: [UInt32] = []
    /// Each object's size and key hash, by object (`fresh`'s slot).
    private var sizes: [UInt64] = []
    private var hashes: [UInt64] = []
    /// Each object's slot in `reusing` while it has one, and the other way round.
    private var slotOfObject: [UInt32: UInt32] = [:]
    private var objectInSlot: [UInt32: UInt32] = [:]
    private var freeSlots: [UInt32] = []
    private var slotCount: UInt32 = 0
    private var random = SplitMix64(seed: 0x5EED_5107)

    /// A comparison that will replay `requests` requests.
    init(workload: PolicyWorkload, requests: Int) {
        self.workload = workload
        self.requests = requests
        reusing = Policy(context: PolicyContext(capacity: workload.capacity, readsDepartures: true))
        // As the simulator makes it for a trace of every object the replay can meet: the pool,
        // and one new object per request at most.
        fresh = Policy(
            context: PolicyContext(
                capacity: workload.capacity, expectedSlots: Int(workload.slots) + requests, readsDepartures: false))
        for _ in 0..<workload.slots { pool.append(newObject()) }
    }

    /// Replays the requests, a few of them removals of an object replaced by a new one.
    mutating func replay() throws {
        for step in 0..<requests {
            let index = Int(workload.pickSlot(&random))
            let object = pool[index]
            if random.next() % 100 < 3 {
                if let slot = slotOfObject[object] {
                    reusing.remove(slot)
                    settle(accessed: nil)
                    release(slot)
                }
                // As the tier removes only a key it holds.
                if fresh.remembers(object) { fresh.remove(object) }
                pool[index] = newObject()
                continue
            }
            let slot = slotOfObject[object] ?? assignSlot(to: object)
            let size = sizes[Int(object)], hash = Policy.usesKeyHash ? hashes[Int(object)] : 0
            let hitWithReuse = reusing.access(slot, size: size, keyHash: hash, position: 0)
            let hitFresh = fresh.access(object, size: size, keyHash: hash, position: 0)
            guard hitWithReuse == hitFresh else {
                throw PolicyConformanceSuite<Policy>.Failure(
                    check: .reusedSlotsStartFresh,
                    message: "\(Policy.name), \(workload.name), request \(step): a request was "
                        + "\(hitWithReuse ? "a hit" : "a miss") in reused slot \(slot), "
                        + "\(hitFresh ? "a hit" : "a miss") in a slot of its own, driven as the simulator drives it: "
                        + "state a slot's last object left decided it (set per-slot state on admission), "
                        + "the slot's number did (a tie broken by slot id), "
                        + "or the policy decides otherwise when its departures are not read (as the simulator does not)"
                )
            }
            settle(accessed: slot)
        }
    }

    /// Frees the slots the last call made the policy forget, as the tier does.
    private mutating func settle(accessed: UInt32?) {
        var reported = Array(reusing.departures)
        if let accessed { reported.append(accessed) }
        for slot in reported where !reusing.remembers(slot) { release(slot) }
    }

    private mutating func assignSlot(to object: UInt32) -> UInt32 {
        let slot: UInt32
        if let reused = freeSlots.popLast() {
            slot = reused
        } else {
            slot = slotCount
            slotCount += 1
        }
        slotOfObject[object] = slot
        objectInSlot[slot] = object
        return slot
    }

    private mutating func release(_ slot: UInt32) {
        guard let object = objectInSlot.removeValue(forKey: slot) else { return }
        slotOfObject[object] = nil
        freeSlots.append(slot)
    }

    private mutating func newObject() -> UInt32 {
        sizes.append(workload.drawSize(&random))
        hashes.append(random.next())
        return UInt32(sizes.count - 1)
    }
}
