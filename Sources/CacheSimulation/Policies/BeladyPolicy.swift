/// Belady's MIN (1966), the offline optimum of demand paging for unit sizes: every requested object
/// is brought in, and when room is needed the resident object whose next request lies furthest in
/// the future leaves. With variable sizes, evicting the furthest objects until the new one fits is the
/// usual heuristic (the exact problem is NP-hard).
public struct BeladyPolicy: EvictionPolicy {
    /// The policy's name in reports.
    public static let name = "Belady"
    /// MIN evicts the object requested furthest in the future, so it needs each request's next use.
    public static let needsFuture = true

    private let nextUse: [UInt32]
    private let sizes: [UInt32]
    private let capacity: UInt64
    private var used: UInt64 = 0
    /// The next-use position of each cached object; `notCached` otherwise.
    private var cachedUntil: [UInt32]
    /// (next use, object) packed as `next << 32 | object`, largest first; stale entries are
    /// skipped when they surface.
    private var heap = MaxHeap<UInt64>()
    private static let notCached = UInt32.max - 1

    /// An empty cache of `context`'s capacity, with the default parameters.
    public init(context: PolicyContext) {
        nextUse = context.nextUse
        sizes = context.objectSizes
        capacity = context.capacity
        cachedUntil = [UInt32](repeating: Self.notCached, count: context.objectCount)
    }

    /// Replays the request at `position` for `object`; returns whether it hit.
    public mutating func access(_ object: UInt32, position: Int) -> Bool {
        let id = Int(object)
        let next = position < nextUse.count ? nextUse[position] : UInt32.max
        if cachedUntil[id] != Self.notCached {
            cachedUntil[id] = next
            heap.push(UInt64(next) << 32 | UInt64(object))
            return true
        }
        let size = UInt64(sizes[id])
        guard size <= capacity else { return false }
        cachedUntil[id] = next
        used += size
        evictWhileOverCapacity()
        heap.push(UInt64(next) << 32 | UInt64(object))
        return false
    }

    /// Evicts the furthest-used resident objects while the cache holds more than its capacity. The
    /// object being requested is not in the heap yet, so it is never its own victim.
    private mutating func evictWhileOverCapacity() {
        while used > capacity, let packed = heap.popMax() {
            let next = UInt32(packed >> 32)
            let id = Int(UInt32(truncatingIfNeeded: packed))
            guard cachedUntil[id] == next else { continue }  // a stale entry
            cachedUntil[id] = Self.notCached
            used -= UInt64(sizes[id])
        }
    }

    /// The next-use position of every request: one backward pass over the trace.
    public static func nextUses(of requests: [UInt32], objectCount: Int) -> [UInt32] {
        var seen = [UInt32](repeating: UInt32.max, count: objectCount)
        var result = [UInt32](repeating: UInt32.max, count: requests.count)
        for position in stride(from: requests.count - 1, through: 0, by: -1) {
            let object = Int(requests[position])
            result[position] = seen[object]
            seen[object] = UInt32(position)
        }
        return result
    }
}
