import TierCacheEviction

/// A policy of the user's own, on the public `SlotQueues`: segmented LRU. New objects enter a
/// probationary LRU; a hit there promotes them to a protected LRU of at most 80% of the
/// capacity, whose least recent objects fall back to probation. One-hit objects never displace
/// the protected ones.
public struct SegmentedLRU: EvictionPolicy {
    public static let name = "SLRU"
    private static let probation: UInt8 = 1
    private static let protected: UInt8 = 2
    private var queues: SlotQueues
    private let capacity: UInt64

    public init(context: PolicyContext) {
        queues = SlotQueues(
            queueCount: 2, reserving: context.expectedSlots, notingDepartures: context.readsDepartures)
        capacity = context.capacity
    }

    public mutating func access(_ slot: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        queues.beginRequest()
        switch queues.queue(of: slot) {
        case Self.protected:
            queues.moveToHead(slot, Self.protected)
            return true
        case Self.probation:
            queues.moveToHead(slot, Self.protected)
            while queues.weight(Self.protected) > capacity / 5 * 4, let demoted = queues.tail(Self.protected) {
                queues.moveToHead(demoted, Self.probation)
            }
            return true
        default:
            guard size <= capacity else { return false }
            while queues.weight(Self.probation) + queues.weight(Self.protected) + size > capacity {
                guard queues.popTail(Self.probation) ?? queues.popTail(Self.protected) != nil else { break }
            }
            queues.setSize(size, of: slot)
            queues.pushHead(slot, Self.probation)
            return false
        }
    }

    public mutating func remove(_ slot: UInt32) {
        queues.beginRequest()
        queues.remove(slot)
    }

    public mutating func removeAll() { queues.removeAll() }
    public func isResident(_ slot: UInt32) -> Bool { queues.queue(of: slot) != SlotQueues.none }
    public func remembers(_ slot: UInt32) -> Bool { isResident(slot) }
    public var departures: ArraySlice<UInt32> { queues.departures }
    public var largestAdmissibleSize: UInt64 { capacity }
    public var residentsByRetention: [UInt32] {
        queues.members(of: Self.protected) + queues.members(of: Self.probation)
    }
}
