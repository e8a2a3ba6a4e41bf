import CPrefetch

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
///
/// The contests' estimates are remembered per record (``EstimateMemo``): the sketch changes by
/// one count per sampled request, and a count moves only the estimates of its own block's keys,
/// so most victims and candidates meet again under the estimate they had before.
struct MiniatureCaches {
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
    /// The miniatures' capacity from which a request first starts loading the links it will
    /// read (`Queues.prefetchNeighbours(of:)`): below it, the links of the whole sample fit in a
    /// core's cache and the hints are only instructions.
    private static let prefetchingCapacity = 1024
    private var miniatures: [Miniature]
    private var recordByKey = RecordTable()
    /// What the miniatures know of a key while any of them holds it.
    private struct Record {
        var key: UInt64
        var cost: Int
        /// The key's last estimate and when it was made (``EstimateMemo``).
        var rememberedEstimate: UInt64 = 0
        /// The key as the sketch folds it (``TinyLFUSketch/fold(_:)``), so that the contests
        /// estimate without folding again.
        var folded: UInt32
        /// How many miniatures hold the record; at 0 it is freed.
        var residents: UInt8 = 0
    }

    private var records: [Record] = []
    /// A record's place in one miniature (one array of them, so a move checks one buffer's
    /// uniqueness, not three).
    private struct Link {
        var previous: Int32  // towards the head
        var next: Int32  // towards the tail
        var queue: UInt8  // 0 if the miniature does not hold the record
    }

    /// One queue of one miniature.
    private struct Ends {
        var head: Int32 = -1
        var tail: Int32 = -1
        var weight = 0
    }

    /// Per record, per miniature (index `record * width + miniature`).
    private var links: [Link] = []
    private var freeRecords: [Int32] = []
    /// Per miniature, per queue (index `miniature * 4 + queue`).
    private var ends: [Ends]
    /// Records one request emptied, freed once every miniature has seen it (one slot per record,
    /// so that the request path never grows an array).
    private var emptiedRecords: [Int32] = []
    /// Per sketch block, the request that last counted a key in it (``EstimateMemo``).
    private var blockCounts: [UInt64] = []
    /// The sampled requests so far: the clock of the remembered estimates.
    private var requestNumber: UInt64 = 0
    /// The sketch's ``TinyLFUSketch/generation`` when `blockCounts` was last made valid.
    private var sketchGeneration = -1

    /// Miniatures of `capacity` each, one per share of `windowShares` (at most 32).
    init(capacity: Int, windowShares: [Double]) {
        self.capacity = capacity
        width = windowShares.count
        miniatures = windowShares.map { share in
            let windowMaximum = Int(share * Double(capacity))
            return Miniature(
                windowMaximum: windowMaximum, protectedMaximum: Int(0.8 * Double(capacity - windowMaximum)))
        }
        ends = [Ends](repeating: Ends(), count: width * 4)
    }

    /// Each miniature's misses so far, in the order of the shares.
    var misses: [Int] { miniatures.map(\.misses) }

    /// Whether the set has no miniatures (no window shares).
    var isEmpty: Bool { width == 0 }

    /// Counts one request in `sketch`, the miniatures' frequency sketch (which nothing else may
    /// count), then replays it through every miniature. Returns a mask of the miniatures that
    /// missed (bit i for share i).
    ///
    /// The miniatures' arrays are opened once per request, not once per link move: each
    /// `withUnsafeMutableBufferPointer` checks its array's uniqueness, and those checks were a
    /// tenth of a W-TinyLFU miniature curve's time when every queue operation made its own.
    @discardableResult
    mutating func access(_ key: UInt64, cost: Int, sketch: inout TinyLFUSketch) -> UInt32 {
        sketch.increment(key)
        noteCount(of: key, in: sketch)
        return replay(key, cost: cost, sketch: sketch)
    }

    /// ``access(_:cost:sketch:)`` once the request is counted (`sketch` borrowed, not copied: a
    /// copy retained and released its table on every request).
    private mutating func replay(_ key: UInt64, cost: Int, sketch: TinyLFUSketch) -> UInt32 {
        let record = recordByKey.record(for: key) ?? allocate(key, cost: cost)
        let (missed, emptied) = withOpenArrays { arrays in arrays.replay(record, sketch: sketch) }
        for index in 0..<emptied { free(emptiedRecords[index]) }
        if records[Int(record)].residents == 0 { free(record) }
        return missed
    }

