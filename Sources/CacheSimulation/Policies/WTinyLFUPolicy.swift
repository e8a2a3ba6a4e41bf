import TierCache

/// W-TinyLFU (Einziger, Friedman & Manes, 2017), following Caffeine's `BoundedLocalCache` for a
/// weighted cache, rule for rule as `MemoryTier`'s `.wTinyLFU` (a test replays traces through both
/// and compares every hit). The frequency sketch is the tier's (`TinyLFUSketch`, shared).
///
/// New objects enter an LRU window (1% of the capacity at first). Objects leaving the window
/// become candidates at the young end of the main cache's probation segment; while the cache is
/// over capacity, the oldest probation object (the victim) and the candidate meet, and the one the
/// sketch counts less often leaves (the candidate on a tie; a warm candidate still wins 1 in 128).
/// A probation hit promotes to the protected segment (80% of the main cache), whose overflow
/// returns to probation. Caffeine's hill climber moves capacity between the window and the
/// protected segment after every sample of `10 × objects` requests; the sketch is sized, and
/// starts counting, once the cache is half full.
public struct WTinyLFUPolicy: EvictionPolicy {
    public static let name = "W-TinyLFU"
    private static let window: UInt8 = 1
    private static let probation: UInt8 = 2
    private static let protected: UInt8 = 3
    // Caffeine's constants.
    private static let percentMain = 0.99
    private static let percentMainProtected = 0.80
    private static let stepPercent = 0.0625
    private static let stepDecayRate = 0.98
    private static let restartThreshold = 0.05
    private static let queueTransferThreshold = 1_000
    private static let admitHashDoSThreshold = 5

    private var queues: ObjectQueues
    private var sketch = TinyLFUSketch()
    private let capacity: Int
    private var windowMaximum: Int
    private var protectedMaximum: Int
    private var hitsInSample = 0
    private var missesInSample = 0
    private var previousSampleHitRate = 0.0
    private var stepSize: Double
    private var adjustment = 0
    private var random = AdmissionRandom()

    public init(context: PolicyContext) {
        queues = ObjectQueues(queueCount: 3, objectSizes: context.objectSizes)
        capacity = Int(clamping: context.capacity)
        windowMaximum = capacity - Int(Self.percentMain * Double(capacity))
        protectedMaximum = Int(Self.percentMainProtected * Double(capacity - windowMaximum))
        stepSize = -Self.stepPercent * Double(capacity)
    }

    @inline(__always) private func weight(_ queue: UInt8) -> Int { Int(queues.weight(queue)) }
    @inline(__always) private func cost(of object: UInt32) -> Int { Int(queues.size(of: object)) }
    @inline(__always) private func hash(of object: UInt32) -> UInt64 { TinyLFUSketch.mix(object, 0) }
    private var totalCost: Int { weight(Self.window) + weight(Self.probation) + weight(Self.protected) }
    private var count: Int { queues.count(Self.window) + queues.count(Self.probation) + queues.count(Self.protected) }

    public mutating func access(_ object: UInt32, position: Int) -> Bool {
        if queues.queue(of: object) != ObjectQueues.none {
            onAccess(object)
            climb()
            return true
        }
        // An object larger than the cache is never admitted (the tier refuses it before its policy).
        guard cost(of: object) <= capacity else { return false }
        add(object)
        _ = evictFromMain(candidates: evictFromWindow(), sparing: object)
        climb()
        return false
    }

    /// Caffeine's `onAccess`: count the key, then move the object up its segment.
    private mutating func onAccess(_ object: UInt32) {
        sketch.increment(hash(of: object))
        switch queues.queue(of: object) {
        case Self.window: queues.moveToHead(object, Self.window)
        case Self.probation:
            // An object heavier than the protected segment stays in probation (`reorderProbation`).
            let segment = cost(of: object) > protectedMaximum ? Self.probation : Self.protected
            queues.moveToHead(object, segment)
        default: queues.moveToHead(object, Self.protected)
        }
        hitsInSample += 1
    }

    /// Caffeine's `AddTask`: the object joins the window, the sketch is sized once the cache is
    /// half full, and the key is counted.
    private mutating func add(_ object: UInt32) {
        let size = cost(of: object)
        if totalCost + size >= capacity / 2 {
            sketch.ensureCapacity(count + 1)
        }
        sketch.increment(hash(of: object))
        missesInSample += 1
        // An object heavier than the whole window is the first to leave it.
        if size > windowMaximum {
            queues.pushTail(object, Self.window)
        } else {
            queues.pushHead(object, Self.window)
        }
    }

    /// Moves the window's oldest objects to the young end of probation while the window is over
    /// its maximum; returns how many moved (the candidates).
    private mutating func evictFromWindow() -> Int {
        var candidates = 0
        var node = queues.tail(Self.window)
        while weight(Self.window) > windowMaximum {
            guard let current = node else { break }
            node = queues.newer(than: current)
            if cost(of: current) != 0 {
                queues.remove(current)
                queues.pushHead(current, Self.probation)
                candidates += 1
            }
        }
        return candidates
    }

