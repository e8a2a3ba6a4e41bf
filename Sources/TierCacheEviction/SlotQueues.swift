/// Doubly linked queues over dense slot ids, sharing one set of per-slot arrays: the structure
/// every queue-based policy is written on (LRU's list, ARC's T1/T2/B1/B2, S3-FIFO's
/// small/main/ghost, W-TinyLFU's window/probation/protected, 2Q's A1in/A1out/Am).
///
/// A slot is in at most one queue at a time, so one `previous`/`next` pair per slot serves every
/// queue, and membership is one byte (queue 0 is "in none"). Each slot carries the size it was
/// last given, and each queue the sum of its members' sizes. Every operation is O(1); the arrays
/// grow when a slot beyond them is first given a size (a driver that knows its slot count, like
/// the simulator, reserves them up front) and nothing allocates after that.
///
/// Slots taken out of a queue are noted in ``departures`` until the next ``beginRequest()``, so a
/// driver that keeps values beside the policy (`MemoryTier`) learns which slots to look at
/// after a request without the policy reporting each eviction itself. "Head" is the most
/// recently inserted end, "tail" the oldest.
public struct SlotQueues: Sendable {
    /// The queue number of "in no queue".
    public static let none: UInt8 = 0
    @usableFromInline static let nil32: Int32 = -1

    @usableFromInline var owner: [UInt8] = []
    @usableFromInline var previous: [Int32] = []  // towards the head
    @usableFromInline var next: [Int32] = []  // towards the tail
    @usableFromInline var sizes: [UInt64] = []
    @usableFromInline var heads: [Int32]
    @usableFromInline var tails: [Int32]
    @usableFromInline var counts: [Int]
    @usableFromInline var weights: [UInt64]
    /// Slots taken out of a queue since ``beginRequest()``; the first `departureCount` are valid.
    @usableFromInline var departed: [UInt32] = []
    @usableFromInline var departureCount = 0

    /// Empty queues numbered `1...queueCount`, with room for `slots` slots reserved.
    public init(queueCount: Int, reserving slots: Int = 0) {
        heads = [Int32](repeating: Self.nil32, count: queueCount + 1)
        tails = heads
        counts = [Int](repeating: 0, count: queueCount + 1)
        weights = [UInt64](repeating: 0, count: queueCount + 1)
        if slots > 0 { grow(to: slots) }
    }

    /// The number of slots the arrays cover.
    @inlinable public var slotCapacity: Int { owner.count }

    /// Makes the arrays cover slots `0..<count`.
    @usableFromInline
    mutating func grow(to count: Int) {
        guard count > owner.count else { return }
        let target = Swift.max(count, owner.count * 2, 64)
        let added = target - owner.count
        owner.append(contentsOf: repeatElement(Self.none, count: added))
        previous.append(contentsOf: repeatElement(Self.nil32, count: added))
        next.append(contentsOf: repeatElement(Self.nil32, count: added))
        sizes.append(contentsOf: repeatElement(0, count: added))
    }

    /// Starts a request: forgets the previous request's ``departures``.
    @inlinable @inline(__always)
    public mutating func beginRequest() { departureCount = 0 }

    /// The slots taken out of a queue since ``beginRequest()`` (some may have entered another, or
    /// the same, queue again since).
    @inlinable public var departures: ArraySlice<UInt32> { departed[0..<departureCount] }

    @inlinable @inline(__always)
    mutating func noteDeparture(_ slot: Int) {
        if departureCount == departed.count {
            departed.append(UInt32(truncatingIfNeeded: slot))
        } else {
            departed[departureCount] = UInt32(truncatingIfNeeded: slot)
        }
        departureCount += 1
    }

    // MARK: Reading

    /// The queue holding `slot`, or ``none``.
    @inlinable @inline(__always)
    public func queue(of slot: UInt32) -> UInt8 {
        let id = Int(slot)
        return id < owner.count ? owner[id] : Self.none
    }

    /// The size `slot` was last given.
    @inlinable @inline(__always)
    public func size(of slot: UInt32) -> UInt64 { sizes[Int(slot)] }

    /// Sets `slot`'s size; `slot` must be in no queue (so that no queue's weight goes stale).
    @inlinable @inline(__always)
    public mutating func setSize(_ size: UInt64, of slot: UInt32) {
        let id = Int(slot)
        if id >= owner.count { grow(to: id + 1) }
        sizes[id] = size
    }

    /// The sum of `queue`'s members' sizes.
    @inlinable @inline(__always)
    public func weight(_ queue: UInt8) -> UInt64 { weights[Int(queue)] }

    /// The number of slots in `queue`.
    @inlinable @inline(__always)
    public func count(_ queue: UInt8) -> Int { counts[Int(queue)] }

