import CacheSimulation
import Testing

/// Miniature simulation (Waldspurger et al., USENIX ATC 2017) against full replays on P12, the
/// ARC paper's largest trace (13.2M requests): the paper reports mean absolute errors around 0.01
/// or less for sampled, scaled-down caches; the tuner's default must stay within 0.01 for every
/// policy it draws this way, on the tuner's own 16-capacity grid.
@Suite(.enabled(if: SharedTraces.available, SharedTraces.missingMessage), .serialized)
struct MiniatureSimulationAccuracyTests {
    @Test("Miniature curves of every replayed policy on P12 are within 0.01 mean absolute error of full replays")
    func p12() throws {
        let trace = try SharedTraces.trace("arc/P12.lis.zst")
        let grid = CapacityTuner.grid(footprint: UInt64(trace.objectCount), points: 16)
        let policies: [SimulatedPolicy] = [.fifo, .clock, .sieve, .s3fifo, .arc, .wtinylfu, .lirs, .twoQ]
        // Timed as `tiercache tune` draws them: the samples, then each policy's curve on every core.
        let clock = ContinuousClock()
        let started = clock.now
        let miniature = try MiniatureSimulation(trace: trace, unit: .objects, capacities: grid)
        print("miniature samples of P12: \(started.duration(to: clock.now))")
        var curves: [MissRatioCurve] = []
        for policy in policies {
            let policyStarted = clock.now
            curves += miniature.curves(policies: [policy], capacities: grid)
            print("miniature \(policy) curve on P12: \(policyStarted.duration(to: clock.now))")
        }
        print(
            "miniature curves of \(policies.count) policies on P12, samples included: \(started.duration(to: clock.now))"
        )
        let simulator = try Simulator(trace: trace, unit: .objects)
        let results = simulator.replay(policies: policies, capacities: grid)
        for (policy, curve) in zip(policies, curves) {
            let full = MissRatioCurve(results: results.filter { $0.policy == policy.name })
            let error = curve.meanAbsoluteError(against: full)
            print("miniature \(policy) on P12: mean absolute error \(error)")
            #expect(error <= 0.01, "\(policy): \(error)")
        }
    }
}
