/// S3-FIFO (Yang et al., SOSP 2023), following libCacheSim's `S3FIFO.c` rule for rule.
///
/// A small FIFO (10% of the capacity) filters one-hit wonders; a main FIFO (the rest) reinserts
/// objects that were hit, with a 2-bit frequency; a ghost FIFO remembers the slots of objects
/// evicted from the small queue, up to 90% of the capacity by their sizes.
/// - A new object enters the small queue, or the main queue when it is in the ghost (or, before
///   the first eviction, when the small queue is already full). Objects as large as the small
///   queue are not admitted.
/// - Evicting: from the main queue when it is over its share or the small queue is empty, else
///   from the small queue. The small queue's oldest object moves to the main queue if it was hit
///   at least twice, else it leaves for the ghost; the main queue's oldest object is reinserted
///   with its frequency lowered by one while that frequency is not zero, else it leaves.
/// - A hit only raises the object's frequency (saturating at 3): no list is touched.
public struct S3FIFOPolicy: EvictionPolicy {
    /// The policy's name in reports.
    public static let name = "S3-FIFO"
    @usableFromInline static let small: UInt8 = 1
    @usableFromInline static let main: UInt8 = 2
    @usableFromInline static let ghost: UInt8 = 3
    @usableFromInline static let moveToMainThreshold: UInt8 = 2
    /// libCacheSim counts hits without bound but only reads `min(frequency, 3)` and
    /// `frequency >= 2`, so saturating at 3 takes the same decisions.
    @usableFromInline static let maximumFrequency: UInt8 = 3

    @usableFromInline var queues: SlotQueues
    @usableFromInline let capacity: UInt64
    @usableFromInline let smallCapacity: UInt64
    @usableFromInline let mainCapacity: UInt64
    @usableFromInline let ghostCapacity: UInt64
    @usableFromInline var hasEvicted = false

    /// An empty cache of `context`'s capacity.
    public init(context: PolicyContext) {
        queues = SlotQueues(
            queueCount: 3, reserving: context.expectedSlots, notingDepartures: context.readsDepartures)
        capacity = context.capacity
        smallCapacity = UInt64(Double(context.capacity) * 0.10)
        mainCapacity = context.capacity - smallCapacity
        ghostCapacity = UInt64(Double(context.capacity) * 0.90)
    }

    /// Serves a request; returns whether it hit.
    @inlinable
    public mutating func access(_ slot: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        queues.beginRequest()
        let queue = queues.queue(of: slot)
        if queue == Self.small || queue == Self.main {
            queues.setTag(min(queues.tag(of: slot) + 1, Self.maximumFrequency), of: slot)  // the frequency
            return true
        }
        let remembered = queue == Self.ghost
        if remembered { queues.remove(slot) }
        guard size < smallCapacity, size <= capacity else { return false }
        while queues.weight(Self.small) + queues.weight(Self.main) + size > capacity {
            hasEvicted = true
            if queues.weight(Self.main) > mainCapacity || queues.weight(Self.small) == 0 {
                evictFromMain()
            } else {
                evictFromSmall()
            }
        }
        queues.setSize(size, of: slot)
        queues.setTag(0, of: slot)
        if remembered || (!hasEvicted && queues.weight(Self.small) >= smallCapacity) {
            queues.pushHead(slot, Self.main)
        } else {
            queues.pushHead(slot, Self.small)
        }
        return false
    }

    @usableFromInline
    mutating func evictFromSmall() {
        while let oldest = queues.tail(Self.small) {
            if queues.tag(of: oldest) >= Self.moveToMainThreshold {
                queues.setTag(0, of: oldest)
                queues.moveToHead(oldest, Self.main)
            } else {
                queues.remove(oldest)
                remember(oldest)
                return
            }
        }
    }

    @usableFromInline
    mutating func evictFromMain() {
        while let oldest = queues.tail(Self.main) {
            let count = queues.tag(of: oldest)
            if count >= 1 {
                queues.setTag(min(count, Self.maximumFrequency) - 1, of: oldest)
                queues.moveToHead(oldest, Self.main)
            } else {
                queues.remove(oldest)
                return
            }
        }
    }

    /// The ghost is a FIFO of `ghostCapacity`: its oldest slots go first to make room.
    @usableFromInline
    mutating func remember(_ slot: UInt32) {
        let size = queues.size(of: slot)
        guard size <= ghostCapacity else { return }
        while queues.weight(Self.ghost) + size > ghostCapacity, queues.popTail(Self.ghost) != nil {}
        queues.pushHead(slot, Self.ghost)
    }

    /// Forgets `slot`, in the cache or in the ghost.
    public mutating func remove(_ slot: UInt32) {
        queues.beginRequest()
        queues.remove(slot)
    }

    /// Forgets every slot.
    public mutating func removeAll() {
        queues.removeAll()
        hasEvicted = false
    }

    /// Whether `slot` is in the small or the main queue.
    @inlinable public func isResident(_ slot: UInt32) -> Bool {
        let queue = queues.queue(of: slot)
        return queue == Self.small || queue == Self.main
    }
    /// Resident, or in the ghost.
    @inlinable public func remembers(_ slot: UInt32) -> Bool { queues.queue(of: slot) != SlotQueues.none }
    /// The slots the last call took out of a queue.
    @inlinable public var departures: ArraySlice<UInt32> { queues.departures }
    /// libCacheSim admits nothing as large as the small queue: it would flush the whole queue.
    public var largestAdmissibleSize: UInt64 { smallCapacity == 0 ? 0 : min(capacity, smallCapacity - 1) }
    /// The main queue from head to tail, then the small queue.
    public var residentsByRetention: [UInt32] { queues.members(of: Self.main) + queues.members(of: Self.small) }
}
