import CacheSimulation
import Foundation

// One policy's replay of one trace at one capacity as a plain loop, for counting instructions
// per replayed request under callgrind (`replay-instructions.sh`): the simulator's command-line
// tool is asynchronous, which valgrind does not follow. With 0 replays it only loads the trace,
// the setup the script subtracts.
//   ReplayInstructions TRACE POLICY CAPACITY REPLAYS [--against-lru]
// With `--against-lru` each replay follows one of LRU's in the same process, and the tool prints
// the median of the pairs' speed ratios (policy over LRU): on a machine whose speed drifts over
// minutes, pairs a second apart compare more steadily than separate runs.

let arguments = CommandLine.arguments
let againstLRU = arguments.count == 6 && arguments[5] == "--against-lru"
guard arguments.count == 5 || againstLRU, let kind = PolicyKind(name: arguments[2]),
    let capacity = UInt64(arguments[3]), let replays = Int(arguments[4]), replays >= 0
else {
    print("usage: ReplayInstructions TRACE POLICY CAPACITY REPLAYS [--against-lru]")
    exit(2)
}
do {
    let trace = try Trace.load(TraceReader(path: arguments[1]))
    let simulator = try Simulator(trace: trace, unit: .objects)
    var ratios: [Double] = []
    for _ in 0..<replays {
        let lruSeconds = againstLRU ? simulator.replay(SimulatedPolicy(.lru), capacity: capacity).seconds : 0
        let result = simulator.replay(SimulatedPolicy(kind), capacity: capacity)
        ratios.append(lruSeconds / max(result.seconds, 1e-9))
        let rate = Double(trace.requestCount) / max(result.seconds, 1e-9) / 1e6
        print(
            "\(kind.policyType.name) at \(capacity): \(trace.requestCount) requests, hit ratio \(result.hitRatio), "
                + "\(String(format: "%.1f", rate))M requests/s")
    }
    if againstLRU, !ratios.isEmpty {
        print("median speed against LRU's: \(String(format: "%.3f", ratios.sorted()[ratios.count / 2]))x")
    }
} catch {
    print("ReplayInstructions: \(error)")
    exit(1)
}
