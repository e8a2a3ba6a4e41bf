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

    /// RFC 9111 §4.3.4: a 304 without any validator may update only a stored response without one.
    /// The engine revalidated a response with `ETag: "v1"`; a bare 304 does not say it confirms
    /// that representation, so the stored response is not freshened: the engine asks again
    /// without preconditions and serves (and stores) the full answer.
    @Test(
        "§4.3.4: a bare 304 does not freshen a stored response that has a validator; the request is sent again unconditionally"
    )
    func bareNotModifiedIsNotUsed() async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")], body: "old")])
        _ = try await cache.response(for: request(), transport: origin.transport)
        clock.advance(by: 120)
        origin.enqueue(.respond(response(304, [("Cache-Control", "max-age=600")]), ""))
        origin.enqueue(ok([("Cache-Control", "max-age=600"), ("ETag", "\"v2\"")], body: "new"))
        let answer = try await cache.response(for: request(), transport: origin.transport)
        #expect(answer.body == Data("new".utf8) && answer.source == .network)
        #expect(origin.received.count == 3)
        #expect(origin.received[1].headerFields[.ifNoneMatch] == "\"v1\"", "the revalidation was conditional")
        #expect(origin.received[2].headerFields[.ifNoneMatch] == nil, "the retry is not")
        #expect(cache.statistics.revalidatedNotModified == 0)
    }
}
