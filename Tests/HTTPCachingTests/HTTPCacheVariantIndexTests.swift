import Foundation
import HTTPTypes
import Testing
import TierCache
import TierCacheTesting

@testable import HTTPCaching

/// A resource whose responses carry `Vary` is stored as an index of its variants (RFC 9111
/// §4.1): only the variants the index lists are served, so an invalidation or a purge, which
/// removes what the index lists, leaves none behind, and a variant the index lets go is removed.
@Suite("HTTPCache: the variant index")
struct HTTPCacheVariantIndexTests {
    let clock = ManualCacheClock(start: epoch)
    let memory: MemoryTier

    init() throws {
        memory = try MemoryTier(capacity: 4 << 20)
    }

    func makeCache(storeHooks: [StoreHook] = []) -> HTTPCache {
        var configuration = HTTPCache.Configuration(clock: clock.cacheClock)
        configuration.storeHooks = storeHooks
        return HTTPCache(storage: TieredCache(tiers: [memory]), configuration: configuration)
    }

    func ok(_ fields: [(String, String)], body: String) -> ScriptedOrigin.Reply {
        .respond(response(200, [("Date", HTTPDate.format(clock.now))] + fields), body)
    }

    func agent(_ number: Int) -> HTTPRequest { request("https://example.com/p", [("User-Agent", "agent \(number)")]) }

    var entries: Int { memory.usage().entries }

    @Test("§4.4: a variant the index let go is not served after an invalidation it did not reach")
    func droppedVariantIsNotServed() async throws {
        let cache = makeCache()
        let origin = ScriptedOrigin([])
        let limit = VariantIndex.limit
        for number in 0...limit {
            origin.enqueue(ok([("Cache-Control", "max-age=3600"), ("Vary", "User-Agent")], body: "before \(number)"))
            _ = try await cache.response(for: agent(number), transport: origin.transport)
        }
        #expect(entries == 1 + limit, "the index and its \(limit) variants: the oldest is removed, not left behind")

        // A POST invalidates what the index lists; a new variant starts a new index.
        origin.enqueue(.respond(response(204), ""))
        _ = try await cache.response(
            for: request("https://example.com/p", method: .post), body: Data("x".utf8), transport: origin.transport)
        origin.enqueue(ok([("Cache-Control", "max-age=3600"), ("Vary", "User-Agent")], body: "after 5"))
        _ = try await cache.response(for: agent(5), transport: origin.transport)

        origin.enqueue(ok([("Cache-Control", "max-age=3600"), ("Vary", "User-Agent")], body: "after 0"))
        let first = try await cache.response(for: agent(0), transport: origin.transport)
        #expect(first.source == .network && first.body == Data("after 0".utf8), "not the body from before the POST")
    }

    @Test("§4.1: when Vary names other fields, the variants stored under the old names go")
    func changedVaryRemovesOldVariants() async throws {
        let cache = makeCache()
        let origin = ScriptedOrigin([])
        for language in ["en", "fr", "de"] {
            origin.enqueue(ok([("Cache-Control", "max-age=3600"), ("Vary", "Accept-Language")], body: language))
            _ = try await cache.response(
                for: request("https://example.com/p", [("Accept-Language", language)]), transport: origin.transport)
        }
        #expect(entries == 4)
        origin.enqueue(ok([("Cache-Control", "max-age=3600"), ("Vary", "User-Agent")], body: "by agent"))
        _ = try await cache.response(for: agent(1), transport: origin.transport)
        #expect(entries == 2, "the new index and its one variant")
    }

    @Test("§4.3.4: a 304 that changes Vary does not leave the stored response answering every request")
    func notModifiedChangingVary() async throws {
        let cache = makeCache()
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=0"), ("ETag", "\"v1\"")], body: "cors")])
        let fromA = request("https://example.com/p", [("Origin", "https://a.example")])
        let fromB = request("https://example.com/p", [("Origin", "https://b.example")])
        _ = try await cache.response(for: fromA, transport: origin.transport)

        origin.enqueue(
            .respond(
                response(
                    304,
                    [
                        ("ETag", "\"v1\""), ("Cache-Control", "max-age=600"), ("Vary", "Origin"),
                        ("Access-Control-Allow-Origin", "https://a.example"),
                    ]), ""))
        let revalidated = try await cache.response(for: fromA, transport: origin.transport)
        #expect(revalidated.body == Data("cors".utf8))
        #expect(
            revalidated.response.headerFields[HTTPField.Name("Access-Control-Allow-Origin")!] == "https://a.example")

        origin.enqueue(
            ok(
                [
                    ("Cache-Control", "max-age=600"), ("ETag", "\"v1\""), ("Vary", "Origin"),
                    ("Access-Control-Allow-Origin", "https://b.example"),
                ], body: "cors"))
        let other = try await cache.response(for: fromB, transport: origin.transport)
        #expect(other.source == .network, "a.example's answer is not b.example's")
        #expect(other.response.headerFields[HTTPField.Name("Access-Control-Allow-Origin")!] == "https://b.example")
        #expect(origin.received.count == 3)
    }

    @Test("§4.3.4: a 304 repeating a Vary that a store hook narrowed freshens the stored response")
    func notModifiedWithHookNarrowedVary() async throws {
        // The app keeps one copy for every browser: its hook drops User-Agent from Vary.
        let narrowing = StoreHook { candidate in
            candidate.response.headerFields[.vary] = "Accept-Encoding"
        }
        let cache = makeCache(storeHooks: [narrowing])
        let vary = ("Vary", "Accept-Encoding, User-Agent")
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=0"), ("ETag", "\"v1\""), vary], body: "page")])
        let browser = request("https://example.com/p", [("Accept-Encoding", "gzip"), ("User-Agent", "one")])
        _ = try await cache.response(for: browser, transport: origin.transport)

        origin.enqueue(.respond(response(304, [("ETag", "\"v1\""), ("Cache-Control", "max-age=600"), vary]), ""))
        let revalidated = try await cache.response(for: browser, transport: origin.transport)
        #expect(revalidated.source == .revalidated && revalidated.body == Data("page".utf8))
        let other = request("https://example.com/p", [("Accept-Encoding", "gzip"), ("User-Agent", "two")])
        let hit = try await cache.response(for: other, transport: origin.transport)
        #expect(hit.source == .cache, "freshened, not removed")
        #expect(origin.received.count == 2)
    }
}
