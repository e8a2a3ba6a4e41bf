import Benchmark
import CacheSimulation
import Foundation

// Policy replay throughput and the cost of capacity curves, on the ARC paper's OLTP and P12 traces
// (read from TIERCACHE_TRACES; nothing runs without it). In the same run: one LRU replay at one
// capacity is the baseline of the one-pass exact LRU curve and of SHARDS at rate 0.01.
// Requests per second = the trace's requests (printed at start) / the wall-clock time of one run.

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .peakMemoryResident], scalingFactor: .one, maxDuration: .seconds(20), maxIterations: 5)

    guard let directory = ProcessInfo.processInfo.environment["TIERCACHE_TRACES"] else {
        print(
            "SimulationBenchmarks: TIERCACHE_TRACES is not set; set it to the public traces folder to run these benchmarks"
        )
        return
    }
    func load(_ name: String) -> Trace? {
        do {
            let trace = try Trace.load(TraceReader(path: directory + "/arc/\(name).lis.zst"))
            print("SimulationBenchmarks: \(name) has \(trace.requestCount) requests, \(trace.objectCount) objects")
            return trace
        } catch {
            print("SimulationBenchmarks: cannot read \(name): \(error)")
            return nil
        }
    }
    guard let oltp = load("OLTP"), let p12 = load("P12"),
        let oltpSimulator = try? Simulator(trace: oltp, unit: .objects),
        let p12Simulator = try? Simulator(trace: p12, unit: .objects)
    else { return }

    for kind in [SimulatedPolicy.lru, .s3fifo, .arc, .lirs, .twoQ] {
        Benchmark("Replay \(kind.name) OLTP c=5000") { benchmark in
            for _ in benchmark.scaledIterations { blackHole(oltpSimulator.replay(kind, capacity: 5_000)) }
        }
    }
    Benchmark("Replay LRU P12 c=32768 (baseline)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(p12Simulator.replay(.lru, capacity: 32_768)) }
    }
    Benchmark("Exact LRU curve P12 (all capacities)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(ExactLRUCurve.compute(p12, unit: .objects)) }
    }
    Benchmark("SHARDS 0.01 P12") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(SHARDS.compute(p12, unit: .objects, mode: .fixedRate(0.01))) }
    }
}
