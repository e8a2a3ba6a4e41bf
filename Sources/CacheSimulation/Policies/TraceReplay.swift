/// A policy fed a trace's requests one at a time: the trace's object ids are the policy's slots,
/// each request carries its object's size and `TraceKeyHash` of its id. What
/// `Simulator.replay(_:capacity:)` does for a whole trace, for code (and tests) that want to
/// look at the policy between requests.
///
/// ```swift
/// var replay = TraceReplay<LRUPolicy>(capacity: 1_000, objectSizes: trace.objectSizes)
/// for (position, object) in trace.requests.enumerated() { _ = replay.access(object, position: position) }
/// print(replay.policy.residentsByRetention.prefix(10))
/// ```
public struct TraceReplay<Policy: EvictionPolicy> {
    /// The policy, as the requests so far left it.
    public var policy: Policy { replaying }
    @usableFromInline var replaying: Policy
    @usableFromInline let sizes: [UInt32]

    /// A policy of `capacity` (in the unit of `objectSizes`: all 1 for objects) over the objects
    /// of `objectSizes`; `nextUse` for offline policies (see ``BeladyPolicy/nextUses(of:objectCount:)``).
    public init(capacity: UInt64, objectSizes: [UInt32], nextUse: [UInt32] = []) {
        replaying = Policy(
            context: PolicyContext(capacity: capacity, expectedSlots: objectSizes.count, nextUse: nextUse))
        sizes = objectSizes
    }

    /// `policy` (made with parameters of its own) over the objects of `objectSizes`.
    public init(_ policy: Policy, objectSizes: [UInt32]) {
        replaying = policy
        sizes = objectSizes
    }

    /// Serves the request at `position` for `object`; returns whether it hit. An id outside the
    /// trace's objects is a miss that changes nothing.
    @inlinable
    public mutating func access(_ object: UInt32, position: Int) -> Bool {
        guard Int(object) < sizes.count else { return false }
        let size = UInt64(sizes[Int(object)])
        let keyHash = Policy.usesKeyHash ? TraceKeyHash.of(object) : 0
        return replaying.access(object, size: size, keyHash: keyHash, position: position)
    }

    /// The number of objects (ids `0..<objectCount`).
    public var objectCount: Int { sizes.count }
}
