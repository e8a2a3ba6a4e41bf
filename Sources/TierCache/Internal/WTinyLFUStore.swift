/// W-TinyLFU (Einziger, Friedman & Manes, 2017; Caffeine's policy) over costed entries, rule for
/// rule as the simulator's `WTinyLFUPolicy` (a test replays a trace through both and compares hits).
///
/// A small LRU window admits every new entry; entries leaving it must win a frequency contest
/// (``TinyLFUSketch``) against the victim of the main cache, a segmented LRU (20% probation, 80%
/// protected). The window starts at 1% of the capacity and Caffeine's hill climber resizes it.
/// The sketch is sized, as Caffeine sizes a weighted cache's, by the number of entries held once
/// the cache is half full, growing (and restarting) by powers of two.
struct WTinyLFUStore: EvictingStore {
    typealias Slot = KeyedQueues<CacheKey, CacheEntry>.Slot
    private static let window: UInt8 = 1
    private static let probation: UInt8 = 2
    private static let protected: UInt8 = 3

    /// The tier's default sketch hash: the key's `Hashable` hash (randomly seeded per process, so
    /// crafted keys cannot aim at one counter).
    static let defaultSketchHash: @Sendable (CacheKey) -> UInt64 = { UInt64(bitPattern: Int64($0.hashValue)) }

    private var queues = KeyedQueues<CacheKey, CacheEntry>(queueCount: 3)
    private var sketch = TinyLFUSketch(expectedObjects: 16)
    private let sketchHash: @Sendable (CacheKey) -> UInt64
    private let capacity: Int
    private let maxEntryCount: Int
    private var windowLimit: Int
    private var protectedLimit: Int
    private var climber: WindowHillClimber

    init(capacity: Int, maxEntryCount: Int, sketchHash: @escaping @Sendable (CacheKey) -> UInt64) {
        self.capacity = capacity
        self.maxEntryCount = maxEntryCount
        self.sketchHash = sketchHash
        windowLimit = max(1, capacity / 100)
        protectedLimit = (capacity - windowLimit) * 8 / 10
        climber = WindowHillClimber(capacity: capacity)
    }

    var totalCost: Int { queues.weight(Self.window) + mainWeight }
    var count: Int { queues.count(Self.window) + queues.count(Self.probation) + queues.count(Self.protected) }
    var largestAdmissibleCost: Int { capacity }
    private var mainWeight: Int { queues.weight(Self.probation) + queues.weight(Self.protected) }

    @inline(__always)
    mutating func lookup(_ key: CacheKey) -> CacheEntry? {
        guard let slot = queues.slot(of: key) else { return nil }
        hit(slot)
        return queues.value(of: slot)
    }

    /// A request that finds `slot`'s entry.
    @inline(__always)
    private mutating func hit(_ slot: Slot) {
        sketch.increment(queues.hash(of: slot))
        switch queues.queue(of: slot) {
        case Self.window:
            queues.moveToHead(slot, Self.window)
        case Self.probation:
            queues.moveToHead(slot, Self.protected)
            demoteProtectedOverflow()
        default:
            queues.moveToHead(slot, Self.protected)
        }
        recordRequest(hit: true)
    }

    mutating func store(_ entry: CacheEntry, cost: Int, for key: CacheKey) -> Int {
        if let slot = queues.slot(of: key) {
            return replace(slot, with: entry, cost: cost)
        }
        let hash = sketchHash(key)
        let slot = queues.allocate(key, value: entry, cost: cost, hash: hash)
        ensureSketchCapacity(adding: 1)
        sketch.increment(hash)
        queues.pushHead(slot, Self.window)
        var evicted = evictFromWindow()
        evicted += enforceEntryCount(sparing: slot)
        recordRequest(hit: false)
        return evicted
    }

    /// A new value for a resident key counts as a hit on it; a larger cost may then evict the
    /// main cache's oldest entries, then the window's (never the entry itself).
    private mutating func replace(_ slot: Slot, with entry: CacheEntry, cost: Int) -> Int {
        let queue = queues.queue(of: slot)
        queues.remove(slot)
        queues.update(slot, value: entry, cost: cost)
        queues.pushHead(slot, queue)
        hit(slot)
        var evicted = 0
        while totalCost > capacity, let victim = mainVictim(sparing: slot) ?? windowVictim(sparing: slot) {
            queues.free(victim)
            evicted += 1
        }
        return evicted
    }

    /// Caffeine sizes a weighted cache's sketch for the entries held once it is half full.
    private mutating func ensureSketchCapacity(adding: Int) {
        guard totalCost >= capacity / 2, count > sketch.expectedObjects else { return }
        var size = sketch.expectedObjects
        while size < count { size <<= 1 }
        sketch = TinyLFUSketch(expectedObjects: size)
    }

