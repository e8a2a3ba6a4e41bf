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
///
/// Copies are independent, as an array's are: they share their storage until one changes.
/// A slot beyond the arrays traps, as an array index would.
///
/// `@unchecked Sendable`, safely: the pointers it keeps are its storage's, which it holds, and
/// which it writes only once no other value shares it (`SlotStorage`).
public struct SlotQueues: @unchecked Sendable {
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

    /// A queue's ends and totals, together.
    @usableFromInline
    struct Ends: Sendable {
        @usableFromInline var head: Int32 = nil32
        @usableFromInline var tail: Int32 = nil32
        @usableFromInline var count = 0
        @usableFromInline var weight: UInt64 = 0

        @usableFromInline init() {}
    }

    /// The nodes and the queues' ends, shared between copies until one of them changes
    /// (`SlotStorage`).
    @usableFromInline var storage: SlotStorage
    // The storage's pointers and size, kept beside it: the policy's own fields, which the
    // compiler keeps in registers across a request, where the storage's would be reloaded after
    // every write through a node.
    @usableFromInline var nodes: UnsafeMutablePointer<Node>
    @usableFromInline var slotCount: Int
    /// Every queue number's ends (all 256 of them), so that no queue number needs a check.
    @usableFromInline var ends: UnsafeMutablePointer<Ends>
    /// Slots taken out of a queue since ``beginRequest()``; the first `departureCount` are valid.
    @usableFromInline var departed: [UInt32] = []
    @usableFromInline var departureCount = 0
    @usableFromInline let notesDepartures: Bool

    /// Empty queues numbered `1...queueCount`, with room for `slots` slots reserved; departures
    /// are noted unless `notingDepartures` is false (a driver that never reads them).
    public init(queueCount: Int, reserving slots: Int = 0, notingDepartures: Bool = true) {
        precondition((0..<SlotStorage.endCount).contains(queueCount), "queue numbers are bytes: at most 255 queues")
        notesDepartures = notingDepartures
        storage = SlotStorage(slots: Swift.max(0, slots))
        nodes = storage.nodes
        slotCount = storage.slotCount
        ends = storage.ends
    }

    /// Makes `storage` these queues' storage.
    @usableFromInline
    mutating func adopt(_ storage: SlotStorage) {
        self.storage = storage
        nodes = storage.nodes
        slotCount = storage.slotCount
        ends = storage.ends
    }

    /// The number of slots the arrays cover.
    @inlinable public var slotCapacity: Int { slotCount }

    /// Copies the storage first if another copy of these queues shares it: every change goes
    /// through here, one uniqueness check per operation. Returns whether it copied (the queues
    /// had been shared).
    @inlinable @inline(__always) @discardableResult
    mutating func makeUnique() -> Bool {
        if isKnownUniquelyReferenced(&storage) { return false }
        adopt(SlotStorage(copying: storage))
        return true
    }

    /// Slot `slot`'s node; traps if the slot is beyond the arrays (as an array index would).
    @inlinable @inline(__always)
    func node(_ slot: UInt32) -> UnsafeMutablePointer<Node> {
        let id = Int(slot)
        precondition(id < slotCount, "slot beyond the queues' arrays")
        return nodes + id
    }

    /// Slot `slot`'s node, for writing a field the queues do not link by (its size, tag or word):
    /// the arrays grown to cover the slot and the storage made unique first, so that one pointer
    /// serves every field a setter writes.
    @inlinable @inline(__always)
    mutating func writableNode(_ slot: UInt32) -> UnsafeMutablePointer<Node> {
        let id = Int(slot)
        if id >= slotCount { grow(to: id + 1) }
        makeUnique()
        return nodes + id
    }

