import Foundation
import NIOCore
import NIOPosix
import TierCache
import TierCacheRedis

// RedisTier's round trips outside the benchmark harness, so that a process can choose its
// executor before any task runs: `--nio-executor` installs SwiftNIO's event loops as Swift's
// global executor (NIOSingletons' documented opt-in for servers), so a command and its reply stay
// on the event loop's thread instead of hopping to Swift's concurrency pool and back. The
// benchmark harness cannot run that way (it blocks a thread that the event loops need), hence
// this small loop. redis-compare.sh runs it both ways beside redis-benchmark.
//
//   RedisRoundTrips [--nio-executor] [--seconds N]     reads TIERCACHE_REDIS_URL

let arguments = CommandLine.arguments
let useNIOExecutor = arguments.contains("--nio-executor")
let seconds = arguments.firstIndex(of: "--seconds").flatMap { arguments.indices.contains($0 + 1) ? Double(arguments[$0 + 1]) : nil } ?? 3
if useNIOExecutor {
    guard NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor() else {
        fatalError("SwiftNIO could not take over the global executor")
    }
}
guard let url = ProcessInfo.processInfo.environment["TIERCACHE_REDIS_URL"], let endpoint = try? RedisEndpoint(url: url) else {
    fatalError("TIERCACHE_REDIS_URL is not set; redis-compare.sh sets it")
}
let tier = try RedisTier(configuration: .init(
    deployment: .standalone(endpoint), keyPrefix: "roundtrips:", capacity: 1 << 30, connectionsPerNode: 1, failureMode: .throwErrors))
let json = Array(String(repeating: "{\"id\":42,\"name\":\"item\",\"tags\":[\"a\",\"b\"]}", count: 24).utf8.prefix(1024))
let keys = try (0..<1_000).map { try CacheKey("key:\($0)") }
let entry = CacheEntry(value: json, storedAt: Date())

/// Runs `operation` for `seconds` in `lanes` concurrent tasks; returns operations per second.
func rate(lanes: Int, _ operation: @escaping @Sendable (Int) async throws -> Void) async throws -> Double {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    let started = ContinuousClock.now
    let total = try await withThrowingTaskGroup(of: Int.self) { group in
        for lane in 0..<lanes {
            group.addTask {
                var count = 0
                while ContinuousClock.now < deadline {
                    for _ in 0..<64 {
                        try await operation(lane &+ count * lanes)
                        count += 1
                    }
                }
                return count
            }
        }
        return try await group.reduce(0, +)
    }
    let elapsed = ContinuousClock.now - started
    return Double(total) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

let executor = useNIOExecutor ? "SwiftNIO event loops as the global executor" : "Swift's default executor"
let set = try await rate(lanes: 1) { index in _ = try await tier.store(entry, forKey: keys[index % keys.count]) }
let get = try await rate(lanes: 1) { index in _ = try await tier.entry(forKey: keys[index % keys.count]) }
let get16 = try await rate(lanes: 16) { index in _ = try await tier.entry(forKey: keys[index % keys.count]) }
print("RedisTier, 1 KiB, one connection, \(executor): SET \(Int(set))/s, GET \(Int(get))/s, GET with 16 in flight \(Int(get16))/s")
