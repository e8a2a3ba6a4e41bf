import Testing

@testable import CacheSimulation

@Suite struct MiniatureSimulationTests {
    /// Spatial sampling (SHARDS, and the miniature simulation paper's §3) keeps or drops whole objects:
    /// every request of a kept object survives, in order, and no request of a dropped one.
    @Test func aSampleKeepsEveryRequestOfTheObjectsItKeepsAndNothingElse() throws {
        let trace = try skewedTrace(count: 50_000, keys: 5_000, sized: true, seed: 7)
        let threshold = MiniatureSimulation.threshold(rate: 0.1)
        let sample = MiniatureSimulation.sample(trace, threshold: threshold)
        var kept: [UInt32: UInt32] = [:]
        var expected: [UInt32] = []
        for object in trace.requests where SHARDS.hash(UInt64(object)) < threshold {
            let id = kept[object] ?? UInt32(kept.count)
            kept[object] = id
            expected.append(id)
        }
        #expect(sample.requests == expected)
        #expect(sample.objectCount == kept.count)
        for (original, id) in kept { #expect(sample.objectSizes[Int(id)] == trace.objectSizes[Int(original)]) }
        let bytes = expected.reduce(UInt64(0)) { $0 + UInt64(sample.objectSizes[Int($1)]) }
        #expect(sample.requestedBytes == bytes)
        // About a tenth of the objects: a binomial count of 5,000 × 0.1 has a standard deviation of 21.
        #expect(abs(Double(sample.objectCount) - Double(trace.objectCount) * 0.1) < 150)
    }

    /// At rate 1 the sample is the trace and the scaled cache is the cache: every policy's miniature
    /// curve, a user's own (LFU) included, must be its full replays exactly.
    @Test(arguments: [CapacityUnit.objects, .bytes])
    func atRateOneTheMiniatureCurveIsTheFullReplays(unit: CapacityUnit) throws {
        let trace = try skewedTrace(count: 20_000, keys: 2_000, sized: unit == .bytes, seed: 3)
        let capacities = CapacityTuner.grid(
            footprint: unit == .bytes ? trace.footprintBytes : UInt64(trace.objectCount), points: 6)
        let miniature = try MiniatureSimulation(
            trace: trace, unit: unit, options: .init(rate: 1), capacities: capacities)
        let policies = PolicyKind.allCases.map(SimulatedPolicy.init) + [SimulatedPolicy(LFUPolicy.self)]
        let curves = miniature.curves(policies: policies, capacities: capacities)
        let simulator = try Simulator(trace: trace, unit: unit)
        for (policy, curve) in zip(policies, curves) {
            for point in curve.points {
                #expect(
                    point.hitRatio == simulator.replay(policy, capacity: point.capacity).hitRatio,
                    "\(policy) at \(point.capacity)")
            }
        }
    }

    /// The rate for a capacity is the smallest rate, from the base rate to 1, whose scaled cache
    /// holds the minimum: with rate 0.01 and 64 objects, 100,000 objects need 0.01 (1,000 scaled
    /// objects), 1,000 need 64 / 1,000 = 0.064, 10 need 1 (64 / 10 is over 1).
    @Test func smallCapacitiesAreSimulatedAtHigherRates() throws {
        let trace = try skewedTrace(count: 1_000, keys: 500, sized: false, seed: 1)
        let miniature = try MiniatureSimulation(
            trace: trace, unit: .objects, options: .init(rate: 0.01, minimumScaledObjects: 64))
        #expect(abs(miniature.rate(for: 100_000) - 0.01) < 1e-6)
        #expect(abs(miniature.rate(for: 1_000) - 0.064) < 1e-6)
        #expect(miniature.rate(for: 1_000) * 1_000 >= 64, "rounding never takes a scaled cache below the minimum")
        #expect(miniature.rate(for: 10) == 1)
    }

    /// Options out of range fall back instead of trapping: a NaN rate is 1 (full replays, as are
    /// a NaN or huge minimum), minimums past the largest are the largest, and the description of
    /// options never yet clamped prints them.
    @Test func nanAndHugeOptionsFallBackInsteadOfTrapping() throws {
        let trace = try skewedTrace(count: 2_000, keys: 500, sized: false, seed: 1)
        let largest = MiniatureSimulation.Options.largestMinimumScaledObjects
        let cases: [(options: MiniatureSimulation.Options, minimum: Double)] = [
            (.init(rate: .nan), 384), (.init(minimumScaledObjects: .nan), largest),
            (.init(minimumScaledObjects: .infinity), largest), (.init(minimumScaledObjects: 1e19), largest),
        ]
        let simulator = try Simulator(trace: trace, unit: .objects)
        for (options, minimum) in cases {
            #expect(options.description.hasPrefix("miniature simulation"))
            let miniature = try MiniatureSimulation(
                trace: trace, unit: .objects, options: options, capacities: [50, 100_000])
            #expect(miniature.options.minimumScaledObjects == minimum)
            #expect(miniature.options.description.contains("objects"))
            #expect(miniature.rate(for: 50) == 1, "\(options)")
            #expect(miniature.hitRatio(.lru, capacity: 50) == simulator.replay(.lru, capacity: 50).hitRatio)
        }
        #expect(try MiniatureSimulation(trace: trace, unit: .objects, options: .init(rate: .nan)).options.rate == 1)
        #expect(MiniatureSimulation.threshold(rate: .nan) == SHARDS.modulus)
    }