    /// In debug builds, traps unless the storage is unique. The `…KnowingUnique` operations skip
    /// ``makeUnique()`` for a policy of this module that changes the queues several times in one
    /// request: after its first change, which checked, the storage stays unique until the queues
    /// are copied, and a request of the policy copies nothing. The check is a call into the
    /// runtime, and W-TinyLFU's miss made four of them.
    @inlinable @inline(__always)
    mutating func assertUnique() {
        assert(isKnownUniquelyReferenced(&storage), "queues changed in storage another copy shares")
    }

    /// Makes the arrays cover slots `0..<count`.
    @usableFromInline
    mutating func grow(to count: Int) {
        guard count > slotCount else { return }
        adopt(SlotStorage(copying: storage, slots: Swift.max(count, slotCount * 2, 64)))
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
        guard id < slotCount else { return }
        tiercache_prefetch(nodes + id)
    }

    /// The queue holding `slot`, or ``none``.
    @inlinable @inline(__always)
    public func queue(of slot: UInt32) -> UInt8 {
        let id = Int(slot)
        return id < slotCount ? nodes[id].owner : Self.none
    }

    /// The size `slot` was last given.
    @inlinable @inline(__always)
    public func size(of slot: UInt32) -> UInt64 { node(slot).pointee.size }

    /// Sets `slot`'s size; `slot` must be in no queue (so that no queue's weight goes stale).
    @inlinable @inline(__always)
    public mutating func setSize(_ size: UInt64, of slot: UInt32) {
        let node = writableNode(slot)
        requireUnqueued(node, slot)
        node.pointee.size = size
    }

    /// Sets `slot`'s size and its 32 bits (``word(of:)``) together; `slot` must be in no queue.
    @inlinable @inline(__always)
    public mutating func setSize(_ size: UInt64, word: UInt32, of slot: UInt32) {
        let node = writableNode(slot)
        requireUnqueued(node, slot)
        node.pointee.size = size
        node.pointee.word = word
    }

    /// Stops a policy that resizes a queued slot: its queue's weight, which counts the old size,
    /// would be taken the new one when the slot leaves, and go wrong (below zero, wrapping), so
    /// that an eviction loop bounded by the weight never ends. One compare of a loaded node.
    @inlinable @inline(__always)
    func requireUnqueued(_ node: UnsafeMutablePointer<Node>, _ slot: UInt32) {
        precondition(
            node.pointee.owner == Self.none,
            "setSize: slot \(slot) is in queue \(node.pointee.owner); take it out of its queue before resizing it")
    }

    /// ``setSize(_:word:of:)`` in storage known to be unique (see ``assertUnique()``).
    @inlinable @inline(__always)
    mutating func setSizeKnowingUnique(_ size: UInt64, word: UInt32, of slot: UInt32) {
        let id = Int(slot)
        // Growing copies the storage into a new, unique one.
        if id >= slotCount { grow(to: id + 1) }
        assertUnique()
        let node = nodes + id
        node.pointee.size = size
        node.pointee.word = word
    }

    /// A byte the policy keeps for `slot` beside its links (CLOCK's reference bit, SIEVE's
    /// visited bit, S3-FIFO's frequency), in the same cache line; 0 until first set. Not reset
    /// when the slot leaves: a slot the memory tier reuses for a new key (once the policy forgot
    /// it) holds its last key's byte, so set it when the slot is admitted, as the built-in
    /// policies do.
    @inlinable @inline(__always)
    public func tag(of slot: UInt32) -> UInt8 { node(slot).pointee.tag }

    /// Sets `slot`'s byte (see ``tag(of:)``).
    @inlinable @inline(__always)
    public mutating func setTag(_ tag: UInt8, of slot: UInt32) {
        writableNode(slot).pointee.tag = tag
    }

    /// 32 bits the policy keeps for `slot` beside its links (W-TinyLFU's folded key hash, which
    /// its admission reads for a victim whose links it has just read), in the same cache line;
    /// 0 until first set, and, like ``tag(of:)``, kept when a reused slot gets a new key.
    @inlinable @inline(__always)
    public func word(of slot: UInt32) -> UInt32 { node(slot).pointee.word }

