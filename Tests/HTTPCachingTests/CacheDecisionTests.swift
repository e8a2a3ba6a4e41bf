import Foundation
import HTTPTypes
import Testing
import TierCache
import TierCacheTesting

@testable import HTTPCaching

@Suite("Using stored responses (RFC 9111 §4, §5.2.1, RFC 5861)")
struct CacheDecisionTests {
    let date = HTTPDate.format(epoch)

    func decide(
        _ responseFields: [(String, String)], requestFields: [(String, String)] = [], at seconds: TimeInterval,
        policy: RequestCachePolicy = .useProtocolCachePolicy, shared: Bool = false
    ) -> CacheDecision {
        let req = request("https://example.com/a", requestFields)
        return CacheDecision.decide(
            request: req, requestDirectives: CacheControl(fieldValues: req.headerFields[values: .cacheControl]),
            stored: stored(response(200, [("Date", date)] + responseFields)), policy: policy,
            context: context(epoch + seconds, shared: shared))
    }

    @Test("§4.2: fresh is used, stale is revalidated")
    func freshAndStale() {
        #expect(decide([("Cache-Control", "max-age=60")], at: 59) == .useStored(stale: false))
        #expect(decide([("Cache-Control", "max-age=60")], at: 60) == .revalidate)
    }

    @Test("§5.2.1.1: request max-age bounds the acceptable age")
    func requestMaxAge() {
        #expect(
            decide([("Cache-Control", "max-age=600")], requestFields: [("Cache-Control", "max-age=30")], at: 31)
                == .revalidate)
        #expect(
            decide([("Cache-Control", "max-age=600")], requestFields: [("Cache-Control", "max-age=30")], at: 29)
                == .useStored(stale: false))
    }

    @Test("§5.2.1.3: min-fresh demands remaining freshness")
    func minFresh() {
        #expect(
            decide([("Cache-Control", "max-age=60")], requestFields: [("Cache-Control", "min-fresh=30")], at: 40)
                == .revalidate)
        #expect(
            decide([("Cache-Control", "max-age=60")], requestFields: [("Cache-Control", "min-fresh=30")], at: 20)
                == .useStored(stale: false))
    }

    /// A server route's per-user page without `Cache-Control` is stored by a shared cache
    /// (heuristically cacheable, lifetime 0): another client's `max-stale` must not be served it.
    @Test("§4.2.4: a shared cache honours max-stale only for a response that stated its lifetime")
    func maxStaleInASharedCache() {
        let anyStaleness = [("Cache-Control", "max-stale")]
        #expect(decide([], requestFields: anyStaleness, at: 10, shared: true) == .revalidate)
        #expect(
            decide(
                [("Last-Modified", "Tue, 22 Feb 2022 22:00:00 GMT")], requestFields: anyStaleness, at: 1e7, shared: true
            )
                == .revalidate)
        #expect(decide([], requestFields: anyStaleness, at: 10) == .useStored(stale: true), "a private cache serves it")
        #expect(
            decide([("Cache-Control", "max-age=60")], requestFields: anyStaleness, at: 100, shared: true)
                == .useStored(stale: true))
        #expect(
            decide([("Expires", "Thu, 01 Jan 1970 00:00:00 GMT")], requestFields: anyStaleness, at: 100, shared: true)
                == .useStored(stale: true))
        #expect(
            decide([("Expires", "0")], requestFields: anyStaleness, at: 100, shared: true) == .revalidate,
            "an invalid Expires (\"do not cache\") states no lifetime")
    }

    @Test("RFC 5861 §4: a shared cache honours a client's stale-if-error only for a response that stated its lifetime")
    func requestStaleIfErrorInASharedCache() {
        func allows(_ responseFields: [(String, String)], shared: Bool) -> Bool {
            CacheDecision.staleIfErrorAllows(
                stored(response(200, [("Date", date)] + responseFields)),
                requestDirectives: CacheControl("stale-if-error=86400"), context: context(epoch + 100, shared: shared))
        }
        #expect(!allows([], shared: true))
        #expect(allows([], shared: false))
        #expect(allows([("Cache-Control", "max-age=60")], shared: true))
        #expect(allows([("Cache-Control", "stale-if-error=86400")], shared: true), "the origin's own permission")
    }

    @Test("§5.2.1.2: max-stale accepts stale responses within its bound")
    func maxStale() {
        #expect(
            decide([("Cache-Control", "max-age=60")], requestFields: [("Cache-Control", "max-stale=30")], at: 80)
                == .useStored(stale: true))
        #expect(
            decide([("Cache-Control", "max-age=60")], requestFields: [("Cache-Control", "max-stale=30")], at: 100)
                == .revalidate)
        #expect(
            decide([("Cache-Control", "max-age=60")], requestFields: [("Cache-Control", "max-stale")], at: 1e6)
                == .useStored(stale: true))
    }

    /// A private engine stores `private` responses; a shared one reading the same tier served
    /// them to everyone.
    @Test("§5.2.2.7: a shared cache does not use a stored private response, whatever the policy")
    func sharedCacheIgnoresPrivate() {
        let fields = [("Cache-Control", "private, max-age=600")]
        #expect(decide(fields, at: 1) == .useStored(stale: false))
        #expect(decide(fields, at: 1, shared: true) == .fetch)
        #expect(decide(fields, at: 1, policy: .returnCacheDataElseLoad, shared: true) == .fetch)
        #expect(
            decide(fields, requestFields: [("Cache-Control", "only-if-cached")], at: 1, shared: true) == .unsatisfiable)
        // A field `private` names: only while the response still holds it.
        let naming = [("Cache-Control", "private=\"Set-Cookie\", max-age=600")]
        #expect(decide(naming, at: 1, shared: true) == .useStored(stale: false))
        #expect(decide(naming + [("Set-Cookie", "id=alice")], at: 1, shared: true) == .fetch)
    }

    @Test("§5.2.2.2/§5.2.2.8: must-revalidate (and proxy-revalidate when shared) forbid stale use")
    func mustRevalidate() {
        #expect(
            decide(
                [("Cache-Control", "max-age=60, must-revalidate")], requestFields: [("Cache-Control", "max-stale")],
                at: 80) == .revalidate)
        #expect(
            decide(
                [("Cache-Control", "max-age=60, proxy-revalidate")], requestFields: [("Cache-Control", "max-stale")],
                at: 80) == .useStored(stale: true))
        #expect(
            decide(
                [("Cache-Control", "max-age=60, proxy-revalidate")], requestFields: [("Cache-Control", "max-stale")],
                at: 80, shared: true) == .revalidate)
    }

    @Test("§5.2.1.4/§5.4: request no-cache, or Pragma: no-cache without Cache-Control, revalidates")
    func requestNoCache() {
        #expect(
            decide([("Cache-Control", "max-age=600")], requestFields: [("Cache-Control", "no-cache")], at: 1)
                == .revalidate)
        #expect(
            decide([("Cache-Control", "max-age=600")], requestFields: [("Pragma", "no-cache")], at: 1) == .revalidate)
        #expect(
            decide(
                [("Cache-Control", "max-age=600")],
                requestFields: [("Pragma", "no-cache"), ("Cache-Control", "max-age=900")], at: 1)
                == .useStored(stale: false))
    }

    @Test("§5.2.2.4: response no-cache always revalidates")
    func responseNoCache() {
        #expect(decide([("Cache-Control", "no-cache, max-age=600")], at: 1) == .revalidate)
    }

    @Test("RFC 5861 §3: stale-while-revalidate serves stale within its window while revalidating")
    func staleWhileRevalidate() {
        #expect(decide([("Cache-Control", "max-age=60, stale-while-revalidate=30")], at: 70) == .useStoredAndRevalidate)
        #expect(decide([("Cache-Control", "max-age=60, stale-while-revalidate=30")], at: 100) == .revalidate)
    }

    @Test("§5.2.1.7: only-if-cached never goes to the network")
    func onlyIfCached() {
        #expect(
            decide([("Cache-Control", "max-age=60")], requestFields: [("Cache-Control", "only-if-cached")], at: 100)
                == .unsatisfiable)
        #expect(
            decide([("Cache-Control", "max-age=60")], requestFields: [("Cache-Control", "only-if-cached")], at: 10)
                == .useStored(stale: false))
        let none = CacheDecision.decide(
            request: request(), requestDirectives: CacheControl("only-if-cached"), stored: nil,
            policy: .useProtocolCachePolicy, context: context(epoch))
        #expect(none == .unsatisfiable)
    }

    @Test(
        "URLRequest.CachePolicy semantics",
        arguments: [
            (RequestCachePolicy.useProtocolCachePolicy, CacheDecision.revalidate),
            (.reloadIgnoringLocalCacheData, .fetch),
            (.reloadIgnoringLocalAndRemoteCacheData, .fetch),
            (.returnCacheDataElseLoad, .useStored(stale: true)),
            (.returnCacheDataDontLoad, .useStored(stale: true)),
            (.reloadRevalidatingCacheData, .revalidate),
        ])
    func requestPolicies(_ policy: RequestCachePolicy, _ expected: CacheDecision) {
        #expect(decide([("Cache-Control", "max-age=60")], at: 600, policy: policy) == expected)
    }

    @Test("RFC 8246: reloadRevalidatingCacheData uses a fresh immutable response as it is")
    func immutable() {
        #expect(
            decide([("Cache-Control", "max-age=600, immutable")], at: 10, policy: .reloadRevalidatingCacheData)
                == .useStored(stale: false))
        #expect(decide([("Cache-Control", "max-age=600")], at: 10, policy: .reloadRevalidatingCacheData) == .revalidate)
    }

    @Test("Without a stored response: fetch, or fail for returnCacheDataDontLoad")
    func nothingStored() {
        for policy in RequestCachePolicy.allCases {
            let decision = CacheDecision.decide(
                request: request(), requestDirectives: CacheControl(), stored: nil, policy: policy,
                context: context(epoch))
            #expect(decision == (policy == .returnCacheDataDontLoad ? .unsatisfiable : .fetch))
        }
    }
}

