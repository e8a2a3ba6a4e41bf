import CacheSimulation
import Foundation
import Testing
import TierCache

/// The README's simulation and live-sampler examples, compiled and run.
@Suite struct ReadmeSimulationExampleTests {
    @Test func simulationExample() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try fixtures.write(
            "example.txt", text: (0..<5_000).map { "\($0 * 7919 % 1_300 % ($0 % 97 + 3))" }.joined(separator: "\n"))
        var printed: [String] = []
        func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }

        // README:begin simulation
        let trace = try Trace.load(TraceReader(path: path))  // any supported format, compressed or not
        let simulator = try Simulator(trace: trace, unit: .objects)
        for result in simulator.replay(policies: [.lru, .s3fifo, .arc], capacities: [10, 50]) {
            print(result.policy, result.capacity, result.hitRatio)
        }
        let curve = ExactLRUCurve.compute(trace, unit: .objects)  // every capacity, in one pass
        print(curve.smallestCapacity(reaching: 0.9) ?? "never")
        // README:end
        #expect(printed.count == 7)
        #expect(printed.first?.hasPrefix("LRU 10 ") == true)
    }

    @Test func liveSamplerExample() async throws {
        let sampler = LiveCurveSampler()  // fixed-size SHARDS: under 1 MiB however many keys
        let memory = SampledTier(try MemoryTier(capacity: 64 << 20), sampler: sampler)
        let cache = TieredCache(tiers: [memory])
        // … serve traffic through `cache` …
        let now = sampler.estimatedHitRatio(forCapacityBytes: 64 << 20)
        let doubled = sampler.estimatedHitRatio(forCapacityBytes: 128 << 20)
        #expect(cache.isEntirelyLocal)
        #expect(now == nil && doubled == nil)  // nothing stored yet
    }
}
