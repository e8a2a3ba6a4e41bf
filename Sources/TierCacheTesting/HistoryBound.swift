import TierCache
import TierCacheEviction

/// For ``PolicyConformanceSuite/Check/boundedHistory``: a stream of mostly new objects, with
/// repeats of recent ones (so that a policy's ghost entries see hits and its lists adapt), through
/// the policy, counting the slots it remembers as `MemoryTier` counts them (each keeps its key in
/// the tier's table until the policy forgets it). A policy whose history never forgets grows the
/// tier's key table with every key ever stored, whatever its capacity: its count keeps growing
/// through the stream. A bounded one levels off, at whatever multiple of its capacity it keeps
/// (ARC's directory twice it, LIRS's stack three times, a fixed table of its own); the check fails
/// only a count that is past ``allowedMultiple`` times the most the policy held and still grew by
/// more than a quarter over the stream's second half.
struct HistoryBound<Policy: EvictionPolicy> {
    /// How many times the most resident objects the remembered ones may number, growing or not:
    /// ARC's directory holds twice its capacity, LIRS's stack up to three times.
    static var allowedMultiple: Int { 4 }

    private let workload: PolicyWorkload
    private var policy: Policy
    private var sizes: [UInt64] = []
    private var hashes: [UInt64] = []
    private var remembered: Set<UInt32> = []
    private var resident: Set<UInt32> = []
    private var mostResident = 0
    private var rememberedHalfway = 0
    private var random = SplitMix64(seed: 0x5EED_B0D)

    init(workload: PolicyWorkload) {
        self.workload = workload
        policy = Policy(context: PolicyContext(capacity: workload.capacity, readsDepartures: true))
    }

    /// Replays `requests` requests: three in four a new object, the rest one of the most recent.
    mutating func replay(requests: Int) throws {
        // Enough requests that a history kept for ever outgrows any allowed multiple.
        let count = max(requests, 40 * Int(workload.slots))
        for step in 0..<count {
            let slot: UInt32
            if sizes.count < 2 || random.next() % 4 != 0 {
                slot = UInt32(sizes.count)
                sizes.append(workload.drawSize(&random))
                hashes.append(random.next())
            } else {
                let recent = UInt64(min(sizes.count, 4 * Int(workload.slots)))
                slot = UInt32(sizes.count - 1 - Int(random.next() % recent))
            }
            let hash = Policy.usesKeyHash ? hashes[Int(slot)] : 0
            _ = policy.access(slot, size: sizes[Int(slot)], keyHash: hash, position: 0)
            for departed in policy.departures + [slot] {
                if policy.remembers(departed) { remembered.insert(departed) } else { remembered.remove(departed) }
                if policy.isResident(departed) { resident.insert(departed) } else { resident.remove(departed) }
            }
            mostResident = max(mostResident, resident.count)
            if step == count / 2 { rememberedHalfway = remembered.count }
        }
        let allowed = Self.allowedMultiple * max(mostResident, 1) + 16
        guard remembered.count <= allowed || remembered.count * 4 <= rememberedHalfway * 5 + 64 else {
            throw PolicyConformanceSuite<Policy>.Failure(
                check: .boundedHistory,
                message: "\(Policy.name), \(workload.name): after \(count) requests, mostly for new objects, the "
                    + "policy remembers \(remembered.count) objects (\(rememberedHalfway) halfway), past "
                    + "\(Self.allowedMultiple) times the \(mostResident) it held at most and still growing: forget "
                    + "ghost entries beyond a bound (a MemoryTier keeps each remembered object's key)")
        }
    }
}
