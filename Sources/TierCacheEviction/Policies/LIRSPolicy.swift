/// LIRS (Jiang & Zhang, SIGMETRICS 2002): Low Inter-reference Recency Set replacement.
///
/// Objects whose last two requests were close together (a low inter-reference recency, IRR) form
/// the LIR set, which holds `capacity − Lhirs` of the cache and is never evicted directly; every
/// other resident object is a resident HIR object and waits in list Q, which holds the remaining
/// `Lhirs` (1% of the capacity as in the paper, and at least 1 as in libCacheSim). Stack S orders
/// LIR objects, and HIR objects more recent than the oldest LIR object, by recency; its bottom is
/// always a LIR object ("stack pruning" removes the HIR entries below it). A miss evicts Q's
/// front; an evicted object that is still in S stays there as a non-resident HIR entry, and if it
/// is requested again while in S its IRR is lower than the LIR set's oldest recency: it becomes
/// LIR, and the LIR object at S's bottom is demoted to Q. A one-time scan therefore only ever
/// cycles through Q's 1% and leaves the LIR set alone.
///
/// The paper does not bound S; like the reference implementations this one does: the
/// non-resident entries (in capacity units, so objects, or bytes in byte mode) are limited to
/// `nonResidentFactor × capacity` (2 by default, Caffeine's `non-resident-multiplier`), dropping
/// the longest-evicted first. libCacheSim bounds all of S to 2 × capacity instead.
///
/// In byte mode the LIR set holds at most `capacity − Lhirs` bytes and Q whatever the LIR set
/// leaves. Promoting an object to LIR demotes S's bottom LIR objects until the LIR set fits again.
/// A new object that is not LIR and larger than the room the LIR set leaves is not admitted; it is
/// only recorded in S as a non-resident entry, so a second request soon enough admits it as LIR.
/// A new object that fits the room the LIR set leaves below its limit joins it (the paper's
/// warm-up, while the LIR set is not full): demotions move whole objects, so in byte mode such
/// room recurs after warm-up, and some first-time objects of a scan become LIR; the scan
/// resistance above holds exactly only with unit sizes. With unit sizes every step is exactly
/// the paper's.
///
/// Against the ARC paper's Table IV (OLTP, online LIRS with Lhirs = 1%) this is within 0.05 points
/// at four of five sizes (the paper's fifth figure is out of line with its own column); Table V
/// (P12) tuned Lhirs per size offline, and the best of a few Lhirs values lands within 0.5 points.
///
/// Cost: a 20-byte record an object (`LIRSNode`); every request is O(1) amortised (pruning
/// removes each entry of S at most once per insertion) and allocates nothing.
public struct LIRSPolicy: EvictionPolicy {
    /// The policy's name in reports.
    public static let name = "LIRS"
    /// The paper's share of the cache for resident HIR objects.
    public static let defaultHIRFraction = 0.01
    /// Non-resident entries kept in S, as a multiple of the capacity (Caffeine's default).
    public static let defaultNonResidentFactor = 2.0

    @usableFromInline var nodes: [LIRSNode]
    @usableFromInline var ends = LIRSEnds()
    @usableFromInline var departed: [UInt32] = []
    @usableFromInline let limits: LIRSLimits
    @usableFromInline let notesDepartures: Bool

    /// An empty cache of `context`'s capacity, with the default parameters.
    public init(context: PolicyContext) {
        self.init(
            context: context, hirFraction: Self.defaultHIRFraction, nonResidentFactor: Self.defaultNonResidentFactor)
    }

    /// A LIRS cache with other parameters than the paper's.
    /// - Parameters:
    ///   - context: the capacity (and the slots to expect).
    ///   - hirFraction: the share of the capacity for resident HIR objects (Lhirs), 0...1; at least
    ///     one unit of capacity whatever the fraction.
    ///   - nonResidentFactor: how many times the capacity the non-resident entries of S may weigh
    ///     (`.infinity`: unbounded, as in the paper).
    ///   - stackFactor: how many times the capacity all of S may weigh (LIR, resident and
    ///     non-resident HIR entries), dropping the longest-evicted non-resident entries first:
    ///     libCacheSim's bound (2, with `nonResidentFactor` `.infinity`, makes its decisions).
    ///     `.infinity`, the default, bounds only the non-resident entries, as Caffeine does.
    public init(context: PolicyContext, hirFraction: Double, nonResidentFactor: Double, stackFactor: Double = .infinity)
    {
        nodes = [LIRSNode](repeating: LIRSNode(), count: context.expectedSlots)
        let fraction = hirFraction.isFinite ? min(max(hirFraction, 0), 1) : Self.defaultHIRFraction
        // Rounded down on the HIR side, as libCacheSim and the authors' lirs.c do.
        let hirLimit = min(context.capacity, max(1, context.capacity.scaled(by: fraction)))
        let factor = nonResidentFactor.isNaN ? Self.defaultNonResidentFactor : max(nonResidentFactor, 0)
        // An unbounded factor (infinity) stays unbounded even for a capacity of 0.
        let nonResident = factor == .infinity ? UInt64.max : context.capacity.scaled(by: factor)
        let stackBound = stackFactor.isNaN ? Double.infinity : max(stackFactor, 0)
        let stack = stackBound == .infinity ? UInt64.max : context.capacity.scaled(by: stackBound)
        limits = LIRSLimits(
            capacity: context.capacity, lir: context.capacity - hirLimit, nonResident: nonResident, stack: stack)
        notesDepartures = context.readsDepartures
    }

