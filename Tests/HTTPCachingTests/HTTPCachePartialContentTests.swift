import Foundation
import HTTPTypes
import Testing
import TierCache
import TierCacheTesting

@testable import HTTPCaching

/// RFC 9111 §3.3 (storing incomplete responses) and §3.4 (combining partial content): a 206 is
/// kept, answers later ranges it covers, and is combined with another 206 of the same
/// representation (same strong entity tag) when the two overlap or adjoin; content that covers
/// the whole representation becomes a complete stored response.
@Suite("HTTPCache: partial content (RFC 9111 §3.3, §3.4)")
struct HTTPCachePartialContentTests {
    let clock = ManualCacheClock(start: epoch)
    static let digits = Array("0123456789".utf8)

    func makeCache() throws -> HTTPCache {
        try memoryCache(clock: clock)
    }

    /// The origin's 206 for `range` of the ten digits, tagged `tag`.
    func part(
        _ range: ClosedRange<Int>, tag: String = "\"v1\"", extra: [(String, String)] = []
    ) -> ScriptedOrigin.Reply {
        let fields =
            [
                ("Date", HTTPDate.format(clock.now)), ("Cache-Control", "max-age=60"), ("ETag", tag),
                ("Content-Range", "bytes \(range.lowerBound)-\(range.upperBound)/10"),
            ] + extra
        return .respond(response(206, fields), String(decoding: Self.digits[range], as: UTF8.self))
    }

    func get(_ cache: HTTPCache, _ origin: ScriptedOrigin, _ range: String? = nil) async throws -> HTTPCacheResponse {
        try await cache.response(
            for: request("https://example.com/a", range.map { [("Range", $0)] } ?? []), transport: origin.transport)
    }

