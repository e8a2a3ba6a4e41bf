/// An eviction policy replayed by the simulator.
///
/// Objects are dense ids `0..<context.objectCount` (see ``Trace``), so a policy keeps per-object state
/// in arrays. The capacity is in the same unit as ``PolicyContext/objectSizes``: objects in object
/// mode (every size is 1), bytes in byte mode. An object larger than the whole capacity is never
/// admitted. Adding a policy is adding one type that conforms to this protocol, plus a case in
/// ``PolicyKind`` to name it on the command line.
public protocol EvictionPolicy {
    /// The name used in reports, e.g. `"LRU"`.
    static var name: String { get }
    /// Offline policies (Belady's MIN) read the future: the simulator then fills ``PolicyContext/nextUse``.
    static var needsFuture: Bool { get }

    /// An empty cache of `context`'s capacity, for the trace `context` describes.
    init(context: PolicyContext)

    /// Serves the request at `position` in the trace for `object`.
    /// - Returns: true on a hit. On a miss the policy decides whether to admit the object.
    mutating func access(_ object: UInt32, position: Int) -> Bool
}

extension EvictionPolicy {
    /// Online policies do not look ahead.
    public static var needsFuture: Bool { false }
}

/// What a policy knows about its workload before the first request.
public struct PolicyContext: Sendable {
    /// Capacity, in objects or bytes (the unit of `objectSizes`).
    public let capacity: UInt64
    /// The size of every object, indexed by id: all 1 in object mode.
    public let objectSizes: [UInt32]
    /// For offline policies: for each trace position, the position of the same object's next request,
    /// or `UInt32.max` when there is none. Empty for online policies.
    public let nextUse: [UInt32]

    /// The number of distinct objects in the trace (ids run from 0 to `objectCount - 1`).
    public var objectCount: Int { objectSizes.count }

    /// A context for a policy of `capacity` over objects of `objectSizes`.
    public init(capacity: UInt64, objectSizes: [UInt32], nextUse: [UInt32] = []) {
        self.capacity = capacity
        self.objectSizes = objectSizes
        self.nextUse = nextUse
    }

    @inline(__always)
    func size(of object: UInt32) -> UInt64 { UInt64(objectSizes[Int(object)]) }
}
