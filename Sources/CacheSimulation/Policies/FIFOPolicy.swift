/// First in, first out: hits change nothing; the oldest insertion is evicted.
public struct FIFOPolicy: EvictionPolicy {
    /// The policy's name in reports.
    public static let name = "FIFO"
    private static let cache: UInt8 = 1
    private var queues: ObjectQueues
    private let capacity: UInt64

    /// An empty cache of `context`'s capacity, with the default parameters.
    public init(context: PolicyContext) {
        queues = ObjectQueues(queueCount: 1, objectSizes: context.objectSizes)
        capacity = context.capacity
    }

    /// Replays the request at `position` for `object`; returns whether it hit.
    public mutating func access(_ object: UInt32, position: Int) -> Bool {
        if queues.queue(of: object) == Self.cache { return true }
        let size = queues.size(of: object)
        guard size <= capacity else { return false }
        while queues.weight(Self.cache) + size > capacity {
            _ = queues.popTail(Self.cache)
        }
        queues.pushHead(object, Self.cache)
        return false
    }
}
