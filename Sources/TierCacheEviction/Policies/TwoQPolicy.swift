/// 2Q (Johnson & Shasha, VLDB 1994), the full version of the paper's Figure 2.
///
/// A first request puts an object in A1in, a FIFO of resident objects; further requests while it is
/// there are "correlated" and change nothing. Leaving A1in, its key goes to A1out, a FIFO of keys
/// only (a ghost). A request whose key is in A1out means the object is hot: it enters Am, an LRU
/// list, where hits move it to the front. When room is needed, A1in gives up its oldest object if it
/// holds more than Kin, otherwise Am its least recent one (not remembered in A1out).
///
/// Kin is 25% of the capacity and Kout (the most A1out remembers) 50%, the values the paper
/// recommends. They are not tuned per trace (the ARC paper's 2Q column is: it lists the best
/// values found offline). With them, 2Q is within 0.15 points of the ARC paper's 2Q column on OLTP
/// (Table IV); on P12 (Table V) small caches want a larger Kin and large ones a smaller one, and the
/// best of Kin = 5%, 25%, 90% is within 0.3 points. In byte mode the sizes of A1in, A1out and Am
/// are sums of object sizes; an object larger than Kin is not admitted, and one larger than Kout
/// is not remembered in A1out (as libCacheSim's TwoQ, whose A1in and A1out are caches of those
/// sizes), except that below 4 objects, where Kin is 0 and libCacheSim's TwoQ admits nothing,
/// objects of size 1 are.
///
/// Cost: one `SlotQueues` link set (17 bytes an object); O(1) a request, no allocation.
public struct TwoQPolicy: EvictionPolicy {
    /// The policy's name in reports.
    public static let name = "2Q"
    /// Kin, as a share of the capacity (the paper's recommendation).
    public static let defaultInFraction = 0.25
    /// Kout, as a share of the capacity (the paper's recommendation).
    public static let defaultOutFraction = 0.5

    @usableFromInline static let am: UInt8 = 1
    @usableFromInline static let a1in: UInt8 = 2
    @usableFromInline static let a1out: UInt8 = 3

    @usableFromInline var queues: SlotQueues
    @usableFromInline let capacity: UInt64
    /// Kin: A1in gives up its oldest object only while it holds more than this.
    @usableFromInline let inLimit: UInt64
    /// Kout: the most the keys in A1out may add up to.
    @usableFromInline let outLimit: UInt64
    /// The largest object admitted: Kin, as libCacheSim's TwoQ (its A1in is a cache of Kin), but
    /// at least 1, so that a cache of fewer than 4 objects, whose Kin is 0, admits as the paper's
    /// 2Q does (Kin a threshold for paging out, not a size) rather than nothing.
    @usableFromInline let admissionLimit: UInt64

    /// An empty cache of `context`'s capacity, with the default parameters.
    public init(context: PolicyContext) {
        self.init(context: context, inFraction: Self.defaultInFraction, outFraction: Self.defaultOutFraction)
    }

    /// A 2Q cache with other Kin and Kout than the paper's.
    /// - Parameters:
    ///   - context: the capacity (and the slots to expect).
    ///   - inFraction: Kin as a share of the capacity, 0...1.
    ///   - outFraction: Kout as a share of the capacity (0 or more; keys only, so it may exceed 1).
    public init(context: PolicyContext, inFraction: Double, outFraction: Double) {
        queues = SlotQueues(
            queueCount: 3, reserving: context.expectedSlots, notingDepartures: context.readsDepartures)
        capacity = context.capacity
        let kin = inFraction.isFinite ? min(max(inFraction, 0), 1) : Self.defaultInFraction
        let kout = outFraction.isFinite ? max(outFraction, 0) : Self.defaultOutFraction
        inLimit = context.capacity.scaled(by: kin)
        outLimit = context.capacity.scaled(by: kout)
        admissionLimit = min(max(inLimit, 1), context.capacity)
    }

    /// Serves a request; returns whether it hit.
    @inlinable
    public mutating func access(_ object: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        queues.beginRequest()
        switch queues.queue(of: object) {
        case Self.am:
            queues.moveToHead(object, Self.am)
            return true
        case Self.a1in:
            return true  // a correlated reference: nothing changes
        case Self.a1out:
            // Removed before reclaiming, as Caffeine's simulator does, so it is not counted in A1out
            // (and before the size check, as libCacheSim's `TwoQ_find` does).
            queues.remove(object)
            guard size <= admissionLimit, reclaim(for: size) else { return false }
            queues.setSize(size, of: object)
            queues.pushHead(object, Self.am)
            return false
        default:
            guard size <= admissionLimit, reclaim(for: size) else { return false }
            queues.setSize(size, of: object)
            queues.pushHead(object, Self.a1in)
            return false
        }
    }

    /// The paper's `reclaimfor`, repeated until an object of `size` fits (once with unit sizes).
    /// - Returns: false when the object is larger than the whole cache.
    @usableFromInline
    mutating func reclaim(for size: UInt64) -> Bool {
        guard size <= capacity else { return false }
        while queues.weight(Self.am) + queues.weight(Self.a1in) + size > capacity {
            if queues.weight(Self.a1in) > inLimit || queues.count(Self.am) == 0 {
                guard let oldest = queues.popTail(Self.a1in) else { break }
                // A key heavier than all of A1out is not remembered: pushed, it emptied A1out,
                // itself included, of every key it held.
                guard queues.size(of: oldest) <= outLimit else { continue }
                queues.pushHead(oldest, Self.a1out)
                while queues.weight(Self.a1out) > outLimit, queues.popTail(Self.a1out) != nil {}
            } else {
                _ = queues.popTail(Self.am)
            }
        }
        return true
    }
}

extension TwoQPolicy {
    /// Forgets `slot`, in the cache or in A1out.
    public mutating func remove(_ slot: UInt32) {
        queues.beginRequest()
        queues.remove(slot)
    }

    /// Forgets every slot.
    public mutating func removeAll() { queues.removeAll() }

    /// Whether `slot` is in Am or A1in.
    @inlinable public func isResident(_ slot: UInt32) -> Bool {
        let queue = queues.queue(of: slot)
        return queue == Self.am || queue == Self.a1in
    }
    /// Resident, or in A1out.
    @inlinable public func remembers(_ slot: UInt32) -> Bool { queues.queue(of: slot) != SlotQueues.none }
    /// The slots the last call took out of a queue.
    @inlinable public var departures: ArraySlice<UInt32> { queues.departures }
    /// Kin (at least 1): a first request enters A1in, and an object larger than A1in's share is
    /// not admitted (libCacheSim's `TwoQ_can_insert`).
    public var largestAdmissibleSize: UInt64 { admissionLimit }
    /// Am from most to least recent, then A1in.
    public var residentsByRetention: [UInt32] { queues.members(of: Self.am) + queues.members(of: Self.a1in) }

    /// The queues from their most recent end to their oldest, as slots (for tests).
    public var snapshot: (am: [UInt32], a1in: [UInt32], a1out: [UInt32]) {
        (queues.members(of: Self.am), queues.members(of: Self.a1in), queues.members(of: Self.a1out))
    }
}
