/// CLOCK (second chance): a hit sets the object's reference bit; the hand clears set bits and evicts
/// the first object whose bit is clear. Implemented as FIFO with reinsertion, which visits objects in
/// the same order as a hand sweeping a circular buffer.
public struct CLOCKPolicy: EvictionPolicy {
    /// The policy's name in reports.
    public static let name = "CLOCK"
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
            queues.setTag(1, of: slot)  // the reference bit
            return true
        }
        guard size <= capacity else { return false }
        while queues.weight(Self.cache) + size > capacity, let oldest = queues.tail(Self.cache) {
            if queues.tag(of: oldest) != 0 {
                // A second chance stays in the cache: moved, not noted as a departure.
                queues.setTag(0, of: oldest)
                queues.moveToHead(oldest, Self.cache)
            } else {
                queues.remove(oldest)
            }
        }
        queues.setSize(size, of: slot)
        queues.setTag(0, of: slot)
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
    /// CLOCK keeps no history: only resident slots.
    @inlinable public func remembers(_ slot: UInt32) -> Bool { isResident(slot) }
    /// The slots the last call took out of the cache.
    @inlinable public var departures: ArraySlice<UInt32> { queues.departures }
    /// The whole capacity.
    public var largestAdmissibleSize: UInt64 { capacity }
    /// The hand's order reversed: the next to be examined last.
    public var residentsByRetention: [UInt32] { queues.members(of: Self.cache) }
}
