/// Hit-ratio curves of any policy from scaled-down replays: miniature simulation (Waldspurger,
/// Saemundsson, Ahmad & Park, "Cache Modeling and Optimization using Miniature Simulations",
/// USENIX ATC 2017).
///
/// SHARDS' spatial sampling works for any policy, not only for stack algorithms: keep every request
/// of the objects whose hash falls below a threshold (a fraction `R` of the objects, independent of
/// how often they are requested), and replay that sample through a cache scaled by the same `R`.
/// The sample's hit ratio estimates the full trace's at the full capacity, at about `R` of the cost.
///
/// A scaled cache of a handful of objects is noisy, so each capacity gets the smallest rate (at
/// least `rate`, at most 1) at which the scaled cache still holds ``Options/minimumScaledObjects``
/// objects on average: small capacities are simulated at higher rates, large ones at `rate`. The
/// rate is exactly that, not rounded up to `rate × 2^k` as it once was: doubling gave scaled caches
/// anywhere from the minimum to twice it, so the accuracy it bought varied with where a capacity
/// fell, and on P12's 16-capacity grid it replayed 45% of the requests where 31% meet the same
/// minimum. The samples are nested (a lower rate keeps a subset of a higher rate's objects), built
/// once per rate for the capacities given at init, and shared by every policy.
///
/// The default minimum, 384 objects, is what keeps every built-in policy within 0.01 mean absolute
/// error of full replays on P12 (the Validation package checks it): SIEVE, the policy most sensitive
/// to a small scaled cache, measured 0.0101 at 256 exact and 0.0098 at 384; the others stay under
/// 0.006.
///
/// ```swift
/// let miniature = try MiniatureSimulation(trace: trace, unit: .objects)
/// let curves = miniature.curves(policies: [.s3fifo, .arc], capacities: [1_000, 10_000, 100_000])
/// ```
public struct MiniatureSimulation: Sendable {
    /// The sampling rate and the smallest scaled cache.
    public struct Options: Sendable, Hashable, CustomStringConvertible {
        /// The lowest sampling rate, used wherever the scaled cache stays large enough
        /// (``SHARDS/smallestRate``...1; ``MiniatureSimulation`` clamps a rate outside that to it,
        /// and counts NaN as 1).
        public var rate: Double
        /// How many objects (on average, by the trace's mean object size in byte mode) a scaled
        /// cache must hold; smaller capacities are simulated at a higher rate. From 1 to
        /// ``largestMinimumScaledObjects``: ``MiniatureSimulation`` clamps a value outside that
        /// range to it, and counts NaN as the largest (like a rate of NaN, full replays).
        public var minimumScaledObjects: Double

        /// The largest ``minimumScaledObjects``: 2^32 − 1, as many objects as a trace can hold, so
        /// a larger minimum would change nothing (every capacity is replayed in full).
        public static let largestMinimumScaledObjects = Double(UInt32.max)

        /// Options; by default a 1% sample and scaled caches of at least 384 objects.
        public init(rate: Double = 0.01, minimumScaledObjects: Double = 384) {
            self.rate = rate
            self.minimumScaledObjects = minimumScaledObjects
        }

        /// The options in words, for reports.
        public var description: String {
            "miniature simulation, rate \(rate), scaled caches of ≥ \(ChartFormat.fixed(minimumScaledObjects, digits: 0)) objects"
        }
    }

    /// The whole trace the samples are drawn from.
    public let trace: Trace
    /// Whether capacities count objects or bytes.
    public let unit: CapacityUnit
    /// The sampling options.
    public let options: Options
    private let meanObjectSize: Double
    /// The whole trace's simulator: rate 1, and capacities not announced at init.
    private let full: Simulator
    /// The sampled traces' simulators by sampling threshold (out of ``SHARDS``' modulus).
    private let samples: [UInt64: Simulator]

    /// Prepares the samples every capacity in `capacities` needs. Without `capacities`, each
    /// ``hitRatio(_:capacity:)`` draws its own sample (one pass over the trace).
    public init(
        trace: Trace, unit: CapacityUnit, options: Options = Options(), capacities: [UInt64]? = nil
    ) throws(Simulator.UnitError) {
        let full = try Simulator(trace: trace, unit: unit)
        self.full = full
        self.trace = trace
        self.unit = unit
        // NaN passes through min and max: it asks for no sampling, as rate 1 does.
        let largest = Options.largestMinimumScaledObjects
        self.options = Options(
            rate: options.rate.isNaN ? 1 : min(max(options.rate, 1.0 / Double(SHARDS.modulus)), 1),
            minimumScaledObjects: options.minimumScaledObjects.isNaN
                ? largest : min(max(options.minimumScaledObjects, 1), largest))
        meanObjectSize =
            unit == .bytes && trace.objectCount > 0 ? Double(trace.footprintBytes) / Double(trace.objectCount) : 1
        var thresholds = Set<UInt64>()
        for capacity in capacities ?? [] {
            thresholds.insert(Self.threshold(for: capacity, options: self.options, meanObjectSize: meanObjectSize))
        }
        var samples: [UInt64: Simulator] = [:]
        for threshold in thresholds where threshold < SHARDS.modulus {
            samples[threshold] = try Simulator(trace: Self.sample(trace, threshold: threshold), unit: unit)
        }
        self.samples = samples
    }

