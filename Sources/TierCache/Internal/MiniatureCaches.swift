/// The W-TinyLFU miniatures of ``MiniatureWindowClimber``: one small cache per window share, all
/// replaying the same sampled requests, kept in one structure so that a request costs one key
/// lookup for all of them rather than one each (a third of the replay time on P12 went to the
/// fourteen lookups).
///
/// Each miniature is W-TinyLFU as the paper describes it (Einziger, Friedman & Manes, ACM TOS
/// 2017), costed: an LRU window of its share of the capacity, a segmented-LRU main cache whose
/// protected segment is 80% of the rest, and on each window eviction one contest between the
/// candidate and the oldest probation entry (protected's if probation holds only the candidate),
/// the sketch deciding and the candidate losing ties. A share of 1 leaves no main cache: every
/// window eviction leaves at once, which is LRU.
///
/// A key has one record while any miniature holds it; each miniature links the record into its
/// own queues through its own row of links.
package struct MiniatureCaches {
    private static let window: UInt8 = 1
    private static let probation: UInt8 = 2
    private static let protected: UInt8 = 3
    private static let none: Int32 = -1

    /// One miniature's limits.
    private struct Miniature {
        var windowMaximum: Int
        var protectedMaximum: Int
        var misses = 0
    }

    private let capacity: Int
    private let width: Int
    private var miniatures: [Miniature]
    private var recordByKey: [UInt64: Int32] = [:]
    private var keys: [UInt64] = []
    private var costs: [Int] = []
    /// How many miniatures hold each record; at 0 the record is freed.
    private var residents: [UInt8] = []
    /// A record's place in one miniature (one array of them, so a move checks one buffer's
    /// uniqueness, not three).
    private struct Link {
        var previous: Int32  // towards the head
        var next: Int32      // towards the tail
        var queue: UInt8     // 0 if the miniature does not hold the record
    }

    /// One queue of one miniature.
    private struct Ends {
        var head: Int32 = -1
        var tail: Int32 = -1
        var weight = 0
        var count = 0
    }

    /// Per record, per miniature (index `record * width + miniature`).
    private var links: [Link] = []
    private var freeRecords: [Int32] = []
    /// Per miniature, per queue (index `miniature * 4 + queue`).
    private var ends: [Ends]
    /// The record being accessed: it outlives evictions until every miniature has seen it.
    private var accessing = none

    /// Miniatures of `capacity` each, one per share of `windowShares` (at most 32).
    package init(capacity: Int, windowShares: [Double]) {
        self.capacity = capacity
        width = windowShares.count
        miniatures = windowShares.map { share in
            let windowMaximum = Int(share * Double(capacity))
            return Miniature(windowMaximum: windowMaximum, protectedMaximum: Int(0.8 * Double(capacity - windowMaximum)))
        }
        ends = [Ends](repeating: Ends(), count: width * 4)
    }

    /// Each miniature's misses so far, in the order of the shares.
    package var misses: [Int] { miniatures.map(\.misses) }

    /// Replays one request through every miniature; `sketch` must have counted it already.
    /// Returns a mask of the miniatures that missed (bit i for share i).
    @discardableResult
    package mutating func access(_ key: UInt64, cost: Int, sketch: TinyLFUSketch) -> UInt32 {
        let record: Int32
        if let existing = recordByKey[key] {
            record = existing
        } else {
            record = allocate(key, cost: cost)
        }
        accessing = record
        var missed: UInt32 = 0
        for miniature in 0..<width {
            if !hit(record, in: miniature) {
                missed |= 1 << UInt32(miniature)
                insert(record, into: miniature, sketch: sketch)
            }
        }
        accessing = Self.none
        if residents[Int(record)] == 0 { free(record) }
        return missed
    }

    /// Moves a held record up its miniature's queues; false if the miniature does not hold it.
    @inline(__always)
    private mutating func hit(_ record: Int32, in miniature: Int) -> Bool {
        switch queue(record, miniature) {
        case 0: return false
        case Self.window: moveToHead(record, Self.window, miniature)
        default:
            moveToHead(record, Self.protected, miniature)
            while weight(Self.protected, miniature) > miniatures[miniature].protectedMaximum,
                  let demoted = tail(Self.protected, miniature) {
                unlink(demoted, miniature)
                pushHead(demoted, Self.probation, miniature)
            }
        }
        return true
    }

    private mutating func insert(_ record: Int32, into miniature: Int, sketch: TinyLFUSketch) {
        miniatures[miniature].misses += 1
        guard costs[Int(record)] <= capacity else { return }
        pushHead(record, Self.window, miniature)
        residents[Int(record)] += 1
        while weight(Self.window, miniature) > miniatures[miniature].windowMaximum,
              let candidate = tail(Self.window, miniature) {
            unlink(candidate, miniature)
            pushHead(candidate, Self.probation, miniature)
            admit(candidate, miniature, sketch: sketch)
        }
    }

    /// While the miniature is over capacity the candidate meets the oldest entry of the main
    /// cache; the one the sketch counts less often leaves (the candidate on a tie).
    private mutating func admit(_ candidate: Int32, _ miniature: Int, sketch: TinyLFUSketch) {
        while totalWeight(miniature) > capacity {
            var victim = tail(Self.probation, miniature)
            if victim == candidate, count(Self.probation, miniature) == 1 {
                victim = tail(Self.protected, miniature) ?? candidate
            }
            guard let victim else { return }
            if victim == candidate
                || sketch.frequency(keys[Int(candidate)]) <= sketch.frequency(keys[Int(victim)]) {
                evict(candidate, miniature)
                return
            }
            evict(victim, miniature)
        }
    }

    private mutating func evict(_ record: Int32, _ miniature: Int) {
        unlink(record, miniature)
        residents[Int(record)] -= 1
        if residents[Int(record)] == 0, record != accessing { free(record) }
    }

    // MARK: Records

    private mutating func allocate(_ key: UInt64, cost: Int) -> Int32 {
        if let record = freeRecords.popLast() {
            keys[Int(record)] = key
            costs[Int(record)] = cost
            recordByKey[key] = record
            return record
        }
        let record = Int32(keys.count)
        keys.append(key)
        costs.append(cost)
        residents.append(0)
        links.append(contentsOf: repeatElement(Link(previous: Self.none, next: Self.none, queue: 0), count: width))
        recordByKey[key] = record
        return record
    }

    private mutating func free(_ record: Int32) {
        recordByKey[keys[Int(record)]] = nil
        freeRecords.append(record)
    }

    // MARK: Queues

    @inline(__always) private func slot(_ record: Int32, _ miniature: Int) -> Int { Int(record) * width + miniature }
    @inline(__always) private func queue(_ record: Int32, _ miniature: Int) -> UInt8 { links[slot(record, miniature)].queue }
    @inline(__always) private func end(_ queue: UInt8, _ miniature: Int) -> Int { miniature * 4 + Int(queue) }
    @inline(__always) private func weight(_ queue: UInt8, _ miniature: Int) -> Int { ends[end(queue, miniature)].weight }
    @inline(__always) private func count(_ queue: UInt8, _ miniature: Int) -> Int { ends[end(queue, miniature)].count }

    @inline(__always)
    private func totalWeight(_ miniature: Int) -> Int {
        ends[miniature * 4 + 1].weight + ends[miniature * 4 + 2].weight + ends[miniature * 4 + 3].weight
    }

    @inline(__always)
    private func tail(_ queue: UInt8, _ miniature: Int) -> Int32? {
        let tail = ends[end(queue, miniature)].tail
        return tail == Self.none ? nil : tail
    }

    private mutating func pushHead(_ record: Int32, _ queue: UInt8, _ miniature: Int) {
        let index = slot(record, miniature)
        let queueEnds = end(queue, miniature)
        let cost = costs[Int(record)]
        let width = width
        ends.withUnsafeMutableBufferPointer { ends in
            links.withUnsafeMutableBufferPointer { links in
                let head = ends[queueEnds].head
                links[index] = Link(previous: Self.none, next: head, queue: queue)
                if head != Self.none {
                    links[Int(head) * width + miniature].previous = record
                } else {
                    ends[queueEnds].tail = record
                }
                ends[queueEnds].head = record
                ends[queueEnds].weight += cost
                ends[queueEnds].count += 1
            }
        }
    }

    private mutating func unlink(_ record: Int32, _ miniature: Int) {
        let index = slot(record, miniature)
        let cost = costs[Int(record)]
        let width = width
        ends.withUnsafeMutableBufferPointer { ends in
            links.withUnsafeMutableBufferPointer { links in
                let link = links[index]
                let queueEnds = miniature * 4 + Int(link.queue)
                if link.previous != Self.none { links[Int(link.previous) * width + miniature].next = link.next } else { ends[queueEnds].head = link.next }
                if link.next != Self.none { links[Int(link.next) * width + miniature].previous = link.previous } else { ends[queueEnds].tail = link.previous }
                links[index].queue = 0
                ends[queueEnds].weight -= cost
                ends[queueEnds].count -= 1
            }
        }
    }

    @inline(__always)
    private mutating func moveToHead(_ record: Int32, _ queue: UInt8, _ miniature: Int) {
        if self.queue(record, miniature) == queue, ends[end(queue, miniature)].head == record { return }
        unlink(record, miniature)
        pushHead(record, queue, miniature)
    }
}