    /// Runs `body` with the miniatures' arrays opened for one request (the opening is all this
    /// does: the request's work is ``OpenArrays/replay(_:sketch:)``).
    @inline(__always)
    private mutating func withOpenArrays<Result>(_ body: (OpenArrays) -> Result) -> Result {
        let capacity = capacity, width = width, now = requestNumber + 1
        return links.withUnsafeMutableBufferPointer { links in
            ends.withUnsafeMutableBufferPointer { ends in
                records.withUnsafeMutableBufferPointer { records in
                    miniatures.withUnsafeMutableBufferPointer { miniatures in
                        emptiedRecords.withUnsafeMutableBufferPointer { emptiedRecords in
                            blockCounts.withUnsafeBufferPointer { blockCounts in
                                body(
                                    OpenArrays(
                                        queues: Queues(links: links, ends: ends, records: records, width: width),
                                        estimates: EstimateMemo(records: records, blockCounts: blockCounts, now: now),
                                        miniatures: miniatures, emptiedRecords: emptiedRecords, capacity: capacity))
                            }
                        }
                    }
                }
            }
        }
    }

    /// The miniatures' arrays, opened for one request (``withOpenArrays(_:)``).
    private struct OpenArrays {
        let queues: Queues
        let estimates: EstimateMemo
        let miniatures: UnsafeMutableBufferPointer<Miniature>
        /// Where the request lists the records it emptied, to be freed once it is over.
        let emptiedRecords: UnsafeMutableBufferPointer<Int32>
        /// Each miniature's capacity.
        let capacity: Int

        private var records: UnsafeMutableBufferPointer<Record> { queues.records }

        /// Replays a request for `record` through every miniature. Returns the mask of the
        /// miniatures that missed and how many records it left in `emptiedRecords`.
        #if compiler(>=6.3)
        @inline(always)
        #else
        @inline(__always)
        #endif
        func replay(_ record: Int32, sketch: TinyLFUSketch) -> (missed: UInt32, emptied: Int) {
            // The record just counted: each miniature's window will offer it to the main cache,
            // most of them before its block is counted again.
            estimates.remember(record, sketch: sketch)
            if capacity >= MiniatureCaches.prefetchingCapacity {
                queues.prefetchNeighbours(of: record)
            }
            var missed: UInt32 = 0
            var emptied = 0
            for miniature in 0..<queues.width {
                if queues.hit(record, miniature, protectedMaximum: miniatures[miniature].protectedMaximum) {
                    continue
                }
                missed |= 1 &<< UInt32(truncatingIfNeeded: miniature)
                miniatures[miniature].misses &+= 1
                guard records[Int(record)].cost <= capacity else { continue }
                queues.pushHead(record, MiniatureCaches.window, miniature)
                records[Int(record)].residents &+= 1
                while queues.weight(MiniatureCaches.window, miniature) > miniatures[miniature].windowMaximum,
                    let candidate = queues.tail(MiniatureCaches.window, miniature)
                {
                    admit(candidate, miniature, accessed: record, sketch: sketch, emptied: &emptied)
                }
            }
            return (missed, emptied)
        }

        /// Moves the window's oldest, `candidate`, into `miniature`'s main cache, or out if it
        /// loses a contest. The candidate stays in the window until it wins one: one that loses
        /// its first leaves from there, as it would have from probation's young end, without
        /// moving in and out (as `WTinyLFUPolicy.admitWindowsOldest` does).
        #if compiler(>=6.3)
        @inline(always)
        #else
        @inline(__always)
        #endif
        private func admit(
            _ candidate: Int32, _ miniature: Int, accessed record: Int32, sketch: TinyLFUSketch,
            emptied: inout Int
        ) {
            // While over capacity the candidate meets the oldest entry of the main cache; the one
            // the sketch counts less often leaves (the candidate on a tie).
            while queues.totalWeight(miniature) > capacity {
                let inProbation = queues.queue(of: candidate, miniature) == MiniatureCaches.probation
                var victim = queues.tail(MiniatureCaches.probation, miniature)
                if !inProbation {
                    victim = victim ?? queues.tail(MiniatureCaches.protected, miniature) ?? candidate
                } else if victim == candidate, queues.head(MiniatureCaches.probation, miniature) == candidate {
                    // The candidate is probation's only entry.
                    victim = queues.tail(MiniatureCaches.protected, miniature) ?? candidate
                }
                guard let victim else { break }
                let leaving =
                    victim == candidate
                        || estimates.frequency(of: candidate, sketch: sketch)
                            <= estimates.frequency(of: victim, sketch: sketch)
                    ? candidate : victim
                if leaving != candidate, !inProbation {
                    queues.moveToHead(candidate, MiniatureCaches.probation, miniature)
                }
                queues.unlink(leaving, miniature)
                records[Int(leaving)].residents &-= 1
                // Freed after the request: the accessed record outlives evictions until every
                // miniature has seen it.
                if records[Int(leaving)].residents == 0, leaving != record {
                    emptiedRecords[emptied] = leaving
                    emptied &+= 1
                }
                if leaving == candidate { break }
            }
            // No contest, or none lost: the candidate enters probation.
            if queues.queue(of: candidate, miniature) == MiniatureCaches.window {
                queues.moveToHead(candidate, MiniatureCaches.probation, miniature)
            }
        }
    }

