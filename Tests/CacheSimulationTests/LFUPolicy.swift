import CacheSimulation

/// A policy written the way an app would write its own, on the public `SlotQueues`: least
/// frequently used, with counts saturating at 15 (one queue per count, least recent at each
/// queue's tail), so a request does bounded work. The equivalence tests run it in the simulator
/// and in a `MemoryTier` and compare every decision.
struct LFUPolicy: EvictionPolicy {
    static let name = "LFU"
    private static let maximumCount: UInt8 = 15
    private var queues: SlotQueues
    private let capacity: UInt64

    init(context: PolicyContext) {
        queues = SlotQueues(
            queueCount: Int(Self.maximumCount), reserving: context.expectedSlots,
            notingDepartures: context.readsDepartures)
        capacity = context.capacity
    }

    mutating func access(_ slot: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        queues.beginRequest()
        let count = queues.queue(of: slot)
        if count != SlotQueues.none {
            queues.moveToHead(slot, min(count + 1, Self.maximumCount))
            return true
        }
        guard size <= capacity else { return false }
        while resident + size > capacity, let lowest = (1...Self.maximumCount).first(where: { queues.count($0) > 0 }) {
            _ = queues.popTail(lowest)
        }
        queues.setSize(size, of: slot)
        queues.pushHead(slot, 1)
        return false
    }

    private var resident: UInt64 { (1...Self.maximumCount).reduce(0) { $0 + queues.weight($1) } }

    mutating func remove(_ slot: UInt32) {
        queues.beginRequest()
        queues.remove(slot)
    }

    mutating func removeAll() { queues.removeAll() }
    func isResident(_ slot: UInt32) -> Bool { queues.queue(of: slot) != SlotQueues.none }
    func remembers(_ slot: UInt32) -> Bool { isResident(slot) }
    var departures: ArraySlice<UInt32> { queues.departures }
    var largestAdmissibleSize: UInt64 { capacity }
    var residentsByRetention: [UInt32] { (1...Self.maximumCount).reversed().flatMap { queues.members(of: $0) } }
}
