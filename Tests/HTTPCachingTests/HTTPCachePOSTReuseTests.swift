import Foundation
import HTTPTypes
import Testing
import TierCache
import TierCacheTesting

@testable import HTTPCaching

/// RFC 9110 §9.3.3: "Responses to POST requests are only cacheable when they include explicit
/// freshness information and a Content-Location header field that has the same value as the
/// POST's target URI. A cached POST response can be reused to satisfy a later GET or HEAD."
@Suite("HTTPCache: responses to POST reused for GET (RFC 9110 §9.3.3)")
struct HTTPCachePOSTReuseTests {
    let clock = ManualCacheClock(start: epoch)
    static let target = "https://example.com/a"

    func makeCache() throws -> HTTPCache {
        try memoryCache(clock: clock)
    }

    func reply(_ fields: [(String, String)], body: String) -> ScriptedOrigin.Reply {
        .respond(response(200, [("Date", HTTPDate.format(clock.now))] + fields), body)
    }

    @Test(
        "Explicit freshness and Content-Location equal to the target: a later GET and HEAD are answered from it",
        arguments: ["https://example.com/a", "/a", "HTTPS://EXAMPLE.COM:443/a"])
    func reused(contentLocation: String) async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([
            reply([("Cache-Control", "max-age=60"), ("Content-Location", contentLocation)], body: "posted")
        ])
        let posted = try await cache.response(
            for: request(Self.target, method: .post), body: Data("x".utf8), transport: origin.transport)
        #expect(posted.source == .network && posted.wasStored)
        let get = try await cache.response(for: request(Self.target), transport: origin.transport)
        #expect(get.source == .cache && get.body == Data("posted".utf8))
        let head = try await cache.response(for: request(Self.target, method: .head), transport: origin.transport)
        #expect(head.source == .cache && head.body.isEmpty)
        #expect(origin.received.count == 1)
    }

    @Test(
        "Without explicit freshness, with another Content-Location, or none, the POST response is not reused",
        arguments: [
            // Heuristics only.
            [("Content-Location", "https://example.com/a"), ("Last-Modified", "Mon, 06 Nov 2023 00:00:00 GMT")],
            [("Cache-Control", "max-age=60"), ("Content-Location", "https://example.com/b")],
            [("Cache-Control", "max-age=60"), ("Content-Location", "https://other.example/a")],
            [("Cache-Control", "max-age=60")],
            [("Cache-Control", "max-age=60, no-store"), ("Content-Location", "https://example.com/a")],
        ])
    func notReused(fields: [(String, String)]) async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([
            reply(fields, body: "posted"), reply([("Cache-Control", "max-age=60")], body: "got"),
        ])
        let posted = try await cache.response(
            for: request(Self.target, method: .post), body: Data("x".utf8), transport: origin.transport)
        #expect(!posted.wasStored)
        let get = try await cache.response(for: request(Self.target), transport: origin.transport)
        #expect(get.source == .network && get.body == Data("got".utf8))
        #expect(origin.received.count == 2)
    }

    /// The POST invalidates the stored GET response (RFC 9111 §4.4) and its own reusable
    /// response takes the place.
    @Test func replacesTheStoredResponse() async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([
            reply([("Cache-Control", "max-age=600")], body: "old"),
            reply([("Cache-Control", "max-age=60"), ("Content-Location", Self.target)], body: "new"),
        ])
        _ = try await cache.response(for: request(Self.target), transport: origin.transport)
        _ = try await cache.response(
            for: request(Self.target, method: .post), body: Data("x".utf8), transport: origin.transport)
        let get = try await cache.response(for: request(Self.target), transport: origin.transport)
        #expect(get.source == .cache && get.body == Data("new".utf8))
        #expect(origin.received.count == 2)
    }
}
