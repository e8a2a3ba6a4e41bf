import Testing
import TierCacheEviction

/// A copy of a policy is a policy of its own: after the copy, the original and the copy serve
/// different requests, and each decides as a policy that only ever saw its own requests would.
/// (Policies change their queues several times a request but check the queues' storage for
/// sharing only at the first change, and W-TinyLFU checks its sketch and window log through its
/// queues: a copy made between requests must still part, whether its first change is a request
/// or a removal.)
@Suite struct PolicyCopyTests {
    static let policies: [any EvictionPolicy.Type] = [
        LRUPolicy.self, FIFOPolicy.self, CLOCKPolicy.self, SIEVEPolicy.self, S3FIFOPolicy.self,
        ARCPolicy.self, TwoQPolicy.self, LIRSPolicy.self, WTinyLFUPolicy.self,
    ]

    /// `count` requests over 300 objects, most of them for the first 60 (so that every policy
    /// both hits and evicts at a capacity of 40).
    static func requests(count: Int, seed: UInt64) -> [UInt32] {
        var state = seed
        return (0..<count).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            let draw = (state ^ (state >> 29)) &* 0xBF58_476D_1CE4_E5B9
            let value = draw >> 33
            return UInt32(value % 4 == 0 ? value % 300 : value % 60)
        }
    }

    static func replay<Policy: EvictionPolicy>(_ requests: [UInt32], on policy: inout Policy) -> [Bool] {
        requests.enumerated().map { position, object in
            policy.access(object, size: 1, keyHash: UInt64(object) &* 0xD6E8_FEB8_6659_FD93, position: position)
        }
    }

    /// The first request two runs decided otherwise, if any: a failure names it, not the whole
    /// runs, thousands of requests long.
    static func firstDifference(_ some: [Bool], _ other: [Bool]) -> Int? {
        some.count != other.count ? min(some.count, other.count) : some.indices.first { some[$0] != other[$0] }
    }

    @Test(arguments: 0..<policies.count, [false, true])
    func copiesDecideApart(policyIndex: Int, removingFirst: Bool) {
        check(Self.policies[policyIndex], removingFirst: removingFirst)
    }

    /// With `removingFirst`, the original's first change after the copy removes an object.
    private func check<Policy: EvictionPolicy>(_ type: Policy.Type, removingFirst: Bool) {
        let context = PolicyContext(capacity: 40, expectedSlots: 300)
        let prefix = Self.requests(count: 3_000, seed: 1)
        let first = Self.requests(count: 2_000, seed: 2)
        let second = Self.requests(count: 2_000, seed: 3)

        var original = Policy(context: context)
        _ = Self.replay(prefix, on: &original)
        var copy = original
        // The object of the prefix's last request is resident.
        let removed = prefix[prefix.count - 1]
        if removingFirst { original.remove(removed) }
        let originalHits = Self.replay(first, on: &original)
        let copyHits = Self.replay(second, on: &copy)

        var alone = Policy(context: context)
        _ = Self.replay(prefix, on: &alone)
        if removingFirst { alone.remove(removed) }
        let expectedOriginal = Self.replay(first, on: &alone)
        alone = Policy(context: context)
        let expectedCopy = Array(Self.replay(prefix + second, on: &alone).dropFirst(prefix.count))
        let originalDiffers = Self.firstDifference(originalHits, expectedOriginal)
        let copyDiffers = Self.firstDifference(copyHits, expectedCopy)
        #expect(originalDiffers == nil, "\(Policy.name): the original")
        #expect(copyDiffers == nil, "\(Policy.name): the copy")
        #expect(originalHits.contains(true) && originalHits.contains(false), "\(Policy.name) both hits and misses")
    }
}
