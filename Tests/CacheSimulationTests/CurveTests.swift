import Foundation
import Testing

@testable import CacheSimulation

@Suite struct CurveTests {
    /// SHARDS' adjustment goes to the smallest distance; a positive one (a sample that took fewer
    /// requests than its rate expects) made a point of hits at capacity 0.
    @Test(arguments: [DistanceHistogram.Layout.linear(width: 1), .logarithmic])
    func noCurveHitsAtCapacityZero(layout: DistanceHistogram.Layout) throws {
        var histogram = DistanceHistogram(layout: layout)
        for distance: UInt64 in [1, 2, 2, 5] { histogram.record(distance: distance) }
        histogram.record(distance: nil)
        histogram.adjustSmallest(by: 2)
        let points = histogram.curve(unit: .objects).points
        #expect(points.allSatisfy { $0.capacity > 0 })
        // The adjustment still counts, from the smallest capacity on: (2 + 1) of 7 at capacity 1.
        let first = try #require(points.first)
        #expect(first.capacity == 1 && abs(first.hitRatio - 3.0 / 7) < 1e-12)
    }

    @Test(arguments: [CapacityUnit.objects, .bytes])
    func theExactCurveEqualsLRUReplaysAtEveryCapacity(unit: CapacityUnit) throws {
        let trace = try skewedTrace(count: 20_000, keys: 3_000, sized: unit == .bytes, seed: 11)
        let curve = ExactLRUCurve.compute(trace, unit: unit)
        let simulator = try Simulator(trace: trace, unit: unit)
        let footprint = unit == .bytes ? trace.footprintBytes : UInt64(trace.objectCount)
        let width = unit == .objects ? 1 : max(1, (footprint + 65_535) / 65_536)
        for capacity in CapacityTuner.grid(footprint: footprint, points: 12) {
            let aligned = capacity / width * width  // byte-mode curves are exact at bucket boundaries
            #expect(curve.hitRatio(at: aligned) == simulator.replay(.lru, capacity: aligned).hitRatio, "at \(aligned)")
        }
    }

    @Test func distancesSurviveTheTimeRenumbering() throws {
        // Few objects, many requests: the recency index compacts its time axis many times.
        let trace = try skewedTrace(count: 50_000, keys: 40, sized: false, seed: 5)
        let curve = ExactLRUCurve.compute(trace, unit: .objects)
        let simulator = try Simulator(trace: trace, unit: .objects)
        for capacity: UInt64 in [1, 5, 10, 20, 39] {
            #expect(curve.hitRatio(at: capacity) == simulator.replay(.lru, capacity: capacity).hitRatio)
        }
    }

    @Test func shardsAtFullRateIsExact() throws {
        let trace = try skewedTrace(count: 10_000, keys: 1_000, sized: false, seed: 2)
        let exact = ExactLRUCurve.compute(trace, unit: .objects)
        let sampled = SHARDS.compute(trace, unit: .objects, mode: .fixedRate(1))
        #expect(sampled.meanAbsoluteError(against: exact) < 1e-12)
    }

    /// A rate of NaN, which min and max let through, samples every key (as 1 does) instead of
    /// trapping in UInt64(_:).
    @Test func shardsAtANaNRateSamplesEveryKey() throws {
        #expect(SHARDS(mode: .fixedRate(.nan), unit: .objects).rate == 1)
        let trace = try skewedTrace(count: 10_000, keys: 1_000, sized: false, seed: 2)
        let exact = ExactLRUCurve.compute(trace, unit: .objects)
        let sampled = SHARDS.compute(trace, unit: .objects, mode: .fixedRate(.nan))
        #expect(sampled.meanAbsoluteError(against: exact) < 1e-12)
    }

    /// SHARDS-adj (Waldspurger et al., FAST '15): a sample that took more requests than
    /// its rate expects counts the difference off the smallest distance, so every hit ratio
    /// falls. The sample here is ten keys that all hash under a rate of 1/2, requested 100 times
    /// each: 1,000 sampled requests where 500 are expected, 990 of them hits once 20 (10 keys
    /// at the rate's scale) fit. Adjusted: (990 - 500) / 500 = 0.98. The count was clamped at 0
    /// while the total fell, so the curve said 990 / 500, shown as 1.
    @Test func shardsAdjustmentLowersAnOversampledCurve() throws {
        var sampler = SHARDS(mode: .fixedRate(0.5), unit: .objects, bucketWidth: 1)
        let threshold = SHARDS.modulus / 2
        let sampledKeys = (UInt64(0)...).lazy.filter { SHARDS.hash($0) < threshold }.prefix(10)
        for _ in 0..<100 {
            for key in sampledKeys { sampler.record(key: key, size: 1) }
        }
        let curve = sampler.curve()
        #expect(abs(curve.hitRatio(at: 20) - 0.98) < 1e-9, "\(curve.points)")
        #expect(curve.points.allSatisfy { (0...1).contains($0.hitRatio) })
    }

