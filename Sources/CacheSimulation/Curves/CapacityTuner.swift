import Foundation

/// Capacity tuning: hit-ratio curves per policy and the capacities they recommend.
///
/// LRU's curve is exact, from one pass (``ExactLRUCurve``); optionally SHARDS estimates it too and its
/// error against the exact curve is reported. Other policies are not stack algorithms: their curves
/// come from miniature simulations (``MiniatureSimulation``, the default: sampled replays at a
/// fraction of the cost) or from full replays, at a logarithmic grid of capacities. Either way each
/// policy's crossing of the target is then found by bisection with full replays, to within
/// ``crossingTolerance``.
public struct CapacityTuner: Sendable {
    /// What to tune for and how.
    public struct Options: Sendable {
        /// Whether capacities count objects or bytes.
        public var unit: CapacityUnit
        /// The hit ratio the recommendation aims for (0...1).
        public var targetHitRatio: Double
        /// Policies replayed on the grid besides LRU's exact curve: built-ins or your own
        /// (`SimulatedPolicy(LFUPolicy.self)`).
        public var policies: [SimulatedPolicy]
        /// Grid points between 0.1% and 100% of the footprint.
        public var gridPoints: Int
        /// Also estimate LRU's curve with SHARDS in this mode.
        public var sampling: SHARDS.Mode?
        /// How many replays run at once (the machine's cores by default).
        public var parallelism: Int
        /// Keep every point of every curve (an exact curve has one per distinct stack distance,
        /// 272k on P12); otherwise curves are thinned to ``reportedPoints`` log-spaced points plus
        /// their crossing and knee.
        public var fullCurves: Bool = false
        /// How the curves of policies other than LRU are drawn.
        public var curveMethod: CurveMethod = .miniature(MiniatureSimulation.Options())
        /// With miniature curves: also replay the full grid and report each curve's mean absolute
        /// error against it (costs what the miniature saves).
        public var compareWithFullReplays: Bool = false

        /// Options; by default objects, a 90% target, LRU, S3-FIFO, ARC and W-TinyLFU on 16 grid points.
        public init(
            unit: CapacityUnit = .objects, targetHitRatio: Double = 0.9,
            policies: [SimulatedPolicy] = [.lru, .s3fifo, .arc, .wtinylfu],
            gridPoints: Int = 16, sampling: SHARDS.Mode? = nil, parallelism: Int = Simulator.defaultParallelism
        ) {
            self.unit = unit
            self.targetHitRatio = targetHitRatio
            self.policies = policies
            self.gridPoints = gridPoints
            self.sampling = sampling
            self.parallelism = parallelism
        }
    }

    /// Where the curves of policies other than LRU come from.
    public enum CurveMethod: Sendable, Hashable {
        /// Sampled, scaled-down replays (``MiniatureSimulation``).
        case miniature(MiniatureSimulation.Options)
        /// A full replay at every grid capacity.
        case fullReplays
    }

    /// One policy's curve and what it recommends.
    public struct PolicyCurve: Sendable, Codable {
        /// The policy's name.
        public var policy: String
        /// The policy's hit-ratio curve.
        public var curve: MissRatioCurve
        /// The smallest capacity reaching the target, nil when none does: exact for LRU's curve, within
        /// ``CapacityTuner/crossingTolerance`` of the crossing for replayed policies (refined by bisection).
        public var capacityForTarget: UInt64?
        /// The knee of the curve.
        public var knee: MissRatioCurve.Point?
        /// Where the curve came from: "exact (stack distances)", "SHARDS …", "replays".
        public var method: String
        /// Seconds spent drawing the curve (for replayed policies: the whole batch of them, which
        /// runs in parallel).
        public var seconds: Double
        /// Seconds spent refining the crossing with full replays.
        public var refiningSeconds: Double? = nil
        /// A miniature curve's mean absolute error against full replays at the same capacities,
        /// when ``Options/compareWithFullReplays`` asked for it.
        public var errorAgainstFullReplays: Double? = nil
    }

    /// What a tuning run found, as `tune` reports it.
    public struct Result: Sendable, Codable {
        /// The trace's name.
        public var trace: String
        /// The trace's requests.
        public var requests: Int
        /// The trace's distinct objects.
        public var objects: Int
        /// The trace's footprint in the tuning's unit.
        public var footprint: UInt64
        /// Whether capacities count objects or bytes.
        public var unit: CapacityUnit
        /// The target the capacities were sought for.
        public var targetHitRatio: Double
        /// One curve per policy, LRU's first.
        public var curves: [PolicyCurve]
        /// SHARDS' mean absolute error against the exact LRU curve, when sampling ran.
        public var samplingError: Double?
        /// The best hit ratio any cache can reach: every request but the first of each object.
        public var compulsoryHitRatio: Double
        /// Bytes the trace's sizes had added to each object (``Trace/addingEntryOverhead(_:)``),
        /// which the footprint and byte capacities count; `nil` for the trace's own sizes.
        public var entryOverheadBytes: UInt32? = nil
    }

