import CPrefetch

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
/// Slots taken out of a queue are noted (unless the driver never reads them) in ``departures``
/// until the next ``beginRequest()``, so a
/// driver that keeps values beside the policy (`MemoryTier`) learns which slots to look at
/// after a request without the policy reporting each eviction itself. "Head" is the most
/// recently inserted end, "tail" the oldest.
public struct SlotQueues: Sendable {
    /// The queue number of "in no queue".
    public static let none: UInt8 = 0
    @usableFromInline static let nil32: Int32 = -1

    /// One slot's links, size and queue, kept together: a request that touches a slot touches
    /// one cache line, not one per array (on a trace of millions of objects, each of those is a
    /// miss).
    @usableFromInline
    struct Node: Sendable {
        @usableFromInline var size: UInt64
        @usableFromInline var previous: Int32  // towards the head
        @usableFromInline var next: Int32  // towards the tail
        @usableFromInline var owner: UInt8
        /// The policy's own byte for the slot (``tag(of:)``).
        @usableFromInline var tag: UInt8
        /// The policy's own 32 bits for the slot (``word(of:)``), in what was padding: the node
        /// stays 24 bytes.
        @usableFromInline var word: UInt32

        @usableFromInline static let free = Node(size: 0, previous: nil32, next: nil32, owner: none, tag: 0, word: 0)

        @usableFromInline
        init(size: UInt64, previous: Int32, next: Int32, owner: UInt8, tag: UInt8, word: UInt32) {
            self.size = size
            self.previous = previous
            self.next = next
            self.owner = owner
            self.tag = tag
            self.word = word
        }
    }

    /// A queue's ends and totals, together: one array to check for uniqueness on a change, not four.
    @usableFromInline
    struct Ends: Sendable {
        @usableFromInline var head: Int32 = nil32
        @usableFromInline var tail: Int32 = nil32
        @usableFromInline var count = 0
        @usableFromInline var weight: UInt64 = 0

        @usableFromInline init() {}
    }

    @usableFromInline var nodes: [Node] = []
    /// Indexed by queue number; entry 0 (``none``) is unused.
    @usableFromInline var ends: [Ends]
    /// Slots taken out of a queue since ``beginRequest()``; the first `departureCount` are valid.
    @usableFromInline var departed: [UInt32] = []
    @usableFromInline var departureCount = 0
    @usableFromInline let notesDepartures: Bool

    /// Empty queues numbered `1...queueCount`, with room for `slots` slots reserved; departures
    /// are noted unless `notingDepartures` is false (a driver that never reads them).
    public init(queueCount: Int, reserving slots: Int = 0, notingDepartures: Bool = true) {
        notesDepartures = notingDepartures
        ends = [Ends](repeating: Ends(), count: queueCount + 1)
        if slots > 0 { grow(to: slots) }
    }

    /// The number of slots the arrays cover.
    @inlinable public var slotCapacity: Int { nodes.count }

    /// Makes the arrays cover slots `0..<count`.
    @usableFromInline
    mutating func grow(to count: Int) {
        guard count > nodes.count else { return }
        let target = Swift.max(count, nodes.count * 2, 64)
        nodes.append(contentsOf: repeatElement(Node.free, count: target - nodes.count))
    }

    /// Starts a request: forgets the previous request's ``departures``.
    @inlinable @inline(__always)
    public mutating func beginRequest() { departureCount = 0 }

    /// The slots taken out of a queue since ``beginRequest()`` (some may have entered another, or
    /// the same, queue again since).
    @inlinable public var departures: ArraySlice<UInt32> { departed[0..<departureCount] }

    @inlinable @inline(__always)
    mutating func noteDeparture(_ slot: Int) {
        guard notesDepartures else { return }
        if departureCount == departed.count {
            departed.append(UInt32(truncatingIfNeeded: slot))
        } else {
            departed[departureCount] = UInt32(truncatingIfNeeded: slot)
        }
        departureCount += 1
    }

    // MARK: Reading

    /// Starts loading `slot`'s node (a hint: see ``EvictionPolicy/prefetch(_:keyHash:)``).
    @inlinable @inline(__always)
    public func prefetch(_ slot: UInt32) {
        let id = Int(slot)
        guard id < nodes.count else { return }
        nodes.withUnsafeBufferPointer { nodes in
            if let base = nodes.baseAddress { tiercache_prefetch(base + id) }
        }
    }

    /// The queue holding `slot`, or ``none``.
    @inlinable @inline(__always)
    public func queue(of slot: UInt32) -> UInt8 {
        let id = Int(slot)
        return id < nodes.count ? nodes[id].owner : Self.none
    }

    /// The size `slot` was last given.
    @inlinable @inline(__always)
    public func size(of slot: UInt32) -> UInt64 { nodes[Int(slot)].size }

    /// Sets `slot`'s size; `slot` must be in no queue (so that no queue's weight goes stale).
    @inlinable @inline(__always)
    public mutating func setSize(_ size: UInt64, of slot: UInt32) {
        let id = Int(slot)
        if id >= nodes.count { grow(to: id + 1) }
        nodes[id].size = size
    }

    /// A byte the policy keeps for `slot` beside its links (CLOCK's reference bit, SIEVE's
    /// visited bit, S3-FIFO's frequency), in the same cache line; 0 until set.
    @inlinable @inline(__always)
    public func tag(of slot: UInt32) -> UInt8 { nodes[Int(slot)].tag }

