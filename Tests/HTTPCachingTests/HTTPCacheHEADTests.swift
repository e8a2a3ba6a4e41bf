import Foundation
import HTTPTypes
import Testing
import TierCache
import TierCacheTesting

@testable import HTTPCaching

/// HEAD (RFC 9110 §9.3.2, RFC 9111 §4.3.5): a HEAD response is the GET response without its
/// content, so it can be answered from a stored GET, kept for later HEADs, and used to update or
/// invalidate a stored GET response.
@Suite("HTTPCache: HEAD (RFC 9111 §4.3.5)")
struct HTTPCacheHEADTests {
    let clock = ManualCacheClock(start: epoch)

    func makeCache() throws -> HTTPCache {
        try memoryCache(clock: clock)
    }

    func ok(_ fields: [(String, String)], body: String) -> ScriptedOrigin.Reply {
        .respond(response(200, [("Date", HTTPDate.format(clock.now))] + fields), body)
    }

    @Test("A HEAD response answers later HEADs, never a GET")
    func headResponseAnswersHEAD() async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([
            ok([("Cache-Control", "max-age=60"), ("ETag", "\"v1\""), ("Content-Length", "5")], body: ""),
            ok([("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")], body: "hello"),
        ])
        let first = try await cache.response(for: request(method: .head), transport: origin.transport)
        #expect(first.source == .network && first.wasStored)
        let second = try await cache.response(for: request(method: .head), transport: origin.transport)
        #expect(second.source == .cache && second.response.headerFields[.eTag] == "\"v1\"")
        let get = try await cache.response(for: request(), transport: origin.transport)
        #expect(get.source == .network && get.body == Data("hello".utf8))
        #expect(origin.received.map(\.method) == [.head, .get])
    }

    @Test(
        "A 200 to HEAD whose validators and length match updates the stored GET response's fields and freshness",
        arguments: ["\"v1\"", "W/\"v1\""])
    func matchingHEADUpdatesStoredGET(tag: String) async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60"), ("ETag", tag)], body: "hello")])
        _ = try await cache.response(for: request(), transport: origin.transport)
        clock.advance(by: 120)
        origin.enqueue(
            ok([("Cache-Control", "max-age=600"), ("ETag", tag), ("Content-Length", "5"), ("X-New", "1")], body: ""))
        let head = try await cache.response(for: request(method: .head), transport: origin.transport)
        #expect(head.source == .network && head.wasStored)
        let get = try await cache.response(for: request(), transport: origin.transport)
        #expect(get.source == .cache && get.body == Data("hello".utf8))
        #expect(get.response.headerFields[HTTPField.Name("X-New")!] == "1")
        #expect(get.freshnessLifetime == 600)
        #expect(origin.received.count == 2)
    }

    @Test(
        "A 200 to HEAD with another validator or length makes the stored GET response stale",
        arguments: [
            [("ETag", "\"v2\""), ("Content-Length", "5")],
            [("ETag", "W/\"v1\""), ("Content-Length", "5")],  // another value: a weak tag for the strong one
            [("ETag", "\"v1\""), ("Content-Length", "6")],
            [("Last-Modified", "Mon, 06 Nov 2023 00:00:00 GMT")],  // a validator the stored response lacks
            [("Content-Length", "5")],  // no validator: nothing says it is the same
        ])
    func otherHEADInvalidates(fields: [(String, String)]) async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")], body: "hello")])
        _ = try await cache.response(for: request(), transport: origin.transport)
        clock.advance(by: 120)
        origin.enqueue(ok([("Cache-Control", "max-age=600")] + fields, body: ""))
        origin.enqueue(ok([("Cache-Control", "max-age=600"), ("ETag", "\"v2\"")], body: "world"))
        _ = try await cache.response(for: request(method: .head), transport: origin.transport)
        let get = try await cache.response(for: request(), transport: origin.transport)
        #expect(get.source == .network && get.body == Data("world".utf8))
        #expect(origin.received.map(\.method) == [.get, .head, .get])
        // Stale, not removed: revalidated with its own validator (a 304 would have kept it).
        #expect(origin.received[2].headerFields[.ifNoneMatch] == "\"v1\"")
    }

    @Test("A stored GET a HEAD made stale still serves where a stale response may (stale-if-error)")
    func staleAfterHEADStillFallsBack() async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([
            ok([("Cache-Control", "max-age=600, stale-if-error=600"), ("ETag", "\"v1\"")], body: "hello"),
            ok([("Cache-Control", "max-age=600"), ("ETag", "\"v2\"")], body: ""), .fail(.cannotConnectToHost),
        ])
        _ = try await cache.response(for: request(), transport: origin.transport)
        // Fresh, but a HEAD (the client's own) says the representation changed.
        var head = request(method: .head)
        head.headerFields[.cacheControl] = "no-cache"
        _ = try await cache.response(for: head, transport: origin.transport)
        let fallback = try await cache.response(for: request(), transport: origin.transport)
        #expect(fallback.body == Data("hello".utf8) && fallback.source == .staleFallback)
        #expect(origin.received.map(\.method) == [.get, .head, .get])
    }

    /// A client that decodes content (URLSession) stores the decoded body without
    /// `Content-Encoding`; a HEAD naming the server's coding gives its encoded length, which is no
    /// sign of change. Lengths of one coding still are.
    @Test("A HEAD's Content-Length is compared with the stored response's only when both name one coding")
    func headLengthOfOneCoding() {
        let decoded = stored(response(200, [("ETag", "\"v1\""), ("Content-Length", "4")]))
        let encodedHead = response(200, [("ETag", "\"v1\""), ("Content-Encoding", "gzip"), ("Content-Length", "40")])
        #expect(Validation.headResponse(encodedHead, updates: decoded))
        let changedHead = response(200, [("ETag", "\"v1\""), ("Content-Length", "40")])
        #expect(!Validation.headResponse(changedHead, updates: decoded))
        let encoded = stored(
            response(200, [("ETag", "\"v1\""), ("Content-Encoding", "gzip"), ("Content-Length", "4")]))
        #expect(!Validation.headResponse(encodedHead, updates: encoded))
    }

    @Test("A fresh stored GET answers HEAD without content")
    func storedGETAnswersHEAD() async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60")], body: "hello")])
        _ = try await cache.response(for: request(), transport: origin.transport)
        let head = try await cache.response(for: request(method: .head), transport: origin.transport)
        #expect(head.source == .cache && head.body.isEmpty)
        #expect(origin.received.count == 1)
    }
}
