/// Doubly linked queues of keyed, costed entries over shared slot arrays: the storage of the
/// memory tier's queue-based policies (S3-FIFO's small/main/ghost, W-TinyLFU's
/// window/probation/protected).
///
/// It mirrors the simulator's `ObjectQueues` (same operations, same names) over slots found by
/// key instead of dense object ids, so a policy's rules read the same in both places. An entry is
/// in at most one queue; queue 0 means "in none". A node may hold no value: S3-FIFO's ghost keeps
/// only keys. Every operation is O(1); nodes live in arrays and freed slots are reused, so the
/// steady state allocates nothing. Not thread-safe: the owner guards it. "Head" is the most
/// recently inserted end, "tail" the oldest.
struct KeyedQueues<Key: Hashable, Value> {
    typealias Slot = Int32
    static var none: UInt8 { 0 }
    private static var nil32: Int32 { -1 }

    /// A node's place in its queue and the policy's numbers for it: a trivial type, kept apart
    /// from the key and the value, so that following a link or reading a cost never copies (and
    /// retains and releases) the reference-counted parts. Stored whole, a node was copied out of
    /// the array and destroyed again on every read of one field: about a third of W-TinyLFU's
    /// instructions per store.
    struct Link {
        var cost: Int
        /// A policy's per-entry hash (W-TinyLFU's sketch hash), computed once at insertion.
        var hash: UInt64
        var previous: Int32  // towards the head
        var next: Int32  // towards the tail
        /// A policy's per-entry counter (S3-FIFO's frequency).
        var frequency: UInt8
        var queue: UInt8

        static var free: Link { Link(cost: 0, hash: 0, previous: nil32, next: nil32, frequency: 0, queue: none) }
    }

    // Parallel arrays indexed by slot.
    private var links: [Link] = []
    private var keyBySlot: [Key?] = []
    private var valueBySlot: [Value?] = []
    private var slotByKey: [Key: Slot] = [:]
    private var freeSlots: [Slot] = []
    private var heads: [Int32]
    private var tails: [Int32]
    private var counts: [Int]
    private var weights: [Int]

    init(queueCount: Int) {
        heads = [Int32](repeating: Self.nil32, count: queueCount + 1)
        tails = heads
        counts = [Int](repeating: 0, count: queueCount + 1)
        weights = counts
    }

    // MARK: Slots

    @inline(__always) func slot(of key: Key) -> Slot? { slotByKey[key] }
    @inline(__always) func queue(of slot: Slot) -> UInt8 { links[Int(slot)].queue }
    @inline(__always) func cost(of slot: Slot) -> Int { links[Int(slot)].cost }
    @inline(__always) func value(of slot: Slot) -> Value? { valueBySlot[Int(slot)] }
    @inline(__always) func hash(of slot: Slot) -> UInt64 { links[Int(slot)].hash }
    @inline(__always) func frequency(of slot: Slot) -> UInt8 { links[Int(slot)].frequency }
    @inline(__always) mutating func setFrequency(_ frequency: UInt8, of slot: Slot) {
        links[Int(slot)].frequency = frequency
    }

    /// Creates a node for a key that has none, in no queue.
    mutating func allocate(_ key: Key, value: Value?, cost: Int, hash: UInt64 = 0) -> Slot {
        let link = Link(cost: cost, hash: hash, previous: Self.nil32, next: Self.nil32, frequency: 0, queue: Self.none)
        let slot: Slot
        if let free = freeSlots.popLast() {
            slot = free
            links[Int(slot)] = link
            keyBySlot[Int(slot)] = key
            valueBySlot[Int(slot)] = value
        } else {
            slot = Slot(links.count)
            links.append(link)
            keyBySlot.append(key)
            valueBySlot.append(value)
        }
        slotByKey[key] = slot
        return slot
    }

    /// Replaces a node's value and cost where it stands, in its queue or in none.
    @inline(__always)
    mutating func replace(_ slot: Slot, value: Value?, cost: Int) {
        let id = Int(slot)
        let queue = Int(links[id].queue)
        if queue != 0 { weights[queue] += cost - links[id].cost }
        valueBySlot[id] = value
        links[id].cost = cost
    }

