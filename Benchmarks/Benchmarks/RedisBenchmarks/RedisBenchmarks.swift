import Benchmark
import Foundation
import TierCache
import TierCacheRedis

// RedisTier against redis-benchmark on the same server (run `./redis-compare.sh`, which starts a
// server, runs redis-benchmark's GET and SET with 1 KiB values on one connection, unpipelined and
// with 16 commands in flight, then these benchmarks against the same server).
// Reads TIERCACHE_REDIS_URL; does nothing without it.

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.throughput, .wallClock], scalingFactor: .kilo, maxDuration: .seconds(5))

    guard let url = ProcessInfo.processInfo.environment["TIERCACHE_REDIS_URL"], let endpoint = try? RedisEndpoint(url: url) else {
        print("RedisBenchmarks: TIERCACHE_REDIS_URL is not set; ./redis-compare.sh sets it")
        return
    }
    // One connection, like redis-benchmark -c 1.
    guard let tier = try? RedisTier(configuration: .init(
        deployment: .standalone(endpoint), keyPrefix: "bench:", capacity: 1 << 30, connectionsPerNode: 1)) else { return }
    let json = Array(String(repeating: "{\"id\":42,\"name\":\"item\",\"tags\":[\"a\",\"b\"]}", count: 24).utf8.prefix(1024))
    let keys = (0..<1_000).compactMap { try? CacheKey("key:\($0)") }
    let entry = CacheEntry(value: json, storedAt: Date())

    Benchmark("RedisTier set 1 KiB, one connection") { benchmark in
        for index in benchmark.scaledIterations {
            blackHole(try await tier.store(entry, forKey: keys[index % keys.count]))
        }
    }
    Benchmark("RedisTier get 1 KiB, one connection") { benchmark in
        for index in benchmark.scaledIterations {
            blackHole(try await tier.entry(forKey: keys[index % keys.count]))
        }
    } setup: {
        for key in keys { _ = try await tier.store(entry, forKey: key) }
    }
    Benchmark("RedisTier get 1 KiB, 16 in flight on one connection") { benchmark in
        let iterations = Array(benchmark.scaledIterations)
        await withTaskGroup(of: Void.self) { group in
            for lane in 0..<16 {
                group.addTask {
                    var index = lane
                    while index < iterations.count {
                        blackHole(try? await tier.entry(forKey: keys[index % keys.count]))
                        index += 16
                    }
                }
            }
        }
    } setup: {
        for key in keys { _ = try await tier.store(entry, forKey: key) }
    }
}