    /// Sets `slot`'s 32 bits (see ``word(of:)``).
    @inlinable @inline(__always)
    public mutating func setWord(_ word: UInt32, of slot: UInt32) {
        writableNode(slot).pointee.word = word
    }

    /// The queue's ends.
    @inlinable @inline(__always)
    func ends(_ queue: UInt8) -> UnsafeMutablePointer<Ends> { ends + Int(queue) }

    /// The sum of `queue`'s members' sizes.
    @inlinable @inline(__always)
    public func weight(_ queue: UInt8) -> UInt64 { ends(queue).pointee.weight }

    /// The number of slots in `queue`.
    @inlinable @inline(__always)
    public func count(_ queue: UInt8) -> Int { ends(queue).pointee.count }

    /// The oldest slot of `queue`, if any.
    @inlinable @inline(__always)
    public func tail(_ queue: UInt8) -> UInt32? {
        let tail = ends(queue).pointee.tail
        return tail < 0 ? nil : UInt32(tail)
    }

    /// The newest slot of `queue`, if any.
    @inlinable @inline(__always)
    public func head(_ queue: UInt8) -> UInt32? {
        let head = ends(queue).pointee.head
        return head < 0 ? nil : UInt32(head)
    }

    /// The neighbour of `slot` towards the head of its queue, if any.
    @inlinable @inline(__always)
    public func newer(than slot: UInt32) -> UInt32? {
        let link = node(slot).pointee.previous
        return link < 0 ? nil : UInt32(link)
    }