    /// Caffeine's `evictFromMain`: while over capacity, the candidates (probation's young end,
    /// then the window) meet the victims (probation's old end, then protected's, then the
    /// window's); the one with the lower frequency leaves. As in the tier (whose contract is that
    /// a store is readable right after it), the object being added is never evicted: as a
    /// candidate it always wins, as a victim it is passed over.
    private mutating func evictFromMain(candidates startingCandidates: Int, sparing spared: UInt32?) -> Int {
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
                victim = queues.newer(than: currentVictim)
                if currentVictim == spared { continue }
                queues.remove(currentVictim)
                evicted += 1
                continue
            }
            guard let currentVictim = victim else {
                candidate = queues.older(than: currentCandidate)
                candidates -= 1
                if currentCandidate == spared { continue }
                queues.remove(currentCandidate)
                evicted += 1
                continue
            }
            if currentVictim == currentCandidate {
                victim = queues.newer(than: currentVictim)
                candidates -= 1
                candidate = nil
                if currentCandidate == spared { continue }
                queues.remove(currentCandidate)
                evicted += 1
                continue
            }
            if currentVictim == spared {
                victim = queues.newer(than: currentVictim)
                continue
            }
            if cost(of: currentCandidate) > capacity {
                candidate = candidates > 0 ? queues.older(than: currentCandidate) : queues.newer(than: currentCandidate)
                candidates -= 1
                queues.remove(currentCandidate)
                evicted += 1
                continue
            }
            candidates -= 1
            if currentCandidate == spared || admit(candidate: currentCandidate, victim: currentVictim) {
                victim = queues.newer(than: currentVictim)
                queues.remove(currentVictim)
                candidate = queues.older(than: currentCandidate)
            } else {
                candidate = candidates > 0 ? queues.older(than: currentCandidate) : queues.newer(than: currentCandidate)
                queues.remove(currentCandidate)
            }
            evicted += 1
        }
        return evicted
    }

    private mutating func admit(candidate: UInt32, victim: UInt32) -> Bool {
        let victimFrequency = sketch.frequency(hash(of: victim))
        let candidateFrequency = sketch.frequency(hash(of: candidate))
        if candidateFrequency > victimFrequency { return true }
        if candidateFrequency <= Self.admitHashDoSThreshold { return false }
        return random.next() & 127 == 0
    }

    /// Caffeine's `climb`.
    private mutating func climb() {
        determineAdjustment()
        demoteFromProtected()
        if adjustment > 0 {
            increaseWindow()
        } else if adjustment < 0 {
            decreaseWindow()
        }
    }

    private mutating func determineAdjustment() {
        guard sketch.isInitialized else {
            previousSampleHitRate = 0
            missesInSample = 0
            hitsInSample = 0
            return
        }
        let requestCount = hitsInSample + missesInSample
        guard requestCount >= sketch.sampleSize else { return }
        let hitRate = Double(hitsInSample) / Double(requestCount)
        let hitRateChange = hitRate - previousSampleHitRate
        let amount = hitRateChange >= 0 ? stepSize : -stepSize
        let nextStepSize = abs(hitRateChange) >= Self.restartThreshold
            ? Self.stepPercent * Double(capacity) * (amount >= 0 ? 1 : -1)
            : Self.stepDecayRate * amount
        previousSampleHitRate = hitRate
        adjustment = Int(amount)
        stepSize = nextStepSize
        missesInSample = 0
        hitsInSample = 0
    }

    private mutating func increaseWindow() {
        guard protectedMaximum != 0 else { return }
        var quota = min(adjustment, protectedMaximum)
        protectedMaximum -= quota
        windowMaximum += quota
        demoteFromProtected()
        for _ in 0..<Self.queueTransferThreshold {
            var candidate = queues.tail(Self.probation)
            if let probationTail = candidate, quota >= cost(of: probationTail) {
                // The oldest probation object fits in the quota: it moves.
            } else {
                candidate = queues.tail(Self.protected)
            }
            guard let moving = candidate else { break }
            let size = cost(of: moving)
            if quota < size { break }
            quota -= size
            queues.remove(moving)
            queues.pushHead(moving, Self.window)
        }
        protectedMaximum += quota
        windowMaximum -= quota
        adjustment = quota
    }

    private mutating func decreaseWindow() {
        guard windowMaximum > 1 else { return }
        var quota = min(-adjustment, max(0, windowMaximum - 1))
        protectedMaximum += quota
        windowMaximum -= quota
        for _ in 0..<Self.queueTransferThreshold {
            guard let moving = queues.tail(Self.window) else { break }
            let size = cost(of: moving)
            if quota < size { break }
            quota -= size
            queues.remove(moving)
            queues.pushHead(moving, Self.probation)
        }
        protectedMaximum -= quota
        windowMaximum += quota
        adjustment = -quota
    }

    private mutating func demoteFromProtected() {
        for _ in 0..<Self.queueTransferThreshold {
            guard weight(Self.protected) > protectedMaximum,
                  let demoted = queues.popTail(Self.protected) else { break }
            queues.pushHead(demoted, Self.probation)
        }
    }
}