    /// The sampling rate used for `capacity`: the smallest rate, from `rate` to 1, whose scaled
    /// cache holds ``Options/minimumScaledObjects`` objects on average.
    public func rate(for capacity: UInt64) -> Double {
        Double(Self.threshold(for: capacity, options: options, meanObjectSize: meanObjectSize)) / Double(SHARDS.modulus)
    }

    /// The sampling threshold (out of ``SHARDS``' modulus) of the rate ``rate(for:)`` describes.
    static func threshold(for capacity: UInt64, options: Options, meanObjectSize: Double) -> UInt64 {
        let objects = Double(capacity) / max(meanObjectSize, 1)
        let rate = objects > 0 ? max(options.rate, options.minimumScaledObjects / objects) : 1
        return threshold(rate: min(rate, 1))
    }

    /// Rounded up, so that a scaled cache never falls below the minimum by rounding. A rate of
    /// NaN (which fails `rate < 1`) is the whole trace, as 1 is.
    static func threshold(rate: Double) -> UInt64 {
        guard rate < 1 else { return SHARDS.modulus }
        return max(1, UInt64((max(rate, 0) * Double(SHARDS.modulus)).rounded(.up)))
    }

    /// The requests of the objects whose hash is below `threshold`, renumbered densely, sizes kept.
    static func sample(_ trace: Trace, threshold: UInt64) -> Trace {
        var newID = [UInt32](repeating: UInt32.max, count: trace.objectCount)
        var sizes: [UInt32] = []
        for object in 0..<trace.objectCount where SHARDS.hash(UInt64(object)) < threshold {
            newID[object] = UInt32(sizes.count)
            sizes.append(trace.objectSizes[object])
        }
        var requests: [UInt32] = []
        requests.reserveCapacity(Int(Double(trace.requestCount) * Double(threshold) / Double(SHARDS.modulus) * 1.2))
        trace.requests.withUnsafeBufferPointer { all in
            newID.withUnsafeBufferPointer { newID in
                for object in all {
                    let id = newID[Int(object)]
                    guard id != UInt32.max else { continue }
                    requests.append(id)
                }
            }
        }
        let rate = Double(threshold) / Double(SHARDS.modulus)
        return Trace(
            name: "\(trace.name) (sampled at \(rate))", requests: requests, objectSizes: sizes,
            hasSizes: trace.hasSizes)
    }

    /// The estimated hit ratio of `policy` at `capacity`: the sample's hit ratio in a cache scaled
    /// by the sample's rate.
    public func hitRatio(_ policy: SimulatedPolicy, capacity: UInt64) -> Double {
        let threshold = Self.threshold(for: capacity, options: options, meanObjectSize: meanObjectSize)
        // A capacity not announced at init draws its sample now. Rate 1, or a sample that caught
        // no request: the whole trace, simulated rather than guessed.
        let sample =
            threshold < SHARDS.modulus
            ? samples[threshold] ?? (try? Simulator(trace: Self.sample(trace, threshold: threshold), unit: unit)) : nil
        guard let sample, sample.trace.requestCount > 0 else {
            return full.replay(policy, capacity: capacity).hitRatio
        }
        let scaled = max(1, UInt64((Double(capacity) * Double(threshold) / Double(SHARDS.modulus)).rounded()))
        return sample.replay(policy, capacity: scaled).hitRatio
    }

    /// The curves of `policies` at `capacities`, replayed `parallelism` at a time; in the order of `policies`.
    public func curves(
        policies: [SimulatedPolicy], capacities: [UInt64], parallelism: Int = Simulator.defaultParallelism
    ) -> [MissRatioCurve] {
        let jobs = policies.indices.flatMap { policy in capacities.map { (policy, $0) } }
        let measured = concurrentMap(count: jobs.count, parallelism: parallelism) { index in
            hitRatio(policies[jobs[index].0], capacity: jobs[index].1)
        }
        return policies.indices.map { policy in
            MissRatioCurve(
                unit: unit,
                points: jobs.indices.filter { jobs[$0].0 == policy }.map {
                    MissRatioCurve.Point(capacity: jobs[$0].1, hitRatio: measured[$0])
                })
        }
    }
}
