import Foundation
import HTTPCaching
import HTTPCachingFoundation
import HTTPTypes
import Testing
import TierCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A session whose only cache is `urlCache`: the one line of configuration an app adds.
func session(with urlCache: URLCache) -> URLSession {
    let configuration = URLSessionConfiguration.default
    configuration.urlCache = urlCache
    configuration.requestCachePolicy = .useProtocolCachePolicy
    configuration.timeoutIntervalForRequest = 10
    return URLSession(configuration: configuration)
}

func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

extension URLSession {
    /// `dataTask(with:completionHandler:)`, awaited: the form Alamofire-style libraries use and
    /// the one through which FoundationNetworking stores into `configuration.urlCache` (its
    /// async `data(for:)` does not store; see TieredURLCache's documentation).
    func loaded(_ request: URLRequest) async throws -> (Data, URLResponse) {
        try await withCheckedThrowingContinuation { continuation in
            dataTask(with: request) { data, response, error in
                if let data, let response {
                    continuation.resume(returning: (data, response))
                } else {
                    continuation.resume(throwing: error ?? URLError(.badServerResponse))
                }
            }.resume()
        }
    }
}

// The fresh responses here live an hour: URLSession judges freshness by the wall clock, and a CI
// machine that paused for 70 s made a 60-second response stale between two requests.
@Suite("TieredURLCache: URLSession's own caching over TierCache's tiers, against a loopback origin", .serialized)
struct TieredURLCacheTests {
    func memoryCache(
        capacity: Int = 4 << 20, policies: StoragePolicyTable = .init(["http": .allowed], default: .notAllowed)
    ) throws -> TieredCache {
        TieredCache(tiers: [try MemoryTier(capacity: capacity)], policyTable: policies)
    }

    /// Puts `request`'s answer into `urlCache` the way URLSession does on Apple platforms; on
    /// Linux FoundationNetworking never stores (its HTTP protocol reports every response with
    /// `cacheStoragePolicy: .notAllowed`), so the app (or its networking library) stores it.
    func load(
        _ request: URLRequest, with session: URLSession, into urlCache: TieredURLCache, expectStored: Bool = true
    ) async throws -> (Data, URLResponse) {
        let (data, response) = try await session.loaded(request)
        #if canImport(FoundationNetworking)
        if (response as? HTTPURLResponse)?.statusCode == 200 {
            // FoundationNetworking stored nothing itself: this is the difference the docs state.
            #expect(urlCache.cachedResponse(for: request) == nil)
            urlCache.storeCachedResponse(CachedURLResponse(response: response, data: data), for: request)
        }
        #endif
        #expect((urlCache.cachedResponse(for: request) != nil) == expectStored)
        return (data, response)
    }

    @Test("URLSession answers from the subclass's tiers; the origin sees one request")
    func storesAndServes() async throws {
        let origin = try await LoopbackOrigin.start()
        let storage = try memoryCache()
        let urlCache = TieredURLCache(storage: storage)
        let session = session(with: urlCache)
        let request = URLRequest(url: origin.url("/max-age/3600"))
        let (first, _) = try await load(request, with: session, into: urlCache)
        // The response is in the tier, not in URLCache's own storage (capacity 0).
        let stored = urlCache.cachedResponse(for: request)
        #expect(stored.map { text($0.data) } == "response 1")
        #expect(stored?.userInfo?[TieredURLCache.storedAtUserInfoKey] is Date)
        #expect(urlCache.currentMemoryUsage > 0)
        let (second, response) = try await session.loaded(request)
        #expect(text(first) == "response 1" && text(second) == "response 1")
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(origin.log.requests(to: "/max-age/3600").count == 1)
        try await origin.stop()
    }

