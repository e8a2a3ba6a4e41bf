/// S3-FIFO (Yang et al., SOSP 2023): a small FIFO (10% of the capacity) that filters one-hit wonders,
/// a main FIFO with reinsertion (a 2-bit frequency, up to 3), and a ghost FIFO of keys recently
/// evicted from the small queue, as large as the main queue.
///
/// A new object enters the small queue, or the main queue when its key is in the ghost. Leaving the
/// small queue, an object that was hit there moves to the main queue, any other goes to the ghost.
/// The main queue reinserts objects with a non-zero frequency, decrementing it.
public struct S3FIFOPolicy: EvictionPolicy {
    public static let name = "S3-FIFO"
    private static let small: UInt8 = 1
    private static let main: UInt8 = 2
    private static let ghost: UInt8 = 3

    private var queues: ObjectQueues
    private var frequency: [UInt8]
    private let capacity: UInt64
    private let smallTarget: UInt64
    private let ghostLimit: UInt64

    public init(context: PolicyContext) {
        queues = ObjectQueues(queueCount: 3, objectSizes: context.objectSizes)
        frequency = [UInt8](repeating: 0, count: context.objectCount)
        capacity = context.capacity
        smallTarget = max(1, context.capacity / 10)
        ghostLimit = context.capacity - smallTarget
    }

    public mutating func access(_ object: UInt32, position: Int) -> Bool {
        let queue = queues.queue(of: object)
        if queue == Self.small || queue == Self.main {
            frequency[Int(object)] = min(frequency[Int(object)] + 1, 3)
            return true
        }
        let size = queues.size(of: object)
        guard size <= capacity else { return false }
        let remembered = queue == Self.ghost
        if remembered { queues.remove(object) }
        while queues.weight(Self.small) + queues.weight(Self.main) + size > capacity {
            if queues.weight(Self.small) >= smallTarget || queues.count(Self.main) == 0 {
                evictFromSmall()
            } else {
                evictFromMain()
            }
        }
        frequency[Int(object)] = 0
        queues.pushHead(object, remembered ? Self.main : Self.small)
        return false
    }

    private mutating func evictFromSmall() {
        guard let oldest = queues.popTail(Self.small) else { return }
        if frequency[Int(oldest)] > 0 {
            frequency[Int(oldest)] = 0
            queues.pushHead(oldest, Self.main)
        } else {
            queues.pushHead(oldest, Self.ghost)
            while queues.weight(Self.ghost) > ghostLimit, queues.popTail(Self.ghost) != nil {}
        }
    }

    private mutating func evictFromMain() {
        while let oldest = queues.popTail(Self.main) {
            if frequency[Int(oldest)] == 0 { return }
            frequency[Int(oldest)] -= 1
            queues.pushHead(oldest, Self.main)
        }
    }
}