    @Test("A 206 is stored and answers the ranges it covers")
    func storedPartAnswersCoveredRanges() async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([part(0...3)])
        let first = try await get(cache, origin, "bytes=0-3")
        #expect(first.response.status.code == 206 && first.source == .network && first.wasStored)
        #expect(origin.received.first?.headerFields[.range] == "bytes=0-3", "the origin is asked for the range")
        let again = try await get(cache, origin, "bytes=0-3")
        #expect(
            again.source == .cache && again.body == Data("0123".utf8)
                && again.response.headerFields[.contentRange] == "bytes 0-3/10")
        let inner = try await get(cache, origin, "bytes=1-2")
        #expect(
            inner.source == .cache && inner.body == Data("12".utf8)
                && inner.response.headerFields[.contentRange] == "bytes 1-2/10")
        #expect(inner.response.headerFields[.contentLength] == "2")
        #expect(origin.received.count == 1)
    }

    @Test("A stored part whose body a store hook shortened is not used: no range is cut from it, none combined with it")
    func storedPartShorterThanItsRangeIsNotUsed() async throws {
        // The hook keeps the 206's Content-Range (bytes 0-3/10) but stores 2 of its 4 bytes; cutting
        // bytes=0-3 from it, or combining it with bytes 4-9, indexed past its end.
        let cache = HTTPCache(
            storage: TieredCache(tiers: [try MemoryTier(capacity: 1 << 20)]),
            configuration: .init(
                storeHooks: [
                    StoreHook { candidate in
                        if candidate.response.status.code == 206, candidate.body.count == 4 {
                            candidate.body = candidate.body.prefix(2)
                        }
                    }
                ], clock: clock.cacheClock))
        let origin = ScriptedOrigin([part(0...3), part(0...3), part(4...9), part(0...3)])
        _ = try await get(cache, origin, "bytes=0-3")
        let again = try await get(cache, origin, "bytes=0-3")
        #expect(again.source == .network && again.body == Data("0123".utf8))
        let rest = try await get(cache, origin, "bytes=4-9")
        #expect(rest.body == Data("456789".utf8) && rest.response.headerFields[.contentRange] == "bytes 4-9/10")
        let first = try await get(cache, origin, "bytes=0-3")
        #expect(first.body == Data("0123".utf8) && first.response.headerFields[.contentRange] == "bytes 0-3/10")
        #expect(origin.received.count == 4)
    }

    @Test(
        "Adjoining or overlapping parts with the same strong tag combine; covering the whole, they answer a plain GET",
        arguments: [(0...3, 4...9), (0...5, 3...9), (6...9, 0...5)])
    func partsCombineIntoTheWhole(first: ClosedRange<Int>, second: ClosedRange<Int>) async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([part(first), part(second)])
        _ = try await get(cache, origin, "bytes=\(first.lowerBound)-\(first.upperBound)")
        _ = try await get(cache, origin, "bytes=\(second.lowerBound)-\(second.upperBound)")
        let whole = try await get(cache, origin)
        #expect(whole.response.status.code == 200 && whole.source == .cache && whole.body == Data(Self.digits))
        #expect(
            whole.response.headerFields[.contentRange] == nil && whole.response.headerFields[.contentLength] == "10")
        let tail = try await get(cache, origin, "bytes=-2")
        #expect(tail.body == Data("89".utf8) && tail.source == .cache)
        #expect(origin.received.count == 2)
    }

    @Test(
        "Parts that do not combine: another tag, a gap between them, or a weak tag (the newer part is kept, if any)",
        arguments: [("\"v2\"", 4...9), ("\"v1\"", 6...9)])
    func partsThatDoNotCombine(tag: String, second: ClosedRange<Int>) async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([part(0...3), part(second, tag: tag), part(0...3, tag: tag)])
        _ = try await get(cache, origin, "bytes=0-3")
        _ = try await get(cache, origin, "bytes=\(second.lowerBound)-\(second.upperBound)")
        let newer = try await get(cache, origin, "bytes=\(second.lowerBound)-\(second.upperBound)")
        #expect(newer.source == .cache)
        let older = try await get(cache, origin, "bytes=0-3")
        #expect(older.source == .network, "the first part was replaced, not combined")
        #expect(origin.received.count == 3)
    }

    @Test(
        "A 206 with a weak tag, no tag, or an unknown complete length is not stored",
        arguments: [
            [("ETag", "W/\"v1\""), ("Content-Range", "bytes 0-3/10")],
            [("Content-Range", "bytes 0-3/10")],
            [("ETag", "\"v1\""), ("Content-Range", "bytes 0-3/*")],
            [("ETag", "\"v1\""), ("Content-Range", "bytes 0-4/10")],  // the body is four bytes, not five
        ])
    func unusablePartsAreNotStored(fields: [(String, String)]) async throws {
        let cache = try makeCache()
        let reply = ScriptedOrigin.Reply.respond(
            response(206, [("Date", HTTPDate.format(clock.now)), ("Cache-Control", "max-age=60")] + fields), "0123")
        let origin = ScriptedOrigin([reply, reply])
        let first = try await get(cache, origin, "bytes=0-3")
        #expect(!first.wasStored)
        _ = try await get(cache, origin, "bytes=0-3")
        #expect(origin.received.count == 2)
    }

    @Test(
        "Content-Range: one range of a known length",
        arguments: [
            ("bytes 0-3/10", ContentRange(bounds: 0...3, completeLength: 10)),
            ("BYTES 9-9/10", ContentRange(bounds: 9...9, completeLength: 10)),
            ("bytes 0-3/*", nil), ("bytes */10", nil), ("bytes 4-3/10", nil), ("bytes 0-10/10", nil),
            ("items 0-3/10", nil), ("bytes 0-3", nil),
        ])
    func contentRange(field: String, expected: ContentRange?) {
        #expect(ContentRange(field: field) == expected)
    }

    // MARK: Completing stored partial content with the missing bytes only (§3.4)

    @Test(
        "A range beyond the stored part asks the origin for the missing bytes only, conditional on the stored tag",
        arguments: [(0...3, "bytes=0-7", "bytes=4-7", 4...7), (4...9, "bytes=1-6", "bytes=1-3", 1...3)])
    func missingBytesOnly(
        stored: ClosedRange<Int>, range: String, asked: String, sent: ClosedRange<Int>
    ) async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([part(stored), part(sent)])
        _ = try await get(cache, origin, "bytes=\(stored.lowerBound)-\(stored.upperBound)")
        let answer = try await get(cache, origin, range)
        let wanted = try #require(ByteRange(rangeField: range)?.bounds(in: 10))
        #expect(origin.received.last?.headerFields[.range] == asked)
        #expect(origin.received.last?.headerFields[.ifRange] == "\"v1\"")
        #expect(answer.response.status.code == 206 && answer.source == .network && answer.wasStored)
        #expect(answer.body == Data(Self.digits[wanted]))
        #expect(answer.response.headerFields[.contentRange] == "bytes \(wanted.lowerBound)-\(wanted.upperBound)/10")
        // The combined part answers from now on.
        let again = try await get(cache, origin, range)
        #expect(again.source == .cache && again.body == Data(Self.digits[wanted]))
        #expect(origin.received.count == 2)
    }

    @Test("Completing the last bytes makes a complete stored response, which answers a plain GET")
    func completionToTheWhole() async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([part(0...5), part(6...9)])
        _ = try await get(cache, origin, "bytes=0-5")
        let tail = try await get(cache, origin, "bytes=3-9")
        #expect(origin.received.last?.headerFields[.range] == "bytes=6-9")
        #expect(tail.body == Data("3456789".utf8) && tail.response.headerFields[.contentRange] == "bytes 3-9/10")
        let whole = try await get(cache, origin)
        #expect(whole.response.status.code == 200 && whole.source == .cache && whole.body == Data(Self.digits))
        #expect(origin.received.count == 2)
    }

    @Test("A stale stored part is still completed: the origin's 206 to If-Range says its bytes are current")
    func staleStoredPartIsCompleted() async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([part(0...3)])
        _ = try await get(cache, origin, "bytes=0-3")
        clock.advance(by: 120)  // past max-age=60
        origin.enqueue(part(4...7))
        let answer = try await get(cache, origin, "bytes=0-7")
        #expect(origin.received.last?.headerFields[.range] == "bytes=4-7")
        #expect(answer.body == Data("01234567".utf8) && answer.response.status.code == 206)
    }

    @Test("The representation changed: the origin answers If-Range with the whole 200, stored and cut")
    func changedRepresentationAnswersWhole() async throws {
        let cache = try makeCache()
        let whole = ScriptedOrigin.Reply.respond(
            response(200, [("Date", HTTPDate.format(clock.now)), ("Cache-Control", "max-age=60"), ("ETag", "\"v2\"")]),
            "abcdefghij")
        let origin = ScriptedOrigin([part(0...3), whole])
        _ = try await get(cache, origin, "bytes=0-3")
        let answer = try await get(cache, origin, "bytes=2-7")
        #expect(origin.received.last?.headerFields[.range] == "bytes=4-7")
        #expect(answer.response.status.code == 206 && answer.body == Data("cdefgh".utf8))
        #expect(answer.response.headerFields[.contentRange] == "bytes 2-7/10")
        let plain = try await get(cache, origin)
        #expect(plain.source == .cache && plain.body == Data("abcdefghij".utf8))
        #expect(origin.received.count == 2)
    }

    @Test("Missing bytes on both sides of the stored part, or a gap: the whole range is asked for, as before")
    func bothSidesAskForTheWholeRange() async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([part(3...5), part(1...8)])
        _ = try await get(cache, origin, "bytes=3-5")
        let answer = try await get(cache, origin, "bytes=1-8")
        #expect(origin.received.last?.headerFields[.range] == "bytes=1-8")
        #expect(origin.received.last?.headerFields[.ifRange] == nil)
        #expect(answer.body == Data("12345678".utf8))
    }

    @Test(
        "missingPart: the bytes on one side only, never for a weak or absent tag",
        arguments: [
            ("bytes=0-7", 0...3, "\"v1\"", 4...7 as ClosedRange<Int>?),
            ("bytes=4-", 0...3, "\"v1\"", 4...9), ("bytes=-8", 4...9, "\"v1\"", 2...3),
            ("bytes=0-9", 3...5, "\"v1\"", nil), ("bytes=7-9", 0...3, "\"v1\"", nil),
            ("bytes=0-7", 0...3, "W/\"v1\"", nil), ("bytes=0-3", 0...3, "\"v1\"", nil),
        ])
    func missingPart(range: String, stored: ClosedRange<Int>, tag: String, expected: ClosedRange<Int>?) throws {
        let byteRange = try #require(ByteRange(rangeField: range))
        let content = try #require(ContentRange(bounds: stored, completeLength: 10))
        #expect(HTTPCache.missingPart(of: byteRange, besides: content, tag: EntityTag(tag)) == expected)
    }

    @Test("A plain GET with a stored first part asks the origin for the rest only, and answers the whole 200")
    func plainGetCompletesTheStoredPart() async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([part(0...3), part(4...9)])
        _ = try await get(cache, origin, "bytes=0-3")
        let whole = try await get(cache, origin)
        #expect(origin.received.last?.headerFields[.range] == "bytes=4-9")
        #expect(origin.received.last?.headerFields[.ifRange] == "\"v1\"")
        #expect(whole.response.status.code == 200 && whole.source == .network && whole.wasStored)
        #expect(whole.body == Data(Self.digits) && whole.response.headerFields[.contentRange] == nil)
        let again = try await get(cache, origin)
        #expect(again.source == .cache && again.body == Data(Self.digits))
        #expect(origin.received.count == 2)
    }

    @Test("A plain GET whose completion the origin does not answer with 200 or 206 is fetched as usual")
    func plainGetFallsBackToAFetch() async throws {
        let cache = try makeCache()
        let full = ScriptedOrigin.Reply.respond(
            response(200, [("Date", HTTPDate.format(clock.now)), ("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")]),
            "0123456789")
        let origin = ScriptedOrigin([part(0...3), .respond(response(416, [("Content-Range", "bytes */8")]), ""), full])
        _ = try await get(cache, origin, "bytes=0-3")
        let whole = try await get(cache, origin)
        #expect(origin.received.map { $0.headerFields[.range] } == ["bytes=0-3", "bytes=4-9", nil])
        #expect(whole.response.status.code == 200 && whole.body == Data(Self.digits))
    }

    @Test("A completing 206 that does not repeat Content-Type keeps the stored part's (RFC 9110 §15.3.7)")
    func completionKeepsRepresentationFields() async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([part(0...3, extra: [("Content-Type", "text/plain")]), part(4...9)])
        _ = try await get(cache, origin, "bytes=0-3")
        let answer = try await get(cache, origin, "bytes=2-9")
        #expect(answer.response.headerFields[.contentType] == "text/plain")
        let whole = try await get(cache, origin)
        #expect(whole.source == .cache && whole.response.headerFields[.contentType] == "text/plain")
    }

    @Test("A completing 206 of another representation is not combined: the whole range is asked for")
    func completionWithAnotherTag() async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([part(0...3), part(4...7, tag: "\"v2\""), part(0...7, tag: "\"v2\"")])
        _ = try await get(cache, origin, "bytes=0-3")
        let answer = try await get(cache, origin, "bytes=0-7")
        #expect(origin.received.map { $0.headerFields[.range] } == ["bytes=0-3", "bytes=4-7", "bytes=0-7"])
        #expect(answer.response.headerFields[.eTag] == "\"v2\"" && answer.body == Data("01234567".utf8))
    }

    @Test(
        "An origin error on completion is the answer, not a second request; no-store is not completed; only-if-cached is a 504"
    )
    func completionGuards() async throws {
        let cache = try makeCache()
        let origin = ScriptedOrigin([
            part(0...3), .respond(response(503, [("Retry-After", "1")]), "down"), part(0...7),
        ])
        _ = try await get(cache, origin, "bytes=0-3")
        let failing = try await get(cache, origin, "bytes=0-7")
        #expect(failing.response.status.code == 503)
        #expect(origin.received.map { $0.headerFields[.range] } == ["bytes=0-3", "bytes=4-7"])
        let onlyIfCached = try await cache.response(
            for: request("https://example.com/a", [("Range", "bytes=0-7"), ("Cache-Control", "only-if-cached")]),
            transport: origin.transport)
        #expect(onlyIfCached.response.status.code == 504 && origin.received.count == 2)
        #expect(onlyIfCached.source == .unsatisfiable)
        let noStore = try await cache.response(
            for: request("https://example.com/a", [("Range", "bytes=0-7"), ("Cache-Control", "no-store")]),
            transport: origin.transport)
        #expect(origin.received.last?.headerFields[.range] == "bytes=0-7", "no-store: not completed")
        #expect(noStore.response.status.code == 206 && origin.received.count == 3)
    }
}