    /// The neighbour of `slot` towards the tail of its queue, if any.
    @inlinable @inline(__always)
    public func older(than slot: UInt32) -> UInt32? {
        let link = node(slot).pointee.next
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
    //
    // The links a queue holds are slots it was given, so they are within the arrays (which never
    // shrink): only the slot an operation is given is checked, and a link is followed only when
    // it is not -1. Counts and weights change by what the same queue gained, so they neither
    // overflow nor go below zero.

    /// Inserts a slot that is in no queue at the tail (oldest end) of `queue`.
    @inlinable @inline(__always)
    public mutating func pushTail(_ slot: UInt32, _ queue: UInt8) {
        // The storage first: a copy made for this change must be the one written.
        makeUnique()
        requireQueue(queue, "pushTail")
        requireInNoQueue(slot, "pushTail")
        pushTailKnowingUnique(slot, queue)
    }

    /// ``pushTail(_:_:)`` in storage known to be unique (see ``assertUnique()``).
    @inlinable @inline(__always)
    mutating func pushTailKnowingUnique(_ slot: UInt32, _ queue: UInt8) {
        assertUnique()
        let node = node(slot)
        let ends = ends(queue)
        let id = Int32(truncatingIfNeeded: slot)
        let oldTail = ends.pointee.tail
        node.pointee.owner = queue
        node.pointee.next = Self.nil32
        node.pointee.previous = oldTail
        if oldTail >= 0 { nodes[Int(oldTail)].next = id } else { ends.pointee.head = id }
        ends.pointee.tail = id
        ends.pointee.count &+= 1
        ends.pointee.weight &+= node.pointee.size
    }

    /// Inserts a slot that is in no queue at the head of `queue`.
    @inlinable @inline(__always)
    public mutating func pushHead(_ slot: UInt32, _ queue: UInt8) {
        // The storage first: a copy made for this change must be the one written.
        makeUnique()
        requireQueue(queue, "pushHead")
        requireInNoQueue(slot, "pushHead")
        pushHeadKnowingUnique(slot, queue)
    }

    /// Stops a policy that names ``none`` as a queue: the slot would be linked with no queue as
    /// its owner, so a second push of it would pass ``requireInNoQueue(_:_:)`` and link it twice.
    @inlinable @inline(__always)
    func requireQueue(_ queue: UInt8, _ operation: StaticString) {
        precondition(queue != Self.none, "\(operation): queue \(Self.none) is `none`, not a queue; queues are 1 and up")
    }

    /// Stops a policy that pushes a slot already in a queue: linked twice, the slot would point
    /// at itself, and the next walk of the queue (an eviction, ``members(of:)``) would never end,
    /// under a memory tier's lock. One compare of a node the push reads anyway.
    @inlinable @inline(__always)
    func requireInNoQueue(_ slot: UInt32, _ operation: StaticString) {
        precondition(
            queue(of: slot) == Self.none,
            "\(operation): slot \(slot) is already in queue \(queue(of: slot)); use moveToHead(_:_:) for a slot in a queue"
        )
    }

    /// ``pushHead(_:_:)`` in storage known to be unique (see ``assertUnique()``).
    @inlinable @inline(__always)
    mutating func pushHeadKnowingUnique(_ slot: UInt32, _ queue: UInt8) {
        assertUnique()
        link(node(slot), id: Int32(truncatingIfNeeded: slot), atHeadOf: queue)
    }

    /// Links a node that is in no queue at the head of `queue`.
    @inlinable @inline(__always)
    func link(_ node: UnsafeMutablePointer<Node>, id: Int32, atHeadOf queue: UInt8) {
        let ends = ends(queue)
        let oldHead = ends.pointee.head
        node.pointee.owner = queue
        node.pointee.previous = Self.nil32
        node.pointee.next = oldHead
        if oldHead >= 0 { nodes[Int(oldHead)].previous = id } else { ends.pointee.tail = id }
        ends.pointee.head = id
        ends.pointee.count &+= 1
        ends.pointee.weight &+= node.pointee.size
    }

    /// Takes a slot out of whichever queue holds it, noting the departure.
    @inlinable @inline(__always)
    public mutating func remove(_ slot: UInt32) {
        let id = Int(slot)
        guard id < slotCount, nodes[id].owner != Self.none else { return }
        makeUnique()
        removeKnowingUnique(slot)
    }

    /// ``remove(_:)`` of a slot that is in a queue (so within the arrays: the queues' tails and
    /// links are), in storage known to be unique (see ``assertUnique()``).
    @inlinable @inline(__always)
    mutating func removeKnowingUnique(_ slot: UInt32) {
        assertUnique()
        let id = Int(slot)
        assert(id < slotCount && nodes[id].owner != Self.none, "removing a slot in no queue")
        unlink(nodes + id)
        noteDeparture(id)
    }

    /// Takes `node`, which is in a queue, out of it.
    @inlinable @inline(__always)
    func unlink(_ node: UnsafeMutablePointer<Node>) {
        let ends = ends(node.pointee.owner)
        let before = node.pointee.previous
        let after = node.pointee.next
        if before >= 0 { nodes[Int(before)].next = after } else { ends.pointee.head = after }
        if after >= 0 { nodes[Int(after)].previous = before } else { ends.pointee.tail = before }
        node.pointee.owner = Self.none
        ends.pointee.count &-= 1
        ends.pointee.weight &-= node.pointee.size
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
        // The storage first: a copy made for this change must be the one written.
        makeUnique()
        requireQueue(queue, "moveToHead")
        moveToHeadKnowingUnique(slot, queue)
    }

    /// ``moveToHead(_:_:)`` in storage known to be unique (see ``assertUnique()``).
    @inlinable @inline(__always)
    mutating func moveToHeadKnowingUnique(_ slot: UInt32, _ queue: UInt8) {
        assertUnique()
        let node = node(slot)
        let ends = ends(queue)
        let id = Int32(truncatingIfNeeded: slot)
        let owner = node.pointee.owner
        guard owner == queue else {
            if owner != Self.none { unlink(node) }
            link(node, id: id, atHeadOf: queue)
            return
        }
        // Within its own queue (an LRU hit, CLOCK's second chance, S3-FIFO's reinsertion) the
        // slot is only relinked: the queue's count and weight stay as they are.
        let head = ends.pointee.head
        // A slot in its queue that is not its head has a neighbour on each side of the head's:
        // the checks cost nothing measurable and keep a policy that broke its queues (pushed a
        // queued slot) from writing outside them.
        let before = node.pointee.previous
        guard head != id, head >= 0, before >= 0 else { return }
        let after = node.pointee.next
        nodes[Int(before)].next = after
        if after >= 0 { nodes[Int(after)].previous = before } else { ends.pointee.tail = before }
        node.pointee.previous = Self.nil32
        node.pointee.next = head
        nodes[Int(head)].previous = id
        ends.pointee.head = id
    }

    /// Moves a slot that is in a queue to the tail of `queue`, without noting a departure.
    @inlinable @inline(__always)
    public mutating func moveToTail(_ slot: UInt32, _ queue: UInt8) {
        makeUnique()
        let node = node(slot)
        if node.pointee.owner != Self.none { unlink(node) }
        pushTail(slot, queue)
    }

    /// Empties every queue (the arrays keep their room).
    public mutating func removeAll() {
        makeUnique()
        for id in 0..<slotCount where nodes[id].owner != Self.none {
            nodes[id].owner = Self.none
            nodes[id].previous = Self.nil32
            nodes[id].next = Self.nil32
        }
        for queue in 0..<SlotStorage.endCount { ends[queue] = Ends() }
        departureCount = 0
    }
}

/// The memory of ``SlotQueues``: its nodes and its queues' ends, in allocations of their own.
/// Copies of the queues share one storage until one of them changes it, which copies it first
/// (`makeUnique()`), as an array's copies share their elements: one uniqueness
/// check per operation rather than one per array touched, and no bounds check on a link the
/// queues set themselves.
///
/// `@unchecked Sendable`, safely: a storage is written only after `makeUnique()`,
/// that is, only while one `SlotQueues` value holds it, and that value's owner has it
/// exclusively (a policy is changed under its driver's lock or by one task). Storages shared
/// between values are only read.
@usableFromInline
final class SlotStorage: @unchecked Sendable {
    /// Queue numbers are bytes: every one of them has its ends.
    @usableFromInline static let endCount = 256
    @usableFromInline let nodes: UnsafeMutablePointer<SlotQueues.Node>
    @usableFromInline let slotCount: Int
    @usableFromInline let ends: UnsafeMutablePointer<SlotQueues.Ends>

