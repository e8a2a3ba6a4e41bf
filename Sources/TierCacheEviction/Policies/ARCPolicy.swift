/// ARC (Megiddo & Modha, FAST 2003), as in the paper's Figure 4.
///
/// T1 holds objects seen once recently, T2 objects seen at least twice; B1 and B2 remember the keys
/// evicted from each. A hit in B1 grows the target size `p` of T1, a hit in B2 shrinks it, so the
/// balance between recency and frequency adapts to the workload. In byte mode every count of the
/// paper becomes a sum of sizes and each single step becomes a loop until the object fits; with unit
/// sizes this is exactly the paper's algorithm (the tests check its published hit ratios).
///
/// The paper defines ARC over pages only, so byte mode is a generalization, and libCacheSim's
/// differs from this one in two rules (``Adaptation``). By default a ghost hit moves `p` by the
/// object's size times the paper's ratio, as if each of its bytes were a page, so ARC keeps
/// adapting when objects are large. libCacheSim moves `p` by the ratio alone, whatever the size,
/// so in byte mode its `p` stays within a few kilobytes of 0 and ARC evicts from T1 first.
/// ``Adaptation/libCacheSim`` makes libCacheSim's decisions (the validation tests compare its hit
/// ratios with libCacheSim's); with unit sizes both are the paper's algorithm.
public struct ARCPolicy: EvictionPolicy {
    /// How `p` moves, and how a complete miss makes room, when sizes differ.
    public enum Adaptation: Sendable, Hashable {
        /// `p` moves by the object's size times the paper's ratio; a complete miss first trims
        /// B1 (or T1) and B2 to the directory's bounds, then replaces until the object fits.
        case perByte
        /// libCacheSim's `ARC.c`: `p` moves by the ratio alone, and a complete miss makes room
        /// one eviction at a time, each dropping one ghost entry and replacing once. For the
        /// simulator's comparisons with libCacheSim only: in byte mode its ghost lists grow
        /// without bound once B1 outweighs the capacity less an object (B2 is trimmed only on
        /// the other branch, as in `ARC.c`), which breaks the contract's bounded memory in a
        /// `MemoryTier`.
        case libCacheSim
    }

    /// The policy's name in reports.
    public static let name = "ARC"
    @usableFromInline static let t1: UInt8 = 1
    @usableFromInline static let t2: UInt8 = 2
    @usableFromInline static let b1: UInt8 = 3
    @usableFromInline static let b2: UInt8 = 4

    @usableFromInline var queues: SlotQueues
    @usableFromInline let capacity: UInt64
    /// The target size of T1.
    @usableFromInline var p: Double = 0
    @usableFromInline let adaptation: Adaptation

    /// An empty cache of `context`'s capacity, adapting ``Adaptation/perByte``.
    public init(context: PolicyContext) {
        self.init(context: context, adaptation: .perByte)
    }

    /// An empty cache of `context`'s capacity, adapting as `adaptation` says in byte mode.
    public init(context: PolicyContext, adaptation: Adaptation) {
        queues = SlotQueues(
            queueCount: 4, reserving: context.expectedSlots, notingDepartures: context.readsDepartures)
        capacity = context.capacity
        self.adaptation = adaptation
    }

    /// How far a ghost hit on an object of `size` moves `p`, given the paper's ratio.
    @inlinable
    func step(_ ratio: Double, size: UInt64) -> Double {
        adaptation == .perByte ? ratio * Double(size) : ratio
    }

