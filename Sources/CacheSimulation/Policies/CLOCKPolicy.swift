/// CLOCK (second chance): a hit sets the object's reference bit; the hand clears set bits and evicts
/// the first object whose bit is clear. Implemented as FIFO with reinsertion, which visits objects in
/// the same order as a hand sweeping a circular buffer.
public struct CLOCKPolicy: EvictionPolicy {
    /// The policy's name in reports.
    public static let name = "CLOCK"
    private static let cache: UInt8 = 1
    private var queues: ObjectQueues
    private var referenced: [Bool]
    private let capacity: UInt64

    /// An empty cache of `context`'s capacity, with the default parameters.
    public init(context: PolicyContext) {
        queues = ObjectQueues(queueCount: 1, objectSizes: context.objectSizes)
        referenced = [Bool](repeating: false, count: context.objectCount)
        capacity = context.capacity
    }

    /// Replays the request at `position` for `object`; returns whether it hit.
    public mutating func access(_ object: UInt32, position: Int) -> Bool {
        if queues.queue(of: object) == Self.cache {
            referenced[Int(object)] = true
            return true
        }
        let size = queues.size(of: object)
        guard size <= capacity else { return false }
        while queues.weight(Self.cache) + size > capacity, let oldest = queues.popTail(Self.cache) {
            if referenced[Int(oldest)] {
                referenced[Int(oldest)] = false
                queues.pushHead(oldest, Self.cache)
            }
        }
        queues.pushHead(object, Self.cache)
        return false
    }
}
