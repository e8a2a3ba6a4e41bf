/// LIRS (Jiang & Zhang, SIGMETRICS 2002): Low Inter-reference Recency Set replacement.
///
/// Objects whose last two requests were close together (a low inter-reference recency, IRR) form
/// the LIR set, which holds `capacity − Lhirs` of the cache and is never evicted directly; every
/// other resident object is a resident HIR object and waits in list Q, which holds the remaining
/// `Lhirs` (1% of the capacity, at least 1, as the paper and libCacheSim choose). Stack S orders
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
/// Cost: per object two link sets of ``ObjectQueues`` (18 bytes); every request is O(1) amortised
/// (pruning removes each entry of S at most once per insertion) and allocates nothing.
public struct LIRSPolicy: EvictionPolicy {
    public static let name = "LIRS"
    /// The paper's share of the cache for resident HIR objects.
    public static let defaultHIRFraction = 0.01
    /// Non-resident entries kept in S, as a multiple of the capacity (Caffeine's default).
    public static let defaultNonResidentFactor = 2.0

    /// Stack S in `stack` (head = top, the most recent).
    private static let s: UInt8 = 1
    /// List Q of resident HIR objects in `lists` (head = end, the most recent; tail = front, the next victim).
    private static let q: UInt8 = 1
    /// The non-resident HIR entries of S in `lists`, in eviction order (tail = evicted longest ago).
    private static let nonResident: UInt8 = 2

    private var stack: ObjectQueues
    private var lists: ObjectQueues
    private let capacity: UInt64
    /// Llirs: the most the LIR set may hold.
    let lirLimit: UInt64
    /// The most the non-resident entries of S may add up to.
    let nonResidentLimit: UInt64
    /// What the LIR objects add up to.
    private var lirWeight: UInt64 = 0

    public init(context: PolicyContext) {
        self.init(context: context, hirFraction: Self.defaultHIRFraction, nonResidentFactor: Self.defaultNonResidentFactor)
    }

    /// A LIRS cache with other parameters than the paper's.
    /// - Parameters:
    ///   - hirFraction: the share of the capacity for resident HIR objects (Lhirs), 0...1; at least
    ///     one unit of capacity whatever the fraction.
    ///   - nonResidentFactor: how many times the capacity the non-resident entries of S may weigh
    ///     (`.infinity`: unbounded, as in the paper).
    public init(context: PolicyContext, hirFraction: Double, nonResidentFactor: Double) {
        stack = ObjectQueues(queueCount: 1, objectSizes: context.objectSizes)
        lists = ObjectQueues(queueCount: 2, objectSizes: context.objectSizes)
        capacity = context.capacity
        let fraction = hirFraction.isFinite ? min(max(hirFraction, 0), 1) : Self.defaultHIRFraction
        // Rounded down on the HIR side, as libCacheSim and the authors' lirs.c do.
        let hirLimit = min(context.capacity, max(1, UInt64(fraction * Double(context.capacity))))
        lirLimit = context.capacity - hirLimit
        let factor = nonResidentFactor.isNaN ? Self.defaultNonResidentFactor : max(nonResidentFactor, 0)
        let limit = factor * Double(context.capacity)
        nonResidentLimit = limit >= Double(UInt64.max) ? UInt64.max : UInt64(limit)
    }

    public mutating func access(_ object: UInt32, position: Int) -> Bool {
        let inStack = stack.queue(of: object) == Self.s
        let list = lists.queue(of: object)
        if list == ObjectQueues.none, inStack {
            // A LIR object: to the top of S; if it was the bottom, pruning finds the next LIR one.
            stack.moveToHead(object, Self.s)
            prune()
            return true
        }
        let size = stack.size(of: object)
        if list == Self.q {
            if inStack, size <= lirLimit {
                // A resident HIR object still in S: its IRR beats the oldest LIR object's recency.
                lists.remove(object)
                stack.moveToHead(object, Self.s)
                lirWeight += size
                demoteLIROverflow()
            } else {
                // Not in S (its last request is older than every LIR object's): stays HIR.
                stack.moveToHead(object, Self.s)
                lists.moveToHead(object, Self.q)
            }
            return true
        }
        // A miss: a non-resident entry of S, or an object LIRS does not remember.
        guard size <= capacity else { return false }
        if list == Self.nonResident { lists.remove(object) }
        if lirWeight + size <= lirLimit || (inStack && size <= lirLimit) {
            // The LIR set is not full yet (warm-up), or a non-resident entry of S comes back.
            stack.moveToHead(object, Self.s)
            lirWeight += size
            demoteLIROverflow()
            while lirWeight + lists.weight(Self.q) > capacity, evictHIR() {}
        } else if size <= capacity - lirWeight {
            // A new HIR object: Q's front makes room; it enters at the top of S and the end of Q.
            while lirWeight + lists.weight(Self.q) + size > capacity, evictHIR() {}
            stack.moveToHead(object, Self.s)
            lists.pushHead(object, Self.q)
        } else {
            // Larger than what the LIR set leaves (byte mode only): remembered, not admitted.
            stack.moveToHead(object, Self.s)
            lists.pushHead(object, Self.nonResident)
        }
        limitNonResidentEntries()
        return false
    }

    /// Moves S's bottom LIR objects to the end of Q until the LIR set fits in its share again.
    private mutating func demoteLIROverflow() {
        while lirWeight > lirLimit, let bottom = stack.tail(Self.s) {
            stack.remove(bottom)
            lists.pushHead(bottom, Self.q)
            lirWeight -= stack.size(of: bottom)
            prune()
        }
    }

    /// Stack pruning: removes the HIR entries at S's bottom until a LIR object is there. Resident
    /// ones stay in Q; non-resident ones are forgotten.
    private mutating func prune() {
        while let bottom = stack.tail(Self.s) {
            let list = lists.queue(of: bottom)
            if list == ObjectQueues.none { return }
            stack.remove(bottom)
            if list == Self.nonResident { lists.remove(bottom) }
        }
    }

    /// Evicts Q's front object; it stays in S, as a non-resident entry, if it is there.
    /// - Returns: false when Q is empty.
    private mutating func evictHIR() -> Bool {
        guard let victim = lists.popTail(Self.q) else { return false }
        if stack.queue(of: victim) == Self.s { lists.pushHead(victim, Self.nonResident) }
        return true
    }

    private mutating func limitNonResidentEntries() {
        while lists.weight(Self.nonResident) > nonResidentLimit, let oldest = lists.popTail(Self.nonResident) {
            stack.remove(oldest)
        }
    }
}

extension LIRSPolicy {
    /// The status LIRS gives an object.
    enum Status: Equatable, Sendable {
        case lir, residentHIR, nonResidentHIR
    }

    /// Stack S from top to bottom, with each entry's status (for tests).
    var stackS: [(object: UInt32, status: Status)] {
        stack.members(of: Self.s).map { object in
            switch lists.queue(of: object) {
            case Self.q: (object, .residentHIR)
            case Self.nonResident: (object, .nonResidentHIR)
            default: (object, .lir)
            }
        }
    }

    /// List Q from its end (the most recent) to its front (the next victim) (for tests).
    var listQ: [UInt32] { lists.members(of: Self.q) }
}
