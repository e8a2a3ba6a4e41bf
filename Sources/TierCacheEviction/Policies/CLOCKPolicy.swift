/// CLOCK (second chance): a hit sets the object's reference bit; the hand clears set bits and evicts
/// the first object whose bit is clear. Implemented as FIFO with reinsertion, which visits objects in
/// the same order as a hand sweeping a circular buffer.
///
/// Each slot's residence and reference bit are kept in a byte of their own, apart from its node:
/// a hit reads and sets them without loading the node (on P12, 3.2 million objects, the bytes take
/// 3 MiB, which the last-level cache holds, and the nodes 75 MiB, which it does not).
public struct CLOCKPolicy: EvictionPolicy {
    /// The policy's name in reports.
    public static let name = "CLOCK"
    @usableFromInline static let cache: UInt8 = 1
    @usableFromInline static let resident: UInt8 = 1
    @usableFromInline static let referenced: UInt8 = 2
    @usableFromInline var queues: SlotQueues
    /// Per slot: ``resident`` while cached, with ``referenced`` once hit since the hand last passed.
    @usableFromInline var flags: [UInt8]
    @usableFromInline let capacity: UInt64

    /// An empty cache of `context`'s capacity.
    public init(context: PolicyContext) {
        queues = SlotQueues(
            queueCount: 1, reserving: context.expectedSlots, notingDepartures: context.readsDepartures)
        flags = [UInt8](repeating: 0, count: context.expectedSlots)
        capacity = context.capacity
    }

    /// Serves a request; returns whether it hit.
    @inlinable
    public mutating func access(_ slot: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        queues.beginRequest()
        let id = Int(slot)
        if id < flags.count, flags[id] != 0 {
            flags[id] = Self.resident | Self.referenced
            return true
        }
        guard size <= capacity else { return false }
        while queues.weight(Self.cache) + size > capacity, let oldest = queues.tail(Self.cache) {
            if flags[Int(oldest)] & Self.referenced != 0 {
                // A second chance stays in the cache: moved, not noted as a departure.
                flags[Int(oldest)] = Self.resident
                queues.moveToHead(oldest, Self.cache)
            } else {
                queues.remove(oldest)
                flags[Int(oldest)] = 0
            }
        }
        if id >= flags.count { growFlags(to: id + 1) }
        queues.setSize(size, of: slot)
        queues.pushHead(slot, Self.cache)
        flags[id] = Self.resident
        return false
    }

    /// Makes the flags cover slots `0..<count`, doubling as the queues' arrays do.
    @usableFromInline
    mutating func growFlags(to count: Int) {
        flags.append(contentsOf: repeatElement(0, count: Swift.max(count, flags.count * 2, 64) - flags.count))
    }

    /// Forgets `slot`.
    public mutating func remove(_ slot: UInt32) {
        queues.beginRequest()
        queues.remove(slot)
        if Int(slot) < flags.count { flags[Int(slot)] = 0 }
    }

    /// Forgets every slot.
    public mutating func removeAll() {
        queues.removeAll()
        flags = [UInt8](repeating: 0, count: flags.count)
    }

    /// Whether `slot` is cached.
    @inlinable public func isResident(_ slot: UInt32) -> Bool { Int(slot) < flags.count && flags[Int(slot)] != 0 }
    /// CLOCK keeps no history: only resident slots.
    @inlinable public func remembers(_ slot: UInt32) -> Bool { isResident(slot) }
    /// The slots the last call took out of the cache.
    @inlinable public var departures: ArraySlice<UInt32> { queues.departures }
    /// The whole capacity.
    public var largestAdmissibleSize: UInt64 { capacity }
    /// The hand's order reversed: the next to be examined last.
    public var residentsByRetention: [UInt32] { queues.members(of: Self.cache) }
}