    @Test(
        "cachePolicy is respected: reloadIgnoringLocalCacheData goes to the origin, returnCacheDataElseLoad answers with the origin gone"
    )
    func cachePolicy() async throws {
        let origin = try await LoopbackOrigin.start()
        let urlCache = TieredURLCache(storage: try memoryCache())
        let session = session(with: urlCache)
        var request = URLRequest(url: origin.url("/max-age/3600"))
        _ = try await load(request, with: session, into: urlCache)
        request.cachePolicy = .reloadIgnoringLocalCacheData
        let (reloaded, _) = try await session.loaded(request)
        #expect(text(reloaded) == "response 2")
        #expect(origin.log.requests(to: "/max-age/3600").count == 2)
        try await origin.stop()
        request.cachePolicy = .returnCacheDataElseLoad
        let (offline, _) = try await session.loaded(request)
        #expect(text(offline).hasPrefix("response "))
        #expect(origin.log.requests(to: "/max-age/3600").count == 2)
    }

    @Test("A stored response past its max-age is not served under useProtocolCachePolicy")
    func expired() async throws {
        let origin = try await LoopbackOrigin.start()
        let urlCache = TieredURLCache(storage: try memoryCache())
        let session = session(with: urlCache)
        let request = URLRequest(url: origin.url("/max-age/0"))
        let url = origin.url("/max-age/0")
        let old = try #require(
            HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                headerFields: ["Cache-Control": "max-age=1", "Date": "Mon, 01 Jan 2024 00:00:00 GMT"]))
        urlCache.storeCachedResponse(CachedURLResponse(response: old, data: Data("old".utf8)), for: request)
        let (body, _) = try await session.loaded(request)
        #expect(text(body) == "response 1")
        #expect(origin.log.requests(to: "/max-age/0").count == 1)
        try await origin.stop()
    }

    @Test("A stored response with Vary answers the request that matches it through URLSession, and stays stored")
    func varyThroughSession() async throws {
        let origin = try await LoopbackOrigin.start()
        let urlCache = TieredURLCache(storage: try memoryCache())
        let session = session(with: urlCache)
        var request = URLRequest(url: origin.url("/vary"))
        request.setValue("fr", forHTTPHeaderField: "Accept-Language")
        _ = try await load(request, with: session, into: urlCache)
        let (second, _) = try await session.loaded(request)
        #expect(text(second) == "language: fr")
        #expect(origin.log.requests(to: "/vary").count == 1)
        #expect(urlCache.cachedResponse(for: request) != nil)
        try await origin.stop()
    }

    @Test("A fresh stored response with Expires and no max-age is served through URLSession, and stays stored")
    func expiresThroughSession() async throws {
        let origin = try await LoopbackOrigin.start()
        let urlCache = TieredURLCache(storage: try memoryCache())
        let session = session(with: urlCache)
        let request = URLRequest(url: origin.url("/status/200"))
        let stored = try #require(
            HTTPURLResponse(
                url: origin.url("/status/200"), statusCode: 200, httpVersion: "HTTP/1.1",
                headerFields: [
                    "Date": HTTPDate.format(Date()), "Expires": HTTPDate.format(Date().addingTimeInterval(3600)),
                ]))
        urlCache.storeCachedResponse(CachedURLResponse(response: stored, data: Data("stored".utf8)), for: request)
        let (body, _) = try await session.loaded(request)
        #expect(text(body) == "stored")
        #expect(origin.log.requests(to: "/status/200").isEmpty)
        #expect(urlCache.cachedResponse(for: request) != nil)
        try await origin.stop()
    }

    /// Stored responses FoundationNetworking refuses to serve from a cache (and would delete).
    static let refusedOnLinux: [(name: String, requestFields: [String: String], responseFields: [String: String])] = [
        ("past its max-age", [:], ["Cache-Control": "max-age=1", "Date": "Mon, 01 Jan 2024 00:00:00 GMT"]),
        ("for a request with Authorization", ["Authorization": "Bearer token"], ["Cache-Control": "max-age=3600"]),
        ("marked no-cache", [:], ["Cache-Control": "no-cache"]),
    ]

    @Test(
        "Under returnCacheDataElseLoad, a stored response FoundationNetworking refuses is kept: on Linux the session goes to the origin, elsewhere it serves the response",
        arguments: refusedOnLinux)
    func refusedResponseKept(
        _ name: String, requestFields: [String: String], responseFields: [String: String]
    ) async throws {
        let origin = try await LoopbackOrigin.start()
        let urlCache = TieredURLCache(storage: try memoryCache())
        let session = session(with: urlCache)
        var request = URLRequest(url: origin.url("/status/200"))
        request.cachePolicy = .returnCacheDataElseLoad
        for (field, value) in requestFields { request.setValue(value, forHTTPHeaderField: field) }
        let stored = try #require(
            HTTPURLResponse(
                url: origin.url("/status/200"), statusCode: 200, httpVersion: "HTTP/1.1", headerFields: responseFields))
        urlCache.storeCachedResponse(CachedURLResponse(response: stored, data: Data("stored".utf8)), for: request)
        let (body, _) = try await session.loaded(request)
        #if canImport(FoundationNetworking)
        #expect(text(body) == "status 200", "\(name)")
        #else
        #expect(text(body) == "stored", "\(name)")
        #endif
        #expect(urlCache.cachedResponse(for: request) != nil, "\(name)")
        try await origin.stop()
    }

    @Test("removeAllCachedResponses racing a read leaves nothing promoted into the memory tier")
    func removeAllRacingRead() throws {
        let request = URLRequest(url: URL(string: "http://origin.test/account")!)
        let disk = ReadingOnRemoveAll(try MemoryTier(capacity: 4 << 20))
        let storage = TieredCache(
            tiers: [try MemoryTier(capacity: 4 << 20), disk],
            policyTable: .init(["http": .allowed], default: .notAllowed))
        let urlCache = TieredURLCache(storage: storage)
        let response = try #require(
            HTTPURLResponse(
                url: request.url!, statusCode: 200, httpVersion: "HTTP/1.1",
                headerFields: ["Cache-Control": "max-age=3600"]))
        urlCache.storeCachedResponse(CachedURLResponse(response: response, data: Data("user 1".utf8)), for: request)
        // Only on disk, as after the memory tier let it go: the read below promotes it.
        try storage.tiers[0].asLocal?.removeAll()
        // The read happens after the memory tier is emptied and before the disk is.
        disk.beforeRemoveAll = { _ = urlCache.cachedResponse(for: request) }
        urlCache.removeAllCachedResponses()
        #expect(urlCache.cachedResponse(for: request) == nil)
        #expect(try storage.tiers[0].asLocal?.usage().entries == 0)
    }

    @Test("Writes and removals reach a network tier in the order they were made")
    func networkTierOrder() async throws {
        let request = URLRequest(url: URL(string: "http://origin.test/page")!)
        let remote = RecordingRemoteTier()
        let storage = TieredCache(
            tiers: [try MemoryTier(capacity: 4 << 20), remote],
            policyTable: .init(["http": .allowed], default: .notAllowed))
        let urlCache = TieredURLCache(storage: storage)
        func store(_ body: String) throws {
            let response = try #require(
                HTTPURLResponse(
                    url: request.url!, statusCode: 200, httpVersion: "HTTP/1.1",
                    headerFields: ["Cache-Control": "max-age=3600"]))
            urlCache.storeCachedResponse(CachedURLResponse(response: response, data: Data(body.utf8)), for: request)
        }
        for round in 0..<50 {
            try store("v\(round)a")
            try store("v\(round)b")
            urlCache.removeCachedResponse(for: request)
            try store("v\(round)c")
        }
        // A removal of everything comes after all of them, and a store after it after it.
        urlCache.removeAllCachedResponses()
        try store("after")
        await urlCache.waitForNetworkWrites()
        let log = await remote.log
        #expect(log.count == 202)
        #expect(log == (0..<50).flatMap { _ in ["store", "store", "remove", "store"] } + ["removeAll", "store"])
        #expect(await remote.storedCount == 1)
    }

    @Test("A response the origin marks no-store is neither stored nor served")
    func noStore() async throws {
        let origin = try await LoopbackOrigin.start()
        let urlCache = TieredURLCache(storage: try memoryCache())
        let session = session(with: urlCache)
        let request = URLRequest(url: origin.url("/no-store"))
        _ = try await session.loaded(request)
        let (second, _) = try await session.loaded(request)
        #expect(text(second) == "not stored 2")
        #expect(urlCache.cachedResponse(for: request) == nil)
        try await origin.stop()
    }

    @Test("The scheme table applies: http not allowed means nothing is stored and every request reaches the origin")
    func schemePolicy() async throws {
        let origin = try await LoopbackOrigin.start()
        let urlCache = TieredURLCache(
            storage: try memoryCache(policies: .init(["https": .allowedInMemoryOnly], default: .notAllowed)))
        let session = session(with: urlCache)
        let request = URLRequest(url: origin.url("/max-age/3600"))
        _ = try await load(request, with: session, into: urlCache, expectStored: false)
        _ = try await session.loaded(request)
        #expect(urlCache.cachedResponse(for: request) == nil)
        #expect(urlCache.currentMemoryUsage == 0)
        #expect(origin.log.requests(to: "/max-age/3600").count == 2)
        try await origin.stop()
    }

    @Test("The 5% rule: a tier refuses an entry above 5% of its capacity, so URLSession goes back to the origin")
    func entrySizeRule() async throws {
        let origin = try await LoopbackOrigin.start()
        // 2,000 bytes of capacity admit entries up to 100 bytes; a stored response (fields and
        // body) is several hundred.
        let urlCache = TieredURLCache(storage: try memoryCache(capacity: 2_000))
        #expect(urlCache.memoryCapacity == 2_000)
        let session = session(with: urlCache)
        let request = URLRequest(url: origin.url("/max-age/3600"))
        _ = try await load(request, with: session, into: urlCache, expectStored: false)
        _ = try await session.loaded(request)
        #expect(urlCache.cachedResponse(for: request) == nil)
        #expect(origin.log.requests(to: "/max-age/3600").count == 2)
        try await origin.stop()
    }

    /// Apps answer a memory warning with `URLCache.shared.memoryCapacity = 0`; the setter did
    /// nothing, and the memory stayed taken.
    @Test("Setting memoryCapacity below what the memory tiers hold empties them; more changes nothing")
    func loweringMemoryCapacityFreesMemory() throws {
        let storage = try memoryCache(policies: .init(["https": .allowed], default: .notAllowed))
        let urlCache = TieredURLCache(storage: storage)
        let url = try #require(URL(string: "https://example.com/warned"))
        let response = try #require(
            HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Cache-Control": "max-age=60"]))
        urlCache.storeCachedResponse(
            CachedURLResponse(response: response, data: Data("body".utf8)), for: URLRequest(url: url))
        let held = urlCache.currentMemoryUsage
        #expect(held > 0)
        urlCache.memoryCapacity = urlCache.memoryCapacity * 2
        #expect(urlCache.currentMemoryUsage == held && urlCache.cachedResponse(for: URLRequest(url: url)) != nil)
        urlCache.memoryCapacity = 0
        #expect(urlCache.currentMemoryUsage == 0)
        #expect(urlCache.cachedResponse(for: URLRequest(url: url)) == nil)
    }

    @Test("Direct use: storage policy, store hooks, removal, and a corrupt entry read as a miss and removed")
    func directUse() throws {
        let storage = try memoryCache(policies: .init(["https": .allowed], default: .notAllowed))
        let hooks = [StoreHook.stripAuthenticationFields(), StoreHook.stampUserInfo("via") { _, _ in "hook" }]
        let urlCache = TieredURLCache(storage: storage, storeHooks: hooks)
        let url = try #require(URL(string: "https://example.com/a?x=1"))
        let request = URLRequest(url: url)
        let response = try #require(
            HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                headerFields: ["Set-Cookie": "s=1", "Cache-Control": "max-age=60"]))
        // .notAllowed on the response wins over the table's .allowed.
        let refused = urlCache.store(
            CachedURLResponse(response: response, data: Data("x".utf8), userInfo: nil, storagePolicy: .notAllowed),
            for: request)
        #expect(refused.isEmpty && urlCache.cachedResponse(for: request) == nil)
        urlCache.storeCachedResponse(
            CachedURLResponse(
                response: response, data: Data("body".utf8), userInfo: ["app": "1", "n": 2], storagePolicy: .allowed),
            for: request)
        let cached = try #require(urlCache.cachedResponse(for: request))
        let cachedHTTP = try #require(cached.response as? HTTPURLResponse)
        #expect(text(cached.data) == "body")
        #expect(cachedHTTP.value(forHTTPHeaderField: "Set-Cookie") == nil)
        #expect(cachedHTTP.value(forHTTPHeaderField: "Cache-Control") == "max-age=60")
        // RFC 9110 §6.6.1: the origin sent no Date; the cache that stored the response adds one.
        let date = try #require(cachedHTTP.value(forHTTPHeaderField: "Date"), "stored without a Date")
        #expect(HTTPDate.parse(date).map { abs($0.timeIntervalSinceNow) < 3_600 } == true, "\(date)")
        #expect(cached.userInfo?["via"] as? String == "hook" && cached.userInfo?["app"] as? String == "1")
        #expect(cached.userInfo?["n"] == nil)
        // A POST is not cached by the default key.
        var post = request
        post.httpMethod = "POST"
        #expect(urlCache.cachedResponse(for: post) == nil)
        urlCache.removeCachedResponse(for: request)
        #expect(urlCache.cachedResponse(for: request) == nil)
        // Garbage under the key: a miss, and the entry is gone.
        let key = try CacheKey(try #require(TieredURLCache.defaultKey(for: request)))
        let memory = try #require(storage.tiers.first as? MemoryTier)
        _ = memory.store(CacheEntry(value: [1, 2, 3], storedAt: Date()), forKey: key)
        #expect(urlCache.cachedResponse(for: request) == nil)
        #expect(storage.localEntry(forKey: key) == nil)
        urlCache.storeCachedResponse(CachedURLResponse(response: response, data: Data("b".utf8)), for: request)
        urlCache.removeAllCachedResponses()
        #expect(urlCache.cachedResponse(for: request) == nil && urlCache.currentMemoryUsage == 0)
    }

    /// Stored values that are not records: each reads as a miss and is removed from the tier.
    static let corruptValues: [[UInt8]] = [
        [],
        Array("TUC1".utf8),
        Array("TUC1".utf8) + [0xFF, 0xFF, 0xFF, 0xFF] + Array("{}".utf8),
        Array("TUC1".utf8) + [0, 0, 0, 2] + Array("{}".utf8),
        Array("XXXX".utf8) + [0, 0, 0, 0],
        record(#"{"status":99,"fields":[],"userInfo":{},"storagePolicy":"allowed","storedAt":0}"#),
        record(#"{"status":200,"fields":[["only-a-name"]],"userInfo":{},"storagePolicy":"allowed","storedAt":0}"#),
        record(#"{"status":200,"fields":[],"userInfo":{},"storagePolicy":"sometimes","storedAt":0}"#),
    ]

    static func record(_ header: String) -> [UInt8] {
        let bytes = Array(header.utf8)
        let length = UInt32(bytes.count)
        return Array("TUC1".utf8) + [
            UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF),
        ] + bytes + Array("body".utf8)
    }

    @Test("A corrupt stored value is a miss and is removed", arguments: corruptValues)
    func corruptValue(_ value: [UInt8]) throws {
        let memory = try MemoryTier(capacity: 1 << 20)
        let urlCache = TieredURLCache(storage: TieredCache(tiers: [memory]))
        let request = URLRequest(url: try #require(URL(string: "https://example.com/x")))
        let key = try CacheKey(try #require(TieredURLCache.defaultKey(for: request)))
        _ = memory.store(CacheEntry(value: value, storedAt: Date()), forKey: key)
        #expect(urlCache.cachedResponse(for: request) == nil)
        #expect(memory.entry(forKey: key) == nil)
    }

    @Test("A well-formed record written by hand reads back as the response it describes")
    func handWrittenRecord() throws {
        let memory = try MemoryTier(capacity: 1 << 20)
        let urlCache = TieredURLCache(storage: TieredCache(tiers: [memory]))
        let request = URLRequest(url: try #require(URL(string: "https://example.com/x")))
        let key = try CacheKey(try #require(TieredURLCache.defaultKey(for: request)))
        let value = Self.record(
            #"{"status":203,"fields":[["X-A","1"],["X-A","2"]],"userInfo":{"k":"v"},"storagePolicy":"allowedInMemoryOnly","storedAt":0}"#
        )
        _ = memory.store(CacheEntry(value: value, storedAt: Date()), forKey: key)
        let cached = try #require(urlCache.cachedResponse(for: request))
        let response = try #require(cached.response as? HTTPURLResponse)
        #expect(response.statusCode == 203 && response.value(forHTTPHeaderField: "X-A") == "1, 2")
        #expect(text(cached.data) == "body" && cached.storagePolicy == .allowedInMemoryOnly)
        #expect(cached.userInfo?["k"] as? String == "v")
        #expect(
            cached.userInfo?[TieredURLCache.storedAtUserInfoKey] as? Date == Date(timeIntervalSinceReferenceDate: 0))
    }
}

extension CacheTier {
    var asLocal: (any LocalCacheTier)? { self as? any LocalCacheTier }
}

/// A local tier that runs `beforeRemoveAll` when asked to empty itself, before it does: a read
/// that races the emptying of the tiers.
final class ReadingOnRemoveAll: LocalCacheTier, @unchecked Sendable {
    // `beforeRemoveAll` is set once, before the removal that reads it, on the test's one thread.
    var beforeRemoveAll: (() -> Void)?
    private let inner: MemoryTier
    init(_ inner: MemoryTier) { self.inner = inner }
    var name: String { "racing disk" }
    var medium: TierMedium { .disk }
    func entry(forKey key: CacheKey) -> CacheEntry? { inner.entry(forKey: key) }
    func store(_ entry: CacheEntry, forKey key: CacheKey) -> StoreOutcome { inner.store(entry, forKey: key) }
    func removeEntry(forKey key: CacheKey) { inner.removeEntry(forKey: key) }
    func removeAll() {
        beforeRemoveAll?()
        inner.removeAll()
    }
    func usage() -> TierUsage { inner.usage() }
    func statistics() -> TierStatistics { inner.statistics() }
}

/// A network tier that records what reaches it, in order. Each operation takes a while, longer for
/// some than others (as network round trips do), so that operations sent without waiting for one
/// another would arrive out of order.
actor RecordingRemoteTier: CacheTier {
    nonisolated let name = "recording remote"
    nonisolated let medium = TierMedium.remote
    private(set) var log: [String] = []
    private var entries: [CacheKey: CacheEntry] = [:]
    var storedCount: Int { entries.count }
    private var calls = 0

    private func roundTrip() async {
        calls += 1
        for _ in 0..<(calls % 4 * 3) { await Task.yield() }
    }

    func entry(forKey key: CacheKey) -> CacheEntry? { entries[key] }
    func store(_ entry: CacheEntry, forKey key: CacheKey) async -> StoreOutcome {
        await roundTrip()
        log.append("store")
        entries[key] = entry
        return .stored
    }
    func removeEntry(forKey key: CacheKey) async {
        await roundTrip()
        log.append("remove")
        entries[key] = nil
    }
    func removeAll() {
        log.append("removeAll")
        entries = [:]
    }
    func usage() -> TierUsage { TierUsage(bytes: 0, entries: entries.count, capacity: 1 << 30, maxEntryBytes: 1 << 20) }
    func statistics() -> TierStatistics { TierStatistics() }
}