    /// Sets `slot`'s byte (see ``tag(of:)``).
    @inlinable @inline(__always)
    public mutating func setTag(_ tag: UInt8, of slot: UInt32) {
        let id = Int(slot)
        if id >= nodes.count { grow(to: id + 1) }
        nodes[id].tag = tag
    }

    /// 32 bits the policy keeps for `slot` beside its links (W-TinyLFU's folded key hash, which
    /// its admission reads for a victim whose links it has just read), in the same cache line;
    /// 0 until set.
    @inlinable @inline(__always)
    public func word(of slot: UInt32) -> UInt32 { nodes[Int(slot)].word }

    /// Sets `slot`'s 32 bits (see ``word(of:)``).
    @inlinable @inline(__always)
    public mutating func setWord(_ word: UInt32, of slot: UInt32) {
        let id = Int(slot)
        if id >= nodes.count { grow(to: id + 1) }
        nodes[id].word = word
    }

    /// The sum of `queue`'s members' sizes.
    @inlinable @inline(__always)
    public func weight(_ queue: UInt8) -> UInt64 { ends[Int(queue)].weight }

    /// The number of slots in `queue`.
    @inlinable @inline(__always)
    public func count(_ queue: UInt8) -> Int { ends[Int(queue)].count }

    /// The oldest slot of `queue`, if any.
    @inlinable @inline(__always)
    public func tail(_ queue: UInt8) -> UInt32? {
        let tail = ends[Int(queue)].tail
        return tail < 0 ? nil : UInt32(tail)
    }

    /// The newest slot of `queue`, if any.
    @inlinable @inline(__always)
    public func head(_ queue: UInt8) -> UInt32? {
        let head = ends[Int(queue)].head
        return head < 0 ? nil : UInt32(head)
    }

    /// The neighbour of `slot` towards the head of its queue, if any.
    @inlinable @inline(__always)
    public func newer(than slot: UInt32) -> UInt32? {
        let link = nodes[Int(slot)].previous
        return link < 0 ? nil : UInt32(link)
    }

    /// The neighbour of `slot` towards the tail of its queue, if any.
    @inlinable @inline(__always)
    public func older(than slot: UInt32) -> UInt32? {
        let link = nodes[Int(slot)].next
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
        let oldTail = ends[q].tail
        nodes[id].owner = queue
        nodes[id].next = Self.nil32
        nodes[id].previous = oldTail
        if oldTail >= 0 { nodes[Int(oldTail)].next = Int32(id) } else { ends[q].head = Int32(id) }
        ends[q].tail = Int32(id)
        ends[q].count += 1
        ends[q].weight += nodes[id].size
    }

    /// Inserts a slot that is in no queue at the head of `queue`.
    @inlinable @inline(__always)
    public mutating func pushHead(_ slot: UInt32, _ queue: UInt8) {
        let id = Int(slot)
        let q = Int(queue)
        let oldHead = ends[q].head
        nodes[id].owner = queue
        nodes[id].previous = Self.nil32
        nodes[id].next = oldHead
        if oldHead >= 0 { nodes[Int(oldHead)].previous = Int32(id) } else { ends[q].tail = Int32(id) }
        ends[q].head = Int32(id)
        ends[q].count += 1
        ends[q].weight += nodes[id].size
    }

    /// Takes a slot out of whichever queue holds it, noting the departure.
    @inlinable @inline(__always)
    public mutating func remove(_ slot: UInt32) {
        let id = Int(slot)
        guard id < nodes.count, nodes[id].owner != Self.none else { return }
        unlink(id)
        noteDeparture(id)
    }

    /// Takes slot `id`, which is in a queue, out of it.
    @inlinable @inline(__always)
    mutating func unlink(_ id: Int) {
        let q = Int(nodes[id].owner)
        let before = nodes[id].previous
        let after = nodes[id].next
        if before >= 0 { nodes[Int(before)].next = after } else { ends[q].head = after }
        if after >= 0 { nodes[Int(after)].previous = before } else { ends[q].tail = before }
        nodes[id].owner = Self.none
        ends[q].count -= 1
        ends[q].weight -= nodes[id].size
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
        let owner = nodes[id].owner
        guard owner == queue else {
            if owner != Self.none { unlink(id) }
            pushHead(slot, queue)
            return
        }
        // Within its own queue (an LRU hit, CLOCK's second chance, S3-FIFO's reinsertion) the
        // slot is only relinked: the queue's count and weight stay as they are.
        let q = Int(queue)
        let head = ends[q].head
        guard head != Int32(id) else { return }
        let before = nodes[id].previous  // not the head, so there is one
        let after = nodes[id].next
        nodes[Int(before)].next = after
        if after >= 0 { nodes[Int(after)].previous = before } else { ends[q].tail = before }
        nodes[id].previous = Self.nil32
        nodes[id].next = head
        nodes[Int(head)].previous = Int32(id)
        ends[q].head = Int32(id)
    }

    /// Moves a slot that is in a queue to the tail of `queue`, without noting a departure.
    @inlinable @inline(__always)
    public mutating func moveToTail(_ slot: UInt32, _ queue: UInt8) {
        let id = Int(slot)
        if nodes[id].owner != Self.none { unlink(id) }
        pushTail(slot, queue)
    }

    /// Empties every queue (the arrays keep their room).
    public mutating func removeAll() {
        for id in nodes.indices where nodes[id].owner != Self.none {
            nodes[id].owner = Self.none
            nodes[id].previous = Self.nil32
            nodes[id].next = Self.nil32
        }
        for queue in ends.indices { ends[queue] = Ends() }
        departureCount = 0
    }
}
