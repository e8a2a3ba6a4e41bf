import Foundation
import HTTPTypes
import Testing
import TierCache
import TierCacheTesting

@testable import HTTPCaching

/// RFC 9110 §14: one byte range served from a complete response; everything the cache does not
/// serve as a range (several ranges, another unit, invalid syntax) is answered whole (§14.2).
@Suite("Range requests (RFC 9110 §14)")
struct HTTPCacheRangeTests {
    let clock = ManualCacheClock(start: epoch)
    static let lastModified = "Mon, 06 Nov 2023 00:00:00 GMT"

    @Test(
        "§14.1.2: byte-range specs",
        arguments: [
            ("bytes=0-4", ByteRange.from(first: 0, last: 4)), ("bytes=5-", .from(first: 5, last: nil)),
            ("bytes=-3", .suffix(length: 3)),
            ("Bytes = 2-2", .from(first: 2, last: 2)),
            ("bytes=0-99999999999999999999999", .from(first: 0, last: Int.max)),
        ])
    func parses(field: String, expected: ByteRange) {
        #expect(ByteRange(rangeField: field) == expected)
    }

    @Test(
        "Ignored: several ranges, another unit, a last position before the first, junk",
        arguments: [
            "bytes=0-1,3-4", "items=0-1", "bytes=4-2", "bytes=a-b", "bytes=", "bytes=-", "bytes=1", "0-1", "bytes=--1",
        ])
    func ignored(field: String) {
        #expect(ByteRange(rangeField: field) == nil)
    }

    @Test(
        "§14.1.2: the bytes selected in 10 bytes, or unsatisfiable",
        arguments: [
            (ByteRange.from(first: 0, last: 4), 10, 0...4 as ClosedRange<Int>?),
            (.from(first: 5, last: nil), 10, 5...9),
            (.from(first: 8, last: 100), 10, 8...9), (.suffix(length: 3), 10, 7...9), (.suffix(length: 20), 10, 0...9),
            (.from(first: 10, last: nil), 10, nil), (.suffix(length: 0), 10, nil), (.from(first: 0, last: nil), 0, nil),
            (.suffix(length: 1), 0, nil),
        ])
    func bounds(range: ByteRange, length: Int, expected: ClosedRange<Int>?) {
        #expect(range.bounds(in: length) == expected)
    }

    func cacheWithStoredDigits() async throws -> (HTTPCache, ScriptedOrigin) {
        let cache = try memoryCache(clock: clock)
        let fields = [
            ("Date", HTTPDate.format(clock.now)), ("Cache-Control", "max-age=60"), ("ETag", "\"v1\""),
            ("Last-Modified", Self.lastModified),
        ]
        let origin = ScriptedOrigin([.respond(response(200, fields), "0123456789")])
        return (cache, origin)
    }

    func get(
        _ cache: HTTPCache, _ origin: ScriptedOrigin, _ fields: [(String, String)]
    ) async throws -> HTTPCacheResponse {
        try await cache.response(for: request("https://example.com/a", fields), transport: origin.transport)
    }

    @Test("An origin that ignores the range sends it all: the cache keeps the whole and cuts every range from it")
    func servesRanges() async throws {
        let (cache, origin) = try await cacheWithStoredDigits()
        let miss = try await get(cache, origin, [("Range", "bytes=2-4")])
        #expect(miss.response.status.code == 206 && miss.body == Data("234".utf8) && miss.source == .network)
        #expect(
            miss.response.headerFields[.contentRange] == "bytes 2-4/10"
                && miss.response.headerFields[.contentLength] == "3")
        #expect(origin.received.first?.headerFields[.range] == "bytes=2-4", "the origin is asked for the range first")
        let hit = try await get(cache, origin, [("Range", "bytes=-3")])
        #expect(hit.response.status.code == 206 && hit.body == Data("789".utf8) && hit.source == .cache)
        let unsatisfiable = try await get(cache, origin, [("Range", "bytes=10-")])
        #expect(
            unsatisfiable.response.status.code == 416
                && unsatisfiable.response.headerFields[.contentRange] == "bytes */10")
        #expect(unsatisfiable.body.isEmpty)
        let several = try await get(cache, origin, [("Range", "bytes=0-1,4-5")])
        #expect(several.response.status.code == 200 && several.body == Data("0123456789".utf8))
        #expect(origin.received.count == 1)
    }

    @Test(
        "§13.1.5: If-Range with the current strong tag or Last-Modified gets the range, anything else the whole",
        arguments: [
            ("\"v1\"", 206), ("W/\"v1\"", 200), ("\"v0\"", 200), (Self.lastModified, 206),
            ("Tue, 07 Nov 2023 00:00:00 GMT", 200), ("junk", 200),
        ])
    func ifRange(value: String, expected: Int) async throws {
        let (cache, origin) = try await cacheWithStoredDigits()
        let answer = try await get(cache, origin, [("Range", "bytes=0-0"), ("If-Range", value)])
        #expect(answer.response.status.code == expected)
        #expect(answer.body == Data((expected == 206 ? "0" : "0123456789").utf8))
    }

    @Test("§13.1.5, §8.8.2.2: an If-Range date matches only a Last-Modified a second or more before the stored Date")
    func ifRangeDateNeedsAStrongLastModified() {
        func stored(date: String?) -> HTTPResponse {
            response(200, [("Last-Modified", Self.lastModified)] + (date.map { [("Date", $0)] } ?? []))
        }
        #expect(ByteRange.ifRange(Self.lastModified, allowsRangeOf: stored(date: "Mon, 06 Nov 2023 00:00:01 GMT")))
        #expect(
            !ByteRange.ifRange(Self.lastModified, allowsRangeOf: stored(date: Self.lastModified)),
            "it may have changed again within the second it names")
        #expect(!ByteRange.ifRange(Self.lastModified, allowsRangeOf: stored(date: nil)))
    }

    @Test("§13.2.2: a client's If-None-Match that matches comes before the range: 304")
    func notModifiedBeforeRange() async throws {
        let (cache, origin) = try await cacheWithStoredDigits()
        _ = try await get(cache, origin, [])
        let answer = try await get(cache, origin, [("Range", "bytes=0-0"), ("If-None-Match", "\"v1\"")])
        #expect(answer.response.status.code == 304)
    }
}
