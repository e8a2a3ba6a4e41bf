import Benchmark
import Foundation
import HTTPCaching
import HTTPTypes
import Synchronization
import TierCache
import TierCacheLMDB
import Workloads

// Purging by tag (issue 29), on an HTTPCache over a memory tier and an LMDB tier:
//
// - the time to purge one tag that 100,000 stored responses carry (the goal: 150 ms at p99);
// - a store with three tags against a store without, and a hit on a tagged response against a
//   hit on an untagged one, each pair timed in adjacent slices and reported as the ratio of the
//   slices' times x100 (100 = the same cost), since this machine's speed drifts over seconds.
//
// LMDB runs with `.none` durability: an fsync per store would hide what tags cost.

func httpPurgeBenchmarks() {
    let body = Data(String(repeating: "{\"id\":42,\"name\":\"item\"}", count: 40).utf8)  // about 1 KiB
    let fixture = PurgeFixture()
    let covered = 100_000

    Benchmark(
        "HTTP purge: one tag carried by \(covered) entries, memory over LMDB",
        configuration: .init(
            metrics: [.wallClock, .mallocCountTotal], scalingFactor: .one, maxDuration: .seconds(5),
            maxIterations: 2_000)
    ) { benchmark in
        let cache = try fixture.cache()
        for _ in benchmark.scaledIterations { try await cache.purge(tags: ["catalog"]) }
    } setup: {
        let cache = try fixture.cache()
        let transport = PurgeFixture.transport(body: body) { "catalog shard-\($0 % 100)" }
        for index in 0..<covered {
            _ = try await cache.response(for: PurgeFixture.request("primed", index), transport: transport)
        }
        // The purge must cover what was stored: a sample is a hit now, and a miss after one purge.
        let probe = PurgeFixture.request("primed", 7)
        guard try await cache.response(for: probe, transport: transport).source.isFromCache else {
            throw PurgeFixture.Unexpected(what: "a primed response was not stored")
        }
        try await cache.purge(tags: ["catalog"])
        guard try await !cache.response(for: probe, transport: transport).source.isFromCache else {
            throw PurgeFixture.Unexpected(what: "a purged response was still served")
        }
    } teardown: {
        fixture.remove()
    }

    let overhead = BenchmarkMetric.custom(
        "time with tags over without x100", polarity: .prefersSmaller, useScalingFactor: false)
    let paired = Benchmark.Configuration(
        metrics: [overhead], scalingFactor: .one, maxDuration: .seconds(8), maxIterations: 60)
    // Built before the runs: the origin's work is not the cache's.
    let pool = (0..<1_000).map { "catalog product-\($0) region-eu" }
    let pooledTags: @Sendable (Int) -> String? = { pool[$0 % 1_000] }
    let newTags: @Sendable (Int) -> String? = { "item-\($0)" }
    for (label, group, tags) in [
        ("three tags from a pool of 1,000", "with-pooled", pooledTags), ("one new tag per store", "with-new", newTags),
    ] {
        Benchmark("HTTP store with \(label) over a store without, paired slices", configuration: paired) {
            [cursor = AccessCursor()] benchmark in
            let cache = try fixture.cache()
            let clock = ContinuousClock()
            for sample in benchmark.scaledIterations {
                let first = cursor.take(500)
                /// 500 stores of new URLs; the requests and the origin's responses are built
                /// before the clock starts: the origin's work is not the cache's.
                func slice(_ group: String, _ tags: (Int) -> String?) async throws -> Duration {
                    let exchanges = (first..<(first + 500)).map {
                        (PurgeFixture.request(group, $0), PurgeFixture.response(tags: tags($0)))
                    }
                    let start = clock.now
                    for (request, response) in exchanges {
                        _ = try await cache.response(for: request) { _, _ in (response, body) }
                    }
                    return start.duration(to: clock.now)
                }
                // Which slice goes first alternates, so neither always follows the other.
                var withTags = Duration.zero, withoutTags = Duration.zero
                if sample.isMultiple(of: 2) {
                    withTags = try await slice(group, tags)
                    withoutTags = try await slice("without", { _ in nil })
                } else {
                    withoutTags = try await slice("without", { _ in nil })
                    withTags = try await slice(group, tags)
                }
                benchmark.measurement(overhead, Int((withTags / withoutTags * 100).rounded()))
            }
        } teardown: {
            fixture.remove()
        }
    }

    Benchmark("HTTP hit on a response with three tags over a hit without, paired slices", configuration: paired) {
        benchmark in
        let cache = try fixture.cache()
        let tagged = PurgeFixture.transport(body: body, tags: pooledTags)
        let untagged = PurgeFixture.transport(body: body) { _ in nil }
        let clock = ContinuousClock()
        for _ in benchmark.scaledIterations {
            let withStart = clock.now
            for call in 0..<2_000 {
                blackHole(
                    try await cache.response(for: PurgeFixture.request("hit-with", call & 255), transport: tagged))
            }
            let withTags = withStart.duration(to: clock.now)
            let withoutStart = clock.now
            for call in 0..<2_000 {
                blackHole(
                    try await cache.response(for: PurgeFixture.request("hit-without", call & 255), transport: untagged))
            }
            benchmark.measurement(overhead, Int((withTags / withoutStart.duration(to: clock.now) * 100).rounded()))
        }
    } teardown: {
        fixture.remove()
    }
}

/// The engine of one purge benchmark, made when it first asks (each benchmark runs in a process
/// of its own) and its store removed after it.
final class PurgeFixture: Sendable {
    private let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "tiercache-purge-\(UUID().uuidString)")
    private let made = Mutex<HTTPCache?>(nil)

    func cache() throws -> HTTPCache {
        try made.withLock { made in
            if let made { return made }
            let disk = try LMDBTier(directory: directory, configuration: .init(capacity: 4 << 30, durability: .none))
            let cache = HTTPCache(
                storage: TieredCache(tiers: [try MemoryTier(capacity: 256 << 20), disk]),
                configuration: .init(mode: .shared))
            made = cache
            return cache
        }
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    static func request(_ group: String, _ index: Int) -> HTTPRequest {
        HTTPRequest(method: .get, scheme: "https", authority: "shop.example.com", path: "/\(group)/items/\(index)")
    }

    /// A fresh response tagged with `tags` (`nil`: untagged).
    static func response(tags: String?) -> HTTPResponse {
        var fields: HTTPFields = [.cacheControl: "public, max-age=86400", .contentType: "application/json"]
        fields[.date] = date
        if let tags, let surrogateKey = HTTPField.Name("Surrogate-Key") { fields[surrogateKey] = tags }
        return HTTPResponse(status: .ok, headerFields: fields)
    }

    private static let date = HTTPDate.format(Date())

    /// An origin answering every request with a fresh 1 KiB response, tagged by `tags` of the
    /// item's number (`nil`: untagged).
    static func transport(body: Data, tags: @escaping @Sendable (Int) -> String?) -> HTTPCache.Transport {
        { request, _ in
            let index = Int(request.path?.split(separator: "/").last ?? "") ?? 0
            return (response(tags: tags(index)), body)
        }
    }

    struct Unexpected: Error {
        let what: String
    }
}
