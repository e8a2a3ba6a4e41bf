/// W-TinyLFU (Einziger, Friedman & Manes, 2017), the policy of Caffeine: a small LRU "window" admits
/// every new object; objects leaving it must win a frequency contest (``FrequencySketch``) against
/// the victim of the main cache, a segmented LRU (20% probation, 80% protected).
///
/// The window starts at 1% of the capacity and is resized by Caffeine's hill climber: every
/// `10 × capacity` requests it compares the sample's hit ratio with the previous one and keeps
/// moving the window size in the direction that helped (steps of 6.25% of the capacity, decaying by
/// 0.98, restarting when the hit ratio changes by 5 points or more).
public struct WTinyLFUPolicy: EvictionPolicy {
    public static let name = "W-TinyLFU"
    private static let window: UInt8 = 1
    private static let probation: UInt8 = 2
    private static let protected: UInt8 = 3

    private var queues: ObjectQueues
    private var sketch: FrequencySketch
    private let capacity: UInt64
    private var windowLimit: UInt64
    private var protectedLimit: UInt64
    private var climber: HillClimber

    public init(context: PolicyContext) {
        queues = ObjectQueues(queueCount: 3, objectSizes: context.objectSizes)
        capacity = context.capacity
        let meanSize = max(1, context.objectSizes.isEmpty ? 1 : context.objectSizes.reduce(0) { $0 + UInt64($1) } / UInt64(context.objectCount))
        let expectedObjects = Int(min(UInt64(context.objectCount), max(1, context.capacity / meanSize)))
        sketch = FrequencySketch(expectedObjects: expectedObjects)
        windowLimit = max(1, context.capacity / 100)
        protectedLimit = (context.capacity - windowLimit) * 8 / 10
        climber = HillClimber(capacity: context.capacity, sampleSize: 10 * expectedObjects)
    }

    public mutating func access(_ object: UInt32, position: Int) -> Bool {
        sketch.increment(object)
        let hit: Bool
        switch queues.queue(of: object) {
        case Self.window:
            queues.moveToHead(object, Self.window)
            hit = true
        case Self.probation:
            queues.moveToHead(object, Self.protected)
            demoteProtectedOverflow()
            hit = true
        case Self.protected:
            queues.moveToHead(object, Self.protected)
            hit = true
        default:
            hit = false
            if queues.size(of: object) <= capacity {
                queues.pushHead(object, Self.window)
                evictFromWindow()
            }
        }
        if let adjustment = climber.record(hit: hit) { resizeWindow(by: adjustment) }
        return hit
    }

    private var mainWeight: UInt64 { queues.weight(Self.probation) + queues.weight(Self.protected) }

    /// Moves the window's overflow into probation. While the cache is then over capacity, each such
    /// candidate meets the main cache's victim (probation's oldest object, else protected's) and the
    /// less frequent of the two leaves.
    private mutating func evictFromWindow() {
        while queues.weight(Self.window) > windowLimit, let candidate = queues.popTail(Self.window) {
            queues.pushHead(candidate, Self.probation)
            while queues.weight(Self.window) + mainWeight > capacity, queues.queue(of: candidate) == Self.probation {
                var victim = queues.tail(Self.probation)
                if victim == candidate { victim = queues.tail(Self.protected) }
                guard let victim, sketch.frequency(candidate) > sketch.frequency(victim) else {
                    queues.remove(candidate)
                    break
                }
                queues.remove(victim)
            }
        }
    }

    private mutating func demoteProtectedOverflow() {
        while queues.weight(Self.protected) > protectedLimit, let oldest = queues.popTail(Self.protected) {
            queues.pushHead(oldest, Self.probation)
        }
    }

    private mutating func resizeWindow(by amount: Double) {
        let mainCapacity = capacity - windowLimit
        if amount > 0 {
            let step = min(UInt64(amount), protectedLimit, mainCapacity > 1 ? mainCapacity - 1 : 0)
            windowLimit += step
            protectedLimit -= step
            // The window grows into the main cache's space: its oldest objects move over.
            while queues.weight(Self.window) + 1 <= windowLimit, mainWeight > capacity - windowLimit,
                  let oldest = queues.popTail(Self.probation) ?? queues.popTail(Self.protected) {
                queues.pushHead(oldest, Self.window)
            }
        } else if amount < 0 {
            let step = min(UInt64(-amount), windowLimit > 1 ? windowLimit - 1 : 0)
            windowLimit -= step
            protectedLimit += step
            evictFromWindow()
        }
        demoteProtectedOverflow()
    }
}

/// Caffeine's hill climber for the window size.
struct HillClimber {
    private static let stepFraction = 0.0625
    private static let decay = 0.98
    private static let restartThreshold = 0.05

    private let capacity: Double
    private let sampleSize: Int
    private var hits = 0
    private var requests = 0
    private var previousHitRatio = 0.0
    private var stepSize: Double

    init(capacity: UInt64, sampleSize: Int) {
        self.capacity = Double(capacity)
        self.sampleSize = max(sampleSize, 1)
        stepSize = -Self.stepFraction * Double(capacity)
    }

    /// Counts one request; at the end of a sample returns how much to grow (positive) or shrink the window.
    mutating func record(hit: Bool) -> Double? {
        requests += 1
        if hit { hits += 1 }
        guard requests >= sampleSize else { return nil }
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