    /// A capacity not announced at init is still estimated from a sample of its own rate, not
    /// from the whole trace: at rate 0.05 on a trace of 40,000 keys the estimate differs from the
    /// full replay (it is an estimate), and equals what the same capacity gives when announced.
    @Test func unannouncedCapacitiesDrawTheirOwnSample() throws {
        let trace = try skewedTrace(count: 200_000, keys: 40_000, sized: false, seed: 5)
        let options = MiniatureSimulation.Options(rate: 0.05, minimumScaledObjects: 64)
        let lazy = try MiniatureSimulation(trace: trace, unit: .objects, options: options)
        let announced = try MiniatureSimulation(trace: trace, unit: .objects, options: options, capacities: [4_000])
        #expect(lazy.hitRatio(.arc, capacity: 4_000) == announced.hitRatio(.arc, capacity: 4_000))
        let full = try Simulator(trace: trace, unit: .objects).replay(.arc, capacity: 4_000).hitRatio
        #expect(lazy.hitRatio(.arc, capacity: 4_000) != full)
    }

    /// The miniature simulation paper reports mean absolute errors around 0.01 or less at rates of
    /// 0.01–0.001 on traces of millions of requests; on this smaller trace (400,000 requests over
    /// 40,000 keys) a rate of 0.05 keeps about 2,000 keys, and every policy must stay within 0.02.
    @Test func miniatureCurvesFollowTheFullReplays() throws {
        let trace = try skewedTrace(count: 400_000, keys: 40_000, sized: false, seed: 19)
        let capacities = CapacityTuner.grid(footprint: UInt64(trace.objectCount), points: 8)
        let miniature = try MiniatureSimulation(
            trace: trace, unit: .objects, options: .init(rate: 0.05, minimumScaledObjects: 64),
            capacities: capacities)
        let policies: [SimulatedPolicy] = [.fifo, .s3fifo, .arc, .wtinylfu, .lirs, .twoQ]
        let curves = miniature.curves(policies: policies, capacities: capacities)
        let simulator = try Simulator(trace: trace, unit: .objects)
        for (policy, curve) in zip(policies, curves) {
            let full = MissRatioCurve(results: capacities.map { simulator.replay(policy, capacity: $0) })
            let error = curve.meanAbsoluteError(against: full)
            #expect(error <= 0.02, "\(policy): mean absolute error \(error)")
        }
    }

    /// c / (c + 1000) reaches 50% exactly at c = 1000: from estimates far below and far above, the
    /// search brackets it and lands in [1000, 1010]; a bound that never reaches the target gives nil.
    @Test func theCrossingIsFoundFromAnEstimateOnEitherSide() {
        let hitRatio = { (capacity: UInt64) in Double(capacity) / Double(capacity + 1000) }
        for estimate: UInt64 in [1, 37, 999, 1000, 5_000, 90_000] {
            let refined = CapacityTuner.refineCrossing(
                near: estimate, upperBound: 100_000, target: 0.5, hitRatio: hitRatio)
            let capacity = refined.capacity ?? 0
            #expect(capacity >= 1000 && capacity <= 1010, "from \(estimate): \(capacity)")
            #expect(refined.points.allSatisfy { $0.hitRatio == hitRatio($0.capacity) })
        }
        #expect(
            CapacityTuner.refineCrossing(near: 500, upperBound: 900, target: 0.5, hitRatio: hitRatio).capacity == nil)
    }

    /// The tuner's default (miniature curves, crossings bisected with full replays) still reports a
    /// capacity that a full replay confirms and that 1% less does not reach.
    @Test func theTunersMiniatureCrossingIsConfirmedByFullReplays() throws {
        let trace = try skewedTrace(count: 60_000, keys: 6_000, sized: false, seed: 5)
        var options = CapacityTuner.Options(targetHitRatio: 0.5, policies: [.s3fifo, .arc], gridPoints: 8)
        options.compareWithFullReplays = true
        let result = try CapacityTuner(options: options).tune(trace)
        let simulator = try Simulator(trace: trace, unit: .objects)
        for policy in [SimulatedPolicy.s3fifo, .arc] {
            let curve = try #require(result.curves.first { $0.policy == policy.name })
            let capacity = try #require(curve.capacityForTarget)
            #expect(simulator.replay(policy, capacity: capacity).hitRatio >= 0.5)
            #expect(simulator.replay(policy, capacity: UInt64((Double(capacity) * 0.99).rounded(.down))).hitRatio < 0.5)
            #expect(curve.errorAgainstFullReplays != nil)
            #expect(curve.method.hasPrefix("miniature"))
        }
    }

    /// A user's own policy goes through the tuner as the built-ins do: its curve is labelled by its
    /// name, and the capacity recommended for it reaches the target in a full replay while 1% less
    /// does not.
    @Test func theTunerTunesAUsersOwnPolicy() throws {
        let trace = try skewedTrace(count: 30_000, keys: 3_000, sized: false, seed: 11)
        let lfu = SimulatedPolicy(LFUPolicy.self)
        #expect(lfu.kind == nil && SimulatedPolicy.arc.kind == .arc)
        let options = CapacityTuner.Options(targetHitRatio: 0.5, policies: [.lru, lfu, .arc], gridPoints: 8)
        let result = try CapacityTuner(options: options).tune(trace)
        #expect(result.curves.map(\.policy) == ["LRU", "LFU", "ARC"])
        let curve = try #require(result.curves.first { $0.policy == "LFU" })
        let capacity = try #require(curve.capacityForTarget)
        let simulator = try Simulator(trace: trace, unit: .objects)
        #expect(simulator.replay(lfu, capacity: capacity).hitRatio >= 0.5)
        #expect(simulator.replay(lfu, capacity: UInt64((Double(capacity) * 0.99).rounded(.down))).hitRatio < 0.5)
    }
}
