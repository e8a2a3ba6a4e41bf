/// Belady's MIN (1966), the offline optimum of demand paging for unit sizes: every requested object
/// is brought in, and when room is needed the resident object whose next request lies furthest in
/// the future leaves. With variable sizes, evicting the furthest objects until the new one fits is the
/// usual heuristic (the exact problem is NP-hard). Offline: the simulator runs it; a memory tier
/// cannot (it refuses policies that need the future).
public struct BeladyPolicy: EvictionPolicy {
    /// The policy's name in reports.
    public static let name = "Belady"
    /// MIN evicts the object requested furthest in the future, so it needs each request's next use.
    public static let needsFuture = true

    private let nextUse: [UInt32]
    /// Each slot's size, once a size other than 1 has arrived; empty while every size is 1 (object
    /// mode), so that an admission writes no second array (a miss per admission on a trace of
    /// millions of objects, which left MIN 0.93x its replay before the eviction core).
    private var sizes: [UInt64] = []
    private let capacity: UInt64
    private var departed: [UInt32] = []
    private let notesDepartures: Bool
    private var used: UInt64 = 0
    /// The next-use position of each cached object; `notCached` otherwise.
    private var cachedUntil: [UInt32]
    /// (next use, object) packed as `next << 32 | object`, largest first; stale entries are
    /// skipped when they surface. A hit leaves one behind whose next use is now, below every live
    /// entry's, so it would never surface: they are swept out whenever they outnumber the live
    /// ones (the heap held an entry per hit, 8 bytes a request, 0.5 million for 1,000 residents
    /// on OLTP).
    private var heap = MaxHeap<UInt64>()
    /// How many objects are cached: the heap's live entries.
    private var residentCount = 0
    private static let notCached = UInt32.max - 1

    /// An empty cache of `context`'s capacity.
    public init(context: PolicyContext) {
        nextUse = context.nextUse
        capacity = context.capacity
        cachedUntil = [UInt32](repeating: Self.notCached, count: context.expectedSlots)
        notesDepartures = context.readsDepartures
    }

    /// Serves the request at `position` (the future is read from there); returns whether it hit.
    public mutating func access(_ object: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        if notesDepartures { departed.removeAll(keepingCapacity: true) }
        let id = Int(object)
        if id >= cachedUntil.count {
            cachedUntil.append(contentsOf: repeatElement(Self.notCached, count: id + 1 - cachedUntil.count))
            if !sizes.isEmpty { sizes.append(contentsOf: repeatElement(1, count: id + 1 - sizes.count)) }
        }
        let next = position < nextUse.count ? nextUse[position] : UInt32.max
        if cachedUntil[id] != Self.notCached {
            cachedUntil[id] = next
            heap.push(UInt64(next) << 32 | UInt64(object))
            if heap.count > 2 * residentCount + 64 { sweepStaleEntries() }
            return true
        }
        guard size <= capacity else { return false }
        if size != 1 || !sizes.isEmpty {
            if sizes.isEmpty { sizes = [UInt64](repeating: 1, count: cachedUntil.count) }
            sizes[id] = size
        }
        cachedUntil[id] = next
        used += size
        residentCount += 1
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
            used -= size(of: id)
            residentCount -= 1
            if notesDepartures { departed.append(UInt32(id)) }
        }
    }

    /// Drops the heap's entries that no longer match their object's next use: the heap's order
    /// of the live ones, and so every decision, is unchanged.
    private mutating func sweepStaleEntries() {
        let cachedUntil = self.cachedUntil
        heap.removeAll { packed in
            cachedUntil[Int(UInt32(truncatingIfNeeded: packed))] != UInt32(packed >> 32)
        }
    }

    /// The heap's entries (live and stale), for tests.
    var heapCount: Int { heap.count }

    /// Forgets `slot` (its heap entries go stale).
    public mutating func remove(_ slot: UInt32) {
        departed.removeAll(keepingCapacity: true)
        guard isResident(slot) else { return }
        cachedUntil[Int(slot)] = Self.notCached
        used -= size(of: Int(slot))
        residentCount -= 1
        departed.append(slot)
    }

    /// Forgets every slot.
    public mutating func removeAll() {
        for index in cachedUntil.indices { cachedUntil[index] = Self.notCached }
        heap = MaxHeap<UInt64>()
        used = 0
        residentCount = 0
        departed.removeAll(keepingCapacity: true)
    }

    /// Whether `slot` is cached.
    public func isResident(_ slot: UInt32) -> Bool {
        Int(slot) < cachedUntil.count && cachedUntil[Int(slot)] != Self.notCached
    }
    /// MIN keeps no history: only resident slots.
    public func remembers(_ slot: UInt32) -> Bool { isResident(slot) }
    /// The slots the last call evicted.
    public var departures: ArraySlice<UInt32> { departed[...] }
    /// The whole capacity.
    public var largestAdmissibleSize: UInt64 { capacity }
    /// Resident slots, in slot order (MIN's retention order is the future's).
    public var residentsByRetention: [UInt32] {
        cachedUntil.indices.filter { cachedUntil[$0] != Self.notCached }.map { UInt32($0) }
    }

    private func size(of id: Int) -> UInt64 { sizes.isEmpty ? 1 : sizes[id] }

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
