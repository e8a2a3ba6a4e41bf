import Foundation
import Synchronization

/// Capacity tuning: hit-ratio curves per policy and the capacities they recommend.
///
/// LRU's curve is exact, from one pass (``ExactLRUCurve``); optionally SHARDS estimates it too and its
/// error against the exact curve is reported. Other policies are not stack algorithms, so their
/// curves come from parallel replays at a logarithmic grid of capacities.
public struct CapacityTuner: Sendable {
    public struct Options: Sendable {
        public var unit: CapacityUnit
        /// The hit ratio the recommendation aims for (0...1).
        public var targetHitRatio: Double
        /// Policies replayed on the grid besides LRU's exact curve.
        public var policies: [PolicyKind]
        /// Grid points between 0.1% and 100% of the footprint.
        public var gridPoints: Int
        /// Also estimate LRU's curve with SHARDS in this mode.
        public var sampling: SHARDS.Mode?
        public var parallelism: Int
        /// Keep every point of every curve (an exact curve has one per distinct stack distance,
        /// 272k on P12); otherwise curves are thinned to ``reportedPoints`` log-spaced points plus
        /// their crossing and knee.
        public var fullCurves: Bool = false

        public init(unit: CapacityUnit = .objects, targetHitRatio: Double = 0.9, policies: [PolicyKind] = [.lru, .s3fifo, .arc, .wtinylfu],
                    gridPoints: Int = 16, sampling: SHARDS.Mode? = nil, parallelism: Int = Simulator.defaultParallelism) {
            self.unit = unit
            self.targetHitRatio = targetHitRatio
            self.policies = policies
            self.gridPoints = gridPoints
            self.sampling = sampling
            self.parallelism = parallelism
        }
    }

    /// One policy's curve and what it recommends.
    public struct PolicyCurve: Sendable, Codable {
        public var policy: String
        public var curve: MissRatioCurve
        /// The smallest capacity reaching the target, nil when none does: exact for LRU's curve, within
        /// ``CapacityTuner/crossingTolerance`` of the crossing for replayed policies (refined by bisection).
        public var capacityForTarget: UInt64?
        /// The knee of the curve.
        public var knee: MissRatioCurve.Point?
        /// Where the curve came from: "exact (stack distances)", "SHARDS …", "replays".
        public var method: String
        public var seconds: Double
    }

    public struct Result: Sendable, Codable {
        public var trace: String
        public var requests: Int
        public var objects: Int
        public var footprint: UInt64
        public var unit: CapacityUnit
        public var targetHitRatio: Double
        public var curves: [PolicyCurve]
        /// SHARDS' mean absolute error against the exact LRU curve, when sampling ran.
        public var samplingError: Double?
        /// The best hit ratio any cache can reach: every request but the first of each object.
        public var compulsoryHitRatio: Double
    }

    public let options: Options

    public init(options: Options) {
        self.options = options
    }