@Suite("Validation (RFC 9111 §4.3)")
struct ValidationTests {
    @Test("§4.3.1: conditional requests carry the stored validators")
    func conditionalRequest() throws {
        let s = stored(response(200, [("ETag", "W/\"v1\""), ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")]))
        let conditional = try #require(Validation.conditionalRequest(for: request(), revalidating: s))
        #expect(conditional.headerFields[.ifNoneMatch] == "W/\"v1\"")
        #expect(conditional.headerFields[.ifModifiedSince] == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(
            Validation.conditionalRequest(for: request(), revalidating: stored(response(200))) == nil,
            "no validator, no conditional")
    }

    @Test("§4.3.4: a 304 selects the stored response by strong ETag, weak ETag, or Last-Modified")
    func selection() {
        let strong = stored(response(200, [("ETag", "\"a\"")]))
        #expect(Validation.notModified(response(304, [("ETag", "\"a\"")]), selects: strong))
        #expect(!Validation.notModified(response(304, [("ETag", "\"b\"")]), selects: strong))
        #expect(Validation.notModified(response(304, [("ETag", "W/\"a\"")]), selects: strong))
        let weak = stored(response(200, [("ETag", "W/\"a\"")]))
        #expect(
            !Validation.notModified(response(304, [("ETag", "\"a\"")]), selects: weak),
            "a strong 304 tag needs a strong match")
        let dated = stored(response(200, [("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")]))
        #expect(
            Validation.notModified(response(304, [("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")]), selects: dated))
        #expect(
            !Validation.notModified(response(304, [("Last-Modified", "Mon, 07 Nov 1994 08:49:37 GMT")]), selects: dated)
        )
    }

    /// RFC 9111 §4.3.4, last case: a 304 with no validator at all identifies a stored response for
    /// update only when that stored response lacks a validator too. A bare 304 to a request that
    /// carried the stored response's ETag or Last-Modified does not say which representation it
    /// confirms, so it must not freshen one that has a validator.
    @Test("§4.3.4: a 304 without validators selects only a stored response without validators")
    func bareNotModified() {
        let bare = response(304, [("Cache-Control", "max-age=60")])
        #expect(Validation.notModified(bare, selects: stored(response(200, [("Cache-Control", "max-age=10")]))))
        #expect(!Validation.notModified(bare, selects: stored(response(200, [("ETag", "\"a\"")]))))
        #expect(!Validation.notModified(bare, selects: stored(response(200, [("ETag", "W/\"a\"")]))))
        #expect(
            !Validation.notModified(
                bare, selects: stored(response(200, [("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")]))))
    }

    @Test("A bare 304 answering the cache's own request updates the only stored response; never one of several")
    func bareNotModifiedToOwnRequest() {
        let bare = response(304, [("Cache-Control", "max-age=60")])
        let tagged = stored(response(200, [("ETag", "\"a\"")]))
        let dated = stored(response(200, [("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")]))
        #expect(Validation.storedResponsesUpdated(byAnswerTo: bare, askingFor: 0, among: [tagged]) == [0])
        #expect(Validation.storedResponsesUpdated(byAnswerTo: bare, askingFor: 0, among: [dated]) == [0])
        #expect(Validation.storedResponsesUpdated(byAnswerTo: bare, askingFor: 0, among: [tagged, dated]).isEmpty)
        // A 304 with a validator keeps the strict selection: a mismatch updates nothing.
        let other = response(304, [("ETag", "\"b\"")])
        #expect(Validation.storedResponsesUpdated(byAnswerTo: other, askingFor: 0, among: [tagged]).isEmpty)
        #expect(
            Validation.storedResponsesUpdated(
                byAnswerTo: response(304, [("ETag", "\"a\"")]), askingFor: 0, among: [tagged]) == [0])
    }

    @Test("§3.2/§4.3.4: freshening replaces fields, keeps framing and the body, restarts the age")
    func freshen() {
        let s = stored(
            response(
                200, [("Cache-Control", "max-age=60"), ("Content-Length", "4"), ("X-Old", "1"), ("ETag", "\"a\"")]))
        let notModified = response(
            304, [("Cache-Control", "max-age=600"), ("Content-Length", "0"), ("Connection", "close")])
        let updated = Validation.freshen(s, with: notModified, requestTime: epoch + 100, responseTime: epoch + 101)
        #expect(updated.response.headerFields[.cacheControl] == "max-age=600")
        #expect(updated.response.headerFields[.contentLength] == "4")
        #expect(updated.response.headerFields[.connection] == nil)
        #expect(updated.response.headerFields[HTTPField.Name("X-Old")!] == "1")
        #expect(updated.body == s.body && updated.responseTime == epoch + 101)
    }

    @Test(
        "RFC 9110 §8.8.3: entity tags parse strictly",
        arguments: [
            ("\"x\"", true), ("W/\"x\"", true), ("x", false), ("\"x", false), ("W/x", false), ("\"a\"b\"", false),
        ])
    func entityTags(_ text: String, _ valid: Bool) {
        #expect((EntityTag(text) != nil) == valid)
    }
}

