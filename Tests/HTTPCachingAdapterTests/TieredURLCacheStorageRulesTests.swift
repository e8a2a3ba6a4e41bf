import Foundation
import HTTPCaching
import HTTPTypes
import Testing
import TierCache

@testable import HTTPCachingFoundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `TieredURLCache` keeps of what it is asked to store: RFC 9111's rules for a private
/// cache, no hop-by-hop fields, a body whose length the record checks, and a bound on what waits
/// for a network tier.
@Suite("TieredURLCache: what is stored")
struct TieredURLCacheStorageRulesTests {
    let url = URL(string: "https://example.com/item")!

    func urlCache(
        tiers: [any CacheTier]? = nil, networkWriteBudget: Int = 64 << 20,
        key: (@Sendable (URLRequest) -> String?)? = nil, hooks: [StoreHook] = []
    ) throws -> TieredURLCache {
        TieredURLCache(
            storage: TieredCache(tiers: try tiers ?? [MemoryTier(capacity: 1 << 20)]), storeHooks: hooks, key: key,
            networkWriteBudget: networkWriteBudget)
    }

    func response(
        _ status: Int = 200, _ fields: [String: String], body: String = "content"
    ) throws
        -> CachedURLResponse
    {
        let response = try #require(
            HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields))
        return CachedURLResponse(response: response, data: Data(body.utf8))
    }

    @Test(
        "Responses a private cache must not store are not stored",
        arguments: [
            (206, ["Cache-Control": "max-age=60", "Content-Range": "bytes 0-6/100"], [String: String]()),
            (200, ["Cache-Control": "no-store"], [:]),
            (200, ["Cache-Control": "max-age=60"], ["Cache-Control": "no-store"]),
            (500, [:], [:]),
            (304, ["Cache-Control": "max-age=60"], [:]),
        ])
    func refused(status: Int, fields: [String: String], requestFields: [String: String]) throws {
        let urlCache = try urlCache()
        var request = URLRequest(url: url)
        for (name, value) in requestFields { request.setValue(value, forHTTPHeaderField: name) }
        #expect(urlCache.store(try response(status, fields), for: request).isEmpty)
        #expect(urlCache.cachedResponse(for: URLRequest(url: url)) == nil)
    }

    @Test("A refused response leaves the stored one in place")
    func refusedKeepsStored() throws {
        let urlCache = try urlCache()
        let request = URLRequest(url: url)
        urlCache.storeCachedResponse(try response(200, ["Cache-Control": "max-age=60"], body: "kept"), for: request)
        urlCache.storeCachedResponse(try response(200, ["Cache-Control": "no-store"], body: "refused"), for: request)
        #expect(urlCache.cachedResponse(for: request).map { text($0.data) } == "kept")
    }

    @Test("A hook can make a response storable; a key function's method is judged as a GET")
    func hooksAndMethods() throws {
        let urlCache = try urlCache(
            key: { "any \($0.httpMethod ?? "GET") \($0.url?.absoluteString ?? "")" },
            hooks: [.overrideCacheControl("max-age=300") { _, response in response.status.code == 500 }])
        let request = URLRequest(url: url)
        urlCache.storeCachedResponse(try response(500, [:], body: "cached error"), for: request)
        #expect(urlCache.cachedResponse(for: request).map { text($0.data) } == "cached error")
        var post = URLRequest(url: url)
        post.httpMethod = "POST"
        urlCache.storeCachedResponse(try response(200, ["Cache-Control": "max-age=60"], body: "query"), for: post)
        #expect(urlCache.cachedResponse(for: post).map { text($0.data) } == "query")
    }

    @Test("Hop-by-hop fields, and the fields Connection names, are not stored")
    func hopByHop() throws {
        let urlCache = try urlCache()
        let request = URLRequest(url: url)
        urlCache.storeCachedResponse(
            try response(
                200,
                [
                    "Cache-Control": "max-age=60", "Connection": "close, X-Hop", "Keep-Alive": "timeout=5",
                    "X-Hop": "1",
                    "X-Kept": "2",
                ]),
            for: request)
        let stored = try #require(urlCache.cachedResponse(for: request)?.response as? HTTPURLResponse)
        #expect(stored.value(forHTTPHeaderField: "X-Kept") == "2")
        for name in ["Connection", "Keep-Alive", "X-Hop"] {
            #expect(stored.value(forHTTPHeaderField: name) == nil, "\(name) was stored")
        }
    }

    @Test("A record whose body is not the length its header gives is a miss, and is removed")
    func truncatedBody() throws {
        let memory = try MemoryTier(capacity: 1 << 20)
        let urlCache = try urlCache(tiers: [memory])
        let request = URLRequest(url: url)
        urlCache.storeCachedResponse(
            try response(200, ["Cache-Control": "max-age=60"], body: "whole body"), for: request)
        let key = try CacheKey(try #require(TieredURLCache.defaultKey(for: request)))
        let whole = try #require(memory.entry(forKey: key))
        _ = memory.store(
            CacheEntry(value: Array(whole.value.dropLast(3)), storedAt: whole.metadata.storedAt), forKey: key)
        #expect(urlCache.cachedResponse(for: request) == nil)
        #expect(memory.entry(forKey: key) == nil)
        #expect(throws: URLCacheRecord.DecodeFailure.self) { try URLCacheRecord.decode(whole.value + [0]) }
    }

    @Test("Capacities add up without overflow when a tier has no byte bound")
    func unboundedCapacity() throws {
        let urlCache = try urlCache(tiers: [MemoryTier(capacity: 1 << 20), UnboundedLocalTier()])
        #expect(urlCache.memoryCapacity == Int.max)
    }

    @Test("removeCachedResponses(since:) empties the local tiers and leaves the shared network tier alone")
    func removeSinceIsLocal() async throws {
        let remote = RecordingRemoteTier()
        let urlCache = try urlCache(tiers: [MemoryTier(capacity: 1 << 20), remote])
        let request = URLRequest(url: url)
        urlCache.storeCachedResponse(try response(200, ["Cache-Control": "max-age=60"]), for: request)
        urlCache.removeCachedResponses(since: Date(timeIntervalSinceNow: 3600))
        #expect(urlCache.cachedResponse(for: request) != nil, "nothing was stored since an hour from now")
        urlCache.removeCachedResponses(since: Date(timeIntervalSinceNow: -3600))
        await urlCache.waitForNetworkWrites()
        #expect(urlCache.cachedResponse(for: request) == nil)
        #expect(await remote.log == ["store"])
        #expect(await remote.storedCount == 1)
    }

    @Test("A removal racing a store reaches the network tier after it, as it reached the local tier")
    func removalRacingAStoreKeepsItsOrder() async throws {
        let local = try FirstStoreHeldLocalTier()
        let remote = RecordingRemoteTier()
        let urlCache = try urlCache(tiers: [local, remote])
        let stored = try response(200, ["Cache-Control": "max-age=60"])
        let request = URLRequest(url: url)
        let done = DispatchGroup()
        DispatchQueue.global().async(group: done) { urlCache.storeCachedResponse(stored, for: request) }
        local.entered.wait()
        // The store is in the local tier; a logout empties the cache meanwhile.
        // (The local removal waits for the store's local write either way: what differs is
        // whether the store's network write is queued before the removal's.)
        let removing = DispatchSemaphore(value: 0)
        DispatchQueue.global().async(group: done) {
            removing.signal()
            urlCache.removeAllCachedResponses()
        }
        removing.wait()
        local.release.signal()
        done.wait()
        await urlCache.waitForNetworkWrites()
        #expect(await remote.log == ["store", "removeAll"], "the shared tier kept the response after the removal")
        #expect(await remote.storedCount == 0)
    }

    @Test("Past the budget of bytes waiting for a network tier, a store removes the key there instead")
    func networkWriteBudget() async throws {
        let remote = GatedRemoteTier()
        let urlCache = try urlCache(tiers: [MemoryTier(capacity: 1 << 20), remote], networkWriteBudget: 2_000)
        let body = String(repeating: "x", count: 1_200)
        for path in ["a", "b"] {
            urlCache.storeCachedResponse(
                try response(200, ["Cache-Control": "max-age=60"], body: body),
                for: URLRequest(url: url.appendingPathComponent(path)))
        }
        // Both are in the local tier; the second's write did not fit beside the first's.
        for path in ["a", "b"] {
            #expect(urlCache.cachedResponse(for: URLRequest(url: url.appendingPathComponent(path))) != nil)
        }
        await remote.open()
        await urlCache.waitForNetworkWrites()
        #expect(await remote.log.sorted() == ["remove", "store"])
        // The bytes came back: a write fits again.
        urlCache.storeCachedResponse(
            try response(200, ["Cache-Control": "max-age=60"], body: body),
            for: URLRequest(url: url.appendingPathComponent("c")))
        await urlCache.waitForNetworkWrites()
        #expect(await remote.log.filter { $0 == "store" }.count == 2)
    }

    @Test(
        "What a shared cache may not store stays in the local tiers; the network tier loses the key instead",
        arguments: [
            (["Cache-Control": "private, max-age=60"], [String: String]()),
            (["Cache-Control": "max-age=60"], ["Authorization": "Bearer secret"]),
            (["Cache-Control": "max-age=60", "Set-Cookie": "session=secret"], [:]),
        ])
    func privateResponsesStayLocal(fields: [String: String], requestFields: [String: String]) async throws {
        let remote = RecordingRemoteTier()
        let urlCache = try urlCache(tiers: [MemoryTier(capacity: 1 << 20), remote])
        var request = URLRequest(url: url)
        for (name, value) in requestFields { request.setValue(value, forHTTPHeaderField: name) }
        // A shared response first (to a request without credentials), then the private one under
        // the same key.
        urlCache.storeCachedResponse(
            try response(200, ["Cache-Control": "max-age=60"], body: "shared"), for: URLRequest(url: url))
        #expect(urlCache.store(try response(200, fields, body: "personal"), for: request).map(\.outcome) == [.stored])
        await urlCache.waitForNetworkWrites()
        #expect(await remote.log == ["store", "remove"])
        #expect(await remote.storedCount == 0)
        #expect(urlCache.cachedResponse(for: request)?.data == Data("personal".utf8))
    }

    @Test("A response a shared cache may store with Authorization reaches the network tier")
    func authorizedPublicResponseIsShared() async throws {
        let remote = RecordingRemoteTier()
        let urlCache = try urlCache(tiers: [MemoryTier(capacity: 1 << 20), remote])
        var request = URLRequest(url: url)
        request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
        urlCache.storeCachedResponse(try response(200, ["Cache-Control": "public, max-age=60"]), for: request)
        await urlCache.waitForNetworkWrites()
        #expect(await remote.log == ["store"])
    }

    @Test("A body URLSession decoded is described as decoded; an encoded one, a HEAD or a 304 is left as sent")
    func decodedContent() throws {
        let get = HTTPRequest(method: .get, scheme: "https", authority: "example.com", path: "/")
        func described(
            _ fields: HTTPFields, _ body: [UInt8], status: Int = 200, method: HTTPRequest.Method = .get
        )
            -> HTTPFields
        {
            var request = get
            request.method = method
            return DecodedContent.describing(
                Data(body), in: HTTPResponse(status: .init(code: status), headerFields: fields), to: request,
                decoding: DecodedContent.urlSessionCodings
            ).headerFields
        }
        let gzip: HTTPFields = [.contentEncoding: "gzip", .contentLength: "30"]
        let plain = Array("plain text".utf8)
        let decoded = described(gzip, plain)
        #expect(decoded[.contentEncoding] == nil && decoded[.contentLength] == "10")
        // Without Content-Length: gzip's magic number says the body is still encoded.
        #expect(described([.contentEncoding: "gzip"], [0x1F, 0x8B, 8, 0])[.contentEncoding] == "gzip")
        #expect(described([.contentEncoding: "gzip"], plain)[.contentEncoding] == nil)
        #expect(described([.contentEncoding: "deflate"], [0x78, 0x9C, 1])[.contentEncoding] == "deflate")
        #expect(described([.contentEncoding: "br"], plain)[.contentEncoding] == nil)
        // A Content-Length that is the body's: not decoded.
        #expect(described([.contentEncoding: "gzip", .contentLength: "10"], plain)[.contentEncoding] == "gzip")
        // A coding URLSession does not decode, and responses without content.
        #expect(described([.contentEncoding: "compress", .contentLength: "30"], plain)[.contentEncoding] == "compress")
        #expect(described(gzip, [], method: .head) == gzip)
        #expect(described(gzip, [], status: 304) == gzip)
        // Text that starts like a zlib header with a window over 32 KiB: decoded.
        #expect(described([.contentEncoding: "deflate"], [0x88, 0x1C, 1])[.contentEncoding] == nil)
    }
}

