import Foundation
import HTTPTypes
import Testing
import TierCache
import TierCacheTesting

@testable import HTTPCaching

/// Two rules every transport gets from the engine, whoever calls it (URLSession, AsyncHTTPClient,
/// the proxy, a user's own transport).
@Suite("HTTPCache: hop-by-hop request fields and 304s without validators")
struct HTTPCacheHopByHopAndBare304Tests {
    let clock = ManualCacheClock(start: epoch)

    func makeCache() throws -> HTTPCache {
        try memoryCache(clock: clock)
    }

    func ok(_ fields: [(String, String)], body: String = "hello") -> ScriptedOrigin.Reply {
        .respond(response(200, [("Date", HTTPDate.format(clock.now))] + fields), body)
    }

    /// RFC 9110 §7.6.1: `Connection`, the fields it names, and `Keep-Alive`, `TE`, `Upgrade`,
    /// `Proxy-Connection` and `Transfer-Encoding` belong to one connection and are not forwarded;
    /// every other field is.
    static let hopByHop: [(String, String)] = [
        ("Connection", "close, X-Hop"), ("X-Hop", "1"), ("Keep-Alive", "timeout=5"), ("TE", "trailers"),
        ("Upgrade", "h2c"), ("Proxy-Connection", "keep-alive"), ("Transfer-Encoding", "chunked"),
        ("Accept", "text/html"), ("X-End-To-End", "2"),
    ]

    @Test(
        "§7.6.1: hop-by-hop request fields are not forwarded, on the cached path and the uncached one",
        arguments: [HTTPRequest.Method.get, .post])
    func hopByHopFieldsStayBehind(method: HTTPRequest.Method) async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60")])])
        _ = try await cache.response(
            for: request(method: method, Self.hopByHop), body: method == .post ? Data("x".utf8) : nil,
            transport: origin.transport)
        let sent = try #require(origin.received.first)
        let names = Set(sent.headerFields.map(\.name.canonicalName))
        #expect(
            names.isDisjoint(with: [
                "connection", "x-hop", "keep-alive", "te", "upgrade", "proxy-connection", "transfer-encoding",
            ]),
            "forwarded: \(names.sorted())")
        #expect(sent.headerFields[HTTPField.Name("Accept")!] == "text/html")
        #expect(sent.headerFields[HTTPField.Name("X-End-To-End")!] == "2")
    }

    @Test(
        "§7.6.1: a field the request's Connection names is not the request's for Vary either: the origin never saw it")
    func connectionNamedFieldsDoNotSelectVariants() async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([
            ok([("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")], body: "default"),
            ok([("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")], body: "fr"),
        ])
        // Stored as the answer to a request without Accept-Language, which is what the origin got.
        let hop = try await cache.response(
            for: request(method: .get, [("Accept-Language", "fr"), ("Connection", "Accept-Language")]),
            transport: origin.transport)
        #expect(String(decoding: hop.body, as: UTF8.self) == "default")
        #expect(origin.received.first?.headerFields[HTTPField.Name("Accept-Language")!] == nil)
        let french = try await cache.response(
            for: request(method: .get, [("Accept-Language", "fr")]), transport: origin.transport)
        #expect(String(decoding: french.body, as: UTF8.self) == "fr", "the default page answered French readers")
        #expect(origin.received.count == 2)
        // The synchronous entry point (the proxy's hit path) picks the variant the same way.
        let hopAgain = cache.usableStoredResponse(
            for: request(method: .get, [("Accept-Language", "fr"), ("Connection", "keep-alive, Accept-Language")]))
        #expect(hopAgain.map { String(decoding: $0.body, as: UTF8.self) } == "default")
    }

    /// The proxy authentication fields answer the next hop alone: a stored nonce would be
    /// replayed to every later client.
    @Test("RFC 9111 §3.1: Proxy-Authenticate and Proxy-Authentication-Info are not stored")
    func proxyAuthenticationFieldsAreNotStored() async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([
            ok([
                ("Cache-Control", "max-age=60"), ("Proxy-Authentication-Info", "nextnonce=\"abc\""),
                ("Proxy-Authenticate", "Basic realm=\"p\""), ("X-End-To-End", "2"),
            ])
        ])
        _ = try await cache.response(for: request(), transport: origin.transport)
        let stored = try await cache.response(for: request(), transport: origin.transport)
        #expect(stored.source == .cache)
        #expect(stored.response.headerFields[HTTPField.Name("Proxy-Authentication-Info")!] == nil)
        #expect(stored.response.headerFields[.proxyAuthenticate] == nil)
        #expect(stored.response.headerFields[HTTPField.Name("X-End-To-End")!] == "2")
    }

    /// A 304 that repeats no validator, answering the engine's own conditional request for the
    /// resource's only stored response, can only be answering for that response: it is freshened,
    /// with exactly one origin request per revalidation (a documented departure from §4.3.4's
    /// letter; see `Validation.storedResponsesUpdated(byAnswerTo:askingFor:among:)`).
    @Test(
        "A bare 304 to the cache's own conditional request freshens the only stored response: one origin request per revalidation",
        arguments: [("ETag", "\"v1\""), ("Last-Modified", "Mon, 06 Nov 2023 00:00:00 GMT")])
    func bareNotModifiedFreshensTheOnlyResponse(validator: String, value: String) async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60"), (validator, value)], body: "old")])
        _ = try await cache.response(for: request(), transport: origin.transport)
        for round in 1...2 {
            clock.advance(by: 700)
            origin.enqueue(.respond(response(304, [("Cache-Control", "max-age=600")]), ""))
            let answer = try await cache.response(for: request(), transport: origin.transport)
            #expect(answer.body == Data("old".utf8) && answer.source == .revalidated)
            #expect(origin.received.count == 1 + round, "one origin request per revalidation")
            let conditional = origin.received[round]
            #expect(conditional.headerFields[.ifNoneMatch] != nil || conditional.headerFields[.ifModifiedSince] != nil)
        }
        #expect(cache.statistics.revalidatedNotModified == 2)
        // Freshened: fresh again for the 304's max-age.
        #expect(try await cache.response(for: request(), transport: origin.transport).source == .cache)
    }

    /// Where the selection decides something, §4.3.4's strict rule stands: with two stored
    /// variants, a bare 304 does not say which it confirms, so the engine asks again.
    @Test("§4.3.4: with several stored variants a bare 304 freshens none; the request is sent again unconditionally")
    func bareNotModifiedAmongVariants() async throws {
        let cache = try makeCache()
        let varied = [("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")]
        let origin = ScriptedOrigin([
            ok(varied + [("ETag", "\"en\"")], body: "hello"), ok(varied + [("ETag", "\"de\"")], body: "hallo"),
        ])
        let english = request("https://example.com/a", [("Accept-Language", "en")])
        let german = request("https://example.com/a", [("Accept-Language", "de")])
        _ = try await cache.response(for: english, transport: origin.transport)
        _ = try await cache.response(for: german, transport: origin.transport)
        clock.advance(by: 120)
        origin.enqueue(.respond(response(304, [("Cache-Control", "max-age=600")]), ""))
        origin.enqueue(ok(varied + [("ETag", "\"en2\"")], body: "hello again"))
        let answer = try await cache.response(for: english, transport: origin.transport)
        #expect(answer.body == Data("hello again".utf8) && answer.source == .network)
        #expect(origin.received.count == 4)
        #expect(origin.received[3].headerFields[.ifNoneMatch] == nil, "the retry is not conditional")
    }
}