    /// What the tuner was created with.
    public let options: Options

    /// A tuner with `options`.
    public init(options: Options) {
        self.options = options
    }

    /// Draws every policy's curve over `trace` and finds each one's capacity for the target;
    /// `progress` hears each stage's name and its completed share (0...1).
    public func tune(
        _ trace: Trace, progress: (@Sendable (String, Double) -> Void)? = nil
    ) throws(Simulator.UnitError) -> Result {
        let simulator = try Simulator(trace: trace, unit: options.unit)
        let target = options.targetHitRatio
        var curves: [PolicyCurve] = []

        let exactStart = ContinuousClock.now
        let exact = ExactLRUCurve.compute(trace, unit: options.unit) { progress?("exact LRU curve", $0) }
        let exactSeconds = Self.seconds(since: exactStart)
        curves.append(
            PolicyCurve(
                policy: "LRU", curve: exact, capacityForTarget: exact.smallestCapacity(reaching: target),
                knee: exact.knee, method: "exact (stack distances)", seconds: exactSeconds))
        var samplingError: Double?
        if let mode = options.sampling {
            progress?("SHARDS", 0)
            let start = ContinuousClock.now
            let sampled = SHARDS.compute(trace, unit: options.unit, mode: mode)
            let seconds = Self.seconds(since: start)
            samplingError = sampled.meanAbsoluteError(against: exact)
            curves.append(
                PolicyCurve(
                    policy: "LRU (SHARDS)", curve: sampled,
                    capacityForTarget: sampled.smallestCapacity(reaching: target),
                    knee: sampled.knee, method: "SHARDS, \(mode)", seconds: seconds))
        }

        let footprint = options.unit == .bytes ? trace.footprintBytes : UInt64(trace.objectCount)
        let grid = Self.grid(footprint: footprint, points: options.gridPoints)
        let replayed = options.policies.filter { $0 != .lru }
        if !replayed.isEmpty {
            curves += try replayedCurves(
                replayed, trace: trace, simulator: simulator, grid: grid, footprint: footprint, progress: progress)
        }
        // A user's policy named "LRU" beside the exact curve, or two sharing a name: the report
        // finds a curve's line and rows by its name. The exact and SHARDS curves and the built-ins
        // keep theirs.
        let builtIn = Array(repeating: true, count: curves.count - replayed.count) + replayed.map { $0.kind != nil }
        for (index, name) in DistinctNames.apart(curves.map(\.policy), keeping: builtIn).enumerated() {
            curves[index].policy = name
        }
        if !options.fullCurves {
            for index in curves.indices {
                let crossing = curves[index].capacityForTarget.map {
                    MissRatioCurve.Point(capacity: $0, hitRatio: curves[index].curve.hitRatio(at: $0))
                }
                let kept = [crossing, curves[index].knee].compactMap { $0 }
                curves[index].curve = curves[index].curve.thinned(
                    maximumPoints: Self.reportedPoints - kept.count - 2, keeping: kept)
            }
        }
        let compulsory =
            trace.requestCount == 0 ? 0 : Double(trace.requestCount - trace.objectCount) / Double(trace.requestCount)
        return Result(
            trace: trace.name, requests: trace.requestCount, objects: trace.objectCount, footprint: footprint,
            unit: options.unit, targetHitRatio: target, curves: curves, samplingError: samplingError,
            compulsoryHitRatio: compulsory, entryOverheadBytes: trace.entryOverhead > 0 ? trace.entryOverhead : nil)
    }

    /// A crossing found by bisection, and the points measured on the way.
    private typealias Refinement = (capacity: UInt64?, points: [MissRatioCurve.Point])

