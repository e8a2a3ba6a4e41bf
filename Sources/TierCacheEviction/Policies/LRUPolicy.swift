/// Least recently used: a hit moves the object to the head; the tail is evicted.
public struct LRUPolicy: EvictionPolicy {
    /// The policy's name in reports.
    public static let name = "LRU"
    @usableFromInline static let cache: UInt8 = 1
    @usableFromInline var queues: SlotQueues
    @usableFromInline let capacity: UInt64

    /// An empty cache of `context`'s capacity.
    public init(context: PolicyContext) {
        queues = SlotQueues(
            queueCount: 1, reserving: context.expectedSlots, notingDepartures: context.readsDepartures)
        capacity = context.capacity
    }

    /// Serves a request; returns whether it hit.
    @inlinable
    public mutating func access(_ slot: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        queues.beginRequest()
        if queues.queue(of: slot) == Self.cache {
            queues.moveToHead(slot, Self.cache)
            return true
        }
        guard size <= capacity else { return false }
        while queues.weight(Self.cache) + size > capacity {
            _ = queues.popTail(Self.cache)
        }
        queues.setSize(size, of: slot)
        queues.pushHead(slot, Self.cache)
        return false
    }

    /// Forgets `slot`.
    public mutating func remove(_ slot: UInt32) {
        queues.beginRequest()
        queues.remove(slot)
    }

    /// Forgets every slot.
    public mutating func removeAll() { queues.removeAll() }

    /// Whether `slot` is cached.
    @inlinable public func isResident(_ slot: UInt32) -> Bool { queues.queue(of: slot) != SlotQueues.none }
    /// LRU keeps no history: only resident slots.
    @inlinable public func remembers(_ slot: UInt32) -> Bool { isResident(slot) }
    /// The slots the last call took out of the cache.
    @inlinable public var departures: ArraySlice<UInt32> { queues.departures }
    /// The whole capacity.
    public var largestAdmissibleSize: UInt64 { capacity }
    /// Most recently used first.
    public var residentsByRetention: [UInt32] { queues.members(of: Self.cache) }
}