    /// Moves the window's overflow into probation. While the cache is then over capacity, each such
    /// candidate meets the main cache's victim (probation's oldest entry, else protected's) and the
    /// less frequent of the two leaves.
    private mutating func evictFromWindow() -> Int {
        var evicted = 0
        while queues.weight(Self.window) > windowLimit, let candidate = queues.popTail(Self.window) {
            queues.pushHead(candidate, Self.probation)
            while queues.weight(Self.window) + mainWeight > capacity, queues.queue(of: candidate) == Self.probation {
                var victim = queues.tail(Self.probation)
                if victim == candidate { victim = queues.tail(Self.protected) }
                guard let victim,
                      sketch.frequency(queues.hash(of: candidate)) > sketch.frequency(queues.hash(of: victim))
                else {
                    queues.free(candidate)
                    evicted += 1
                    break
                }
                queues.free(victim)
                evicted += 1
            }
        }
        return evicted
    }

    /// The entry-count limit, which the simulator does not have: the main cache's victims go first.
    private mutating func enforceEntryCount(sparing spared: Slot) -> Int {
        var evicted = 0
        while count > maxEntryCount, let victim = mainVictim(sparing: spared) ?? windowVictim(sparing: spared) {
            queues.free(victim)
            evicted += 1
        }
        return evicted
    }

    private func mainVictim(sparing spared: Slot) -> Slot? {
        if let tail = queues.tail(Self.probation), tail != spared { return tail }
        if let tail = queues.tail(Self.protected), tail != spared { return tail }
        return nil
    }

    private func windowVictim(sparing spared: Slot) -> Slot? {
        guard let tail = queues.tail(Self.window), tail != spared else { return nil }
        return tail
    }

    private mutating func demoteProtectedOverflow() {
        while queues.weight(Self.protected) > protectedLimit, let oldest = queues.popTail(Self.protected) {
            queues.pushHead(oldest, Self.probation)
        }
    }

    private mutating func recordRequest(hit: Bool) {
        if let adjustment = climber.record(hit: hit, sampleSize: sketch.sampleSize) { resizeWindow(by: adjustment) }
    }

    private mutating func resizeWindow(by amount: Double) {
        let mainCapacity = capacity - windowLimit
        if amount > 0 {
            let step = min(Int(amount), protectedLimit, mainCapacity > 1 ? mainCapacity - 1 : 0)
            windowLimit += step
            protectedLimit -= step
            // The window grows into the main cache's space: its oldest entries move over.
            while queues.weight(Self.window) + 1 <= windowLimit, mainWeight > capacity - windowLimit,
                  let oldest = queues.popTail(Self.probation) ?? queues.popTail(Self.protected) {
                queues.pushHead(oldest, Self.window)
            }
        } else if amount < 0 {
            let step = min(Int(-amount), windowLimit > 1 ? windowLimit - 1 : 0)
            windowLimit -= step
            protectedLimit += step
            _ = evictFromWindow()
        }
        demoteProtectedOverflow()
    }

    mutating func remove(_ key: CacheKey) {
        if let slot = queues.slot(of: key) { queues.free(slot) }
    }

    mutating func removeAll() {
        queues.removeAll()
        sketch = TinyLFUSketch(expectedObjects: 16)
        windowLimit = max(1, capacity / 100)
        protectedLimit = (capacity - windowLimit) * 8 / 10
        climber = WindowHillClimber(capacity: capacity)
    }

    var keysByRetention: [CacheKey] {
        queues.keys(Self.protected) + queues.keys(Self.probation) + queues.keys(Self.window)
    }
}

/// Caffeine's hill climber for the window size, as the simulator's `HillClimber`.
struct WindowHillClimber {
    private static let stepFraction = 0.0625
    private static let decay = 0.98
    private static let restartThreshold = 0.05

    private let capacity: Double
    private var hits = 0
    private var requests = 0
    private var previousHitRatio = 0.0
    private var stepSize: Double

    init(capacity: Int) {
        self.capacity = Double(capacity)
        stepSize = -Self.stepFraction * Double(capacity)
    }

    /// Counts one request; at the end of a sample returns how much to grow (positive) or shrink the window.
    mutating func record(hit: Bool, sampleSize: Int) -> Double? {
        requests += 1
        if hit { hits += 1 }
        guard requests >= max(sampleSize, 1) else { return nil }
        let hitRatio = Double(hits) / Double(requests)
        let change = hitRatio - previousHitRatio
        let amount = change >= 0 ? stepSize : -stepSize
        stepSize = abs(change) >= Self.restartThreshold
            ? Self.stepFraction * capacity * (amount >= 0 ? 1 : -1)
            : Self.decay * amount
        previousHitRatio = hitRatio
        hits = 0
        requests = 0
        return amount
    }
}