    /// Advances the clock of the remembered estimates past a count of `key` in `sketch`: the
    /// estimates of keys in its block are no longer current, nor, after an aging or a new table,
    /// any estimate.
    private mutating func noteCount(of key: UInt64, in sketch: TinyLFUSketch) {
        requestNumber += 1
        if sketch.generation != sketchGeneration || blockCounts.count != sketch.blockCount {
            blockCounts = [UInt64](repeating: requestNumber, count: sketch.blockCount)
            sketchGeneration = sketch.generation
        } else {
            blockCounts[sketch.blockNumber(of: TinyLFUSketch.fold(key))] = requestNumber
        }
    }

    /// The sketch's estimates of records, remembered: an estimate made after request n's count
    /// is stamped n + 1, and holds while its block's last count is older than the stamp. (The
    /// fourteen contests of a sampled request estimated about two keys each, 40 instructions an
    /// estimate: on OLTP at 1,000 objects, a fifth of W-TinyLFU's replay.)
    ///
    /// A record's `rememberedEstimate` is its stamp shifted left by 4, or'ed with the estimate
    /// (0...15); 0 for none.
    private struct EstimateMemo {
        let records: UnsafeMutableBufferPointer<Record>
        let blockCounts: UnsafeBufferPointer<UInt64>
        /// The stamp of the estimates made now.
        let now: UInt64

        /// The estimate of `record` in `sketch`, the sketch the stamps follow.
        @inline(__always)
        func frequency(of record: Int32, sketch: TinyLFUSketch) -> UInt64 {
            let memo = records[Int(record)].rememberedEstimate
            if memo >> 4 > blockCounts[sketch.blockNumber(of: records[Int(record)].folded)] {
                assert(
                    memo & 15 == sketch.frequency(folded: records[Int(record)].folded),
                    "a miniature's remembered estimate went stale")
                return memo & 15
            }
            return remember(record, sketch: sketch)
        }

        /// Estimates `record` now and remembers the estimate.
        @inline(__always) @discardableResult
        func remember(_ record: Int32, sketch: TinyLFUSketch) -> UInt64 {
            let frequency = UInt64(truncatingIfNeeded: sketch.frequency(folded: records[Int(record)].folded))
            records[Int(record)].rememberedEstimate = now << 4 | frequency
            return frequency
        }
    }

    // MARK: Records

    private mutating func allocate(_ key: UInt64, cost: Int) -> Int32 {
        let fields = Record(key: key, cost: cost, folded: TinyLFUSketch.fold(key))
        if let record = freeRecords.popLast() {
            records[Int(record)] = fields
            recordByKey.insert(key, record: record)
            return record
        }
        let record = Int32(records.count)
        records.append(fields)
        // A request empties at most one record per miniature per eviction, and each eviction
        // removes a resident: the records themselves bound how many one request can empty.
        emptiedRecords.append(Self.none)
        links.append(contentsOf: repeatElement(Link(previous: Self.none, next: Self.none, queue: 0), count: width))
        recordByKey.insert(key, record: record)
        return record
    }

    private mutating func free(_ record: Int32) {
        recordByKey.remove(records[Int(record)].key)
        freeRecords.append(record)
    }

    // MARK: Queues

    /// The miniatures' queues through the arrays opened for one request.
    ///
    /// Their arithmetic wraps rather than traps (`&+`, `&*`), as does the replay's: no value can
    /// overflow (a slot is inside `links`, a queue's weight is at most the capacity plus one
    /// entry's cost, a record has at most `width` residents), and the overflow checks were 11% of
    /// the replay's instructions on OLTP at 1,000 objects.
    private struct Queues {
        let links: UnsafeMutableBufferPointer<Link>
        let ends: UnsafeMutableBufferPointer<Ends>
        let records: UnsafeMutableBufferPointer<Record>
        let width: Int