    @Test func fixedSizeShardsStaysWithinItsKeyBudget() throws {
        var sampler = SHARDS(mode: .fixedSize(maximumKeys: 64), unit: .objects)
        for key in 0..<100_000 { sampler.record(key: UInt64(key % 5_000), size: 1) }
        #expect(sampler.trackedKeys <= 64)
        #expect(sampler.rate < 0.05)
        let curve = sampler.curve()
        #expect(curve.points.allSatisfy { (0...1).contains($0.hitRatio) })
    }

    /// More tracked keys hashing to 0 than the budget set the threshold to 0: the rate fell to
    /// 0, every count was scaled to 0, and nothing was sampled again (a long-lived service's live
    /// sampler answered 0 at every capacity).
    @Test("Fixed-size SHARDS stops at the smallest rate, keeping the keys hashing to 0 past its budget")
    func fixedSizeShardsNeverSamplesNothing() {
        // Keys whose 24-bit sample hash is 0 (the hash's mixing inverted).
        let zeroHashKeys: [UInt64] = [0x0cd1_4bd4_2303_1708, 0x5d3b_a348_bc0c_1649, 0xa7fd_426b_c78f_4da8]
        #expect(zeroHashKeys.allSatisfy { SHARDS.hash($0) == 0 })
        var sampler = SHARDS(mode: .fixedSize(maximumKeys: 1), unit: .objects)
        for _ in 0..<2 { for key in zeroHashKeys { sampler.record(key: key, size: 1) } }
        #expect(sampler.rate == SHARDS.smallestRate && sampler.trackedKeys == 3)
        // The second round of the three keys hits (at distances scaled by the rate).
        #expect(sampler.curve().points.contains { $0.hitRatio > 0 })
    }

    @Test func curvesAnswerTheTuningQuestions() {
        let curve = MissRatioCurve(
            unit: .objects,
            points: [
                .init(capacity: 10, hitRatio: 0.2), .init(capacity: 100, hitRatio: 0.7),
                .init(capacity: 1_000, hitRatio: 0.8), .init(capacity: 10_000, hitRatio: 0.85),
            ])
        #expect(curve.hitRatio(at: 5) == 0)
        #expect(curve.hitRatio(at: 150) == 0.7)
        #expect(curve.smallestCapacity(reaching: 0.75) == 1_000)
        #expect(curve.smallestCapacity(reaching: 0.9) == nil)
        #expect(curve.knee?.capacity == 100 || curve.knee?.capacity == 1_000)
    }

    @Test func capacitiesParse() throws {
        #expect(try CapacitySpecification(parsing: "10%") == .fraction(0.1))
        #expect(try CapacitySpecification(parsing: "50000") == .objects(50_000))
        #expect(try CapacitySpecification(parsing: "64MiB") == .bytes(64 << 20))
        #expect(try CapacitySpecification(parsing: "1.5 GiB") == .bytes(3 << 29))
        #expect(try CapacitySpecification(parsing: "1.5GB") == .bytes(3 << 29))
        #expect(try CapacitySpecification(parsing: "2TiB") == .bytes(2 << 40))
        for bad in ["", "0", "-5", "150%", "abc", "12 parsecs", "0%"] {
            #expect(throws: CapacitySpecification.ParseError.self, "\(bad)") { try CapacitySpecification(parsing: bad) }
        }
        #expect(try CapacitySpecification.parseList("1%,10%,50000").count == 3)
    }

    @Test func theTunerRecommendsACapacityPerPolicy() throws {
        let trace = try skewedTrace(count: 20_000, keys: 2_000, sized: false, seed: 9)
        let tuner = CapacityTuner(
            options: .init(targetHitRatio: 0.5, policies: [.lru, .s3fifo], gridPoints: 8, sampling: .fixedRate(0.5)))
        let result = try tuner.tune(trace)
        #expect(result.curves.map(\.policy) == ["LRU", "LRU (SHARDS)", "S3-FIFO"])
        let lru = try #require(result.curves.first?.capacityForTarget)
        #expect(ExactLRUCurve.compute(trace, unit: .objects).hitRatio(at: lru) >= 0.5)
        #expect(result.samplingError.map { $0 < 0.05 } == true)
    }

