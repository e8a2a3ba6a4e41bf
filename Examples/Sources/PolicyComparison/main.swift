import CacheSimulation
import Foundation
import SegmentedLRU
import TierCacheBenchmarking

// The ARC paper's OLTP trace when TIERCACHE_TRACES names the traces directory; otherwise a
// synthetic one: a Zipf hot set with a scan through it, the pattern SLRU is built for.
let traces = ProcessInfo.processInfo.environment["TIERCACHE_TRACES"]
let oltp = traces.map { URL(fileURLWithPath: $0).appendingPathComponent("arc/OLTP.lis.zst").path }
let trace: Trace
if let oltp, FileManager.default.fileExists(atPath: oltp) {
    trace = try Trace.load(TraceReader(path: oltp))
} else {
    var state: UInt64 = 7
    let requests = (0..<200_000).map { index -> TraceRequest in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let hot = UInt64(pow(Double(state >> 11) / Double(1 << 53), 3) * 5_000)
        return TraceRequest(key: index % 5 == 0 ? 10_000 + UInt64(index) : hot)
    }
    trace = try Trace(name: "synthetic hot set with scans", requests: requests)
}

// README:begin policy-comparison
let simulator = try Simulator(trace: trace, unit: .objects)
let policies: [SimulatedPolicy] = [.lru, .arc, .s3fifo, .wtinylfu, SimulatedPolicy(SegmentedLRU.self)]
let results = simulator.replay(policies: policies, capacities: [1_000, 5_000, 20_000])
print(Report.simulation(trace: trace, unit: .objects, results: results, seconds: 0).tables[0].text)
// README:end

// The same policy in a running MemoryTier, beside the built-in LRU: the benchmark suite's
// subjects take a policy type as they take a built-in.
let plan = BenchmarkPlan(workload: .zipf(keys: 20_000, sizes: .uniform(256...4_096)), length: .requests(40_000))
let inTier = await (try BenchmarkRunner(plan: plan)).run([
    .memory(capacity: 4 << 20, policyType: SegmentedLRU.self), .memory(capacity: 4 << 20),
])
print(inTier.report(title: "SLRU in a MemoryTier beside LRU").tables[0].text)
