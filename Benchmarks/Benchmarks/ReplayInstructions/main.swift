import CacheSimulation
import Foundation

// One policy's replay of one trace at one capacity as a plain loop, for counting instructions
// per replayed request under callgrind (`replay-instructions.sh`): the simulator's command-line
// tool is asynchronous, which valgrind does not follow. With 0 replays it only loads the trace,
// the setup the script subtracts.
//   ReplayInstructions TRACE POLICY CAPACITY REPLAYS

let arguments = CommandLine.arguments
guard arguments.count == 5, let kind = PolicyKind(name: arguments[2]), let capacity = UInt64(arguments[3]),
    let replays = Int(arguments[4]), replays >= 0
else {
    print("usage: ReplayInstructions TRACE POLICY CAPACITY REPLAYS")
    exit(2)
}
do {
    let trace = try Trace.load(TraceReader(path: arguments[1]))
    let simulator = try Simulator(trace: trace, unit: .objects)
    for _ in 0..<replays {
        let result = simulator.replay(SimulatedPolicy(kind), capacity: capacity)
        let rate = Double(trace.requestCount) / max(result.seconds, 1e-9) / 1e6
        print(
            "\(kind.policyType.name) at \(capacity): \(trace.requestCount) requests, hit ratio \(result.hitRatio), "
                + "\(String(format: "%.1f", rate))M requests/s")
    }
} catch {
    print("ReplayInstructions: \(error)")
    exit(1)
}