/// A local tier that reports no byte bound (`Int.max`), as one bounded by its entry count may.
final class UnboundedLocalTier: LocalCacheTier {
    let name = "unbounded"
    let medium = TierMedium.memory
    func entry(forKey key: CacheKey) -> CacheEntry? { nil }
    func store(_ entry: CacheEntry, forKey key: CacheKey) -> StoreOutcome { .refused(.policy(.notAllowed)) }
    func removeEntry(forKey key: CacheKey) {}
    func removeAll() {}
    func usage() -> TierUsage { TierUsage(bytes: 0, entries: 0, capacity: Int.max, maxEntryBytes: 0) }
    func statistics() -> TierStatistics { TierStatistics() }
}

/// A network tier whose operations wait until the test opens it: writes that stay in flight.
actor GatedRemoteTier: CacheTier {
    nonisolated let name = "gated remote"
    nonisolated let medium = TierMedium.remote
    private(set) var log: [String] = []
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func open() {
        isOpen = true
        for continuation in waiting { continuation.resume() }
        waiting = []
    }

    private func pass() async {
        guard !isOpen else { return }
        await withCheckedContinuation { waiting.append($0) }
    }

    func entry(forKey key: CacheKey) -> CacheEntry? { nil }
    func store(_ entry: CacheEntry, forKey key: CacheKey) async -> StoreOutcome {
        await pass()
        log.append("store")
        return .stored
    }
    func removeEntry(forKey key: CacheKey) async {
        await pass()
        log.append("remove")
    }
    func removeAll() { log.append("removeAll") }
    func usage() -> TierUsage { TierUsage(bytes: 0, entries: 0, capacity: 1 << 30, maxEntryBytes: 1 << 20) }
    func statistics() -> TierStatistics { TierStatistics() }
}

/// A local tier whose first store waits, once it has begun, until `release` is signalled.
final class FirstStoreHeldLocalTier: LocalCacheTier, @unchecked Sendable {
    // @unchecked Sendable: the memory tier is Sendable, the semaphores are thread-safe, and
    // `held` is read and written under `lock`.
    let name = "first-store-held local"
    let medium = TierMedium.memory
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    private let inner: MemoryTier
    private let lock = NSLock()
    private var held = false

    init() throws { inner = try MemoryTier(capacity: 1 << 20) }

    func entry(forKey key: CacheKey) throws -> CacheEntry? { inner.entry(forKey: key) }
    func store(_ entry: CacheEntry, forKey key: CacheKey) throws -> StoreOutcome {
        let first = lock.withLock {
            defer { held = true }
            return !held
        }
        if first {
            entered.signal()
            release.wait()
        }
        return inner.store(entry, forKey: key)
    }
    func removeEntry(forKey key: CacheKey) throws { inner.removeEntry(forKey: key) }
    func removeAll() throws { inner.removeAll() }
    func usage() throws -> TierUsage { inner.usage() }
    func statistics() -> TierStatistics { TierStatistics() }
}