    /// Serves a request; returns whether it hit.
    public mutating func access(_ slot: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        if notesDepartures { departed.removeAll(keepingCapacity: true) }
        let id = Int32(truncatingIfNeeded: slot)
        guard id >= 0 else { return false }
        if Int(slot) >= nodes.count { grow(to: Int(slot) + 1) }
        let limits = self.limits
        return withLinks(otherwise: false) { links in links.access(id, size: size, limits) }
    }

    /// Forgets `slot`: out of S, Q and the non-resident list.
    public mutating func remove(_ slot: UInt32) {
        departed.removeAll(keepingCapacity: true)
        guard Int(slot) < nodes.count, let id = Int32(exactly: slot) else { return }
        withLinks(otherwise: ()) { links in links.forget(id) }
    }

    /// Forgets every slot.
    public mutating func removeAll() {
        for index in nodes.indices { nodes[index] = LIRSNode() }
        ends = LIRSEnds()
        departed.removeAll(keepingCapacity: true)
    }

    /// Whether `slot` is resident: LIR, or a resident HIR object in Q.
    public func isResident(_ slot: UInt32) -> Bool {
        guard Int(slot) < nodes.count else { return false }
        let node = nodes[Int(slot)]
        return node.list == LIRSLinks.q || (node.inStack && node.list == LIRSLinks.noList)
    }

    /// Resident, or a non-resident entry of S.
    public func remembers(_ slot: UInt32) -> Bool {
        guard Int(slot) < nodes.count else { return false }
        let node = nodes[Int(slot)]
        return node.inStack || node.list != LIRSLinks.noList
    }

    /// The slots the last call took out of S, Q or the non-resident list.
    public var departures: ArraySlice<UInt32> { departed[...] }

    /// The whole capacity.
    public var largestAdmissibleSize: UInt64 { limits.capacity }

    /// The LIR objects from S's top, then Q's resident HIR objects from the most recent.
    public var residentsByRetention: [UInt32] {
        stackS.filter { $0.status == .lir }.map(\.object) + listQ
    }

    private mutating func grow(to count: Int) {
        let target = Swift.max(count, nodes.count * 2, 64)
        nodes.append(contentsOf: repeatElement(LIRSNode(), count: target - nodes.count))
    }

    /// Runs `body` on links over the policy's arrays: the records leave `self` for the call so
    /// that one uniqueness check covers all its link writes; the ends and the departures stay
    /// and are written in place (a departures array handed to the links and back was a retain
    /// and a release a request, even when the driver reads none).
    private mutating func withLinks<Result>(otherwise fallback: Result, _ body: (inout LIRSLinks) -> Result) -> Result {
        var records: [LIRSNode] = []
        swap(&records, &nodes)
        defer { swap(&records, &nodes) }
        let notesDepartures = self.notesDepartures
        let result = withUnsafeMutablePointer(to: &ends) { ends in
            withUnsafeMutablePointer(to: &departed) { departed in
                records.withUnsafeMutableBufferPointer { records -> Result? in
                    guard let nodes = records.baseAddress else { return nil }
                    var links = LIRSLinks(
                        nodes: nodes, endsStorage: ends, departed: notesDepartures ? departed : nil)
                    return body(&links)
                }
            }
        }
        // The arrays cover the slot, so they have a base address and `result` is set.
        return result ?? fallback
    }
}
/// The capacities LIRS works with, in objects or bytes.
@usableFromInline
struct LIRSLimits: Sendable {
    let capacity: UInt64
    /// Llirs: the most the LIR set may hold (the capacity less Lhirs).
    let lir: UInt64
    /// The most the non-resident entries of S may add up to.
    let nonResident: UInt64
    /// The most all entries of S may add up to.
    let stack: UInt64
}

