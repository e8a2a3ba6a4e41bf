import Foundation
import Testing

/// Rules of RFC 9110 and RFC 9111 that the engine implements, end to end through the proxy on
/// loopback (the engine's own tests cover each rule with values; these show the proxy uses them).
@Suite("Caching proxy: ranges, POST reuse, normalised Vary", .timeLimit(.minutes(5)))
struct ProxyConformanceTests {
    @Test(
        "RFC 9110 §14: a range is cut from the whole stored response; 416 when unsatisfiable; If-Range that does not match gets it all"
    )
    func ranges() async throws {
        try await withProxy { origin, proxy in
            let first = try await send(.GET, "\(proxy.url)/fresh", headers: [("Range", "bytes=1-3")])
            #expect(first.status == 206 && first.body == "res")
            #expect(first.field("Content-Range") == "bytes 1-3/5")
            let second = try await send(.GET, "\(proxy.url)/fresh", headers: [("Range", "bytes=-2")])
            #expect(second.status == 206 && second.body == "sh" && second.cacheStatus.hasPrefix("TierCache;hit"))
            let beyond = try await send(.GET, "\(proxy.url)/fresh", headers: [("Range", "bytes=9-")])
            #expect(beyond.status == 416 && beyond.field("Content-Range") == "bytes */5")
            let changed = try await send(
                .GET, "\(proxy.url)/fresh", headers: [("Range", "bytes=1-3"), ("If-Range", "\"other\"")])
            #expect(changed.status == 200 && changed.body == "fresh")
            let same = try await send(
                .GET, "\(proxy.url)/fresh", headers: [("Range", "bytes=1-3"), ("If-Range", "\"f1\"")])
            #expect(same.status == 206 && same.body == "res")
            let current = try await send(
                .GET, "\(proxy.url)/fresh", headers: [("Range", "bytes=1-3"), ("If-None-Match", "\"f1\"")])
            #expect(current.status == 304, "a 304 comes before a 206 (RFC 9110 §13.2.2)")
            #expect(origin.count("/fresh") == 1, "the origin was asked once, for the whole representation")
        }
    }

    @Test("RFC 9110 §9.3.3: a POST response that is the target's representation answers the next GET")
    func postReuse() async throws {
        try await withProxy { origin, proxy in
            let posted = try await send(.POST, "\(proxy.url)/posted", body: "x")
            #expect(posted.body == "from the post")
            let got = try await send(.GET, "\(proxy.url)/posted")
            #expect(got.body == "from the post" && got.cacheStatus.hasPrefix("TierCache;hit"))
            #expect(origin.count("/posted") == 1)
        }
    }

    @Test("RFC 9111 §4.1: equivalent Accept-Language values select the same stored response")
    func normalisedVary() async throws {
        try await withProxy { origin, proxy in
            _ = try await send(.GET, "\(proxy.url)/vary", headers: [("Accept-Language", "en-US, fr;q=0.5")])
            let same = try await send(.GET, "\(proxy.url)/vary", headers: [("Accept-Language", "FR; q=0.50,en-us")])
            #expect(same.body == "hello in en-US, fr;q=0.5" && same.cacheStatus.hasPrefix("TierCache;hit"))
            let other = try await send(.GET, "\(proxy.url)/vary", headers: [("Accept-Language", "de")])
            #expect(other.body == "hello in de")
            #expect(origin.count("/vary") == 2)
        }
    }

    @Test(
        "RFC 9110 §5.6.7: Expires with names in another case is read; in another zone it is invalid, so already expired"
    )
    func expiresDates() async throws {
        try await withProxy { origin, proxy in
            for _ in 0..<2 { _ = try await send(.GET, "\(proxy.url)/expires-case") }
            #expect(origin.count("/expires-case") == 1)
            for _ in 0..<2 { _ = try await send(.GET, "\(proxy.url)/expires-utc") }
            #expect(origin.count("/expires-utc") == 2)
        }
    }

    @Test(
        "RFC 9111 §4.3.5 with --forward-head: HEAD responses are kept for HEADs, never answer a GET, and update a stored GET"
    )
    func forwardedHEAD() async throws {
        try await withProxy(["--forward-head"]) { origin, proxy in
            let first = try await send(.HEAD, "\(proxy.url)/fresh")
            #expect(first.status == 200 && first.body.isEmpty && first.field("Content-Length") == "5")
            let second = try await send(.HEAD, "\(proxy.url)/fresh")
            #expect(second.cacheStatus.hasPrefix("TierCache;hit") && second.field("Content-Length") == "5")
            let get = try await send(.GET, "\(proxy.url)/fresh")
            #expect(get.body == "fresh")
            #expect(origin.methods("/fresh") == ["HEAD", "GET"])

            _ = try await send(.GET, "\(proxy.url)/head-update")
            let head = try await send(.HEAD, "\(proxy.url)/head-update")
            #expect(head.status == 200)
            let updated = try await send(.GET, "\(proxy.url)/head-update")
            #expect(
                updated.body == "body" && updated.cacheStatus.hasPrefix("TierCache;hit"),
                "the HEAD's max-age=600 freshened the stored GET")
            #expect(origin.methods("/head-update") == ["GET", "HEAD"])
        }
        try await withProxy { origin, proxy in
            _ = try await send(.HEAD, "\(proxy.url)/fresh")
            #expect(origin.methods("/fresh") == ["GET"], "by default a HEAD miss fetches the GET")
        }
    }
}
