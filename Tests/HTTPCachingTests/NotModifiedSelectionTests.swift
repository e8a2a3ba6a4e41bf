import Foundation
import HTTPTypes
import Testing
import TierCache
import TierCacheTesting

@testable import HTTPCaching

/// RFC 9111 §4.3.4: which stored responses a 304 updates, when a resource has several (variants
/// selected by Vary).
@Suite("304 selection among stored responses (RFC 9111 §4.3.4)")
struct NotModifiedSelectionTests {
    static func stored(_ fields: [(String, String)], at seconds: TimeInterval = 0) -> StoredResponse {
        let time = epoch.addingTimeInterval(seconds)
        return StoredResponse(
            response: response(200, fields), body: Data(), requestTime: time, responseTime: time, storedAt: time)
    }

    static let lastModified = "Mon, 06 Nov 2023 00:00:00 GMT"
    static let variants = [
        stored([("ETag", "\"a\"")], at: 0), stored([("ETag", "\"a\"")], at: 10), stored([("ETag", "\"b\"")], at: 20),
        stored([("ETag", "W/\"w\"")], at: 30), stored([("ETag", "W/\"w\"")], at: 40),
        stored([("Last-Modified", lastModified)], at: 50),
        stored([("Last-Modified", lastModified)], at: 60), stored([], at: 70),
    ]

    @Test(
        "Selection by the 304's validators",
        arguments: [
            ([("ETag", "\"a\"")], [0, 1]),  // strong: every stored response with it
            ([("ETag", "\"a\""), ("Last-Modified", lastModified)], [0, 1]),  // a strong validator decides alone
            ([("ETag", "\"c\"")], []),  // strong, matching none: none updated
            ([("ETag", "W/\"a\"")], [1]),  // weak: the most recent weak match
            ([("ETag", "W/\"w\"")], [4]),
            ([("Last-Modified", lastModified)], [6]),  // Last-Modified alone is weak
            ([], []),  // no validator, several stored responses
        ])
    func selection(fields: [(String, String)], expected: [Int]) {
        #expect(Validation.storedResponsesUpdated(by: response(304, fields), among: Self.variants) == expected)
    }

    @Test("Without validators, only a lone stored response without validators is updated")
    func bare() {
        #expect(Validation.storedResponsesUpdated(by: response(304), among: [Self.stored([])]) == [0])
        #expect(Validation.storedResponsesUpdated(by: response(304), among: [Self.stored([("ETag", "\"a\"")])]) == [])
        #expect(Validation.storedResponsesUpdated(by: response(304), among: [Self.stored([]), Self.stored([])]) == [])
    }

    /// End to end: two variants share a strong entity tag; revalidating one freshens both.
    @Test func strongTagFreshensEveryVariant() async throws {
        let clock = ManualCacheClock(start: epoch)
        let cache = try memoryCache(clock: clock)
        func reply(_ status: Int, _ body: String) -> ScriptedOrigin.Reply {
            .respond(
                response(
                    status,
                    [
                        ("Date", HTTPDate.format(clock.now)), ("Cache-Control", "max-age=60"), ("ETag", "\"same\""),
                        ("Vary", "Accept-Language"),
                    ]), body)
        }
        let origin = ScriptedOrigin([reply(200, "en"), reply(200, "fr")])
        let english = request("https://example.com/a", [("Accept-Language", "en")])
        let french = request("https://example.com/a", [("Accept-Language", "fr")])
        _ = try await cache.response(for: english, transport: origin.transport)
        _ = try await cache.response(for: french, transport: origin.transport)
        clock.advance(by: 120)
        origin.enqueue(reply(304, ""))
        let revalidated = try await cache.response(for: english, transport: origin.transport)
        #expect(revalidated.source == .revalidated && revalidated.body == Data("en".utf8))
        let other = try await cache.response(for: french, transport: origin.transport)
        #expect(other.source == .cache && other.body == Data("fr".utf8), "the 304 freshened the French variant too")
        #expect(origin.received.count == 3)
    }
}
