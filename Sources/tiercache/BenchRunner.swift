import Foundation
import Histogram
import TierCache
import TierCacheLMDB

/// What one subject did under the workload.
struct BenchOutcome: Sendable, Codable {
    var subject: String
    var requests: Int
    var hits: Int
    var seconds: Double
    var latencyNanoseconds: [String: UInt64]
    /// Per tier (for the tiered subject: each tier in order), from the tiers' own statistics.
    var tiers: [TierLine]

    struct TierLine: Sendable, Codable {
        var name: String
        var hits: Int
        var misses: Int
        var stores: Int
        var evictions: Int
        var refused: Int
        var bytesInUse: Int?
    }

    var requestsPerSecond: Double { seconds > 0 ? Double(requests) / seconds : 0 }
    var hitRatio: Double { requests > 0 ? Double(hits) / Double(requests) : 0 }
}

/// Runs the workload against one subject, split across tasks, timing every request.
struct BenchRunner {
    let subject: BenchCommand.Subject
    let workload: BenchWorkload
    let requests: Int
    let tasks: Int
    let memory: Int
    let disk: Int
    let directory: String?

    static let percentiles: [(String, Double)] = [("p50", 50), ("p90", 90), ("p99", 99), ("p99.9", 99.9)]

    func run() async throws -> BenchOutcome {
        let location =
            directory.map { URL(fileURLWithPath: $0).appendingPathComponent(subject.rawValue) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("tiercache-bench-\(UUID().uuidString)")
        defer { if directory == nil { try? FileManager.default.removeItem(at: location) } }
        let cache: TieredCache
        do {
            switch subject {
            case .memory:
                cache = TieredCache(tiers: [try MemoryTier(capacity: memory)])
            case .lmdb:
                cache = TieredCache(tiers: [
                    try LMDBTier(directory: location, configuration: .init(capacity: disk, durability: .none))
                ])
            case .tiered:
                cache = TieredCache(tiers: [
                    try MemoryTier(capacity: memory),
                    try LMDBTier(directory: location, configuration: .init(capacity: disk, durability: .none)),
                ])
            }
        } catch {
            throw BenchError(message: "cannot open the \(subject.rawValue) subject: \(error)")
        }
        let keys = try (0..<workload.sizes.count).map { try CacheKey("bench/object/\($0)") }
        let workload = self.workload
        let requests = self.requests
        let tasks = self.tasks
        let start = ContinuousClock.now
        let perTask = await withTaskGroup(of: (hits: Int, histogram: Histogram<UInt64>).self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var histogram = Histogram<UInt64>(
                        highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
                    var hits = 0
                    let clock = ContinuousClock()
                    // Task t takes requests t, t + tasks, t + 2·tasks, … of the (repeated) workload.
                    var index = task
                    while index < requests {
                        let object = workload.requests[index % workload.requests.count]
                        let key = keys[Int(object)]
                        let began = clock.now
                        if cache.localEntry(forKey: key) != nil {
                            hits += 1
                        } else {
                            _ = await cache.store(
                                CacheEntry(value: workload.value(for: object), storedAt: Date()), forKey: key,
                                policy: .allowed)
                        }
                        let elapsed = clock.now - began
                        _ = histogram.record(
                            UInt64(
                                max(
                                    0,
                                    elapsed.components.attoseconds / 1_000_000_000 + elapsed.components.seconds
                                        * 1_000_000_000)))
                        index += tasks
                    }
                    return (hits, histogram)
                }
            }
            var results: [(hits: Int, histogram: Histogram<UInt64>)] = []
            for await result in group { results.append(result) }
            return results
        }
        let elapsed = ContinuousClock.now - start
        var merged = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        for part in perTask { merged.add(part.histogram) }
        var latency: [String: UInt64] = [:]
        for (name, percentile) in Self.percentiles { latency[name] = merged.valueAtPercentile(percentile) }
        let tiers = await cache.statistics().map { name, statistics in
            BenchOutcome.TierLine(
                name: name, hits: statistics.hits, misses: statistics.misses, stores: statistics.stores,
                evictions: statistics.evictions, refused: statistics.refusedTooLarge + statistics.refusedByPolicy,
                bytesInUse: statistics.usage?.bytes)
        }
        return BenchOutcome(
            subject: subject.rawValue, requests: requests, hits: perTask.reduce(0) { $0 + $1.hits },
            seconds: elapsed.inSeconds,
            latencyNanoseconds: latency, tiers: tiers)
    }
}

struct BenchError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
