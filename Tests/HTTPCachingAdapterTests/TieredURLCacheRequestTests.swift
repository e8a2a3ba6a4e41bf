import Foundation
import HTTPCaching
import Testing
import TierCache

@testable import HTTPCachingFoundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a request asks of a stored response beyond its URL: the fields `Vary` names, and its
/// own `Cache-Control`.
@Suite("TieredURLCache: Vary and the request's Cache-Control")
struct TieredURLCacheRequestTests {
    let url = URL(string: "https://example.com/greeting")!

    func request(_ fields: [String: String] = [:]) -> URLRequest {
        var request = URLRequest(url: url)
        for (name, value) in fields { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    func cached(_ fields: [String: String], body: String = "bonjour") throws -> CachedURLResponse {
        let response = try #require(
            HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: fields))
        return CachedURLResponse(response: response, data: Data(body.utf8))
    }

    func urlCache() throws -> TieredURLCache {
        TieredURLCache(storage: TieredCache(tiers: [try MemoryTier(capacity: 1 << 20)]))
    }

    @Test("A response that varies answers only requests sending the same values of the fields Vary names")
    func vary() throws {
        let urlCache = try urlCache()
        let french = request(["Accept-Language": "fr", "Accept-Encoding": "gzip"])
        urlCache.storeCachedResponse(
            try cached(["Cache-Control": "max-age=3600", "Vary": "Accept-Language, Accept-Encoding"]), for: french)
        #expect(urlCache.cachedResponse(for: french).map { text($0.data) } == "bonjour")
        #expect(urlCache.cachedResponse(for: request(["Accept-Language": "  fr "])) != nil, "compared normalised")
        #expect(
            urlCache.cachedResponse(for: request(["Accept-Language": "fr", "Accept-Encoding": "br"])) != nil,
            "Accept-Encoding is URLSession's own: the stored body is decoded either way")
        #expect(urlCache.cachedResponse(for: request(["Accept-Language": "en"])) == nil)
        #expect(urlCache.cachedResponse(for: request()) == nil)
        // The next variant stored replaces the first.
        let english = request(["Accept-Language": "en"])
        urlCache.storeCachedResponse(try cached(["Vary": "Accept-Language"], body: "hello"), for: english)
        #expect(urlCache.cachedResponse(for: english).map { text($0.data) } == "hello")
        #expect(urlCache.cachedResponse(for: french) == nil)
    }

    @Test("Vary: * is not stored, and the response stored before it goes")
    func varyStar() throws {
        let urlCache = try urlCache()
        urlCache.storeCachedResponse(try cached(["Cache-Control": "max-age=3600"]), for: request())
        #expect(urlCache.cachedResponse(for: request()) != nil)
        #expect(urlCache.store(try cached(["Vary": "*"]), for: request()).isEmpty)
        #expect(urlCache.cachedResponse(for: request()) == nil)
    }

    /// Parsed without its base, `users/me` was the key of every host's `users/me`.
    @Test("A URL relative to a base is keyed by the absolute URL: another host's response never answers it")
    func relativeURLs() throws {
        let a = try #require(URL(string: "users/me", relativeTo: URL(string: "https://a.example/api/")))
        let b = try #require(URL(string: "users/me", relativeTo: URL(string: "https://b.example/api/")))
        #expect(TieredURLCache.defaultKey(for: URLRequest(url: a)) == "urlcache GET https://a.example/api/users/me")
        #expect(TieredURLCache.defaultKey(for: URLRequest(url: b)) == "urlcache GET https://b.example/api/users/me")
        let urlCache = try urlCache()
        let response = try #require(
            HTTPURLResponse(
                url: a, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Cache-Control": "max-age=60"]))
        urlCache.storeCachedResponse(
            CachedURLResponse(response: response, data: Data("a's".utf8)), for: URLRequest(url: a))
        #expect(urlCache.cachedResponse(for: URLRequest(url: a))?.data == Data("a's".utf8))
        #expect(urlCache.cachedResponse(for: URLRequest(url: b)) == nil)
    }

    @Test("A record written before the request's values were kept answers only if its response does not vary")
    func recordsWithoutValues() throws {
        let memory = try MemoryTier(capacity: 1 << 20)
        let urlCache = TieredURLCache(storage: TieredCache(tiers: [memory]))
        let key = try CacheKey(try #require(TieredURLCache.defaultKey(for: request())))
        for (fields, answers) in [(#"[["Vary","Accept-Language"]]"#, false), (#"[["X-A","1"]]"#, true)] {
            let value = TieredURLCacheTests.record(
                #"{"status":200,"fields":\#(fields),"userInfo":{},"storagePolicy":"allowed","storedAt":0}"#)
            _ = memory.store(CacheEntry(value: value, storedAt: Date()), forKey: key)
            #expect((urlCache.cachedResponse(for: request()) != nil) == answers, "\(fields)")
        }
    }

    @Test(
        "The request's Cache-Control limits what a fresh stored response answers",
        arguments: [
            ([:], true), (["Cache-Control": "no-cache"], false), (["Cache-Control": "no-store"], false),
            (["Pragma": "no-cache"], false), (["Cache-Control": "max-age=50"], false),
            (["Cache-Control": "max-age=200"], true), (["Cache-Control": "min-fresh=4000"], false),
            (["Cache-Control": "min-fresh=100"], true),
        ])
    func requestDirectives(fields: [String: String], answers: Bool) throws {
        let now = Date()
        let response = try #require(
            HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Cache-Control": "max-age=3600"]))
        // Stored 100 seconds ago, fresh for an hour.
        let stored = CachedURLResponse(
            response: response, data: Data(), userInfo: [TieredURLCache.storedAtUserInfoKey: now - 100],
            storagePolicy: .allowed)
        #expect(TieredURLCache.isFresh(stored, for: request(fields), now: now) == answers)
    }
}