    public func tune(_ trace: Trace, progress: (@Sendable (String, Double) -> Void)? = nil) throws(Simulator.UnitError) -> Result {
        let simulator = try Simulator(trace: trace, unit: options.unit)
        let target = options.targetHitRatio
        var curves: [PolicyCurve] = []

        let exactStart = ContinuousClock.now
        let exact = ExactLRUCurve.compute(trace, unit: options.unit) { progress?("exact LRU curve", $0) }
        let exactSeconds = Self.seconds(since: exactStart)
        curves.append(PolicyCurve(policy: "LRU", curve: exact, capacityForTarget: exact.smallestCapacity(reaching: target),
                                  knee: exact.knee, method: "exact (stack distances)", seconds: exactSeconds))
        var samplingError: Double?
        if let mode = options.sampling {
            progress?("SHARDS", 0)
            let start = ContinuousClock.now
            let sampled = SHARDS.compute(trace, unit: options.unit, mode: mode)
            let seconds = Self.seconds(since: start)
            samplingError = sampled.meanAbsoluteError(against: exact)
            curves.append(PolicyCurve(policy: "LRU (SHARDS)", curve: sampled, capacityForTarget: sampled.smallestCapacity(reaching: target),
                                      knee: sampled.knee, method: "SHARDS, \(mode)", seconds: seconds))
        }

        let footprint = options.unit == .bytes ? trace.footprintBytes : UInt64(trace.objectCount)
        let grid = Self.grid(footprint: footprint, points: options.gridPoints)
        let replayed = options.policies.filter { $0 != .lru }
        if !replayed.isEmpty {
            let start = ContinuousClock.now
            let results = simulator.replay(policies: replayed, capacities: grid, parallelism: options.parallelism) { done, total in
                progress?("replays", Double(done) / Double(total))
            }
            let gridCurves = replayed.map { policy in MissRatioCurve(results: results.filter { $0.policy == policy.displayName }) }
            // The grid only brackets each crossing; bisect inside the bracket with extra replays, one
            // policy per worker, so the reported capacity is within 1% of where the curve crosses.
            progress?("refining crossings", 0)
            let refined = Mutex([(capacity: UInt64?, points: [MissRatioCurve.Point])](repeating: (nil, []), count: replayed.count))
            DispatchQueue.concurrentPerform(iterations: replayed.count) { index in
                let policy = replayed[index]
                let outcome = Self.refineCrossing(of: gridCurves[index], target: target) { capacity in
                    simulator.replay(policy, capacity: capacity).hitRatio
                }
                refined.withLock { $0[index] = outcome }
            }
            let refinements = refined.withLock { $0 }
            let seconds = Self.seconds(since: start)
            for (index, policy) in replayed.enumerated() {
                let curve = MissRatioCurve(unit: gridCurves[index].unit, points: gridCurves[index].points + refinements[index].points)
                let extra = refinements[index].points.count
                curves.append(PolicyCurve(policy: policy.displayName, curve: curve, capacityForTarget: refinements[index].capacity,
                                          knee: gridCurves[index].knee,
                                          method: "replays at \(grid.count) capacities + \(extra) bisecting the crossing", seconds: seconds))
            }
        }
        if !options.fullCurves {
            for index in curves.indices {
                let crossing = curves[index].capacityForTarget.map { MissRatioCurve.Point(capacity: $0, hitRatio: curves[index].curve.hitRatio(at: $0)) }
                let kept = [crossing, curves[index].knee].compactMap { $0 }
                curves[index].curve = curves[index].curve.thinned(maximumPoints: Self.reportedPoints - kept.count - 2, keeping: kept)
            }
        }
        let compulsory = trace.requestCount == 0 ? 0 : Double(trace.requestCount - trace.objectCount) / Double(trace.requestCount)
        return Result(trace: trace.name, requests: trace.requestCount, objects: trace.objectCount, footprint: footprint,
                      unit: options.unit, targetHitRatio: target, curves: curves, samplingError: samplingError,
                      compulsoryHitRatio: compulsory)
    }

    /// The most points a curve keeps in a result unless ``Options/fullCurves`` is set.
    public static let reportedPoints = 2000

    /// The relative width to which ``refineCrossing(of:target:tolerance:hitRatio:)`` narrows a crossing.
    public static let crossingTolerance = 0.01

    /// Narrows where `curve` first reaches `target` by bisection between the last measured capacity
    /// below the target and the first at or above it, measuring `hitRatio` at each midpoint, until
    /// the bracket is at most `tolerance` of its upper end wide (or one unit).
    ///
    /// Returns the upper end of the final bracket (a capacity measured to reach the target, so the
    /// recommendation is never optimistic) and the points measured on the way; nil when no point of
    /// `curve` reaches the target. Costs about log2(bracket ratio / tolerance) calls of `hitRatio`.
    public static func refineCrossing(of curve: MissRatioCurve, target: Double, tolerance: Double = crossingTolerance,
                                      hitRatio: (UInt64) -> Double) -> (capacity: UInt64?, points: [MissRatioCurve.Point]) {
        guard let upperIndex = curve.points.firstIndex(where: { $0.hitRatio >= target }) else { return (nil, []) }
        var high = curve.points[upperIndex].capacity
        // A capacity of 0 holds nothing, so its hit ratio (0) is below any positive target.
        var low: UInt64 = upperIndex == 0 ? 0 : curve.points[upperIndex - 1].capacity
        var measured: [MissRatioCurve.Point] = []
        while high - low > 1, Double(high - low) > tolerance * Double(high) {
            let middle = low + (high - low) / 2
            let ratio = hitRatio(middle)
            measured.append(.init(capacity: middle, hitRatio: ratio))
            if ratio >= target { high = middle } else { low = middle }
        }
        return (high, measured)
    }

    /// `points` capacities spaced evenly on a log scale from 0.1% of the footprint to all of it.
    public static func grid(footprint: UInt64, points: Int) -> [UInt64] {
        let high = Double(max(footprint, 1))
        let low = max(1, high / 1000)
        let count = max(points, 2)
        var values: [UInt64] = []
        for index in 0..<count {
            let value = UInt64((low * pow(high / low, Double(index) / Double(count - 1))).rounded())
            if values.last != value { values.append(max(1, value)) }
        }
        return values
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        (ContinuousClock.now - start).inSeconds
    }
}
