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
/// With unit sizes every step is exactly the paper's.
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

    private var nodes: [LIRSNode]
    private let sizes: [UInt32]
    private var ends = LIRSEnds()
    let limits: LIRSLimits

    /// An empty cache of `context`'s capacity, with the default parameters.
    public init(context: PolicyContext) {
        self.init(
            context: context, hirFraction: Self.defaultHIRFraction, nonResidentFactor: Self.defaultNonResidentFactor)
    }

    /// A LIRS cache with other parameters than the paper's.
    /// - Parameters:
    ///   - context: the trace's objects and the capacity.
    ///   - hirFraction: the share of the capacity for resident HIR objects (Lhirs), 0...1; at least
    ///     one unit of capacity whatever the fraction.
    ///   - nonResidentFactor: how many times the capacity the non-resident entries of S may weigh
    ///     (`.infinity`: unbounded, as in the paper).
    public init(context: PolicyContext, hirFraction: Double, nonResidentFactor: Double) {
        nodes = [LIRSNode](repeating: LIRSNode(), count: context.objectCount)
        sizes = context.objectSizes
        let fraction = hirFraction.isFinite ? min(max(hirFraction, 0), 1) : Self.defaultHIRFraction
        // Rounded down on the HIR side, as libCacheSim and the authors' lirs.c do.
        let hirLimit = min(context.capacity, max(1, context.capacity.scaled(by: fraction)))
        let factor = nonResidentFactor.isNaN ? Self.defaultNonResidentFactor : max(nonResidentFactor, 0)
        // An unbounded factor (infinity) stays unbounded even for a capacity of 0.
        let nonResident = factor == .infinity ? UInt64.max : context.capacity.scaled(by: factor)
        limits = LIRSLimits(capacity: context.capacity, lir: context.capacity - hirLimit, nonResident: nonResident)
    }

    /// Replays the request at `position` for `object`; returns whether it hit.
    public mutating func access(_ object: UInt32, position: Int) -> Bool {
        guard let id = Int32(exactly: object), Int(object) < nodes.count else { return false }
        // The records leave `self` for the request so that one uniqueness check covers all its link writes.
        var records: [LIRSNode] = []
        swap(&records, &nodes)
        defer { swap(&records, &nodes) }
        let (limits, ends) = (self.limits, self.ends)
        let (hit, after) = records.withUnsafeMutableBufferPointer { records in
            sizes.withUnsafeBufferPointer { sizes -> (Bool, LIRSEnds) in
                guard let nodes = records.baseAddress, let sizes = sizes.baseAddress else { return (false, ends) }
                var links = LIRSLinks(nodes: nodes, sizes: sizes, ends: ends)
                let hit = links.access(id, limits)
                return (hit, links.ends)
            }
        }
        self.ends = after
        return hit
    }
}

/// The capacities LIRS works with, in objects or bytes.
struct LIRSLimits: Sendable {
    let capacity: UInt64
    /// Llirs: the most the LIR set may hold (the capacity less Lhirs).
    let lir: UInt64
    /// The most the non-resident entries of S may add up to.
    let nonResident: UInt64
}

extension LIRSLinks {
    /// One request, by the paper's rules (section 3.3).
    mutating func access(_ id: Int32, _ limits: LIRSLimits) -> Bool {
        let inStack = self.inStack(id)
        let list = self.list(id)
        if list == Self.noList, inStack {
            // A LIR object: to the top of S; if it was the bottom, pruning finds the next LIR one.
            moveToTop(id)
            prune()
            return true
        }
        let size = self.size(id)
        if list == Self.q {
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
            return true
        }
        // A miss: a non-resident entry of S, or an object LIRS does not remember.
        guard size <= limits.capacity else { return false }
        if list == Self.nonResident { removeFromList(id) }
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
        while ends.nonResidentWeight > limits.nonResident, let oldest = popTail(Self.nonResident) {
            removeFromStack(oldest)
        }
        return false
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
