import TierCache
import TierCacheEviction

/// For ``PolicyConformanceSuite/Check/declaresKeyHash``: a policy that does not declare
/// `usesKeyHash` is given 0 for every key hash by `MemoryTier` and the simulator alike, so one
/// that reads the hash anyway (a sketch counting keys) counts every key as the same one. One
/// replay through two instances, one given the keys' hashes and one given 0, must hit alike.
struct KeyHashDeclaration<Policy: EvictionPolicy> {
    private let workload: PolicyWorkload
    private var random = SplitMix64(seed: 0x5EED_4A54)

    init(workload: PolicyWorkload) {
        self.workload = workload
    }

    mutating func replay(requests: Int) throws {
        guard !Policy.usesKeyHash else { return }
        let context = PolicyContext(capacity: workload.capacity, readsDepartures: true)
        var hashed = Policy(context: context), unhashed = Policy(context: context)
        var sizes: [UInt64] = [], hashes: [UInt64] = []
        for _ in 0..<workload.slots {
            sizes.append(workload.drawSize(&random))
            hashes.append(random.next())
        }
        for step in 0..<requests {
            let slot = workload.pickSlot(&random)
            let size = sizes[Int(slot)]
            let withHash = hashed.access(slot, size: size, keyHash: hashes[Int(slot)], position: 0)
            let withoutHash = unhashed.access(slot, size: size, keyHash: 0, position: 0)
            guard withHash == withoutHash else {
                throw PolicyConformanceSuite<Policy>.Failure(
                    check: .declaresKeyHash,
                    message: "\(Policy.name), \(workload.name), request \(step): a request was "
                        + "\(withHash ? "a hit" : "a miss") with key hashes, \(withoutHash ? "a hit" : "a miss") "
                        + "without: the policy reads keyHash, so it must declare `static var usesKeyHash: Bool "
                        + "{ true }` (MemoryTier and the simulator give 0 to a policy that does not)")
            }
        }
    }
}