    /// hit ratio c / (c + 1000) reaches 50% exactly at c = 1000 (solve c / (c + 1000) = 0.5): the
    /// grid brackets it between 562 and 1778, bisection must land in [1000, 1010].
    @Test func bisectionFindsADerivableCrossingWithinOnePercent() {
        let hitRatio = { (capacity: UInt64) in Double(capacity) / Double(capacity + 1000) }
        let grid = CapacityTuner.grid(footprint: 100_000, points: 9)
        let curve = MissRatioCurve(unit: .objects, points: grid.map { .init(capacity: $0, hitRatio: hitRatio($0)) })
        let gridAnswer = curve.smallestCapacity(reaching: 0.5)
        #expect((gridAnswer ?? 0) > 1010, "the grid alone must miss the crossing for this test to mean anything")
        let refined = CapacityTuner.refineCrossing(of: curve, target: 0.5, hitRatio: hitRatio)
        let capacity = refined.capacity ?? 0
        #expect(capacity >= 1000 && capacity <= 1010)
        #expect(refined.points.allSatisfy { $0.hitRatio == hitRatio($0.capacity) })
        #expect(CapacityTuner.refineCrossing(of: curve, target: 0.999, hitRatio: hitRatio).capacity == nil)
    }

    @Test func theTunersReplayedCrossingIsWithinOnePercentOfADirectReplay() throws {
        let trace = try skewedTrace(count: 30_000, keys: 4_000, sized: false, seed: 3)
        let tuner = CapacityTuner(options: .init(targetHitRatio: 0.5, policies: [.fifo], gridPoints: 6))
        let result = try tuner.tune(trace)
        let fifo = try #require(result.curves.first { $0.policy == PolicyKind.fifo.displayName })
        let capacity = try #require(fifo.capacityForTarget)
        let simulator = try Simulator(trace: trace, unit: .objects)
        #expect(simulator.replay(.fifo, capacity: capacity).hitRatio >= 0.5)
        let below = UInt64((Double(capacity) * 0.99).rounded(.down))
        #expect(simulator.replay(.fifo, capacity: below).hitRatio < 0.5)
    }

    /// Curves were gathered by policy name: a user's FIFO variant named "LRU" shared the
    /// built-in LRU's points.
    @Test func policiesSharingANameGetCurvesOfTheirOwn() throws {
        let trace = try skewedTrace(count: 20_000, keys: 2_000, sized: false, seed: 9)
        var options = CapacityTuner.Options(
            targetHitRatio: 0.5, policies: [.fifo, SimulatedPolicy(FIFONamedLIRS.self), .lirs], gridPoints: 6)
        options.curveMethod = .fullReplays
        let curves = try CapacityTuner(options: options).tune(trace).curves.filter { $0.policy != "LRU" }
        #expect(curves.map(\.policy) == ["FIFO", "LIRS (2)", "LIRS"], "the built-in keeps its name")
        let grid = curves.map { $0.curve.points.count }
        #expect(grid.allSatisfy { $0 == grid[0] }, "each curve has the grid's points alone: \(grid)")
        #expect(curves[1].curve.points.map(\.hitRatio) != curves[2].curve.points.map(\.hitRatio))
    }

    /// The simulate report finds a policy's rows and chart line by its name: a user's policy named
    /// after a built-in is named apart in the results, and draws a line of its own.
    @Test func policiesSharingANameAreNamedApartInReplays() throws {
        let trace = try skewedTrace(count: 5_000, keys: 500, sized: false, seed: 3)
        let results = try Simulator(trace: trace, unit: .objects).replay(
            policies: [.lirs, SimulatedPolicy(FIFONamedLIRS.self), .fifo], capacities: [50, 100])
        #expect(results.map(\.policy) == ["LIRS", "LIRS", "LIRS (2)", "LIRS (2)", "FIFO", "FIFO"])
        let userFirst = try Simulator(trace: trace, unit: .objects).replay(
            policies: [SimulatedPolicy(FIFONamedLIRS.self), .lirs], capacities: [50])
        #expect(userFirst.map(\.policy) == ["LIRS (2)", "LIRS"], "the built-in keeps its name")
        #expect(DistinctNames.apart(["A", "A (2)", "A"]) == ["A", "A (2)", "A (3)"])
        let report = Report.simulation(trace: trace, unit: .objects, results: results, seconds: 0)
        guard case .lines(let chart) = report.charts.first else {
            Issue.record("the report's first chart is not a line chart")
            return
        }
        #expect(chart.series.map(\.name) == ["LIRS", "LIRS (2)", "FIFO"])
    }

    /// A variant passes the simulator's hints to its base (a W-TinyLFU variant's replay waited on
    /// memory its base would have loaded ahead).
    @Test func aVariantPassesHintsToItsBase() {
        var variant = VariantOfHintNoting(context: PolicyContext(capacity: 10))
        variant.prefetch(7, keyHash: 1)
        #expect(variant.base.hinted == [7])
    }

