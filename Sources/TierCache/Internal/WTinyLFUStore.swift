/// W-TinyLFU (Einziger, Friedman & Manes, 2017) over costed entries, following Caffeine's
/// `BoundedLocalCache` for a weighted cache, as the simulator's `WTinyLFUPolicy` does (a test
/// replays traces through both and compares hits).
///
/// New entries enter an LRU window (1% of the capacity at first). Entries leaving the window
/// become candidates at the young end of the main cache's probation segment; while the cache is
/// over capacity, the oldest probation entry (the victim) and the candidate meet, and the one the
/// frequency sketch counts less often leaves (the candidate on a tie). A probation hit promotes to
/// the protected segment (80% of the main cache); its overflow returns to probation. The window
/// is sized by miniature simulation (`MiniatureWindowClimber`), not by Caffeine's hill climber,
/// which moves too slowly to keep W-TinyLFU level with LRU on recency-heavy workloads.
///
/// Requests are applied one at a time (Caffeine buffers them and applies them in batches): a hit
/// reorders, a store adds and evicts, and each is followed by the climber's step.
struct WTinyLFUStore: EvictingStore {
    typealias Slot = KeyedQueues<CacheKey, CacheEntry>.Slot
    private static let window: UInt8 = 1
    private static let probation: UInt8 = 2
    private static let protected: UInt8 = 3
    // Caffeine's constants.
    private static let percentMain = 0.99
    private static let percentMainProtected = 0.80
    private static let queueTransferThreshold = 1_000
    private static let admitHashDoSThreshold = 5

    /// The tier's default sketch hash: the key's `Hashable` hash (randomly seeded per process, so
    /// crafted keys cannot aim at chosen counters).
    static let defaultSketchHash: @Sendable (CacheKey) -> UInt64 = { UInt64(bitPattern: Int64($0.hashValue)) }

    private var queues = KeyedQueues<CacheKey, CacheEntry>(queueCount: 3)
    private var sketch = TinyLFUSketch()
    private let sketchHash: @Sendable (CacheKey) -> UInt64
    private let capacity: Int
    private let maxEntryCount: Int
    private var windowMaximum = 0
    private var protectedMaximum = 0
    private var random = AdmissionRandom()
    private var climber = MiniatureWindowClimber()

    init(capacity: Int, maxEntryCount: Int, sketchHash: @escaping @Sendable (CacheKey) -> UInt64) {
        self.capacity = capacity
        self.maxEntryCount = maxEntryCount
        self.sketchHash = sketchHash
        reset()
    }

    /// Caffeine's `setMaximumSize`.
    private mutating func reset() {
        windowMaximum = capacity - Int(Self.percentMain * Double(capacity))
        protectedMaximum = Int(Self.percentMainProtected * Double(capacity - windowMaximum))
        sketch = TinyLFUSketch()
        random = AdmissionRandom()
        climber = MiniatureWindowClimber()
    }

    var totalCost: Int { queues.weight(Self.window) + queues.weight(Self.probation) + queues.weight(Self.protected) }
    var count: Int { queues.count(Self.window) + queues.count(Self.probation) + queues.count(Self.protected) }
    var largestAdmissibleCost: Int { capacity }

    @inline(__always)
    mutating func lookup(_ key: CacheKey) -> CacheEntry? {
        guard let slot = queues.slot(of: key) else { return nil }
        // The value first: its load then overlaps the list moves instead of following them (a
        // hit touches the value's line and the links' lines, in arrays of their own).
        let value = queues.value(of: slot)
        onAccess(slot)
        demoteFromProtected()
        adapt(queues.hash(of: slot), cost: queues.cost(of: slot))
        return value
    }

    /// Caffeine's `onAccess`: count the key, then move the entry up its segment.
    @inline(__always)
    private mutating func onAccess(_ slot: Slot) {
        sketch.increment(queues.hash(of: slot))
        switch queues.queue(of: slot) {
        case Self.window: queues.moveToHead(slot, Self.window)
        case Self.probation:
            // An entry heavier than the protected segment stays in probation (Caffeine's
            // `reorderProbation`); the protected overflow is demoted after the request.
            let segment = queues.cost(of: slot) > protectedMaximum ? Self.probation : Self.protected
            queues.moveToHead(slot, segment)
        default: queues.moveToHead(slot, Self.protected)
        }
    }

