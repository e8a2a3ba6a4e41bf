import Foundation
import HTTPCaching
import HTTPTypes
import NIOCore
import NIOHTTP1
import Testing
import TierCache

@testable import TierCacheProxy

/// The reuse of answers built from stored responses (`AnswerMemo`) and the engine counter it relies on.
@Suite("Answer memo")
struct AnswerMemoTests {
    let now = ContinuousClock.now

    func entry(generation: UInt64, validFor seconds: Double) -> AnswerMemo.Entry {
        AnswerMemo.Entry(
            head: HTTPResponseHead(version: .http1_1, status: .ok), body: ByteBuffer(string: "x"),
            generation: generation, validUntil: now + .seconds(seconds))
    }

    @Test("Only plain GET and HEAD requests have a key; fields that change the answer disqualify them")
    func keys() {
        #expect(AnswerMemo.key(for: HTTPRequestHead(version: .http1_1, method: .GET, uri: "/x?y=1")) == "/x?y=1")
        #expect(AnswerMemo.key(for: HTTPRequestHead(version: .http1_1, method: .HEAD, uri: "/x")) == "HEAD /x")
        #expect(AnswerMemo.key(for: HTTPRequestHead(version: .http1_1, method: .POST, uri: "/x")) == nil)
        let large = HTTPRequestHead(
            version: .http1_1, method: .GET, uri: "/x", headers: ["X-Big": String(repeating: "a", count: 100)])
        #expect(AnswerMemo.key(for: large, maximumHeaderBytes: 64) == nil, "the full path answers 431")
        for (name, value) in [
            ("Cache-Control", "no-cache"), ("Pragma", "no-cache"), ("If-None-Match", "\"a\""),
            ("If-Modified-Since", "x"), ("Range", "bytes=0-1"),
            ("authorization", "Bearer t"), ("Connection", "close"), ("TierCache-Debug-Key", "1"),
        ] {
            let request = HTTPRequestHead(
                version: .http1_1, method: .GET, uri: "/x", headers: [name: value, "Host": "a"])
            #expect(AnswerMemo.key(for: request) == nil, "\(name)")
        }
    }

    @Test("An entry is reused only while the generation is unchanged and before it expires")
    func validity() {
        let memo = AnswerMemo()
        memo.remember(entry(generation: 7, validFor: 0.5), forKey: "/x")
        #expect(memo.answer(forKey: "/x", generation: 7, now: now) != nil)
        #expect(memo.answer(forKey: "/x", generation: 8, now: now) == nil, "a store or removal since")
        #expect(memo.answer(forKey: "/x", generation: 7, now: now + .seconds(0.5)) == nil, "its Age would have changed")
        #expect(memo.answer(forKey: "/y", generation: 7, now: now) == nil)
    }

    @Test("A full memo starts over rather than growing")
    func bounded() {
        let memo = AnswerMemo(capacity: 2)
        memo.remember(entry(generation: 1, validFor: 1), forKey: "/a")
        memo.remember(entry(generation: 1, validFor: 1), forKey: "/b")
        memo.remember(entry(generation: 1, validFor: 1), forKey: "/c")
        #expect(memo.answer(forKey: "/a", generation: 1, now: now) == nil)
        #expect(memo.answer(forKey: "/c", generation: 1, now: now) != nil)
    }

    @Test("The memo is bounded in body bytes: a large body is not kept, and one that would overflow starts it over")
    func boundedInBytes() {
        let memo = AnswerMemo(capacity: 100, maximumBodyBytes: 800)
        func sized(_ bytes: Int) -> AnswerMemo.Entry {
            var sized = entry(generation: 1, validFor: 1)
            sized.body = ByteBuffer(repeating: 0x61, count: bytes)
            return sized
        }
        memo.remember(sized(101), forKey: "/large")
        #expect(memo.answer(forKey: "/large", generation: 1, now: now) == nil, "over an eighth of the budget")
        #expect(memo.bodyBytes == 0)
        for index in 0..<8 { memo.remember(sized(100), forKey: "/\(index)") }
        #expect(memo.bodyBytes == 800 && memo.answer(forKey: "/7", generation: 1, now: now) != nil)
        memo.remember(sized(50), forKey: "/7")
        #expect(memo.bodyBytes == 750, "a replaced entry's body is no longer counted")
        memo.remember(sized(60), forKey: "/next")
        #expect(memo.bodyBytes == 60, "over the budget: started over")
        #expect(memo.answer(forKey: "/0", generation: 1, now: now) == nil)
        #expect(memo.answer(forKey: "/next", generation: 1, now: now) != nil)
    }

    @Test("The engine's storage generation changes on stores and invalidations, not on hits")
    func storageGeneration() async throws {
        let cache = HTTPCache(storage: TieredCache(tiers: [try MemoryTier(capacity: 1 << 20)]))
        let request = HTTPRequest(method: .get, url: URL(string: "https://example.com/a")!)
        let transport: HTTPCache.Transport = { _, _ in
            (HTTPResponse(status: .ok, headerFields: [.cacheControl: "max-age=60"]), Data("a".utf8))
        }
        let initial = cache.storageGeneration
        _ = try await cache.response(for: request, transport: transport)
        let afterStore = cache.storageGeneration
        #expect(afterStore != initial)
        _ = try await cache.response(for: request, transport: transport)
        #expect(cache.storageGeneration == afterStore)
        _ = try await cache.response(
            for: HTTPRequest(method: .post, url: URL(string: "https://example.com/a")!), transport: transport)
        #expect(cache.storageGeneration != afterStore)
        cache.countReusedHits(3)
        #expect(cache.statistics.hits == 4)
    }

    @Test("The storage generation changes when the storage applies a shared tier's invalidation")
    func storageGenerationFollowsInvalidations() async throws {
        let storage = TieredCache(tiers: [try MemoryTier(capacity: 1 << 20), try MemoryTier(capacity: 1 << 20)])
        let cache = HTTPCache(storage: storage)
        let before = cache.storageGeneration
        // Another process changed a key in the lowest tier (RedisCoherence calls this).
        try await storage.invalidate([try CacheKey("k")], above: 1)
        #expect(cache.storageGeneration != before)
        let afterOne = cache.storageGeneration
        try await storage.invalidateAll(above: 1)
        #expect(cache.storageGeneration != afterOne)
    }
}
