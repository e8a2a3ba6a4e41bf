import Benchmark
import Foundation
import HTTPCaching
import HTTPTypes
import TierCache
import Workloads

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// A fresh hit from the memory tier through HTTPCache (key, lookup, decode, freshness decision,
// Age) against Foundation's URLCache answering the same request from memory (which evaluates no
// HTTP rules at all), in the same run.

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal], scalingFactor: .kilo, maxDuration: .seconds(3))
    for entries in [250, 1_000, 10_000, 100_000] { httpDiskHitBenchmarks(entries: entries) }
    httpPurgeBenchmarks()

    let url = URL(string: "https://api.example.com/v1/items/42?fields=all")!
    let body = Data(String(repeating: "{\"id\":42,\"name\":\"item\"}", count: 40).utf8)  // about 1 KiB
    let headers: [String: String] = [
        "Cache-Control": "public, max-age=3600", "Content-Type": "application/json", "ETag": "\"v1\"",
    ]

    // HTTPCache over a memory tier, primed with one fresh response.
    guard let memory = try? MemoryTier(capacity: 64 << 20) else { return }
    let cache = HTTPCache(storage: TieredCache(tiers: [memory]))
    let request = HTTPRequest(method: .get, url: url)
    var fields = HTTPFields()
    for (name, value) in headers { if let fieldName = HTTPField.Name(name) { fields[fieldName] = value } }
    fields[.date] = HTTPDate.format(Date())
    let primed = HTTPResponse(status: .ok, headerFields: fields)
    let transport: HTTPCache.Transport = { _, _ in (primed, body) }

    Benchmark("HTTP fresh memory hit: HTTPCache.response(for:)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try await cache.response(for: request, transport: transport))
        }
    } setup: {
        _ = try await cache.response(for: request, transport: transport)
    }

    // URLCache answering from memory.
    let urlCache = URLCache(memoryCapacity: 64 << 20, diskCapacity: 0, diskPath: nil)
    let urlRequest = URLRequest(url: url)
    if let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: headers) {
        urlCache.storeCachedResponse(
            CachedURLResponse(response: response, data: body, storagePolicy: .allowedInMemoryOnly), for: urlRequest)
    }
    Benchmark("HTTP fresh memory hit: baseline URLCache.cachedResponse(for:)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(urlCache.cachedResponse(for: urlRequest))
        }
    }

    // The same two lookups, alternated in adjacent slices of 2,000 calls each, and the ratio of
    // their times taken per pair: this machine's speed drifts by 2x over seconds, which moves the
    // two separate benchmarks above apart; a ratio of adjacent slices does not drift with it.
    // Reported as a custom metric, the speed-up x100 (300 = 3x).
    let speedup = BenchmarkMetric.custom(
        "HTTPCache speed-up over URLCache x100", polarity: .prefersLarger, useScalingFactor: false)
    Benchmark(
        "HTTP fresh memory hit: HTTPCache over URLCache, paired slices",
        configuration: .init(metrics: [speedup], scalingFactor: .one, maxDuration: .seconds(6), maxIterations: 400)
    ) { benchmark in
        let clock = ContinuousClock()
        // Equal requests built separately, as an app builds one per call: no string in one is
        // the same object as in another, so no comparison is decided by identity.
        let requests = (0..<64).map { _ in HTTPRequest(method: .get, url: url) }
        let urlRequests = (0..<64).map { _ in URLRequest(url: url) }
        for _ in benchmark.scaledIterations {
            let cacheStart = clock.now
            for call in 0..<2_000 {
                blackHole(try await cache.response(for: requests[call & 63], transport: transport))
            }
            let cacheTime = cacheStart.duration(to: clock.now)
            let urlCacheStart = clock.now
            for call in 0..<2_000 { blackHole(urlCache.cachedResponse(for: urlRequests[call & 63])) }
            let urlCacheTime = urlCacheStart.duration(to: clock.now)
            benchmark.measurement(speedup, Int((urlCacheTime / cacheTime * 100).rounded()))
        }
    } setup: {
        _ = try await cache.response(for: request, transport: transport)
    }

    // The same pairs with the caller on the main actor, where an app's UI code calls from: a
    // memory hit is answered there without leaving it (URLCache's lookup is synchronous).
    Benchmark(
        "HTTP fresh memory hit from the main actor: HTTPCache over URLCache, paired slices",
        configuration: .init(metrics: [speedup], scalingFactor: .one, maxDuration: .seconds(6), maxIterations: 200)
    ) { benchmark in
        let requests = (0..<64).map { _ in HTTPRequest(method: .get, url: url) }
        let urlRequests = (0..<64).map { _ in URLRequest(url: url) }
        let iterations = benchmark.scaledIterations
        let ratios = try await Task { @MainActor in
            let clock = ContinuousClock()
            var ratios: [Int] = []
            for _ in iterations {
                let cacheStart = clock.now
                for call in 0..<2_000 {
                    blackHole(try await cache.response(for: requests[call & 63], transport: transport))
                }
                let cacheTime = cacheStart.duration(to: clock.now)
                let urlCacheStart = clock.now
                for call in 0..<2_000 { blackHole(urlCache.cachedResponse(for: urlRequests[call & 63])) }
                ratios.append(Int((urlCacheStart.duration(to: clock.now) / cacheTime * 100).rounded()))
            }
            return ratios
        }.value
        for ratio in ratios { benchmark.measurement(speedup, ratio) }
    } setup: {
        _ = try await cache.response(for: request, transport: transport)
    }

    Benchmark("Cache-Control parse: public, max-age=3600, stale-while-revalidate=60") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(CacheControl("public, max-age=3600, stale-while-revalidate=60"))
        }
    }
}