    mutating func store(_ entry: CacheEntry, cost: Int, for key: CacheKey) -> Int {
        let stored: Slot
        if let slot = queues.slot(of: key) {
            // Caffeine's UpdateTask: the new weight counts, and the write is an access.
            queues.replace(slot, value: entry, cost: cost)
            onAccess(slot)
            stored = slot
        } else {
            stored = add(entry, cost: cost, for: key)
        }
        var evicted = evictEntries(sparing: stored)
        // The entry-count limit, which Caffeine's weighted caches do not have: the oldest entry
        // of probation, else protected, else the window goes (never the one just stored).
        while count > maxEntryCount, let victim = oldest(sparing: stored) {
            queues.free(victim)
            evicted += 1
        }
        demoteFromProtected()
        adapt(queues.hash(of: stored), cost: queues.cost(of: stored))
        return evicted
    }

    /// The entry the entry-count limit removes: the oldest of probation, else protected, else
    /// the window, never `spared`.
    private func oldest(sparing spared: Slot) -> Slot? {
        for queue in [Self.probation, Self.protected, Self.window] {
            var slot = queues.tail(queue)
            while let current = slot, current == spared { slot = queues.newer(than: current) }
            if let slot { return slot }
        }
        return nil
    }

    /// Caffeine's `AddTask`: the entry joins the window, the sketch is sized once the cache is
    /// half full, and the key is counted.
    private mutating func add(_ entry: CacheEntry, cost: Int, for key: CacheKey) -> Slot {
        let hash = sketchHash(key)
        let slot = queues.allocate(key, value: entry, cost: cost, hash: hash)
        if totalCost + cost >= capacity / 2 {
            sketch.ensureCapacity(count + 1)
            if !climber.isStarted {
                // The entries a full cache will hold, from the half that holds count + 1 now.
                let entries = Int(Double(count + 1) * Double(capacity) / Double(max(1, totalCost + cost)))
                climber.start(capacity: capacity, entries: entries, initialShare: 1 - Self.percentMain)
            }
        }
        sketch.increment(hash)
        // An entry heavier than the whole window is the first to leave it.
        if cost > windowMaximum {
            queues.pushTail(slot, Self.window)
        } else {
            queues.pushHead(slot, Self.window)
        }
        return slot
    }

    @inline(__always)
    private mutating func evictEntries(sparing spared: Slot) -> Int {
        guard queues.weight(Self.window) > windowMaximum || totalCost > capacity else { return 0 }
        let candidates = evictFromWindow()
        return evictFromMain(candidates: candidates, sparing: spared)
    }

    /// Moves the window's oldest entries to the young end of probation while the window is over
    /// its maximum; returns how many moved (the candidates).
    private mutating func evictFromWindow() -> Int {
        var candidates = 0
        var node = queues.tail(Self.window)
        while queues.weight(Self.window) > windowMaximum {
            guard let current = node else { break }
            node = queues.newer(than: current)
            if queues.cost(of: current) != 0 {
                queues.remove(current)
                queues.pushHead(current, Self.probation)
                candidates += 1
            }
        }
        return candidates
    }

    /// Caffeine's `evictFromMain`: while over capacity, the candidates (probation's young end,
    /// then the window) meet the victims (probation's old end, then protected's, then the
    /// window's); the one with the lower frequency leaves. One deviation, for the tier's contract
    /// that a store is readable right after it: the `spared` entry (the one being stored) is
    /// never evicted; as a candidate it always wins, as a victim it is passed over.
    private mutating func evictFromMain(candidates startingCandidates: Int, sparing spared: Slot?) -> Int {
        var evicted = 0
        var candidates = startingCandidates
        var victimQueue = Self.probation
        var victim = queues.tail(Self.probation)
        var candidate = queues.head(Self.probation)
        while totalCost > capacity {
            if candidates == 0 { candidate = queues.head(Self.window) }
            guard let currentCandidate = candidate else {
                guard let currentVictim = victim else {
                    if victimQueue == Self.probation {
                        victim = queues.tail(Self.protected)
                        victimQueue = Self.protected
                        continue
                    } else if victimQueue == Self.protected {
                        victim = queues.tail(Self.window)
                        victimQueue = Self.window
                        continue
                    }
                    break
                }
                // Only a victim: it leaves.
                victim = queues.newer(than: currentVictim)
                if currentVictim == spared { continue }
                queues.free(currentVictim)
                evicted += 1
                continue
            }
            guard let currentVictim = victim else {
                // Only a candidate: it leaves.
                candidate = queues.older(than: currentCandidate)
                candidates -= 1
                if currentCandidate == spared { continue }
                queues.free(currentCandidate)
                evicted += 1
                continue
            }
            if currentVictim == currentCandidate {
                victim = queues.newer(than: currentVictim)
                candidates -= 1
                candidate = nil
                if currentCandidate == spared { continue }
                queues.free(currentCandidate)
                evicted += 1
                continue
            }
            if currentVictim == spared {
                victim = queues.newer(than: currentVictim)
                continue
            }
            if queues.cost(of: currentCandidate) > capacity {
                candidate = candidates > 0 ? queues.older(than: currentCandidate) : queues.newer(than: currentCandidate)
                candidates -= 1
                queues.free(currentCandidate)
                evicted += 1
                continue
            }
            candidates -= 1
            if currentCandidate == spared || admit(candidate: currentCandidate, victim: currentVictim) {
                victim = queues.newer(than: currentVictim)
                queues.free(currentVictim)
                candidate = queues.older(than: currentCandidate)
            } else {
                candidate = candidates > 0 ? queues.older(than: currentCandidate) : queues.newer(than: currentCandidate)
                queues.free(currentCandidate)
            }
            evicted += 1
        }
        return evicted
    }