    /// Takes a node out of its queue and forgets its key; the slot is reused.
    mutating func free(_ slot: Slot) {
        remove(slot)
        let id = Int(slot)
        if let key = keyBySlot[id] { slotByKey.removeValue(forKey: key) }
        links[id] = .free
        keyBySlot[id] = nil
        valueBySlot[id] = nil
        freeSlots.append(slot)
    }

    mutating func removeAll() {
        links.removeAll()
        keyBySlot.removeAll()
        valueBySlot.removeAll()
        slotByKey.removeAll()
        freeSlots.removeAll()
        for queue in heads.indices {
            heads[queue] = Self.nil32
            tails[queue] = Self.nil32
            counts[queue] = 0
            weights[queue] = 0
        }
    }

    // MARK: Queues (the simulator's ObjectQueues operations)

    @inline(__always) func weight(_ queue: UInt8) -> Int { weights[Int(queue)] }
    @inline(__always) func count(_ queue: UInt8) -> Int { counts[Int(queue)] }

    /// The oldest node of `queue`, if any.
    @inline(__always) func tail(_ queue: UInt8) -> Slot? {
        let tail = tails[Int(queue)]
        return tail < 0 ? nil : tail
    }

    /// The newest node of `queue`, if any.
    @inline(__always) func head(_ queue: UInt8) -> Slot? {
        let head = heads[Int(queue)]
        return head < 0 ? nil : head
    }

    /// The neighbour of `slot` towards the head (newer end) of its queue, if any.
    @inline(__always) func newer(than slot: Slot) -> Slot? {
        let link = links[Int(slot)].previous
        return link < 0 ? nil : link
    }

    /// The neighbour of `slot` towards the tail (older end) of its queue, if any.
    @inline(__always) func older(than slot: Slot) -> Slot? {
        let link = links[Int(slot)].next
        return link < 0 ? nil : link
    }

    /// Inserts a node that is in no queue at the tail (oldest end) of `queue`.
    @inline(__always)
    mutating func pushTail(_ slot: Slot, _ queue: UInt8) {
        let id = Int(slot)
        let q = Int(queue)
        let oldTail = tails[q]
        links[id].queue = queue
        links[id].next = Self.nil32
        links[id].previous = oldTail
        if oldTail >= 0 { links[Int(oldTail)].next = slot } else { heads[q] = slot }
        tails[q] = slot
        counts[q] += 1
        weights[q] += links[id].cost
    }

    /// Inserts a node that is in no queue at the head of `queue`.
    @inline(__always)
    mutating func pushHead(_ slot: Slot, _ queue: UInt8) {
        let id = Int(slot)
        let q = Int(queue)
        let oldHead = heads[q]
        links[id].queue = queue
        links[id].previous = Self.nil32
        links[id].next = oldHead
        if oldHead >= 0 { links[Int(oldHead)].previous = slot } else { tails[q] = slot }
        heads[q] = slot
        counts[q] += 1
        weights[q] += links[id].cost
    }

    /// Takes a node out of whichever queue holds it (it keeps its key and slot).
    @inline(__always)
    mutating func remove(_ slot: Slot) {
        let id = Int(slot)
        let q = Int(links[id].queue)
        guard q != 0 else { return }
        let before = links[id].previous
        let after = links[id].next
        if before >= 0 { links[Int(before)].next = after } else { heads[q] = after }
        if after >= 0 { links[Int(after)].previous = before } else { tails[q] = before }
        links[id].queue = Self.none
        counts[q] -= 1
        weights[q] -= links[id].cost
    }

    /// Removes and returns the oldest node of `queue` (it keeps its key and slot).
    @inline(__always)
    mutating func popTail(_ queue: UInt8) -> Slot? {
        guard let tail = tail(queue) else { return nil }
        remove(tail)
        return tail
    }

    /// Moves a node (in any queue) to the head of `queue`.
    @inline(__always)
    mutating func moveToHead(_ slot: Slot, _ queue: UInt8) {
        if links[Int(slot)].queue == queue, heads[Int(queue)] == slot { return }
        remove(slot)
        pushHead(slot, queue)
    }

    /// The keys of `queue` from head to tail (for tests and inspection; O(n)).
    func keys(_ queue: UInt8) -> [Key] {
        var queueKeys: [Key] = []
        var slot = heads[Int(queue)]
        while slot >= 0 {
            if let key = keyBySlot[Int(slot)] { queueKeys.append(key) }
            slot = links[Int(slot)].next
        }
        return queueKeys
    }
}