        @inline(__always) func slot(_ record: Int32, _ miniature: Int) -> Int { Int(record) &* width &+ miniature }
        @inline(__always) func end(_ queue: UInt8, _ miniature: Int) -> Int { miniature &* 4 &+ Int(queue) }
        @inline(__always) func weight(_ queue: UInt8, _ miniature: Int) -> Int { ends[end(queue, miniature)].weight }
        @inline(__always) func head(_ queue: UInt8, _ miniature: Int) -> Int32 { ends[end(queue, miniature)].head }

        @inline(__always)
        func totalWeight(_ miniature: Int) -> Int {
            weight(MiniatureCaches.window, miniature) &+ weight(MiniatureCaches.probation, miniature)
                &+ weight(MiniatureCaches.protected, miniature)
        }

        /// The queue holding `record` in `miniature` (0 for none).
        @inline(__always)
        func queue(of record: Int32, _ miniature: Int) -> UInt8 { links[slot(record, miniature)].queue }

        @inline(__always)
        func tail(_ queue: UInt8, _ miniature: Int) -> Int32? {
            let tail = ends[end(queue, miniature)].tail
            return tail == MiniatureCaches.none ? nil : tail
        }

        /// Moves a held record up its miniature's queues; false if the miniature does not hold it.
        @inline(__always)
        func hit(_ record: Int32, _ miniature: Int, protectedMaximum: Int) -> Bool {
            switch queue(of: record, miniature) {
            case 0: return false
            case MiniatureCaches.window: moveToHead(record, MiniatureCaches.window, miniature)
            default:
                moveToHead(record, MiniatureCaches.protected, miniature)
                while weight(MiniatureCaches.protected, miniature) > protectedMaximum,
                    let demoted = tail(MiniatureCaches.protected, miniature)
                {
                    unlink(demoted, miniature)
                    pushHead(demoted, MiniatureCaches.probation, miniature)
                }
            }
            return true
        }

        /// Starts loading, in every miniature, the links a request reads after its record's own:
        /// its neighbours (a hit unlinks it) and the window's and probation's oldest (a miss's
        /// contest). The miniatures are independent, but each one's moves wait on its loads, and
        /// the fourteen of them one after another waited on about thirty misses in turn (the
        /// links are the whole sample's, larger than a core's cache).
        @inline(__always)
        func prefetchNeighbours(of record: Int32) {
            guard let base = links.baseAddress else { return }
            @inline(__always) func prefetch(_ record: Int32, _ miniature: Int) {
                if record != MiniatureCaches.none { tiercache_prefetch(base + slot(record, miniature)) }
            }
            for miniature in 0..<width {
                let link = links[slot(record, miniature)]
                prefetch(link.previous, miniature)
                prefetch(link.next, miniature)
                prefetch(ends[end(MiniatureCaches.window, miniature)].tail, miniature)
                prefetch(ends[end(MiniatureCaches.probation, miniature)].tail, miniature)
            }
        }

        @inline(__always)
        func pushHead(_ record: Int32, _ queue: UInt8, _ miniature: Int) {
            let queueEnds = end(queue, miniature)
            let head = ends[queueEnds].head
            links[slot(record, miniature)] = Link(previous: MiniatureCaches.none, next: head, queue: queue)
            if head != MiniatureCaches.none {
                links[slot(head, miniature)].previous = record
            } else {
                ends[queueEnds].tail = record
            }
            ends[queueEnds].head = record
            ends[queueEnds].weight &+= records[Int(record)].cost
        }

        @inline(__always)
        func unlink(_ record: Int32, _ miniature: Int) {
            let index = slot(record, miniature)
            let link = links[index]
            let queueEnds = end(link.queue, miniature)
            if link.previous != MiniatureCaches.none {
                links[slot(link.previous, miniature)].next = link.next
            } else {
                ends[queueEnds].head = link.next
            }
            if link.next != MiniatureCaches.none {
                links[slot(link.next, miniature)].previous = link.previous
            } else {
                ends[queueEnds].tail = link.previous
            }
            links[index].queue = 0
            ends[queueEnds].weight &-= records[Int(record)].cost
        }

        @inline(__always)
        func moveToHead(_ record: Int32, _ queue: UInt8, _ miniature: Int) {
            if links[slot(record, miniature)].queue == queue, ends[end(queue, miniature)].head == record { return }
            unlink(record, miniature)
            pushHead(record, queue, miniature)
        }
    }
}
