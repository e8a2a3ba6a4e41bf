import Foundation
import HTTPTypes
import Testing
import TierCache
import TierCacheTesting

@testable import HTTPCaching

/// RFC 9111 §4.3.2: a cache that receives a client's conditional request answers it from a
/// stored response when it can (304 when the client's representation is the stored one), and
/// may add its own validators to what it forwards, so that a 304 can confirm either.
@Suite("HTTPCache: a client's conditional requests (RFC 9111 §4.3.2)")
struct HTTPCacheClientConditionalTests {
    let clock = ManualCacheClock(start: epoch)
    static let modified = "Mon, 06 Nov 2023 00:00:00 GMT"

    func makeCache() throws -> HTTPCache {
        try memoryCache(clock: clock)
    }

    func reply(_ status: Int = 200, _ fields: [(String, String)], body: String = "") -> ScriptedOrigin.Reply {
        .respond(response(status, [("Date", HTTPDate.format(clock.now))] + fields), body)
    }

    func stored(_ fields: [(String, String)]) async throws -> (HTTPCache, ScriptedOrigin) {
        let cache = try makeCache()
        let origin = ScriptedOrigin([reply(200, [("Cache-Control", "max-age=60")] + fields, body: "hello")])
        _ = try await cache.response(for: request(), transport: origin.transport)
        return (cache, origin)
    }

    @Test("Fresh stored response: 304 when the client has it, the response when not, no origin request")
    func freshStored() async throws {
        let (cache, origin) = try await stored([("ETag", "\"v1\"")])
        let same = try await cache.response(
            for: request("https://example.com/a", [("If-None-Match", "\"v0\", W/\"v1\"")]), transport: origin.transport)
        #expect(same.response.status.code == 304 && same.source == .cache && same.body.isEmpty)
        #expect(same.response.headerFields[.eTag] == "\"v1\"")
        let other = try await cache.response(
            for: request("https://example.com/a", [("If-None-Match", "\"v0\"")]), transport: origin.transport)
        #expect(other.response.status.code == 200 && other.body == Data("hello".utf8))
        #expect(origin.received.count == 1)
    }

    @Test("An entity tag holding commas is one tag, to match and to pass on (RFC 9110 §8.8.3)")
    func commaInTag() async throws {
        let (cache, origin) = try await stored([("ETag", "\"a,b\"")])
        let same = try await cache.response(
            for: request("https://example.com/a", [("If-None-Match", "\"x\", \"a,b\"")]), transport: origin.transport)
        #expect(same.response.status.code == 304 && same.source == .cache)

        clock.advance(by: 120)
        origin.enqueue(reply(304, [("ETag", "\"c,d\""), ("Cache-Control", "max-age=600")]))
        let passed = try await cache.response(
            for: request("https://example.com/a", [("If-None-Match", "\"c,d\"")]), transport: origin.transport)
        #expect(origin.received.last?.headerFields[.ifNoneMatch] == "\"a,b\", \"c,d\"", "both tags whole")
        #expect(passed.response.status.code == 304 && passed.source == .network, "the client's own tag confirmed")
    }

    @Test(
        "If-Modified-Since against the stored Last-Modified; without one, against its Date (§4.3.2)",
        arguments: [
            ([("Last-Modified", Self.modified)], "Mon, 06 Nov 2023 00:00:00 GMT", 304),
            ([("Last-Modified", Self.modified)], "Tue, 07 Nov 2023 00:00:00 GMT", 304),
            ([("Last-Modified", Self.modified)], "Sun, 05 Nov 2023 00:00:00 GMT", 200),
            // Stored with the Date of `epoch`, 14 Nov 2023 22:13:20 (a full 200 went out before).
            ([], "Tue, 07 Nov 2030 00:00:00 GMT", 304),
            ([], "Tue, 14 Nov 2023 22:13:20 GMT", 304),
            ([], "Mon, 13 Nov 2023 00:00:00 GMT", 200),
        ])
    func ifModifiedSince(fields: [(String, String)], since: String, expected: Int) async throws {
        let (cache, origin) = try await stored(fields)
        let answer = try await cache.response(
            for: request("https://example.com/a", [("If-Modified-Since", since)]), transport: origin.transport)
        #expect(answer.response.status.code == expected && answer.source == .cache)
        #expect(origin.received.count == 1)
    }