    /// Empty queues over `slots` free slots.
    init(slots: Int) {
        slotCount = slots
        nodes = Self.allocateNodes(slots)
        nodes.initialize(repeating: .free, count: slots)
        ends = .allocate(capacity: Self.endCount)
        ends.initialize(repeating: SlotQueues.Ends(), count: Self.endCount)
    }

    /// A copy of `other`, with room for `slots` slots (at least as many as `other` has).
    @usableFromInline
    init(copying other: SlotStorage, slots: Int? = nil) {
        slotCount = Swift.max(slots ?? other.slotCount, other.slotCount)
        nodes = Self.allocateNodes(slotCount)
        nodes.initialize(from: other.nodes, count: other.slotCount)
        (nodes + other.slotCount).initialize(repeating: .free, count: slotCount - other.slotCount)
        ends = .allocate(capacity: Self.endCount)
        ends.initialize(from: other.ends, count: Self.endCount)
    }

    /// Room for `count` nodes, in huge pages from 2 MiB (`HugePages`): a trace's nodes are read
    /// at random, tens of MiB of them on a trace of millions of objects.
    private static func allocateNodes(_ count: Int) -> UnsafeMutablePointer<SlotQueues.Node> {
        HugePages.allocate(
            byteCount: count * MemoryLayout<SlotQueues.Node>.stride, alignment: MemoryLayout<SlotQueues.Node>.alignment
        ).bindMemory(to: SlotQueues.Node.self, capacity: count)
    }

    deinit {
        nodes.deallocate()
        ends.deallocate()
    }
}
