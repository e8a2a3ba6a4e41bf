/// ARC (Megiddo & Modha, FAST 2003), as in the paper's Figure 4.
///
/// T1 holds objects seen once recently, T2 objects seen at least twice; B1 and B2 remember the keys
/// evicted from each. A hit in B1 grows the target size `p` of T1, a hit in B2 shrinks it, so the
/// balance between recency and frequency adapts to the workload. In byte mode every count of the
/// paper becomes a sum of sizes and each single step becomes a loop until the object fits; with unit
/// sizes this is exactly the paper's algorithm (the tests check its published hit ratios).
public struct ARCPolicy: EvictionPolicy {
    /// The policy's name in reports.
    public static let name = "ARC"
    private static let t1: UInt8 = 1
    private static let t2: UInt8 = 2
    private static let b1: UInt8 = 3
    private static let b2: UInt8 = 4

    private var queues: ObjectQueues
    private let capacity: UInt64
    /// The target size of T1.
    private var p: Double = 0

    /// An empty cache of `context`'s capacity, with the default parameters.
    public init(context: PolicyContext) {
        queues = ObjectQueues(queueCount: 4, objectSizes: context.objectSizes)
        capacity = context.capacity
    }

    /// Replays the request at `position` for `object`; returns whether it hit.
    public mutating func access(_ object: UInt32, position: Int) -> Bool {
        let queue = queues.queue(of: object)
        // Case I: a hit in T1 or T2.
        if queue == Self.t1 || queue == Self.t2 {
            queues.moveToHead(object, Self.t2)
            return true
        }
        let size = queues.size(of: object)
        guard size <= capacity else {
            if queue != ObjectQueues.none { queues.remove(object) }
            return false
        }
        let c = Double(capacity)
        let b1 = Double(queues.weight(Self.b1))
        let b2 = Double(queues.weight(Self.b2))
        if queue == Self.b1 {
            // Case II: the ghost of a recency object; favour recency.
            let delta = b1 >= b2 ? 1 : b2 / b1
            p = min(c, p + delta * Double(size))
            queues.remove(object)
            makeRoom(for: size, requestInB2: false)
            queues.pushHead(object, Self.t2)
            return false
        }
        if queue == Self.b2 {
            // Case III: the ghost of a frequency object; favour frequency.
            let delta = b2 >= b1 ? 1 : b1 / b2
            p = max(0, p - delta * Double(size))
            queues.remove(object)
            makeRoom(for: size, requestInB2: true)
            queues.pushHead(object, Self.t2)
            return false
        }
        // Case IV: a complete miss.
        // A: L1 = T1 + B1 would exceed c; drop B1's oldest keys, or T1's oldest objects once B1 is empty.
        while queues.weight(Self.t1) + queues.weight(Self.b1) + size > capacity, queues.popTail(Self.b1) != nil {}
        while queues.weight(Self.t1) + size > capacity, queues.popTail(Self.t1) != nil {}
        // B: the directory (all four lists) holds at most 2c; drop B2's oldest keys.
        while totalWeight + size > 2 * capacity, queues.popTail(Self.b2) != nil {}
        makeRoom(for: size, requestInB2: false)
        queues.pushHead(object, Self.t1)
        return false
    }

    private var totalWeight: UInt64 {
        queues.weight(Self.t1) + queues.weight(Self.t2) + queues.weight(Self.b1) + queues.weight(Self.b2)
    }

    /// REPLACE(x, p) until the cache has room for `size`.
    private mutating func makeRoom(for size: UInt64, requestInB2: Bool) {
        while queues.weight(Self.t1) + queues.weight(Self.t2) + size > capacity {
            let t1 = Double(queues.weight(Self.t1))
            if queues.count(Self.t1) > 0, (requestInB2 && t1 == p) || t1 > p || queues.count(Self.t2) == 0 {
                guard let oldest = queues.popTail(Self.t1) else { return }
                queues.pushHead(oldest, Self.b1)
            } else {
                guard let oldest = queues.popTail(Self.t2) else { return }
                queues.pushHead(oldest, Self.b2)
            }
        }
    }
}
