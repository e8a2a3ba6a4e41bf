/// Doubly linked queues over dense object ids, sharing one pair of link arrays.
///
/// An object is in at most one queue at a time (LRU's list, ARC's T1/T2/B1/B2, S3-FIFO's
/// small/main/ghost, W-TinyLFU's window/probation/protected), so one `previous`/`next` slot per
/// object serves every queue and membership is one byte. Every operation is O(1) and allocation-free.
/// "Head" is the most recently inserted end, "tail" the oldest.
struct ObjectQueues {
    static let none: UInt8 = 0
    private static let nil32: Int32 = -1

    /// Which queue (1...) holds each object; `none` when it is in no queue.
    private(set) var owner: [UInt8]
    private var previous: [Int32]  // towards the head
    private var next: [Int32]  // towards the tail
    private var heads: [Int32]
    private var tails: [Int32]
    /// The number of objects in each queue.
    private(set) var counts: [Int]
    /// The summed sizes of each queue's objects.
    private(set) var weights: [UInt64]
    private let sizes: [UInt32]

    init(queueCount: Int, objectSizes: [UInt32]) {
        let objects = objectSizes.count
        owner = [UInt8](repeating: Self.none, count: objects)
        previous = [Int32](repeating: Self.nil32, count: objects)
        next = [Int32](repeating: Self.nil32, count: objects)
        heads = [Int32](repeating: Self.nil32, count: queueCount + 1)
        tails = [Int32](repeating: Self.nil32, count: queueCount + 1)
        counts = [Int](repeating: 0, count: queueCount + 1)
        weights = [UInt64](repeating: 0, count: queueCount + 1)
        sizes = objectSizes
    }

    @inline(__always) func queue(of object: UInt32) -> UInt8 { owner[Int(object)] }
    @inline(__always) func weight(_ queue: UInt8) -> UInt64 { weights[Int(queue)] }
    @inline(__always) func count(_ queue: UInt8) -> Int { counts[Int(queue)] }
    @inline(__always) func size(of object: UInt32) -> UInt64 { UInt64(sizes[Int(object)]) }

    /// The oldest object of `queue`, if any.
    @inline(__always) func tail(_ queue: UInt8) -> UInt32? {
        let tail = tails[Int(queue)]
        return tail < 0 ? nil : UInt32(tail)
    }

    /// The neighbour of `object` towards the head of its queue, if any.
    @inline(__always) func newer(than object: UInt32) -> UInt32? {
        let link = previous[Int(object)]
        return link < 0 ? nil : UInt32(link)
    }

    /// The newest object of `queue`, if any.
    @inline(__always) func head(_ queue: UInt8) -> UInt32? {
        let head = heads[Int(queue)]
        return head < 0 ? nil : UInt32(head)
    }

    /// The neighbour of `object` towards the tail of its queue, if any.
    @inline(__always) func older(than object: UInt32) -> UInt32? {
        let link = next[Int(object)]
        return link < 0 ? nil : UInt32(link)
    }

    /// Inserts an object that is in no queue at the tail (oldest end) of `queue`.
    @inline(__always)
    mutating func pushTail(_ object: UInt32, _ queue: UInt8) {
        let id = Int(object)
        let q = Int(queue)
        let oldTail = tails[q]
        owner[id] = queue
        next[id] = Self.nil32
        previous[id] = oldTail
        if oldTail >= 0 { next[Int(oldTail)] = Int32(id) } else { heads[q] = Int32(id) }
        tails[q] = Int32(id)
        counts[q] += 1
        weights[q] += UInt64(sizes[id])
    }

    /// Inserts an object that is in no queue at the head of `queue`.
    @inline(__always)
    mutating func pushHead(_ object: UInt32, _ queue: UInt8) {
        let id = Int(object)
        let q = Int(queue)
        let oldHead = heads[q]
        owner[id] = queue
        previous[id] = Self.nil32
        next[id] = oldHead
        if oldHead >= 0 { previous[Int(oldHead)] = Int32(id) } else { tails[q] = Int32(id) }
        heads[q] = Int32(id)
        counts[q] += 1
        weights[q] += UInt64(sizes[id])
    }

    /// Takes an object out of whichever queue holds it.
    @inline(__always)
    mutating func remove(_ object: UInt32) {
        let id = Int(object)
        let q = Int(owner[id])
        guard q != 0 else { return }
        let before = previous[id]
        let after = next[id]
        if before >= 0 { next[Int(before)] = after } else { heads[q] = after }
        if after >= 0 { previous[Int(after)] = before } else { tails[q] = before }
        owner[id] = Self.none
        counts[q] -= 1
        weights[q] -= UInt64(sizes[id])
    }

    /// Removes and returns the oldest object of `queue`.
    @inline(__always)
    mutating func popTail(_ queue: UInt8) -> UInt32? {
        guard let tail = tail(queue) else { return nil }
        remove(tail)
        return tail
    }

    /// Moves an object (in any queue) to the head of `queue`.
    @inline(__always)
    mutating func moveToHead(_ object: UInt32, _ queue: UInt8) {
        if owner[Int(object)] == queue, heads[Int(queue)] == Int32(object) { return }
        remove(object)
        pushHead(object, queue)
    }
}