@Suite("Vary (RFC 9111 §4.1)")
struct VaryTests {
    @Test("§4.1: field names are listed case-insensitively; * wins")
    func names() {
        #expect(
            Vary.fieldNames(of: response(200, [("Vary", "Accept-Encoding, ACCEPT"), ("Vary", "accept, Origin")])) == [
                "accept-encoding", "accept", "origin",
            ])
        #expect(Vary.fieldNames(of: response(200, [("Vary", "Accept, *")])) == ["*"])
    }

    @Test("§4.1: values are normalised (whitespace, multiple lines) before comparing")
    func normalisation() {
        let stored = stored(
            response(200, [("Vary", "Accept-Language")]),
            request: request("https://example.com/a", [("Accept-Language", "en,  fr")]))
        #expect(Vary.matches(request("https://example.com/a", [("Accept-Language", " en, fr ")]), stored))
        #expect(
            Vary.matches(
                request("https://example.com/a", [("Accept-Language", "en"), ("Accept-Language", "fr")]), stored))
        #expect(!Vary.matches(request("https://example.com/a", [("Accept-Language", "de")]), stored))
        #expect(!Vary.matches(request(), stored), "absent is not the same as present")
    }

    @Test("A Vary of thousands of names (an origin's choice) lists each once, in order, and matches by every one")
    func manyNames() {
        // 3,000 names, each listed twice in mixed case; the request sends 2,000 of them, some on
        // two lines, so the indexed lookup (used above `indexedLookupThreshold` names) is compared
        // with the one-name lookup on present, absent and multi-line fields.
        let names = (0..<3_000).map { "x-f\($0)" }
        let varyValue = (names + names.map { $0.uppercased() }).joined(separator: ",")
        let varied = response(200, [("Vary", varyValue)])
        #expect(Vary.fieldNames(of: varied) == names)
        var fields = (0..<2_000).map { ("X-F\($0)", "v\($0)  w") }
        fields.append(("x-f7", "second line"))
        let original = request("https://example.com/a", fields)
        let recorded = Vary.varyingFields(names, of: original)
        #expect(recorded.count == 3_000)
        for (name, field) in zip(names, recorded) {
            #expect(field.value == Vary.normalizedValue(of: name, in: original), "\(name)")
        }
        #expect(recorded[7].value == "v7 w, second line")
        #expect(recorded[2_500].value == nil)
        let storedResponse = stored(varied, request: original)
        #expect(Vary.matches(original, storedResponse))
        var changed = fields
        changed[1_999].1 = "other"
        #expect(!Vary.matches(request("https://example.com/a", changed), storedResponse))
        #expect(!Vary.matches(request("https://example.com/a", fields + [("X-F2999", "now present")]), storedResponse))
    }
}

