import Benchmark
import Foundation
import HTTPCaching
import HTTPTypes
import TierCache
import TierCacheLMDB
import Workloads

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Fresh hits from disk (issue 16): HTTPCache over an LMDB tier alone (no memory tier, so every
// hit reads, decompresses and decodes a record) against Foundation's URLCache with a disk
// capacity and no memory capacity, both holding `entries` responses of about 1 KiB, and asked
// for them in a shuffled order that carries on across samples (a restart would replay a few
// hot entries). The figure to compare is the ratio, and how each moves with `entries`.
//
// URLCache is measured at 250 and 1,000 entries only. On Linux (swift-corelibs-foundation) each
// of its stores and lookups walks every file of its directory: measured here, priming takes
// 4 s for 250 entries, 62 s for 1,000 and 249 s for 2,000 (each store costs time in proportion to
// the entries already stored), and a lookup takes 2.1 ms at 250 entries, 10.7 ms at 1,000 and
// 17.9 ms at 2,000. Priming 10,000 entries would take well over an hour, so the suite does not.

func httpDiskHitBenchmarks(entries: Int) {
    let body = Data(String(repeating: "{\"id\":42,\"name\":\"item\"}", count: 40).utf8)  // about 1 KiB
    let headers: [String: String] = [
        "Cache-Control": "public, max-age=86400", "Content-Type": "application/json", "ETag": "\"v1\"",
    ]
    let urls = (0..<entries).compactMap { URL(string: "https://api.example.com/v1/items/\($0)?fields=all") }
    var generator = SystemRandomNumberGenerator()
    let order = Array(urls.indices).shuffled(using: &generator)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "tiercache-disk-hits-\(entries)-\(UUID().uuidString)")

    let fixture = DiskHitFixture(directory: directory)
    var fields = HTTPFields()
    for (name, value) in headers { if let fieldName = HTTPField.Name(name) { fields[fieldName] = value } }
    fields[.date] = HTTPDate.format(Date())
    let primed = HTTPResponse(status: .ok, headerFields: fields)
    let transport: HTTPCache.Transport = { _, _ in (primed, body) }
    let requests = urls.map { HTTPRequest(method: .get, url: $0) }

    Benchmark("HTTP fresh disk hit, \(entries) entries: HTTPCache over LMDBTier") {
        [cursor = AccessCursor()] benchmark in
        let cache = try fixture.cache()
        var position = cursor.take(benchmark.scaledIterations.count)
        for _ in benchmark.scaledIterations {
            blackHole(try await cache.response(for: requests[order[position % order.count]], transport: transport))
            position &+= 1
        }
    } setup: {
        let cache = try fixture.cache()
        for request in requests { _ = try await cache.response(for: request, transport: transport) }
        // What is timed must be hits: check a sample before the first measurement.
        for request in requests.prefix(50)
        where try await !cache.response(for: request, transport: transport).source.isFromCache {
            throw DiskHitFixture.NotAHit(url: request.path ?? "")
        }
    } teardown: {
        fixture.remove()
    }

    guard entries <= 1_000 else { return }
    let urlRequests = urls.map { URLRequest(url: $0) }
    // Milliseconds a lookup: one lookup an iteration, a few hundred a run.
    let slow = Benchmark.Configuration(scalingFactor: .one, maxDuration: .seconds(5), maxIterations: 500)
    Benchmark("HTTP fresh disk hit, \(entries) entries: baseline URLCache from disk", configuration: slow) {
        [cursor = AccessCursor()] benchmark in
        let urlCache = fixture.urlCache()
        var position = cursor.take(benchmark.scaledIterations.count)
        for _ in benchmark.scaledIterations {
            blackHole(urlCache.cachedResponse(for: urlRequests[order[position % order.count]]))
            position &+= 1
        }
    } setup: {
        let urlCache = fixture.urlCache()
        for (url, request) in zip(urls, urlRequests) {
            guard
                let response = HTTPURLResponse(
                    url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: headers)
            else { continue }
            urlCache.storeCachedResponse(
                CachedURLResponse(response: response, data: body, storagePolicy: .allowed), for: request)
        }
        for request in urlRequests.prefix(50) where urlCache.cachedResponse(for: request) == nil {
            throw DiskHitFixture.NotAHit(url: request.url?.absoluteString ?? "")
        }
    } teardown: {
        fixture.remove()
    }
}

/// The two caches of one entry count, made when a benchmark first asks (each benchmark runs in a
/// process of its own, so the others' stores are never created) and removed after it.
///
/// `@unchecked Sendable`: the lock guards both caches; a benchmark's setup, samples and teardown
/// run one after another.
final class DiskHitFixture: @unchecked Sendable {
    private let directory: URL
    private let lock = NSLock()
    private var httpCache: HTTPCache?
    private var foundationCache: URLCache?

    init(directory: URL) { self.directory = directory }

    /// HTTPCache over an LMDB tier alone. Priming with `.none` durability: what is measured is
    /// reading, and an fsync per entry would make priming 100,000 entries take minutes.
    func cache() throws -> HTTPCache {
        try lock.withLock {
            if let httpCache { return httpCache }
            let disk = try LMDBTier(
                directory: directory.appendingPathComponent("lmdb"),
                configuration: .init(capacity: 2 << 30, durability: .none))
            let made = HTTPCache(storage: TieredCache(tiers: [disk]))
            httpCache = made
            return made
        }
    }

    /// URLCache with a disk capacity and no memory capacity.
    func urlCache() -> URLCache {
        lock.withLock {
            if let foundationCache { return foundationCache }
            let made = URLCache(
                memoryCapacity: 0, diskCapacity: 2 << 30, diskPath: directory.appendingPathComponent("urlcache").path)
            foundationCache = made
            return made
        }
    }

    /// A primed entry that was not served from the cache: the benchmark would time misses.
    struct NotAHit: Error {
        let url: String
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}
