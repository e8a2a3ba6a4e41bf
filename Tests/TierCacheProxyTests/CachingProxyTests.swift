import AsyncHTTPClient
import Foundation
import NIOHTTP1
import Testing

/// `tiercache-proxy` end to end: a real process between AsyncHTTPClient and a scripted origin on
/// 127.0.0.1, checked against RFC 9111 shared-cache semantics, RFC 9110 forwarding and RFC 9211.
@Suite("Caching proxy, shared-cache semantics", .timeLimit(.minutes(5)))
struct CachingProxyTests {
    @Test("It starts with a one-line summary of its configuration")
    func summary() async throws {
        try await withProxy { origin, proxy in
            #expect(
                proxy.summary.hasPrefix(
                    "tiercache proxy: 127.0.0.1:0 -> \(origin.url), shared cache, tiers [memory 256 MiB]"))
        }
    }

    @Test("A fresh stored response is served with Age, Via and Cache-Status: hit, without asking the origin")
    func freshHit() async throws {
        try await withProxy { origin, proxy in
            let first = try await send(.GET, "\(proxy.url)/fresh")
            #expect(first.status == 200 && first.body == "fresh")
            #expect(first.cacheStatus.hasPrefix("TierCache;fwd=uri-miss;fwd-status=200;stored;ttl="))
            let second = try await send(.GET, "\(proxy.url)/fresh")
            #expect(second.body == "fresh")
            #expect(second.cacheStatus.hasPrefix("TierCache;hit;ttl="))
            #expect(second.field("Age") != nil)
            #expect(second.field("Via") == "1.1 TierCache")
            #expect(origin.count("/fresh") == 1)
        }
    }

    @Test("RFC 9111 §5.2.1.7: only-if-cached with nothing stored is the proxy's own 504, not a hit")
    func onlyIfCachedMiss() async throws {
        try await withProxy { origin, proxy in
            let answer = try await send(.GET, "\(proxy.url)/fresh", headers: [("Cache-Control", "only-if-cached")])
            #expect(answer.status == 504)
            #expect(answer.cacheStatus == "TierCache;detail=only-if-cached")
            #expect(origin.count("/fresh") == 0)
        }
    }

    @Test("RFC 9111 §4.3.2: a client's conditional GET is answered 304 from storage")
    func clientConditionalFromStorage() async throws {
        try await withProxy { origin, proxy in
            _ = try await send(.GET, "\(proxy.url)/fresh")
            let matching = try await send(.GET, "\(proxy.url)/fresh", headers: [("If-None-Match", "\"f1\"")])
            #expect(matching.status == 304 && matching.body.isEmpty)
            #expect(matching.field("ETag") == "\"f1\"")
            // Like every answer, it says who answered and how.
            #expect(matching.field("Via")?.isEmpty == false && matching.cacheStatus.contains("hit"))
            let notMatching = try await send(.GET, "\(proxy.url)/fresh", headers: [("If-None-Match", "\"other\"")])
            #expect(notMatching.status == 200 && notMatching.body == "fresh")
            let notModifiedSince = try await send(
                .GET, "\(proxy.url)/fresh", headers: [("If-Modified-Since", "Mon, 02 Nov 2026 00:00:00 GMT")])
            #expect(notModifiedSince.status == 304)
            let modifiedSince = try await send(
                .GET, "\(proxy.url)/fresh", headers: [("If-Modified-Since", "Sat, 31 Oct 2026 00:00:00 GMT")])
            #expect(modifiedSince.status == 200)
            #expect(origin.count("/fresh") == 1)
        }
    }

    /// The proxy's member replaced an upstream cache's `Cache-Status`.
    @Test("RFC 9211 §2: the proxy's Cache-Status member follows an upstream cache's, on a miss and a hit")
    func upstreamCacheStatusStays() async throws {
        try await withProxy { _, proxy in
            let miss = try await send(.GET, "\(proxy.url)/upstream-labelled")
            #expect(miss.cacheStatus.hasPrefix("Upstream;hit, TierCache;fwd=uri-miss;fwd-status=200;stored"))
            let hit = try await send(.GET, "\(proxy.url)/upstream-labelled")
            #expect(hit.cacheStatus.hasPrefix("Upstream;hit, TierCache;hit;ttl="), "\(hit.cacheStatus)")
        }
    }

    @Test("HEAD is answered from a stored GET, with the GET's Content-Length and no body")
    func headFromStoredGet() async throws {
        try await withProxy { origin, proxy in
            _ = try await send(.GET, "\(proxy.url)/fresh")
            let head = try await send(.HEAD, "\(proxy.url)/fresh")
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(head.field("Content-Length") == "5")
            #expect(head.cacheStatus.hasPrefix("TierCache;hit"))
            #expect(origin.count("/fresh") == 1)
        }
    }

    @Test("RFC 9111 §4.3: a stale response is revalidated with If-None-Match and freshened by 304")
    func revalidation() async throws {
        try await withProxy { origin, proxy in
            _ = try await send(.GET, "\(proxy.url)/etag")
            let second = try await send(.GET, "\(proxy.url)/etag")
            #expect(second.status == 200 && second.body == "validated")
            #expect(second.cacheStatus.hasPrefix("TierCache;fwd=stale;fwd-status=304"))
            #expect(origin.lastRequestFields("/etag")?[.ifNoneMatch] == "\"v1\"")
            #expect(origin.count("/etag") == 2)
        }
    }

    @Test("RFC 9211 §2.2: a stale response the origin's new one replaces is fwd=stale, not uri-miss")
    func staleReplacedIsForwardedAsStale() async throws {
        try await withProxy { origin, proxy in
            let first = try await send(.GET, "\(proxy.url)/sie")
            #expect(first.cacheStatus.hasPrefix("TierCache;fwd=uri-miss;fwd-status=200"), "\(first.cacheStatus)")
            // Stored, stale at once and without validators: fetched again in full.
            let second = try await send(.GET, "\(proxy.url)/sie")
            #expect(second.cacheStatus.hasPrefix("TierCache;fwd=stale;fwd-status=200"), "\(second.cacheStatus)")
            #expect(origin.count("/sie") == 2)
            // A fresh response the request's own directives pass over is `fwd=request`, for
            // `min-fresh` and `max-age` as for `no-cache` (they were `uri-miss`).
            _ = try await send(.GET, "\(proxy.url)/fresh")
            for directive in ["min-fresh=100000", "max-age=0", "no-cache"] {
                let passedOver = try await send(.GET, "\(proxy.url)/fresh", headers: [("Cache-Control", directive)])
                #expect(
                    passedOver.cacheStatus.hasPrefix("TierCache;fwd=request"), "\(directive): \(passedOver.cacheStatus)"
                )
            }
        }
    }

    @Test("RFC 9111 §5.2.2.10, §5.2.2.7: s-maxage makes a response fresh for the proxy; private keeps it out")
    func sharedMaxAgeAndPrivate() async throws {
        try await withProxy { origin, proxy in
            for _ in 0..<2 {
                _ = try await send(.GET, "\(proxy.url)/s-maxage")
                _ = try await send(.GET, "\(proxy.url)/private")
            }
            #expect(origin.count("/s-maxage") == 1)
            #expect(origin.count("/private") == 2)
        }
    }

    @Test("RFC 9111 §3.5: a response to a request with Authorization is not stored by the shared cache")
    func authorization() async throws {
        try await withProxy { origin, proxy in
            for _ in 0..<2 { _ = try await send(.GET, "\(proxy.url)/fresh", headers: [("Authorization", "Bearer x")]) }
            #expect(origin.count("/fresh") == 2)
        }
    }

    @Test("Private mode (--private) stores private responses")
    func privateMode() async throws {
        try await withProxy(["--private"]) { origin, proxy in
            #expect(proxy.summary.contains("private cache"))
            for _ in 0..<2 { _ = try await send(.GET, "\(proxy.url)/private") }
            #expect(origin.count("/private") == 1)
        }
    }

    @Test("RFC 9111 §5.2.2.5: no-store responses are never stored")
    func noStore() async throws {
        try await withProxy { origin, proxy in
            for _ in 0..<2 {
                let response = try await send(.GET, "\(proxy.url)/no-store")
                #expect(response.body == "never")
                #expect(!response.cacheStatus.contains("stored"))
            }
            #expect(origin.count("/no-store") == 2)
        }
    }

    @Test("A 304 repeating no validator freshens the stored response: one origin request per revalidation")
    func bareNotModified() async throws {
        try await withProxy { origin, proxy in
            for _ in 0..<3 {
                let response = try await send(.GET, "\(proxy.url)/bare-304")
                #expect(response.status == 200 && response.body == "validated once")
            }
            #expect(origin.count("/bare-304") == 3, "the first fetch, then one conditional request per revalidation")
            #expect(origin.lastRequestFields("/bare-304")?[.ifNoneMatch] == "\"b1\"")
        }
    }

    @Test("RFC 9111 §5.2.2.4: a no-cache response is revalidated on every request, and served from storage after 304")
    func noCacheResponse() async throws {
        try await withProxy { origin, proxy in
            for _ in 0..<3 {
                let response = try await send(.GET, "\(proxy.url)/no-cache")
                #expect(response.status == 200 && response.body == "check first")
            }
            #expect(origin.count("/no-cache") == 3)
            #expect(origin.lastRequestFields("/no-cache")?[.ifNoneMatch] == "\"n1\"")
        }
    }

    @Test(
        "RFC 9111 §4.2.4, §5.2.2.2, §5.2.2.8: with the origin down a stale response stands in, unless it says must-revalidate or proxy-revalidate"
    )
    func revalidationRequired() async throws {
        try await withProxy { origin, proxy in
            for path in ["/etag", "/must-revalidate", "/proxy-revalidate"] {
                _ = try await send(.GET, "\(proxy.url)\(path)")
            }
            await origin.stop()
            let stale = try await send(.GET, "\(proxy.url)/etag")
            #expect(stale.status == 200 && stale.body == "validated")
            #expect(stale.cacheStatus.contains("detail=stale-on-error"))
            let strict = try await send(.GET, "\(proxy.url)/must-revalidate")
            let strictForProxies = try await send(.GET, "\(proxy.url)/proxy-revalidate")
            #expect(strict.status == 502 && strictForProxies.status == 502)
        }
    }

    @Test("RFC 9111 §4.2.2: a response without explicit lifetime is fresh for a tenth of its age since Last-Modified")
    func heuristicFreshness() async throws {
        try await withProxy { origin, proxy in
            _ = try await send(.GET, "\(proxy.url)/heuristic")
            let second = try await send(.GET, "\(proxy.url)/heuristic")
            #expect(second.cacheStatus.hasPrefix("TierCache;hit;ttl="))
            #expect(origin.count("/heuristic") == 1)
        }
    }

    @Test("RFC 9111 §4.1: Vary keeps one variant per Accept-Language")
    func vary() async throws {
        try await withProxy { origin, proxy in
            for _ in 0..<2 {
                let french = try await send(.GET, "\(proxy.url)/vary", headers: [("Accept-Language", "fr")])
                let german = try await send(.GET, "\(proxy.url)/vary", headers: [("Accept-Language", "de")])
                #expect(french.body == "hello in fr" && german.body == "hello in de")
            }
            #expect(origin.count("/vary") == 2)
        }
    }

    @Test("RFC 9111 §4.4: a successful POST invalidates the stored GET")
    func invalidation() async throws {
        try await withProxy { origin, proxy in
            _ = try await send(.GET, "\(proxy.url)/fresh")
            let post = try await send(.POST, "\(proxy.url)/fresh", body: "data")
            #expect(post.body == "posted")
            #expect(post.cacheStatus.contains("fwd=method"))
            _ = try await send(.GET, "\(proxy.url)/fresh")
            #expect(origin.count("/fresh") == 3)
        }
    }

    @Test("Repeated hits reuse the answer, and an invalidation ends the reuse at once")
    func reusedAnswersEndWithInvalidation() async throws {
        try await withProxy { origin, proxy in
            for _ in 0..<3 {
                let response = try await send(.GET, "\(proxy.url)/fresh")
                #expect(response.body == "fresh")
            }
            _ = try await send(.POST, "\(proxy.url)/fresh", body: "data")
            let after = try await send(.GET, "\(proxy.url)/fresh")
            #expect(after.cacheStatus.hasPrefix("TierCache;fwd=uri-miss"))
            #expect(origin.count("/fresh") == 3)  // the first GET, the POST, the GET after it
        }
    }

    @Test("RFC 9110 §7.6.1: hop-by-hop fields are removed both ways; Via is added")
    func hopByHop() async throws {
        try await withProxy { origin, proxy in
            let echo = try await send(
                .GET, "\(proxy.url)/echo",
                headers: [
                    ("Connection", "X-Drop"), ("X-Drop", "1"), ("Proxy-Authorization", "Basic eA=="), ("X-Keep", "2"),
                ])
            let forwarded = echo.body.lowercased()
            #expect(!forwarded.contains("x-drop"))
            #expect(!forwarded.contains("proxy-authorization"))
            #expect(forwarded.contains("x-keep: 2"))
            #expect(forwarded.contains("via: 1.1 tiercache"))

            for _ in 0..<2 {
                let hop = try await send(.GET, "\(proxy.url)/hop")
                #expect(hop.field("X-Secret") == nil)
                #expect(hop.field("Keep-Alive") == nil)
                #expect(hop.field("X-Kept") == "yes")
            }
            #expect(origin.count("/hop") == 1)
        }
    }

    @Test("RFC 5861: stale-while-revalidate serves the stored response and revalidates in the background")
    func staleWhileRevalidate() async throws {
        try await withProxy { _, proxy in
            _ = try await send(.GET, "\(proxy.url)/swr")
            let stale = try await send(.GET, "\(proxy.url)/swr")
            #expect(stale.body == "swr")
            #expect(stale.cacheStatus.hasPrefix("TierCache;hit"))
            #expect(stale.cacheStatus.contains("detail=stale-while-revalidate"))
        }
    }

    @Test("RFC 5861: stale-if-error serves the stored response when the origin answers 500")
    func staleIfError() async throws {
        try await withProxy { origin, proxy in
            _ = try await send(.GET, "\(proxy.url)/sie")
            origin.startFailing()
            let stale = try await send(.GET, "\(proxy.url)/sie")
            #expect(stale.status == 200 && stale.body == "sie")
            #expect(stale.cacheStatus.contains("fwd=stale") && stale.cacheStatus.contains("detail=stale-on-error"))
            let uncached = try await send(.GET, "\(proxy.url)/fresh")
            #expect(uncached.status == 500, "without a stored response the origin's error goes through")
        }
    }

    @Test("A GET with content goes past the cache with its body; its answer is not stored for the bare URL")
    func getWithContentBypasses() async throws {
        try await withProxy { origin, proxy in
            let query = try await send(.GET, "\(proxy.url)/search-body", body: "{\"term\":\"alice\"}")
            #expect(query.body == "16 bytes", "the body was dropped: \(query.body)")
            #expect(query.cacheStatus.contains("fwd=bypass"), "\(query.cacheStatus)")
            let bare = try await send(.GET, "\(proxy.url)/search-body")
            #expect(bare.body == "0 bytes" && origin.count("/search-body") == 2)
        }
    }

    @Test("RFC 9213: CDN-Cache-Control governs the proxy by default; clients get Cache-Control")
    func targetedCacheControl() async throws {
        try await withProxy { origin, proxy in
            _ = try await send(.GET, "\(proxy.url)/cdn")
            let second = try await send(.GET, "\(proxy.url)/cdn")
            #expect(second.cacheStatus.hasPrefix("TierCache;hit"))
            #expect(second.field("Cache-Control") == "no-store")
            #expect(origin.count("/cdn") == 1)
        }
        for options in [["--no-targeted-cache-control"], ["--private"]] {
            try await withProxy(options) { origin, proxy in
                for _ in 0..<2 { _ = try await send(.GET, "\(proxy.url)/cdn") }
                #expect(origin.count("/cdn") == 2, "\(options): Cache-Control: no-store rules")
            }
        }
        try await withProxy(["--targeted-cache-control", "X-Other-Cache-Control"]) { origin, proxy in
            for _ in 0..<2 { _ = try await send(.GET, "\(proxy.url)/cdn") }
            #expect(origin.count("/cdn") == 2, "another targeted field named: CDN-Cache-Control is not this cache's")
        }
    }

    @Test("RFC 9213 §2.2: a 304 that does not repeat the targeted field leaves the stored one in force")
    func targetedFieldOutlivesRevalidation() async throws {
        try await withProxy { origin, proxy in
            for _ in 0..<3 {
                let answer = try await send(.GET, "\(proxy.url)/cdn-304")
                #expect(answer.status == 200 && answer.body == "cdn")
                #expect(answer.field("Cache-Control") == "max-age=86400", "clients get the origin's Cache-Control")
            }
            // CDN-Cache-Control: max-age=0 has every request revalidated; the 304's Cache-Control,
            // merged as it came, gave the proxy a day.
            #expect(origin.count("/cdn-304") == 3)
        }
    }

    @Test("RFC 9213 §2.2: a targeted field sets Expires aside too; clients get it back")
    func targetedFieldIgnoresExpires() async throws {
        try await withProxy { origin, proxy in
            let first = try await send(.GET, "\(proxy.url)/cdn-expires")
            #expect(first.field("Expires") != nil && first.field("TierCache-Origin-Expires") == nil)
            let second = try await send(.GET, "\(proxy.url)/cdn-expires")
            #expect(!second.cacheStatus.hasPrefix("TierCache;hit"), "\(second.cacheStatus)")
            #expect(origin.count("/cdn-expires") == 2, "must-revalidate alone gives no lifetime")
            #expect(second.field("Expires") != nil)
        }
        try await withProxy(["--no-targeted-cache-control"]) { origin, proxy in
            for _ in 0..<2 { _ = try await send(.GET, "\(proxy.url)/cdn-expires") }
            #expect(origin.count("/cdn-expires") == 1, "without the targeted field, Expires gives a day")
        }
    }

    @Test("RFC 9213 §2.1: an invalid targeted field is ignored whole, and Cache-Control rules")
    func invalidTargetedField() async throws {
        try await withProxy { origin, proxy in
            for _ in 0..<2 { _ = try await send(.GET, "\(proxy.url)/cdn-string") }
            #expect(origin.count("/cdn-string") == 2, "max-age=\"600\" is not an Integer: no-store applies")
            _ = try await send(.GET, "\(proxy.url)/cdn-bad-flag")
            let second = try await send(.GET, "\(proxy.url)/cdn-bad-flag")
            #expect(second.cacheStatus.hasPrefix("TierCache;hit"))
            #expect(origin.count("/cdn-bad-flag") == 1, "no-store=3 is not a Boolean: max-age=600 applies")
        }
    }

    @Test("RFC 9211: Cache-Status carries the key when the request asks for it and the operator allows it")
    func cacheStatusKey() async throws {
        try await withProxy(["--expose-cache-keys"]) { _, proxy in
            let response = try await send(.GET, "\(proxy.url)/fresh?b=2", headers: [("TierCache-Debug-Key", "1")])
            #expect(response.cacheStatus.contains("key=\"GET http://127.0.0.1:"))
            #expect(response.cacheStatus.contains("/fresh?b=2\""))
            let plain = try await send(.GET, "\(proxy.url)/fresh?b=2")
            #expect(!plain.cacheStatus.contains("key="))
        }
    }

    @Test("The cache key, which names the upstream, is not shown to a client that asks unless allowed")
    func cacheStatusKeyHiddenByDefault() async throws {
        try await withProxy { origin, proxy in
            let response = try await send(.GET, "\(proxy.url)/fresh?b=2", headers: [("TierCache-Debug-Key", "1")])
            #expect(response.body == "fresh")
            #expect(!response.cacheStatus.contains("key="), "\(response.cacheStatus)")
            #expect(!response.cacheStatus.contains(origin.url), "\(response.cacheStatus)")
        }
    }

    @Test("Concurrent misses for one URL make one origin request")
    func collapsing() async throws {
        try await withProxy { origin, proxy in
            try await withThrowingTaskGroup(of: Received.self) { group in
                for _ in 0..<6 { group.addTask { try await send(.GET, "\(proxy.url)/gated") } }
                await origin.gate.waitForArrival()
                origin.gate.open()
                for try await response in group { #expect(response.body == "gated") }
            }
            #expect(origin.count("/gated") == 1)
        }
    }
}