    /// §4.3.2's `Date` stands for a stored response's modification only: the origin judged a
    /// response it sent just now, and its `Date` says nothing of when it changed.
    @Test("A response from the network without Last-Modified is not judged by its Date")
    func networkResponseNotJudgedByDate() async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([reply(200, [("Cache-Control", "no-store")], body: "hello")])
        let answer = try await cache.response(
            for: request("https://example.com/a", [("If-Modified-Since", "Tue, 07 Nov 2030 00:00:00 GMT")]),
            transport: origin.transport)
        #expect(answer.response.status.code == 200 && answer.source == .network)
    }

    /// The cache sent its own `If-Modified-Since` (the stored Last-Modified) in place of a
    /// client's earlier one, and passed the origin's 304, which said nothing of the client's
    /// older copy, on to the client as a confirmation of it.
    @Test("A client's older If-Modified-Since is the one sent: the origin's answer is about the client's copy")
    func olderClientDateIsSent() async throws {
        let (cache, origin) = try await stored([("Last-Modified", Self.modified)])
        clock.advance(by: 120)
        // An origin that answers the date it is sent: modified on the 6th.
        let older = "Sun, 05 Nov 2023 00:00:00 GMT"
        origin.enqueue(reply(200, [("Cache-Control", "max-age=60"), ("Last-Modified", Self.modified)], body: "hello"))
        let answer = try await cache.response(
            for: request("https://example.com/a", [("If-Modified-Since", older)]), transport: origin.transport)
        #expect(origin.received.last?.headerFields[.ifModifiedSince] == older)
        #expect(answer.response.status.code == 200 && answer.body == Data("hello".utf8))

        // A 304 with no validator to a date later than the client's confirms nothing of its copy.
        var conditional = request("https://example.com/a", [("If-Modified-Since", older)])
        let preconditions = try #require(ClientPreconditions.extract(from: &conditional))
        var sent = request()
        sent.headerFields[.ifModifiedSince] = Self.modified
        #expect(!preconditions.isConfirmed(by: response(304, []), answering: sent))
        sent.headerFields[.ifModifiedSince] = older
        #expect(preconditions.isConfirmed(by: response(304, []), answering: sent))
        sent.headerFields[.ifNoneMatch] = "\"v1\""
        #expect(!preconditions.isConfirmed(by: response(304, []), answering: sent), "the origin judged the tag")
    }

    @Test(
        "Stale stored response: the client's tags ride along; a 304 for the stored tag freshens it, and the client gets what it lacks"
    )
    func mergedRevalidationConfirmsStored() async throws {
        let (cache, origin) = try await stored([("ETag", "\"v1\"")])
        clock.advance(by: 120)
        origin.enqueue(reply(304, [("ETag", "\"v1\""), ("Cache-Control", "max-age=600")]))
        let answer = try await cache.response(
            for: request("https://example.com/a", [("If-None-Match", "\"v0\"")]), transport: origin.transport)
        let sent = try #require(origin.received.last?.headerFields[.ifNoneMatch])
        #expect(
            Set(sent.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }) == ["\"v1\"", "\"v0\""])
        #expect(
            answer.response.status.code == 200 && answer.body == Data("hello".utf8) && answer.source == .revalidated)
        let again = try await cache.response(
            for: request("https://example.com/a", [("If-None-Match", "\"v1\"")]), transport: origin.transport)
        #expect(again.response.status.code == 304 && again.source == .cache, "freshened: answered from storage")
        #expect(origin.received.count == 2)
    }

    @Test(
        "Stale stored response: a 304 for the client's own tag passes to the client and leaves the stored response stale"
    )
    func mergedRevalidationConfirmsClient() async throws {
        let (cache, origin) = try await stored([("ETag", "\"v1\"")])
        clock.advance(by: 120)
        origin.enqueue(reply(304, [("ETag", "\"v2\""), ("Cache-Control", "max-age=600")]))
        let answer = try await cache.response(
            for: request("https://example.com/a", [("If-None-Match", "\"v2\"")]), transport: origin.transport)
        #expect(answer.response.status.code == 304 && answer.source == .network)
        #expect(answer.response.headerFields[.eTag] == "\"v2\"")
        origin.enqueue(reply(200, [("ETag", "\"v2\""), ("Cache-Control", "max-age=600")], body: "world"))
        let plain = try await cache.response(for: request(), transport: origin.transport)
        #expect(plain.body == Data("world".utf8) && plain.source == .network, "v1 was not freshened by v2's 304")
    }

    @Test("Nothing stored: the client's preconditions go to the origin, its 304 comes back, nothing is stored")
    func nothingStored() async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([reply(304, [("ETag", "\"v3\""), ("Cache-Control", "max-age=600")])])
        let answer = try await cache.response(
            for: request("https://example.com/a", [("If-None-Match", "\"v3\"")]), transport: origin.transport)
        #expect(answer.response.status.code == 304 && !answer.wasStored)
        #expect(origin.received.first?.headerFields[.ifNoneMatch] == "\"v3\"")
        origin.enqueue(reply(200, [("ETag", "\"v3\""), ("Cache-Control", "max-age=600")], body: "full"))
        let plain = try await cache.response(for: request(), transport: origin.transport)
        #expect(plain.source == .network && plain.body == Data("full".utf8))
    }
}