    /// The candidate enters if the sketch counts it more often than the victim. A warm candidate
    /// (frequency above 5) that loses is still admitted once in 128 (Caffeine's defence against
    /// hash-collision attacks that inflate a victim's count), drawn from a fixed-seed generator so
    /// that the tier and the simulator draw alike.
    private mutating func admit(candidate: Slot, victim: Slot) -> Bool {
        let victimFrequency = sketch.frequency(queues.hash(of: victim))
        let candidateFrequency = sketch.frequency(queues.hash(of: candidate))
        if candidateFrequency > victimFrequency { return true }
        if candidateFrequency <= Self.admitHashDoSThreshold { return false }
        return random.next() & 127 == 0
    }

    /// Moves the window to the share the miniatures rank best, when they name a new one.
    @inline(__always)
    private mutating func adapt(_ hash: UInt64, cost: Int) {
        guard let share = climber.record(hash, cost: cost) else { return }
        resizeWindow(to: Int(share * Double(capacity)))
    }

    /// Sets the window's maximum (the main cache keeps its 80% protected share) and moves up to
    /// `queueTransferThreshold` entries across, as Caffeine's `increaseWindow` and
    /// `decreaseWindow` do; the rest follows as entries arrive and leave.
    private mutating func resizeWindow(to target: Int) {
        let target = min(capacity, max(1, target))
        if target > windowMaximum {
            var room = target - windowMaximum
            windowMaximum = target
            protectedMaximum = Int(Self.percentMainProtected * Double(capacity - windowMaximum))
            demoteFromProtected()
            for _ in 0..<Self.queueTransferThreshold {
                var moving = queues.tail(Self.probation)
                if let probationTail = moving, room >= queues.cost(of: probationTail) {
                    // The oldest probation entry fits in the room: it moves.
                } else {
                    moving = queues.tail(Self.protected)
                }
                guard let slot = moving, room >= queues.cost(of: slot) else { break }
                room -= queues.cost(of: slot)
                queues.remove(slot)
                queues.pushHead(slot, Self.window)
            }
        } else if target < windowMaximum {
            windowMaximum = target
            protectedMaximum = Int(Self.percentMainProtected * Double(capacity - windowMaximum))
            for _ in 0..<Self.queueTransferThreshold {
                guard queues.weight(Self.window) > windowMaximum,
                    let slot = queues.popTail(Self.window)
                else { break }
                queues.pushHead(slot, Self.probation)
            }
        }
    }

    /// Returns protected's overflow to probation (up to `queueTransferThreshold` entries); runs
    /// after every request, so the usual case (no overflow) returns at once.
    @inline(__always)
    private mutating func demoteFromProtected() {
        guard queues.weight(Self.protected) > protectedMaximum else { return }
        for _ in 0..<Self.queueTransferThreshold {
            guard queues.weight(Self.protected) > protectedMaximum,
                let demoted = queues.popTail(Self.protected)
            else { break }
            queues.pushHead(demoted, Self.probation)
        }
    }

    mutating func remove(_ key: CacheKey) {
        if let slot = queues.slot(of: key) { queues.free(slot) }
    }

    mutating func removeAll() {
        queues.removeAll()
        reset()
    }

    var keysByRetention: [CacheKey] {
        queues.keys(Self.protected) + queues.keys(Self.probation) + queues.keys(Self.window)
    }
}

/// SplitMix64 from a fixed seed: the admission's 1-in-128 draw, reproducible by the simulator.
package struct AdmissionRandom {
    private var state: UInt64 = 0x5EED_CAFE_F00D_D00D

    package init() {}

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var x = state
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return x ^ (x >> 31)
    }
}
