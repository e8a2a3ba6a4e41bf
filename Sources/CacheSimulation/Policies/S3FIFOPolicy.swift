/// S3-FIFO (Yang et al., SOSP 2023), following libCacheSim's `S3FIFO.c` rule for rule, as
/// `MemoryTier`'s `.s3fifo` does (a test replays traces through both and compares every hit).
///
/// A small FIFO (10% of the capacity) filters one-hit wonders; a main FIFO (the rest) reinserts
/// objects that were hit, with a 2-bit frequency; a ghost FIFO remembers the ids of objects
/// evicted from the small queue, up to 90% of the capacity by their sizes.
/// - A new object enters the small queue, or the main queue when it is in the ghost (or, before
///   the first eviction, when the small queue is already full). Objects as large as the small
///   queue are not admitted.
/// - Evicting: from the main queue when it is over its share or the small queue is empty, else
///   from the small queue. The small queue's oldest object moves to the main queue if it was hit
///   at least twice, else it leaves for the ghost; the main queue's oldest object is reinserted
///   with its frequency lowered by one while that frequency is not zero, else it leaves.
public struct S3FIFOPolicy: EvictionPolicy {
    /// The policy's name in reports.
    public static let name = "S3-FIFO"
    private static let small: UInt8 = 1
    private static let main: UInt8 = 2
    private static let ghost: UInt8 = 3
    private static let moveToMainThreshold: UInt8 = 2
    /// libCacheSim counts hits without bound but only reads `min(frequency, 3)` and
    /// `frequency >= 2`, so saturating at 3 takes the same decisions.
    private static let maximumFrequency: UInt8 = 3

    private var queues: ObjectQueues
    private var frequency: [UInt8]
    private let capacity: UInt64
    private let smallCapacity: UInt64
    private let mainCapacity: UInt64
    private let ghostCapacity: UInt64
    private var hasEvicted = false

    /// An empty cache of `context`'s capacity, with the default parameters.
    public init(context: PolicyContext) {
        queues = ObjectQueues(queueCount: 3, objectSizes: context.objectSizes)
        frequency = [UInt8](repeating: 0, count: context.objectCount)
        capacity = context.capacity
        smallCapacity = UInt64(Double(context.capacity) * 0.10)
        mainCapacity = context.capacity - smallCapacity
        ghostCapacity = UInt64(Double(context.capacity) * 0.90)
    }

    /// Replays the request at `position` for `object`; returns whether it hit.
    public mutating func access(_ object: UInt32, position: Int) -> Bool {
        let queue = queues.queue(of: object)
        if queue == Self.small || queue == Self.main {
            frequency[Int(object)] = min(frequency[Int(object)] + 1, Self.maximumFrequency)
            return true
        }
        let remembered = queue == Self.ghost
        if remembered { queues.remove(object) }
        let size = queues.size(of: object)
        guard size < smallCapacity, size <= capacity else { return false }
        while queues.weight(Self.small) + queues.weight(Self.main) + size > capacity {
            hasEvicted = true
            if queues.weight(Self.main) > mainCapacity || queues.weight(Self.small) == 0 {
                evictFromMain()
            } else {
                evictFromSmall()
            }
        }
        frequency[Int(object)] = 0
        if remembered || (!hasEvicted && queues.weight(Self.small) >= smallCapacity) {
            queues.pushHead(object, Self.main)
        } else {
            queues.pushHead(object, Self.small)
        }
        return false
    }

    private mutating func evictFromSmall() {
        while let oldest = queues.popTail(Self.small) {
            if frequency[Int(oldest)] >= Self.moveToMainThreshold {
                frequency[Int(oldest)] = 0
                queues.pushHead(oldest, Self.main)
            } else {
                remember(oldest)
                return
            }
        }
    }

    private mutating func evictFromMain() {
        while let oldest = queues.popTail(Self.main) {
            let count = frequency[Int(oldest)]
            if count >= 1 {
                frequency[Int(oldest)] = min(count, Self.maximumFrequency) - 1
                queues.pushHead(oldest, Self.main)
            } else {
                return
            }
        }
    }

    /// The ghost is a FIFO of `ghostCapacity`: its oldest ids go first to make room.
    private mutating func remember(_ object: UInt32) {
        let size = queues.size(of: object)
        guard size <= ghostCapacity else { return }
        while queues.weight(Self.ghost) + size > ghostCapacity, queues.popTail(Self.ghost) != nil {}
        queues.pushHead(object, Self.ghost)
    }
}
