/// SIEVE (Zhang et al., NSDI 2024): FIFO order with a visited bit and a hand that moves from the tail
/// towards the head, clearing visited bits and evicting the first unvisited object in place. Unlike
/// CLOCK, survivors keep their position, so new objects are evicted quickly ("quick demotion").
public struct SIEVEPolicy: EvictionPolicy {
    /// The policy's name in reports.
    public static let name = "SIEVE"
    @usableFromInline static let cache: UInt8 = 1
    @usableFromInline var queues: SlotQueues
    @usableFromInline var hand: UInt32?
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
            queues.setTag(1, of: slot)  // visited
            return true
        }
        guard size <= capacity else { return false }
        while queues.weight(Self.cache) + size > capacity {
            evict()
        }
        queues.setSize(size, of: slot)
        queues.setTag(0, of: slot)
        queues.pushHead(slot, Self.cache)
        return false
    }

    @usableFromInline
    mutating func evict() {
        guard var candidate = hand ?? queues.tail(Self.cache) else { return }
        while queues.tag(of: candidate) != 0 {
            queues.setTag(0, of: candidate)
            guard let newer = queues.newer(than: candidate) ?? queues.tail(Self.cache) else { break }
            candidate = newer
        }
        hand = queues.newer(than: candidate)
        queues.remove(candidate)
    }

    /// Forgets `slot` (the hand moves past it first).
    public mutating func remove(_ slot: UInt32) {
        queues.beginRequest()
        guard isResident(slot) else { return }
        if hand == slot { hand = queues.newer(than: slot) }
        queues.remove(slot)
    }

    /// Forgets every slot.
    public mutating func removeAll() {
        queues.removeAll()
        hand = nil
    }

    /// Whether `slot` is cached.
    @inlinable public func isResident(_ slot: UInt32) -> Bool { queues.queue(of: slot) != SlotQueues.none }
    /// SIEVE keeps no history: only resident slots.
    @inlinable public func remembers(_ slot: UInt32) -> Bool { isResident(slot) }
    /// The slots the last call took out of the cache.
    @inlinable public var departures: ArraySlice<UInt32> { queues.departures }
    /// The whole capacity.
    public var largestAdmissibleSize: UInt64 { capacity }
    /// Newest first.
    public var residentsByRetention: [UInt32] { queues.members(of: Self.cache) }
}