    /// The curves of policies that are not stack algorithms, from miniature simulations or full
    /// replays on `grid`, each with its crossing refined by bisection with full replays.
    private func replayedCurves(
        _ replayed: [SimulatedPolicy], trace: Trace, simulator: Simulator, grid: [UInt64], footprint: UInt64,
        progress: (@Sendable (String, Double) -> Void)?
    ) throws(Simulator.UnitError) -> [PolicyCurve] {
        let target = options.targetHitRatio
        let start = ContinuousClock.now
        let gridCurves: [MissRatioCurve]
        var fullCurves: [MissRatioCurve]?
        let method: String
        switch options.curveMethod {
        case .fullReplays:
            gridCurves = fullReplayCurves(replayed, simulator: simulator, grid: grid, progress: progress)
            method = "replays at \(grid.count) capacities"
        case .miniature(let miniatureOptions):
            progress?("miniature simulations", 0)
            let miniature = try MiniatureSimulation(
                trace: trace, unit: options.unit, options: miniatureOptions, capacities: grid)
            gridCurves = miniature.curves(policies: replayed, capacities: grid, parallelism: options.parallelism)
            method = "\(miniatureOptions) at \(grid.count) capacities"
        }
        let curveSeconds = Self.seconds(since: start)
        if case .miniature = options.curveMethod, options.compareWithFullReplays {
            fullCurves = fullReplayCurves(replayed, simulator: simulator, grid: grid, progress: progress)
        }
        // A curve only brackets the crossing (and a miniature one only estimates it); bisect with full
        // replays, one policy per worker, so the reported capacity is within 1% of where the true
        // curve crosses.
        progress?("refining crossings", 0)
        let refineStart = ContinuousClock.now
        let refinements = concurrentMap(count: replayed.count, parallelism: min(options.parallelism, replayed.count)) {
            index -> Refinement in
            let policy = replayed[index]
            let hitRatio = { (capacity: UInt64) in simulator.replay(policy, capacity: capacity).hitRatio }
            switch options.curveMethod {
            case .fullReplays:
                return Self.refineCrossing(of: gridCurves[index], target: target, hitRatio: hitRatio)
            case .miniature:
                let estimate = gridCurves[index].smallestCapacity(reaching: target) ?? footprint
                return Self.refineCrossing(near: estimate, upperBound: footprint, target: target, hitRatio: hitRatio)
            }
        }
        let refiningSeconds = Self.seconds(since: refineStart)
        return replayed.indices.map { index in
            // The bisection's full replays join the curve, so that near the crossing the chart shows
            // what the reported capacity was measured on.
            let curve = MissRatioCurve(
                unit: gridCurves[index].unit, points: gridCurves[index].points + refinements[index].points)
            return PolicyCurve(
                policy: replayed[index].name, curve: curve, capacityForTarget: refinements[index].capacity,
                knee: gridCurves[index].knee,
                method: method + ", crossing bisected by \(refinements[index].points.count) full replays",
                seconds: curveSeconds, refiningSeconds: refiningSeconds,
                errorAgainstFullReplays: fullCurves.map { gridCurves[index].meanAbsoluteError(against: $0[index]) })
        }
    }

    private func fullReplayCurves(
        _ policies: [SimulatedPolicy], simulator: Simulator, grid: [UInt64],
        progress: (@Sendable (String, Double) -> Void)?
    ) -> [MissRatioCurve] {
        let results = simulator.replay(policies: policies, capacities: grid, parallelism: options.parallelism) {
            done, total in
            progress?("replays", Double(done) / Double(total))
        }
        // Policy by policy, each over the grid (`replay(policies:capacities:)`'s order): by
        // position, not by name, which two policies of a user's may share.
        return policies.indices.map { index in
            MissRatioCurve(results: Array(results[index * grid.count..<(index + 1) * grid.count]))
        }
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
    public static func refineCrossing(
        of curve: MissRatioCurve, target: Double, tolerance: Double = crossingTolerance,
        hitRatio: (UInt64) -> Double
    ) -> (capacity: UInt64?, points: [MissRatioCurve.Point]) {
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

    /// Finds where a curve known only by `hitRatio` first reaches `target`, starting from an
    /// estimate (a miniature curve's crossing): steps of 25% up or down from `estimate` until the
    /// target is bracketed, then bisection as in ``refineCrossing(of:target:tolerance:hitRatio:)``.
    /// Nil when even `upperBound` does not reach the target.
    public static func refineCrossing(
        near estimate: UInt64, upperBound: UInt64, target: Double, tolerance: Double = crossingTolerance,
        hitRatio: (UInt64) -> Double
    ) -> (capacity: UInt64?, points: [MissRatioCurve.Point]) {
        var measured: [MissRatioCurve.Point] = []
        func reaches(_ capacity: UInt64) -> Bool {
            // A capacity of 0 holds nothing, so its hit ratio (0) is below any positive target.
            guard capacity > 0 else { return false }
            let ratio = hitRatio(capacity)
            measured.append(.init(capacity: capacity, hitRatio: ratio))
            return ratio >= target
        }
        let upperBound = max(upperBound, 1)
        var high = min(max(estimate, 1), upperBound)
        var low: UInt64
        if reaches(high) {
            low = high - high / 5 - (high < 5 ? 1 : 0)
            while reaches(low) {
                high = low
                low = low - low / 5 - (low < 5 ? 1 : 0)
            }
        } else {
            repeat {
                low = high
                guard high < upperBound else { return (nil, measured) }
                high = min(upperBound, high + max(1, high / 4))
            } while !reaches(high)
        }
        while high - low > 1, Double(high - low) > tolerance * Double(high) {
            let middle = low + (high - low) / 2
            if reaches(middle) { high = middle } else { low = middle }
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
