import Foundation
import NIOCore
import NIOPosix
import TierCache
import TierCacheRedis
import Workloads

// RedisTier's round trips outside the benchmark harness, so that a process can choose its
// executor before any task runs: `--nio-executor` installs SwiftNIO's event loops as Swift's
// global executor (NIOSingletons' documented opt-in for servers), so a command and its reply stay
// on the event loop's thread instead of hopping to Swift's concurrency pool and back. The
// benchmark harness cannot run that way (it blocks a thread that the event loops need), hence
// this small loop. `--affinity` keeps the default executor but runs each lane inside
// `RedisTier.withEventLoopAffinity`, on the event loop that owns the tier's one connection, as
// redis-benchmark runs its client on one event loop. redis-compare.sh runs it every way beside
// redis-benchmark.
//
// `--only get16` (or set, get, mget16) runs one lane and prints the process's CPU time per
// operation, user and system (`ProcessCPUTime`): the client's own cost.
//
//   RedisRoundTrips [--nio-executor | --affinity] [--tls] [--seconds N] [--only LANE]     reads TIERCACHE_REDIS_URL

let arguments = CommandLine.arguments
let useNIOExecutor = arguments.contains("--nio-executor")
let useAffinity = arguments.contains("--affinity")
let only = arguments.firstIndex(of: "--only").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
let seconds =
    arguments.firstIndex(of: "--seconds").flatMap {
        arguments.indices.contains($0 + 1) ? Double(arguments[$0 + 1]) : nil
    } ?? 3
if useNIOExecutor {
    guard NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor() else {
        fatalError("SwiftNIO could not take over the global executor")
    }
}
// `--tls`: the TLS server with a password that scripts/redis-servers starts beside the plain one
// (TIERCACHE_REDIS_TLS_URL, its CA in TIERCACHE_REDIS_TLS_CA): TLS and AUTH, as production runs.
let useTLS = arguments.contains("--tls")
let environment = ProcessInfo.processInfo.environment
guard let url = environment[useTLS ? "TIERCACHE_REDIS_TLS_URL" : "TIERCACHE_REDIS_URL"],
    let endpoint = try? RedisEndpoint(url: url)
else {
    fatalError(
        "TIERCACHE_REDIS_URL (and, with --tls, TIERCACHE_REDIS_TLS_URL) is not set; scripts/redis-servers sets them")
}
let tls = useTLS ? environment["TIERCACHE_REDIS_TLS_CA"].map { RedisTLS(trust: .certificateFile($0)) } : nil
// One connection, so on one event loop: with --affinity every lane runs on that loop.
let tier = try RedisTier(
    configuration: .init(
        deployment: .standalone(endpoint), keyPrefix: "roundtrips:", capacity: 1 << 30, connectionsPerNode: 1,
        failureMode: .throwErrors,
        tls: tls),
    eventLoopGroup: useAffinity ? MultiThreadedEventLoopGroup.singleton.next() : MultiThreadedEventLoopGroup.singleton)
let json = Array(String(repeating: "{\"id\":42,\"name\":\"item\",\"tags\":[\"a\",\"b\"]}", count: 24).utf8.prefix(1024))
let keys = try (0..<1_000).map { try CacheKey("key:\($0)") }
let entry = CacheEntry(value: json, storedAt: Date())

/// Runs `operation` for `seconds` in `lanes` concurrent tasks; returns operations per second
/// (and, with `--only`, prints the process's CPU time per operation).
func rate(lanes: Int, _ operation: @escaping @Sendable (Int) async throws -> Void) async throws -> Double {
    let cpuAtStart = ProcessCPUTime.now
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    let started = ContinuousClock.now
    let total = try await withThrowingTaskGroup(of: Int.self) { group in
        for lane in 0..<lanes {
            group.addTask {
                let runLane = { () async throws -> Int in
                    var count = 0
                    while ContinuousClock.now < deadline {
                        for _ in 0..<64 {
                            try await operation(lane &+ count * lanes)
                            count += 1
                        }
                    }
                    return count
                }
                return useAffinity ? try await tier.withEventLoopAffinity { try await runLane() } : try await runLane()
            }
        }
        return try await group.reduce(0, +)
    }
    let elapsed = ContinuousClock.now - started
    if only != nil {
        let cpu = ProcessCPUTime.now
        print(
            String(
                format: "CPU per operation: %.2f µs user, %.2f µs system (%d operations)",
                (cpu.user - cpuAtStart.user) / Double(total), (cpu.system - cpuAtStart.system) / Double(total), total))
    }
    return Double(total) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

let executor =
    (useNIOExecutor
        ? "SwiftNIO event loops as the global executor"
        : useAffinity ? "Swift's default executor, lanes in withEventLoopAffinity" : "Swift's default executor")
    + (useTLS ? ", TLS and AUTH" : "")
// The lanes: how many tasks, and what each does. 16 keys a call for mget16: one MGET
// (redis-compare.sh times redis-benchmark's MGET of the same 16 keys).
let batches = stride(from: 0, to: keys.count - 15, by: 16).map { Array(keys[$0..<($0 + 16)]) }
let lanes: [String: (tasks: Int, operation: @Sendable (Int) async throws -> Void)] = [
    "set": (1, { index in _ = try await tier.store(entry, forKey: keys[index % keys.count]) }),
    "get": (1, { index in _ = try await tier.entry(forKey: keys[index % keys.count]) }),
    "get16": (16, { index in _ = try await tier.entry(forKey: keys[index % keys.count]) }),
    "mget16": (1, { index in _ = try await tier.entries(forKeys: batches[index % batches.count]) }),
]
/// Operations per second of the lane named `name` (one of `lanes`' keys).
func rate(of name: String) async throws -> Double {
    guard let lane = lanes[name] else { fatalError("--only takes one of \(lanes.keys.sorted())") }
    return try await rate(lanes: lane.tasks, lane.operation)
}

if let only {
    // The records the read lanes read exist before they run.
    for key in keys { _ = try await tier.store(entry, forKey: key) }
    print("RedisTier, \(only), \(executor): \(Int(try await rate(of: only)))/s")
    exit(0)
}
// SET first: it stores the records the other lanes read.
let set = try await rate(of: "set"), get = try await rate(of: "get")
let get16 = try await rate(of: "get16"), mget16 = try await rate(of: "mget16")
print(
    "RedisTier, 1 KiB, one connection, \(executor): SET \(Int(set))/s, GET \(Int(get))/s, GET with 16 in flight \(Int(get16))/s, "
        + "entries(forKeys:) of 16 keys \(Int(mget16)) calls/s")