@Suite("Invalidation (RFC 9111 §4.4) and keys")
struct InvalidationTests {
    @Test("§4.4: unsafe methods with non-error responses invalidate the target and same-origin locations")
    func invalidation() {
        let req = request("https://example.com/items/1", method: .put)
        let uris = Invalidation.invalidatedURIs(
            request: req,
            response: response(204, [("Location", "/items/1?v=2"), ("Content-Location", "https://other.example/x")]))
        #expect(uris == ["https://example.com/items/1", "https://example.com/items/1?v=2"])
        #expect(Invalidation.invalidatedURIs(request: req, response: response(500)).isEmpty)
        #expect(
            Invalidation.invalidatedURIs(request: request("https://example.com/items/1"), response: response(200))
                .isEmpty)
    }

    @Test("§4.4: a location of the same origin with its default port written, or its host in capitals, is invalidated")
    func sameOriginSpelledOtherwise() {
        let req = request("https://example.com/items/1", method: .put)
        for location in ["https://example.com:443/b", "https://EXAMPLE.com/b"] {
            let uris = Invalidation.invalidatedURIs(request: req, response: response(201, [("Location", location)]))
            #expect(uris == ["https://example.com/items/1", "https://example.com/b"], "\(location)")
        }
        let port = request("https://example.com:443/items/1", method: .put)
        #expect(
            Invalidation.invalidatedURIs(
                request: port, response: response(201, [("Location", "https://example.com/b")]))
                == ["https://example.com/items/1", "https://example.com/b"])
        // Another port, scheme or host is another origin.
        for other in ["https://example.com:8443/b", "http://example.com/b", "https://api.example.com/b"] {
            #expect(
                Invalidation.invalidatedURIs(request: req, response: response(201, [("Location", other)])).count == 1,
                "\(other)")
        }
    }

    @Test("Keys normalise scheme, host, default port and empty path; keep the query")
    func keys() {
        #expect(HTTPCacheKey.defaultKey(for: request("HTTPS://Example.COM:443?q=1")) == "GET https://example.com/?q=1")
        #expect(HTTPCacheKey.defaultKey(for: request("http://example.com:8080/A")) == "GET http://example.com:8080/A")
        let filter = HTTPCacheKey.droppingQueryItems { $0.hasPrefix("utm_") }
        #expect(
            filter(request("https://example.com/p?id=1&utm_source=x&utm_medium=y")) == "GET https://example.com/p?id=1")
        #expect(filter(request("https://example.com/p?utm_source=x")) == "GET https://example.com/p")
    }
}