    /// Serves a request; returns whether it hit.
    @inlinable
    public mutating func access(_ object: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        queues.beginRequest()
        let queue = queues.queue(of: object)
        // Case I: a hit in T1 or T2.
        if queue == Self.t1 || queue == Self.t2 {
            queues.moveToHead(object, Self.t2)
            return true
        }
        guard size <= capacity else {
            if queue != SlotQueues.none { queues.remove(object) }
            return false
        }
        let c = Double(capacity)
        let b1 = Double(queues.weight(Self.b1))
        let b2 = Double(queues.weight(Self.b2))
        if queue == Self.b1 {
            // Case II: the ghost of a recency object; favour recency.
            let delta = b1 >= b2 ? 1 : b2 / b1
            p = min(c, p + step(delta, size: size))
            queues.remove(object)
            makeRoom(for: size, requestInB2: false)
            queues.setSize(size, of: object)
            queues.pushHead(object, Self.t2)
            return false
        }
        if queue == Self.b2 {
            // Case III: the ghost of a frequency object; favour frequency.
            let delta = b2 >= b1 ? 1 : b1 / b2
            p = max(0, p - step(delta, size: size))
            queues.remove(object)
            makeRoom(for: size, requestInB2: true)
            queues.setSize(size, of: object)
            queues.pushHead(object, Self.t2)
            return false
        }
        // Case IV: a complete miss.
        if adaptation == .libCacheSim {
            makeRoomOneEvictionAtATime(for: size)
        } else {
            // A: L1 = T1 + B1 would exceed c; drop B1's oldest keys, or T1's oldest objects once B1 is empty.
            while queues.weight(Self.t1) + queues.weight(Self.b1) + size > capacity, queues.popTail(Self.b1) != nil {}
            while queues.weight(Self.t1) + size > capacity, queues.popTail(Self.t1) != nil {}
            // B: the directory (all four lists) holds at most 2c; drop B2's oldest keys.
            while totalWeight + size > 2 * capacity, queues.popTail(Self.b2) != nil {}
        }
        makeRoom(for: size, requestInB2: false)
        queues.setSize(size, of: object)
        queues.pushHead(object, Self.t1)
        return false
    }

    @usableFromInline var totalWeight: UInt64 {
        queues.weight(Self.t1) + queues.weight(Self.t2) + queues.weight(Self.b1) + queues.weight(Self.b2)
    }

    /// REPLACE(x, p) until the cache has room for `size`.
    @usableFromInline
    mutating func makeRoom(for size: UInt64, requestInB2: Bool) {
        while queues.weight(Self.t1) + queues.weight(Self.t2) + size > capacity, replace(requestInB2: requestInB2) {}
    }

    /// The paper's REPLACE(x, p): T1's oldest object to B1, or T2's to B2. False when both are empty.
    @usableFromInline @discardableResult
    mutating func replace(requestInB2: Bool) -> Bool {
        let t1 = Double(queues.weight(Self.t1))
        if queues.count(Self.t1) > 0, (requestInB2 && t1 == p) || t1 > p || queues.count(Self.t2) == 0 {
            guard let oldest = queues.popTail(Self.t1) else { return false }
            queues.pushHead(oldest, Self.b1)
        } else {
            guard let oldest = queues.popTail(Self.t2) else { return false }
            queues.pushHead(oldest, Self.b2)
        }
        return true
    }

    /// libCacheSim's `_ARC_evict_miss_on_all_queues`, once per eviction until an object of `size`
    /// fits: with L1 full, one B1 entry goes and REPLACE runs (or, B1 empty, T1's oldest object goes
    /// with no ghost); otherwise one B2 entry goes when the directory is full, and REPLACE runs.
    @usableFromInline
    mutating func makeRoomOneEvictionAtATime(for size: UInt64) {
        while queues.weight(Self.t1) + queues.weight(Self.t2) + size > capacity {
            if queues.weight(Self.t1) + queues.weight(Self.b1) + size > capacity {
                if queues.popTail(Self.b1) != nil {
                    replace(requestInB2: false)
                } else if queues.popTail(Self.t1) == nil {
                    return
                }
            } else {
                if totalWeight >= 2 * capacity { _ = queues.popTail(Self.b2) }
                guard replace(requestInB2: false) else { return }
            }
        }
    }

    /// Forgets `slot`, in the cache or in a ghost list.
    public mutating func remove(_ slot: UInt32) {
        queues.beginRequest()
        queues.remove(slot)
    }

    /// Forgets every slot.
    public mutating func removeAll() {
        queues.removeAll()
        p = 0
    }

    /// Whether `slot` is in T1 or T2.
    @inlinable public func isResident(_ slot: UInt32) -> Bool {
        let queue = queues.queue(of: slot)
        return queue == Self.t1 || queue == Self.t2
    }
    /// Resident, or in B1 or B2.
    @inlinable public func remembers(_ slot: UInt32) -> Bool { queues.queue(of: slot) != SlotQueues.none }
    /// The slots the last call took out of a list.
    @inlinable public var departures: ArraySlice<UInt32> { queues.departures }
    /// The whole capacity.
    public var largestAdmissibleSize: UInt64 { capacity }
    /// T2 from most to least recent, then T1.
    public var residentsByRetention: [UInt32] { queues.members(of: Self.t2) + queues.members(of: Self.t1) }
}
