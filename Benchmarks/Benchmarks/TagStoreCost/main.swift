import Foundation
import HTTPCaching
import HTTPTypes
import TierCache
import TierCacheLMDB

// The purge benchmarks' store (HTTPPurgeBenchmarks.swift) as a plain loop, for profiling (`perf
// record`) and for quick paired figures while changing the store path: on an HTTPCache over a
// memory tier and an LMDB tier with `.none` durability, stores with three tags from a pool of
// 1,000 and stores without, in alternating slices of 500 distinct URLs.
//   TagStoreCost paired SLICES          the median and quartiles of tagged / untagged time
//   TagStoreCost tagged|untagged STORES one kind only, for a profiler

let arguments = CommandLine.arguments
guard arguments.count == 3, ["paired", "tagged", "untagged"].contains(arguments[1]), let count = Int(arguments[2]),
    count > 0
else {
    print("usage: TagStoreCost paired SLICES | tagged|untagged STORES")
    exit(2)
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
    "tiercache-tag-store-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: directory) }
let disk = try LMDBTier(directory: directory, configuration: .init(capacity: 4 << 30, durability: .none))
let cache = HTTPCache(
    storage: TieredCache(tiers: [try MemoryTier(capacity: 256 << 20), disk]), configuration: .init(mode: .shared))

let body = Data(String(repeating: "{\"id\":42,\"name\":\"item\"}", count: 40).utf8)
let pool = (0..<1_000).map { "catalog product-\($0) region-eu" }
let surrogateKey = HTTPField.Name("Surrogate-Key")!
let date = HTTPDate.format(Date())

/// `stores` stores of distinct URLs from `first` on; the requests and responses are built before
/// the clock starts: the origin's work is not the cache's.
func run(tagged: Bool, first: Int, stores: Int) async throws -> Duration {
    let group = tagged ? "tagged" : "untagged"
    let requests = (first..<(first + stores)).map {
        HTTPRequest(method: .get, scheme: "https", authority: "shop.example.com", path: "/\(group)/items/\($0)")
    }
    let responses = (first..<(first + stores)).map { index in
        var fields: HTTPFields = [.cacheControl: "public, max-age=86400", .contentType: "application/json"]
        fields[.date] = date
        if tagged { fields[surrogateKey] = pool[index % pool.count] }
        return HTTPResponse(status: .ok, headerFields: fields)
    }
    let start = ContinuousClock.now
    for index in requests.indices {
        let response = responses[index]
        let answer = try await cache.response(for: requests[index]) { _, _ in (response, body) }
        guard answer.wasStored else { throw StoreFailed() }
    }
    return start.duration(to: .now)
}

struct StoreFailed: Error {}

if arguments[1] == "paired" {
    var ratios: [Double] = []
    for slice in 0..<count {
        // Which kind goes first alternates, so neither always follows the other.
        let first = try await run(tagged: slice.isMultiple(of: 2), first: slice * 500, stores: 500)
        let second = try await run(tagged: !slice.isMultiple(of: 2), first: slice * 500, stores: 500)
        ratios.append(slice.isMultiple(of: 2) ? first / second : second / first)
    }
    ratios.sort()
    func quantile(_ q: Double) -> String { String(format: "%.3f", ratios[Int(Double(ratios.count - 1) * q)]) }
    print(
        "tagged / untagged over \(count) slice pairs: median \(quantile(0.5)), quartiles \(quantile(0.25))–\(quantile(0.75))"
    )
} else {
    let elapsed = try await run(tagged: arguments[1] == "tagged", first: 0, stores: count)
    print("\(arguments[1]): \(count) stores, \(elapsed / count) each")
}