    @Test func reportedCurvesAreThinnedUnlessAskedForInFull() throws {
        let trace = try skewedTrace(count: 80_000, keys: 20_000, sized: false, seed: 5)
        var options = CapacityTuner.Options(targetHitRatio: 0.5, policies: [.lru])
        let thin = try CapacityTuner(options: options).tune(trace)
        options.fullCurves = true
        let full = try CapacityTuner(options: options).tune(trace)
        let fullLRU = try #require(full.curves.first)
        try #require(
            fullLRU.curve.points.count > CapacityTuner.reportedPoints,
            "the trace must have more distances than a report keeps")
        let thinLRU = try #require(thin.curves.first)
        #expect(thinLRU.curve.points.count <= CapacityTuner.reportedPoints)
        let crossing = try #require(fullLRU.capacityForTarget)
        #expect(thinLRU.capacityForTarget == crossing)
        #expect(thinLRU.curve.points.contains { $0.capacity == crossing })
        #expect(thinLRU.curve.hitRatio(at: crossing) == fullLRU.curve.hitRatio(at: crossing))
    }

    @Test("A percentage of the footprint rounds down, as other simulators do: 0.1% of 186,880 objects is 186")
    func percentagesRoundDown() throws {
        func trace(objects: UInt64) throws -> Trace {
            try Trace(name: "distinct", requests: (0..<objects).map { TraceRequest(key: $0) })
        }
        let oltpSized = try trace(objects: 186_880)  // OLTP's footprint (ARC paper, Table III)
        #expect(try CapacitySpecification(parsing: "0.1%").resolve(for: oltpSized, unit: .objects) == 186)
        #expect(try CapacitySpecification(parsing: "10%").resolve(for: oltpSized, unit: .objects) == 18_688)
        let hundred = try trace(objects: 100)
        #expect(try CapacitySpecification(parsing: "29%").resolve(for: hundred, unit: .objects) == 29)
        #expect(
            try CapacitySpecification(parsing: "0.5%").resolve(for: hundred, unit: .objects) == 1,
            "never below one object")
        // The case made directly, with shares parsing never gives: resolved, not trapped on.
        for share in [-0.1, .nan, -.infinity] {
            #expect(CapacitySpecification.fraction(share).resolve(for: hundred, unit: .objects) == 1, "\(share)")
        }
        #expect(CapacitySpecification.fraction(.infinity).resolve(for: hundred, unit: .objects) == .max)
        #expect(CapacitySpecification.fraction(2).resolve(for: hundred, unit: .objects) == 200)
    }
}

/// FIFO under LIRS's name: a user's policy whose name is a built-in's.
struct FIFONamedLIRS: EvictionPolicyVariant {
    static let name = "LIRS"
    var base: FIFOPolicy
    init(context: PolicyContext) { base = FIFOPolicy(context: context) }
}

/// LRU that notes the hints it is given: a variant of it must pass them on.
struct HintNotingLRU: EvictionPolicyVariant {
    static let name = "hint-noting LRU"
    var base: LRUPolicy
    var hinted: [UInt32] = []
    init(context: PolicyContext) { base = LRUPolicy(context: context) }
    mutating func prefetch(_ slot: UInt32, keyHash: UInt64) { hinted.append(slot) }
}

/// A variant of a variant, overriding nothing.
struct VariantOfHintNoting: EvictionPolicyVariant {
    static let name = "variant"
    var base: HintNotingLRU
    init(context: PolicyContext) { base = HintNotingLRU(context: context) }
}

extension CurveTests {
    /// A curve decoded from a document, or whose points are set, in any order: its points are
    /// sorted, as the knee and the tuner's refinement assume (both trapped on a decreasing pair).
    @Test func pointsInAnyOrderAreSortedWhereverTheyComeFrom() throws {
        let json =
            #"{"unit":"objects","points":[{"capacity":10,"hitRatio":0.1},{"capacity":5,"hitRatio":0.5},{"capacity":100,"hitRatio":0.9}]}"#
        let decoded = try JSONDecoder().decode(MissRatioCurve.self, from: Data(json.utf8))
        #expect(decoded.points.map(\.capacity) == [5, 10, 100])
        #expect(decoded.knee != nil)
        #expect(CapacityTuner.refineCrossing(of: decoded, target: 0.4) { _ in 0.5 }.capacity != nil)
        var set = MissRatioCurve(unit: .objects, points: [])
        set.points = decoded.points.reversed()
        #expect(set.points.map(\.capacity) == [5, 10, 100])
        // Sorted points encode and decode as they are.
        #expect(try JSONDecoder().decode(MissRatioCurve.self, from: JSONEncoder().encode(decoded)) == decoded)
    }
}