extension LIRSLinks {
    /// One request, by the paper's rules (section 3.3).
    mutating func access(_ id: Int32, size requestSize: UInt64, _ limits: LIRSLimits) -> Bool {
        let inStack = self.inStack(id)
        let list = self.list(id)
        if list == Self.noList, inStack {
            // A LIR object: to the top of S; if it was the bottom, pruning finds the next LIR one.
            moveToTop(id)
            prune()
            return true
        }
        if list == Self.q {
            let size = self.size(id)
            if inStack, size <= limits.lir {
                // A resident HIR object still in S: its IRR beats the oldest LIR object's recency.
                removeFromList(id)
                moveToTop(id)
                ends.lirWeight += size
                demoteLIROverflow(limits)
            } else {
                // Not in S (its last request is older than every LIR object's): stays HIR.
                moveToTop(id)
                if ends.qHead != id {
                    removeFromList(id)
                    pushHead(id, Self.q)
                }
            }
            // S grew (an entry went back on top): libCacheSim's bound on S applies here too.
            trimStack(limits)
            return true
        }
        // A miss: a non-resident entry of S, or an object LIRS does not remember.
        let size = requestSize
        guard size <= limits.capacity else { return false }
        if list == Self.nonResident { removeFromList(id) }
        if inStack { ends.stackWeight = ends.stackWeight - self.size(id) + size }
        nodes[Int(id)].size = size
        if ends.lirWeight + size <= limits.lir || (inStack && size <= limits.lir) {
            // The LIR set is not full yet (warm-up), or a non-resident entry of S comes back.
            moveToTop(id)
            ends.lirWeight += size
            demoteLIROverflow(limits)
            while ends.lirWeight + ends.qWeight > limits.capacity, evictHIR() {}
        } else if size <= limits.capacity - ends.lirWeight {
            // A new HIR object: Q's front makes room; it enters at the top of S and the end of Q.
            while ends.lirWeight + ends.qWeight + size > limits.capacity, evictHIR() {}
            moveToTop(id)
            pushHead(id, Self.q)
        } else {
            // Larger than what the LIR set leaves (byte mode only): remembered, not admitted.
            moveToTop(id)
            pushHead(id, Self.nonResident)
        }
        trimStack(limits)
        return false
    }

    /// Drops the longest-evicted non-resident entries from S while they, or all of S, weigh more
    /// than their bounds.
    private mutating func trimStack(_ limits: LIRSLimits) {
        while ends.nonResidentWeight > limits.nonResident || ends.stackWeight > limits.stack,
            let oldest = popTail(Self.nonResident)
        {
            removeFromStack(oldest)
        }
    }

    /// Forgets `id` wherever it is (S, Q or the non-resident list); a LIR object's weight leaves
    /// the LIR set, and S is pruned so that its bottom is a LIR object again.
    mutating func forget(_ id: Int32) {
        if isLIR(id) { ends.lirWeight -= size(id) }
        removeFromList(id)
        if inStack(id) { removeFromStack(id) }
        prune()
    }

    /// Moves S's bottom LIR objects to the end of Q until the LIR set fits in its share again.
    private mutating func demoteLIROverflow(_ limits: LIRSLimits) {
        while ends.lirWeight > limits.lir {
            prune()
            let bottom = ends.bottom
            guard bottom >= 0, isLIR(bottom) else { return }
            removeFromStack(bottom)
            pushHead(bottom, Self.q)
            ends.lirWeight -= size(bottom)
        }
        prune()
    }

    /// Stack pruning: removes the HIR entries at S's bottom until a LIR object is there. Resident
    /// ones stay in Q; non-resident ones are forgotten.
    private mutating func prune() {
        while ends.bottom >= 0 {
            let bottom = ends.bottom
            let list = self.list(bottom)
            if list == Self.noList { return }
            removeFromStack(bottom)
            if list == Self.nonResident { removeFromList(bottom) }
        }
    }

    /// Evicts Q's front object; it stays in S, as a non-resident entry, if it is there.
    /// - Returns: false when Q is empty.
    private mutating func evictHIR() -> Bool {
        guard let victim = popTail(Self.q) else { return false }
        if inStack(victim) { pushHead(victim, Self.nonResident) }
        return true
    }
}

extension LIRSPolicy {
    /// The status LIRS gives an object.
    enum Status: Equatable, Sendable {
        case lir, residentHIR, nonResidentHIR
    }

    /// Stack S from top to bottom, with each entry's status (for tests). O(n).
    var stackS: [(object: UInt32, status: Status)] {
        var result: [(object: UInt32, status: Status)] = []
        var cursor = ends.top
        while cursor >= 0 {
            let node = nodes[Int(cursor)]
            result.append(
                (
                    UInt32(cursor),
                    node.list == LIRSLinks.q
                        ? .residentHIR : node.list == LIRSLinks.nonResident ? .nonResidentHIR : .lir
                ))
            cursor = node.down
        }
        return result
    }

    /// List Q from its end (the most recent) to its front (the next victim) (for tests). O(n).
    var listQ: [UInt32] {
        var result: [UInt32] = []
        var cursor = ends.qHead
        while cursor >= 0 {
            result.append(UInt32(cursor))
            cursor = nodes[Int(cursor)].older
        }
        return result
    }
}