@Suite("Default keys reused per request target")
struct NormalizedKeysTests {
    @Test("Every target gets exactly the default key, through collisions and repeats")
    func sameAsDefault() throws {
        let keys = NormalizedKeys()
        let asKey: (String) -> CacheKey? = { try? CacheKey($0) }
        let targets = (0..<3 * NormalizedKeys.slotCount).map {
            "https://Host\($0 % 7).example.COM:443/items/\($0)?page=\($0 % 5)"
        }
        for _ in 0..<2 {
            for target in targets {
                let built = try CacheKey(try #require(HTTPCacheKey.defaultKey(for: request(target))))
                #expect(keys.key(for: request(target), validating: asKey) == built, "\(target)")
            }
        }
        // Targets that differ only in scheme, authority or path case.
        for target in [
            "http://a.example/x", "https://a.example/x", "https://b.example/x", "https://a.example/X",
            "https://a.example:8443/x",
        ] {
            #expect(
                keys.key(for: request(target), validating: asKey)?.rawValue
                    == HTTPCacheKey.defaultKey(for: request(target)))
        }
        // Canonically equivalent paths of different bytes (é precomposed, e and a combining
        // accent) are two targets with two keys, in whichever order they come, sharing a slot
        // or not (2,000 pairs: some share one).
        for index in 0..<2_000 {
            let spellings = ["/caf\u{E9}/\(index)", "/cafe\u{301}/\(index)"]
            for path in index.isMultiple(of: 2) ? spellings : spellings.reversed() {
                let target = HTTPRequest(method: .get, scheme: "https", authority: "a.example", path: path)
                // Compared as bytes: `==` would take the two keys for one.
                let key = keys.key(for: target, validating: asKey)?.rawValue
                #expect(key.map { Array($0.utf8) } == HTTPCacheKey.defaultKey(for: target).map { Array($0.utf8) })
            }
        }
        #expect(
            keys.key(for: HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/relative"), validating: asKey)
                == nil)
        #expect(
            keys.key(for: HTTPRequest(method: .get, scheme: "https", authority: "", path: "/"), validating: asKey)
                == nil)
        // A key the validation refuses is not kept: the next request is checked (and refused) again.
        var refusals = 0
        let refuse: (String) -> CacheKey? = { _ in
            refusals += 1
            return nil
        }
        for _ in 0..<2 { #expect(keys.key(for: request("https://refused.example/"), validating: refuse) == nil) }
        #expect(refusals == 2)
    }

    @Test("A key function of one's own is always called, also when set after the configuration was made")
    func customKeyFunctions() async throws {
        let dropTracking = HTTPCacheKey.droppingQueryItems { $0.hasPrefix("utm_") }
        var configuration = HTTPCache.Configuration(clock: ManualCacheClock(start: epoch).cacheClock)
        #expect(configuration.usesDefaultKey)
        configuration.key = dropTracking
        #expect(!configuration.usesDefaultKey)
        #expect(!HTTPCache.Configuration(key: dropTracking).usesDefaultKey)

        let cache = HTTPCache(
            storage: TieredCache(tiers: [try MemoryTier(capacity: 1 << 20)]), configuration: configuration)
        let origin = ScriptedOrigin([
            .respond(response(200, [("Date", HTTPDate.format(epoch)), ("Cache-Control", "max-age=60")]), "one")
        ])
        _ = try await cache.response(
            for: request("https://example.com/p?id=1&utm_source=mail"), transport: origin.transport)
        let second = try await cache.response(
            for: request("https://example.com/p?id=1&utm_source=feed"), transport: origin.transport)
        #expect(second.source == .cache, "both map to the key without tracking items")
        #expect(origin.received.count == 1)
    }
}