    /// The oldest slot of `queue`, if any.
    @inlinable @inline(__always)
    public func tail(_ queue: UInt8) -> UInt32? {
        let tail = tails[Int(queue)]
        return tail < 0 ? nil : UInt32(tail)
    }

    /// The newest slot of `queue`, if any.
    @inlinable @inline(__always)
    public func head(_ queue: UInt8) -> UInt32? {
        let head = heads[Int(queue)]
        return head < 0 ? nil : UInt32(head)
    }

    /// The neighbour of `slot` towards the head of its queue, if any.
    @inlinable @inline(__always)
    public func newer(than slot: UInt32) -> UInt32? {
        let link = previous[Int(slot)]
        return link < 0 ? nil : UInt32(link)
    }

    /// The neighbour of `slot` towards the tail of its queue, if any.
    @inlinable @inline(__always)
    public func older(than slot: UInt32) -> UInt32? {
        let link = next[Int(slot)]
        return link < 0 ? nil : UInt32(link)
    }

    /// The slots of `queue` from the head (newest) to the tail (oldest). O(n): for tests and
    /// diagnostics, never on a request's path.
    public func members(of queue: UInt8) -> [UInt32] {
        var result: [UInt32] = []
        var cursor = head(queue)
        while let slot = cursor {
            result.append(slot)
            cursor = older(than: slot)
        }
        return result
    }

    // MARK: Changing

    /// Inserts a slot that is in no queue at the tail (oldest end) of `queue`.
    @inlinable @inline(__always)
    public mutating func pushTail(_ slot: UInt32, _ queue: UInt8) {
        let id = Int(slot)
        let q = Int(queue)
        let oldTail = tails[q]
        owner[id] = queue
        next[id] = Self.nil32
        previous[id] = oldTail
        if oldTail >= 0 { next[Int(oldTail)] = Int32(id) } else { heads[q] = Int32(id) }
        tails[q] = Int32(id)
        counts[q] += 1
        weights[q] += sizes[id]
    }

    /// Inserts a slot that is in no queue at the head of `queue`.
    @inlinable @inline(__always)
    public mutating func pushHead(_ slot: UInt32, _ queue: UInt8) {
        let id = Int(slot)
        let q = Int(queue)
        let oldHead = heads[q]
        owner[id] = queue
        previous[id] = Self.nil32
        next[id] = oldHead
        if oldHead >= 0 { previous[Int(oldHead)] = Int32(id) } else { tails[q] = Int32(id) }
        heads[q] = Int32(id)
        counts[q] += 1
        weights[q] += sizes[id]
    }

    /// Takes a slot out of whichever queue holds it, noting the departure.
    @inlinable @inline(__always)
    public mutating func remove(_ slot: UInt32) {
        let id = Int(slot)
        guard id < owner.count, owner[id] != Self.none else { return }
        unlink(id)
        noteDeparture(id)
    }

    /// Takes slot `id`, which is in a queue, out of it.
    @inlinable @inline(__always)
    mutating func unlink(_ id: Int) {
        let q = Int(owner[id])
        let before = previous[id]
        let after = next[id]
        if before >= 0 { next[Int(before)] = after } else { heads[q] = after }
        if after >= 0 { previous[Int(after)] = before } else { tails[q] = before }
        owner[id] = Self.none
        counts[q] -= 1
        weights[q] -= sizes[id]
    }

    /// Removes and returns the oldest slot of `queue`.
    @inlinable @inline(__always)
    public mutating func popTail(_ queue: UInt8) -> UInt32? {
        guard let tail = tail(queue) else { return nil }
        remove(tail)
        return tail
    }

    /// Moves a slot that is in a queue to the head of `queue` (the same or another). It stays in
    /// the policy's queues, so it is not noted as departed.
    @inlinable @inline(__always)
    public mutating func moveToHead(_ slot: UInt32, _ queue: UInt8) {
        let id = Int(slot)
        if owner[id] == queue, heads[Int(queue)] == Int32(slot) { return }
        if owner[id] != Self.none { unlink(id) }
        pushHead(slot, queue)
    }

    /// Moves a slot that is in a queue to the tail of `queue`, without noting a departure.
    @inlinable @inline(__always)
    public mutating func moveToTail(_ slot: UInt32, _ queue: UInt8) {
        let id = Int(slot)
        if owner[id] != Self.none { unlink(id) }
        pushTail(slot, queue)
    }

    /// Empties every queue (the arrays keep their room).
    public mutating func removeAll() {
        for id in owner.indices where owner[id] != Self.none {
            owner[id] = Self.none
            previous[id] = Self.nil32
            next[id] = Self.nil32
        }
        for queue in heads.indices {
            heads[queue] = Self.nil32
            tails[queue] = Self.nil32
            counts[queue] = 0
            weights[queue] = 0
        }
        departureCount = 0
    }
}
