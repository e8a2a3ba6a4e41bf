import Foundation
import HTTPTypes
import Synchronization
import Testing
@_spi(TierCacheInternals) import TierCache
import TierCacheLMDB
import TierCacheTesting

@testable import HTTPCaching

@Suite("HTTPCache engine")
struct HTTPCacheEngineTests {
    let clock = ManualCacheClock(start: epoch)
    let memory: MemoryTier

    init() throws {
        memory = try MemoryTier(capacity: 4 << 20)
    }

    func makeCache(_ configure: (inout HTTPCache.Configuration) -> Void = { _ in }) -> HTTPCache {
        var configuration = HTTPCache.Configuration(clock: clock.cacheClock)
        configure(&configuration)
        return HTTPCache(storage: TieredCache(tiers: [memory]), configuration: configuration)
    }

    func ok(_ fields: [(String, String)], body: String = "hello") -> ScriptedOrigin.Reply {
        .respond(response(200, [("Date", HTTPDate.format(clock.now))] + fields), body)
    }

    @Test("A miss goes to the network and is stored; the next request is a fresh hit with Age")
    func missThenHit() async throws {
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60")])])
        let cache = makeCache()
        let first = try await cache.response(for: request(), transport: origin.transport)
        #expect(first.source == .network && first.body == Data("hello".utf8))
        clock.advance(by: 10)
        let second = try await cache.response(for: request(), transport: origin.transport)
        #expect(second.source == .cache)
        #expect(second.response.headerFields[.age] == "10" && second.age == 10 && second.storedAt == epoch)
        #expect(second.body == Data("hello".utf8))
        #expect(origin.received.count == 1)
        #expect(cache.statistics.hits == 1 && cache.statistics.misses == 1 && cache.statistics.stores == 1)
    }

    @Test("§4.3: a stale response is revalidated; 304 freshens it and the body comes from the cache")
    func revalidation304() async throws {
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")])])
        let cache = makeCache()
        _ = try await cache.response(for: request(), transport: origin.transport)
        clock.advance(by: 120)
        origin.enqueue(.respond(response(304, [("Cache-Control", "max-age=600"), ("ETag", "\"v1\"")]), ""))
        let revalidated = try await cache.response(for: request(), transport: origin.transport)
        #expect(revalidated.source == .revalidated && revalidated.body == Data("hello".utf8))
        #expect(CacheStatus.forward(ofRevalidated: revalidated) == .stale)
        #expect(origin.received.last?.headerFields[.ifNoneMatch] == "\"v1\"")
        clock.advance(by: 300)
        let hit = try await cache.response(for: request(), transport: origin.transport)
        #expect(hit.source == .cache && hit.age == 300, "the freshened lifetime (600 s) applies from the revalidation")
        #expect(cache.statistics.revalidatedNotModified == 1)
        // Fresh, and revalidated because the request's own `no-cache` asked (RFC 9211 §2.2:
        // `fwd=request`, which said `fwd=stale`).
        origin.enqueue(.respond(response(304, [("Cache-Control", "max-age=600"), ("ETag", "\"v1\"")]), ""))
        let asked = try await cache.response(
            for: request("https://example.com/a", [("Cache-Control", "no-cache")]), transport: origin.transport)
        #expect(asked.source == .revalidated && asked.replacedStoredResponse == .passedOverByRequest)
        #expect(CacheStatus.forward(ofRevalidated: asked) == .request)
    }

    /// The 304 wrote the old response, freshened, over whatever the key held by then.
    @Test("§4: a 304 does not overwrite a response stored, or undo a removal, while it was in flight")
    func lateNotModified() async throws {
        for removes in [false, true] {
            let cache = HTTPCache(
                storage: TieredCache(tiers: [try MemoryTier(capacity: 1 << 20)]),
                configuration: .init(clock: clock.cacheClock))
            let v1 = ok([("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")], body: "v1")
            let v2 = ok([("Cache-Control", "max-age=60"), ("ETag", "\"v2\"")], body: "v2")
            let origin = ScriptedOrigin([v1])
            _ = try await cache.response(for: request(), transport: origin.transport)
            clock.advance(by: 120)
            // While the revalidation waits for the origin, another request stores v2 (or the
            // resource is removed); then the 304 for v1 arrives.
            let transport: HTTPCache.Transport = { sent, body in
                guard sent.headerFields[.ifNoneMatch] == "\"v1\"" else { return try await origin.transport(sent, body) }
                if removes {
                    try await cache.storage.removeEntry(forKey: try #require(cache.primaryKey(for: request())))
                } else {
                    origin.enqueue(v2)
                    _ = try await cache.response(
                        for: request("https://example.com/a", [("Cache-Control", "no-cache"), ("X-Other", "1")]),
                        transport: origin.transport)
                }
                return (response(304, [("Cache-Control", "max-age=600"), ("ETag", "\"v1\"")]), Data())
            }
            let revalidated = try await cache.response(for: request(), transport: transport)
            #expect(revalidated.source == .revalidated && revalidated.body == Data("v1".utf8))
            // Only what is stored answers: nothing, once removed.
            let next = try? await cache.response(
                for: request(), cachePolicy: .returnCacheDataDontLoad, transport: transport)
            #expect(next?.body == (removes ? nil : Data("v2".utf8)), "removes: \(removes)")
        }
    }

    @Test("§4.3.3: a full response to a revalidation replaces the stored one")
    func revalidation200() async throws {
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")], body: "old")])
        let cache = makeCache()
        _ = try await cache.response(for: request(), transport: origin.transport)
        clock.advance(by: 120)
        origin.enqueue(ok([("Cache-Control", "max-age=60"), ("ETag", "\"v2\"")], body: "new"))
        #expect(try await cache.response(for: request(), transport: origin.transport).body == Data("new".utf8))
        let hit = try await cache.response(for: request(), transport: origin.transport)
        #expect(hit.source == .cache && hit.body == Data("new".utf8))
        #expect(cache.statistics.revalidatedModified == 1)
    }

    @Test("§4.1: variants of one URL are stored side by side")
    func variants() async throws {
        let origin = ScriptedOrigin([
            ok([("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")], body: "english"),
            ok([("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")], body: "français"),
        ])
        let cache = makeCache()
        let english = request("https://example.com/a", [("Accept-Language", "en")])
        let french = request("https://example.com/a", [("Accept-Language", "fr")])
        _ = try await cache.response(for: english, transport: origin.transport)
        _ = try await cache.response(for: french, transport: origin.transport)
        let englishAgain = try await cache.response(for: english, transport: origin.transport)
        let frenchAgain = try await cache.response(for: french, transport: origin.transport)
        #expect(englishAgain.source == .cache && englishAgain.body == Data("english".utf8))
        #expect(frenchAgain.source == .cache && frenchAgain.body == Data("français".utf8))
        #expect(origin.received.count == 2)
    }

    @Test("§3: no-store responses are not stored and are counted")
    func noStore() async throws {
        let origin = ScriptedOrigin([ok([("Cache-Control", "no-store")]), ok([("Cache-Control", "no-store")])])
        let cache = makeCache()
        _ = try await cache.response(for: request(), transport: origin.transport)
        #expect(try await cache.response(for: request(), transport: origin.transport).source == .network)
        #expect(cache.statistics.notStorable[.noStore] == 2)
    }

    /// Any client could otherwise empty a shared cache: a request's no-store once removed the
    /// stored copy of what it fetched.
    @Test("§5.2.1.5: a request's no-store keeps its exchange out and leaves the stored response alone")
    func requestNoStoreLeavesTheStoredResponse() async throws {
        let origin = ScriptedOrigin([
            ok([("Cache-Control", "max-age=60")], body: "v1"), ok([("Cache-Control", "max-age=60")], body: "v2"),
        ])
        let cache = makeCache()
        _ = try await cache.response(for: request(), transport: origin.transport)
        let bypass = request("https://example.com/a", [("Cache-Control", "no-cache, no-store")])
        let fetched = try await cache.response(for: bypass, transport: origin.transport)
        #expect(fetched.source == .network && fetched.body == Data("v2".utf8))
        let next = try await cache.response(for: request(), transport: origin.transport)
        #expect(next.source == .cache && next.body == Data("v1".utf8))
        #expect(origin.received.count == 2)
    }

    /// A server's per-user page that said nothing about caching is stored (lifetime 0), but a
    /// shared cache does not serve it to the next user because the origin is down.
    @Test("Offline in a shared cache: only a response that stated its lifetime stands in")
    func sharedOfflineFallbackNeedsAStatedLifetime() async throws {
        for (fields, servesStale) in [([(String, String)](), false), ([("Cache-Control", "max-age=60")], true)] {
            let origin = ScriptedOrigin([ok(fields)])
            let cache = makeCache { $0.mode = .shared }
            _ = try await cache.response(for: request(), transport: origin.transport)
            clock.advance(by: 3_600)
            origin.enqueue(.fail(.notConnectedToInternet))
            if servesStale {
                let result = try await cache.response(for: request(), transport: origin.transport)
                #expect(result.source == .staleFallback)
            } else {
                await #expect(throws: URLError.self) {
                    try await cache.response(for: request(), transport: origin.transport)
                }
            }
        }
    }

    @Test("Offline: a stale response stands in when the network fails, saying how old it is")
    func offlineFallback() async throws {
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60")])])
        let cache = makeCache()
        _ = try await cache.response(for: request(), transport: origin.transport)
        clock.advance(by: 3_600)
        origin.enqueue(.fail(.notConnectedToInternet))
        let fallback = try await cache.response(for: request(), transport: origin.transport)
        #expect(fallback.source == .staleFallback && fallback.age == 3_600 && fallback.storedAt == epoch)
        #expect((fallback.networkError as? URLError)?.code == .notConnectedToInternet)
        origin.enqueue(.fail(.notConnectedToInternet))
        let value = try await cache.cachedValue(for: request(), transport: origin.transport) {
            String(decoding: $0.body, as: UTF8.self)
        }
        #expect(value == .cached("hello", storedAt: epoch))
    }

    @Test(
        "Offline: must-revalidate is honoured unless the app opts out; never and no stored response propagate the error"
    )
    func offlineRules() async throws {
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60, must-revalidate"), ("ETag", "\"a\"")])])
        let strict = makeCache()
        _ = try await strict.response(for: request(), transport: origin.transport)
        clock.advance(by: 120)
        origin.enqueue(.fail(.timedOut))
        await #expect(throws: URLError.self) { try await strict.response(for: request(), transport: origin.transport) }

        let lenient = HTTPCache(
            storage: strict.storage,
            configuration: .init(offlineFallback: .evenWhenRevalidationRequired, clock: clock.cacheClock))
        origin.enqueue(.fail(.timedOut))
        #expect(try await lenient.response(for: request(), transport: origin.transport).source == .staleFallback)

        let never = makeCache { $0.offlineFallback = .never }
        origin.enqueue(.fail(.timedOut))
        await #expect(throws: URLError.self) {
            try await never.response(for: request("https://example.com/other"), transport: origin.transport)
        }
    }

    @Test("RFC 5861 §4: stale-if-error serves a stale response when the origin answers 5xx")
    func staleIfError() async throws {
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60, stale-if-error=600")])])
        let cache = makeCache { $0.offlineFallback = .never }
        _ = try await cache.response(for: request(), transport: origin.transport)
        clock.advance(by: 120)
        origin.enqueue(.respond(response(503), "down"))
        let result = try await cache.response(for: request(), transport: origin.transport)
        #expect(result.source == .staleFallback && result.body == Data("hello".utf8))
        clock.advance(by: 1_000)
        origin.enqueue(.respond(response(503), "down"))
        #expect(try await cache.response(for: request(), transport: origin.transport).response.status.code == 503)
    }

    @Test(
        "RFC 5861 §4: stale-if-error stands in for 500, 502, 503 and 504 only",
        arguments: [(500, true), (502, true), (504, true), (501, false), (505, false), (507, false), (511, false)])
    func staleIfErrorStatuses(status: Int, servesStale: Bool) async throws {
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60, stale-if-error=600")])])
        let cache = makeCache { $0.offlineFallback = .never }
        _ = try await cache.response(for: request(), transport: origin.transport)
        clock.advance(by: 120)
        origin.enqueue(.respond(response(status), "error"))
        let result = try await cache.response(for: request(), transport: origin.transport)
        #expect((result.source == .staleFallback) == servesStale)
        #expect(result.response.status.code == (servesStale ? 200 : status))
    }

    @Test(
        "RFC 9111 §4.2.4: in a shared cache proxy-revalidate and s-maxage forbid stale-if-error, the origin's and the client's",
        arguments: [
            "max-age=60, proxy-revalidate, stale-if-error=600", "max-age=60, s-maxage=60, stale-if-error=600",
            "max-age=60, proxy-revalidate",
        ])
    func sharedRevalidationForbidsStaleIfError(directives: String) async throws {
        for mode in [HTTPCache.Mode.shared, .private] {
            let url = "https://example.com/\(mode == .shared ? "shared" : "private")"
            let origin = ScriptedOrigin([ok([("Cache-Control", directives)])])
            let cache = makeCache {
                $0.mode = mode
                $0.offlineFallback = .never
            }
            _ = try await cache.response(for: request(url), transport: origin.transport)
            clock.advance(by: 120)
            origin.enqueue(.respond(response(503), "down"))
            let result = try await cache.response(
                for: request(url, [("Cache-Control", "stale-if-error=600")]), transport: origin.transport)
            // A private cache ignores both directives (§5.2.2.8, §5.2.2.10).
            #expect(result.source == (mode == .shared ? .network : .staleFallback), "\(mode)")
        }
    }

    @Test("RFC 5861 §3: stale-while-revalidate answers at once and revalidates once in the background")
    func staleWhileRevalidate() async throws {
        let origin = ScriptedOrigin([
            ok([("Cache-Control", "max-age=60, stale-while-revalidate=600"), ("ETag", "\"a\"")], body: "old")
        ])
        let cache = makeCache()
        _ = try await cache.response(for: request(), transport: origin.transport)
        clock.advance(by: 120)
        origin.enqueue(ok([("Cache-Control", "max-age=60")], body: "new"))
        let stale = try await cache.response(for: request(), transport: origin.transport)
        #expect(stale.source == .staleWhileRevalidate && stale.body == Data("old".utf8))
        await cache.waitForBackgroundRevalidations()
        let fresh = try await cache.response(for: request(), transport: origin.transport)
        #expect(fresh.source == .cache && fresh.body == Data("new".utf8))
        #expect(origin.received.count == 2)
    }

    @Test(
        "Where the transport lasts only as long as its request, stale-while-revalidate serves stale and starts nothing")
    func staleWhileRevalidateWithoutBackground() async throws {
        let origin = ScriptedOrigin([
            ok([("Cache-Control", "max-age=60, stale-while-revalidate=600"), ("ETag", "\"a\"")], body: "old")
        ])
        let cache = makeCache()
        _ = try await cache.response(for: request(), transport: origin.transport)
        clock.advance(by: 120)
        let stale = try await HTTPCache.$revalidatesInBackground.withValue(false) {
            try await cache.response(for: request(), transport: origin.transport)
        }
        #expect(stale.source == .staleWhileRevalidate && stale.body == Data("old".utf8))
        await cache.waitForBackgroundRevalidations()
        #expect(origin.received.count == 1, "no revalidation went to the origin")
    }

    @Test("Concurrent misses for one resource make one request")
    func coalescing() async throws {
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60")])])
        origin.hold()
        let cache = makeCache()
        let results = try await withThrowingTaskGroup(of: HTTPCacheResponse.self) { group in
            for _ in 0..<5 { group.addTask { try await cache.response(for: request(), transport: origin.transport) } }
            while cache.inFlight.joinCount < 4 { await Task.yield() }
            origin.release()
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 5 && results.allSatisfy { $0.body == Data("hello".utf8) })
        #expect(origin.received.count == 1)
        #expect(cache.statistics.coalescedRequests == 4)
        // Stored once, by one of them: not once per request, each write waiting for the last.
        #expect(cache.statistics.stores == 1 && results.filter(\.wasStored).count == 1)
        #expect(memory.statistics().stores == 1)
    }

    /// A proxy adds each client's address: keyed with it, concurrent misses from N clients
    /// made N fetches.
    @Test(
        "Shared: misses differing only in the client's hop (X-Forwarded-For, Via) make one request, unless the response varies on it",
        .timeLimit(.minutes(1)), arguments: ["", "x-forwarded-for"])
    func coalescingAcrossClients(vary: String) async throws {
        let fields = [("Cache-Control", "max-age=60")] + (vary.isEmpty ? [] : [("Vary", vary)])
        let origin = ScriptedOrigin([ok(fields), ok(fields)])
        origin.hold()
        let cache = makeCache { $0.mode = .shared }
        let results = try await withThrowingTaskGroup(of: HTTPCacheResponse.self) { group in
            for client in 0..<2 {
                let asked = request(
                    "https://example.com/a", [("X-Forwarded-For", "192.0.2.\(client)"), ("Via", "1.1 edge\(client)")])
                group.addTask { try await cache.response(for: asked, transport: origin.transport) }
            }
            // (Without the join, the second fetch waits at the held origin, and the time limit ends it.)
            while cache.inFlight.joinCount < 1 { await Task.yield() }
            origin.release()
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.body == Data("hello".utf8) })
        #expect(origin.received.count == (vary.isEmpty ? 1 : 2))
        #expect(cache.statistics.coalescedRequests == (vary.isEmpty ? 1 : 0))
    }

    @Test(
        "Shared: a request joining another's fetch of an answer the cache could not reuse for it (private, no-store, no-cache, no lifetime, stale) fetches alone",
        arguments: [
            "private, max-age=60", "no-store", "max-age=60, private=\"X-Visitor\"", "no-cache", "max-age=0", "",
            "max-age=60, no-cache=\"X-Visitor\"", "max-age=60, must-revalidate, s-maxage=0",
        ])
    func joinedFetchOfAnAnswerForOneUser(cacheControl: String) async throws {
        #expect(
            try await joinedBodies(status: 200, [("Cache-Control", cacheControl)]) == ["for 10.0.0.1", "for 10.0.0.2"])
    }

    @Test(
        "Shared: a request joining another's fetch gets its server error, unless it sets a cookie or is private",
        arguments: [
            ([("Cache-Control", "no-store")], true), ([("Set-Cookie", "sid=abc")], false),
            ([("Cache-Control", "private")], false), ([("Cache-Control", "private=\"X-Visitor\"")], false),
        ])
    func joinedFetchOfAServerError(fields: [(String, String)], shared: Bool) async throws {
        let bodies = try await joinedBodies(status: 503, fields)
        #expect(bodies == (shared ? ["for 10.0.0.1", "for 10.0.0.1"] : ["for 10.0.0.1", "for 10.0.0.2"]))
    }

    /// A proxy's clients differ in `X-Forwarded-For`, and join one fetch: an origin's error for
    /// one (a 503 of a rate limit keyed on its address) answered the others.
    @Test("Shared: a server error fetched for one client's hop does not answer another client's joined request")
    func joinedServerErrorAcrossClients() async throws {
        let bodies = try await joinedBodies(
            status: 503, [("Cache-Control", "no-store")], clients: ["192.0.2.1", "192.0.2.2"])
        #expect(bodies == ["for 10.0.0.1", "for 10.0.0.2"])
    }

    /// The bodies two identical requests (from `clients`' addresses in `X-Forwarded-For`, if
    /// given) get in a shared cache when the second joins the first's fetch, from an origin that
    /// answers each with `status`, `fields` and a body naming its visitor, which the identical
    /// requests do not show; a request that fetches alone gets the second.
    func joinedBodies(status: Int, _ fields: [(String, String)], clients: [String]? = nil) async throws -> [String] {
        let origin = ScriptedOrigin([
            .respond(
                response(status, [("Date", HTTPDate.format(clock.now))] + fields + [("X-Visitor", "10.0.0.1")]),
                "for 10.0.0.1"),
            .respond(
                response(status, [("Date", HTTPDate.format(clock.now))] + fields + [("X-Visitor", "10.0.0.2")]),
                "for 10.0.0.2"),
        ])
        origin.hold()
        let cache = makeCache { $0.mode = .shared }
        return try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<2 {
                let asked = request(
                    "https://example.com/a", clients.map { [("X-Forwarded-For", $0[index])] } ?? [])
                group.addTask {
                    String(
                        decoding: try await cache.response(for: asked, transport: origin.transport).body,
                        as: UTF8.self)
                }
            }
            while cache.inFlight.joinCount < 1 { await Task.yield() }
            origin.release()
            return try await group.reduce(into: []) { $0.append($1) }.sorted()
        }
    }

    @Test("Shared: requests joining a revalidation share its 304 when the stored response it freshens is fresh again")
    func joinedRevalidationSharesA304() async throws {
        let bare304 = ScriptedOrigin.Reply.respond(response(304, [("ETag", "\"v1\"")]), "")
        let origin = ScriptedOrigin([
            ok([("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")]), bare304, bare304, bare304,
        ])
        let cache = makeCache { $0.mode = .shared }
        _ = try await cache.response(for: request(), transport: origin.transport)
        clock.advance(by: 120)
        origin.hold()
        let bodies = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    String(
                        decoding: try await cache.response(for: request(), transport: origin.transport).body,
                        as: UTF8.self)
                }
            }
            while cache.inFlight.joinCount < 2 { await Task.yield() }
            origin.release()
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(bodies == ["hello", "hello", "hello"])
        // The 304 carries no lifetime of its own; the stored response it freshens has a minute.
        #expect(origin.received.count == 2, "each joined request revalidated again")
        #expect(cache.statistics.coalescedRequests == 2)
    }

    @Test("A fetch whose only caller is cancelled is cancelled: the exchange stops")
    func cancelledFetch() async throws {
        let cache = makeCache()
        let (started, starting) = AsyncStream.makeStream(of: Void.self)
        let sawCancellation = Locked(false)
        let transport: HTTPCache.Transport = { _, _ in
            starting.yield()
            do {
                // Long enough that a fetch nobody cancels fails the test by its outcome, not a hang.
                try await Task.sleep(for: .seconds(30))
            } catch {
                sawCancellation.withLock { $0 = true }
                throw error
            }
            return (HTTPResponse(status: .ok), Data())
        }
        let caller = Task { try await cache.response(for: request(), transport: transport) }
        for await _ in started { break }
        caller.cancel()
        _ = try? await caller.value
        #expect(sawCancellation.withLock { $0 })
    }

    @Test(
        "A cancelled caller returns at once and leaves a shared fetch to the others, who get its response",
        .timeLimit(.minutes(1)))
    func partlyCancelledFetch() async throws {
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60")])])
        origin.hold()
        let cache = makeCache()
        let leaving = Task { try await cache.response(for: request(), transport: origin.transport) }
        let staying = Task { try await cache.response(for: request(), transport: origin.transport) }
        while cache.inFlight.joinCount < 1 { await Task.yield() }
        leaving.cancel()
        // Before the origin answers: the cancelled caller does not wait for the shared fetch.
        await #expect(throws: CancellationError.self) { try await leaving.value }
        origin.release()
        let response = try await staying.value
        #expect(response.body == Data("hello".utf8))
        #expect(origin.received.count == 1)
    }

    @Test("§4.4: a successful POST invalidates the stored response")
    func invalidation() async throws {
        let origin = ScriptedOrigin([
            ok([("Cache-Control", "max-age=600")]), .respond(response(201), ""),
            ok([("Cache-Control", "max-age=600")], body: "after"),
        ])
        let cache = makeCache()
        _ = try await cache.response(for: request(), transport: origin.transport)
        _ = try await cache.response(for: request(method: .post), body: Data("x".utf8), transport: origin.transport)
        let after = try await cache.response(for: request(), transport: origin.transport)
        #expect(after.source == .network && after.body == Data("after".utf8))
        #expect(cache.statistics.invalidations == 1)
    }

    @Test("§4.4: a target holding bytes a URI may not hold is invalidated under the key it is stored under")
    func invalidationOfAnUnencodedTarget() async throws {
        let target = HTTPRequest(method: .get, scheme: "https", authority: "example.com", path: "/items?tag[]=new")
        var post = target
        post.method = .post
        let origin = ScriptedOrigin([
            ok([("Cache-Control", "max-age=600")]), .respond(response(201), ""),
            ok([("Cache-Control", "max-age=600")], body: "after"), .fail(.networkConnectionLost),
            ok([("Cache-Control", "max-age=600")], body: "again"),
        ])
        let cache = makeCache()
        _ = try await cache.response(for: target, transport: origin.transport)
        #expect(try await cache.response(for: target, transport: origin.transport).source == .cache)
        // Keyed through `URL`, the POST's target was `tag%5B%5D`: another key, and the GET stayed.
        _ = try await cache.response(for: post, body: Data("x".utf8), transport: origin.transport)
        let after = try await cache.response(for: target, transport: origin.transport)
        #expect(after.source == .network && after.body == Data("after".utf8))
        // And when the POST's exchange fails.
        await #expect(throws: URLError.self) {
            try await cache.response(for: post, body: Data("x".utf8), transport: origin.transport)
        }
        #expect(try await cache.response(for: target, transport: origin.transport).body == Data("again".utf8))
    }

    @Test("§4.4: an unsafe request whose exchange failed invalidates its target; a safe one does not")
    func failedUnsafeExchangeInvalidates() async throws {
        let origin = ScriptedOrigin([
            ok([("Cache-Control", "max-age=600")]), .fail(.networkConnectionLost), .fail(.timedOut),
            ok([("Cache-Control", "max-age=600")], body: "after"),
        ])
        let cache = makeCache()
        _ = try await cache.response(for: request(), transport: origin.transport)
        // OPTIONS is safe and forwarded uncached: its failure changes nothing.
        await #expect(throws: URLError.self) {
            try await cache.response(for: request(method: .options), transport: origin.transport)
        }
        #expect(try await cache.response(for: request(), transport: origin.transport).source == .cache)
        // The PUT may have been applied before its response was cut off.
        await #expect(throws: URLError.self) {
            try await cache.response(for: request(method: .put), body: Data("x".utf8), transport: origin.transport)
        }
        let after = try await cache.response(for: request(), transport: origin.transport)
        #expect(after.source == .network && after.body == Data("after".utf8))
        #expect(cache.statistics.invalidations == 1)
    }

    @Test("Hooks strip authentication fields from what is stored, not from what is returned")
    func stripAuthentication() async throws {
        let origin = ScriptedOrigin([
            ok([("Cache-Control", "max-age=60"), ("Set-Cookie", "session=1"), ("X-Token", "t")])
        ])
        let cache = makeCache {
            $0.storeHooks = [.stripAuthenticationFields(additionalFields: [HTTPField.Name("X-Token")!])]
        }
        let first = try await cache.response(for: request(), transport: origin.transport)
        #expect(first.response.headerFields[.setCookie] == "session=1")
        let hit = try await cache.response(for: request(), transport: origin.transport)
        #expect(hit.source == .cache && hit.response.headerFields[.setCookie] == nil)
        #expect(hit.response.headerFields[HTTPField.Name("X-Token")!] == nil)
    }

    @Test("Hooks make an API without caching fields cacheable, stamp user info, and veto")
    func overrideAndVeto() async throws {
        let origin = ScriptedOrigin([.respond(response(200), "plain"), .respond(response(200), "secret")])
        let cache = makeCache {
            $0.storeHooks = [
                .overrideCacheControl("max-age=300") { request, _ in request.path?.hasPrefix("/api") == true },
                .stampUserInfo("fetchedBy") { _, _ in "test" },
                .storagePolicy { request, _ in request.path == "/api/secret" ? .notAllowed : nil },
            ]
        }
        _ = try await cache.response(for: request("https://example.com/api/items"), transport: origin.transport)
        let hit = try await cache.response(for: request("https://example.com/api/items"), transport: origin.transport)
        #expect(hit.source == .cache && hit.userInfo == ["fetchedBy": "test"])
        _ = try await cache.response(for: request("https://example.com/api/secret"), transport: origin.transport)
        #expect(cache.statistics.refusedByPolicy == 1)
    }

    /// The engine dropped a GET's body, sent the request without it, and stored the answer under
    /// the URL for every other query.
    @Test("A GET or HEAD with content goes to the origin with its body, and its answer is not stored")
    func getWithContentPassesBy() async throws {
        let cacheable = [("Cache-Control", "max-age=60")]
        let origin = ScriptedOrigin([
            .respond(response(200, cacheable), "stored"), .respond(response(200, cacheable), "for a"),
            .respond(response(200, cacheable), "for b"), .respond(response(200, cacheable), "head"),
        ])
        let received = Mutex<[Data?]>([])
        let transport: HTTPCache.Transport = { request, body in
            received.withLock { $0.append(body) }
            return try await origin.transport(request, body)
        }
        let cache = makeCache()
        let url = "https://example.com/search"
        _ = try await cache.response(for: request(url), transport: transport)
        let a = try await cache.response(for: request(url), body: Data("a".utf8), transport: transport)
        #expect(a.source == .network && a.body == Data("for a".utf8) && !a.wasStored)
        var announcing = request(url, [("Content-Length", "1")])
        announcing.method = .head
        let b = try await cache.response(for: request(url, [("Transfer-Encoding", "chunked")]), transport: transport)
        #expect(b.source == .network && b.body == Data("for b".utf8))
        _ = try await cache.response(for: announcing, transport: transport)
        #expect(received.withLock { $0 } == [nil, Data("a".utf8), nil, nil])
        let plain = try await cache.response(for: request(url), transport: transport)
        #expect(plain.source == .cache && plain.body == Data("stored".utf8), "the URL's stored answer stays")
    }

    /// §3 judged the response before the hooks ran: the hook's `no-store` was written to every
    /// tier, and the next request was served it on the heuristic lifetime its `Last-Modified` gave.
    @Test("A hook's no-store keeps the response out and removes the one stored before; its private, in a shared cache")
    func hookKeepsResponseOut() async throws {
        let cacheable = [("Cache-Control", "max-age=60"), ("Last-Modified", HTTPDate.format(epoch))]
        let personal = cacheable + [("X-Personal", "1")]
        for (mode, value) in [(HTTPCache.Mode.private, "no-store"), (.shared, "private")] {
            let origin = ScriptedOrigin([
                .respond(response(200, cacheable), "public"), .respond(response(200, personal), "alice"),
                .respond(response(200, personal), "bob"),
            ])
            let hook = StoreHook.overrideCacheControl(value) { _, response in
                response.headerFields[HTTPField.Name("X-Personal")!] != nil
            }
            let cache = HTTPCache(
                storage: TieredCache(tiers: [try MemoryTier(capacity: 1 << 20)]),
                configuration: .init(mode: mode, storeHooks: [hook], clock: clock.cacheClock))
            let url = "https://example.com/account"
            _ = try await cache.response(for: request(url), transport: origin.transport)
            #expect(try await cache.response(for: request(url), transport: origin.transport).source == .cache)
            clock.advance(by: 120)
            let alice = try await cache.response(for: request(url), transport: origin.transport)
            #expect(alice.body == Data("alice".utf8))
            // Nothing kept under the key: a shared cache's lookup passed over a `private`
            // response kept anyway, so the next answer alone could not tell.
            let primaryKey = try #require(cache.primaryKey(for: request(url)))
            #expect(await cache.storage.lookup(primaryKey) == nil, "\(mode): kept under \(value)")
            #expect(alice.response.headerFields[.cacheControl] == "max-age=60", "the caller's response is as sent")
            let bob = try await cache.response(for: request(url), transport: origin.transport)
            #expect(bob.source == .network && bob.body == Data("bob".utf8), "\(mode): kept under \(value)")
            #expect(origin.received.last?.headerFields[.ifNoneMatch] == nil, "\(mode)")
            #expect(origin.received.last?.headerFields[.ifModifiedSince] == nil, "\(mode): the copy before it stayed")
        }
    }

    /// Serving adds fields, and `HTTPFields` stops the process at 65,535: a response near that
    /// many is refused before anything is added or stored.
    @Test("A transport's response with more fields than the limit throws invalidResponse and is not stored")
    func tooManyResponseFields() async throws {
        let cache = makeCache()
        let fields = [("Cache-Control", "max-age=60")] + Array(repeating: ("X-Filler", "1"), count: 10_001)
        let origin = ScriptedOrigin([ok(fields), ok([("Cache-Control", "max-age=60")])])
        await #expect {
            try await cache.response(for: request(), transport: origin.transport)
        } throws: { ($0 as? HTTPCacheError)?.code == .invalidResponse }
        let next = try await cache.response(for: request(), transport: origin.transport)
        #expect(next.source == .network && next.response.headerFields.count < 100)
    }

    @Test("Request policies: returnCacheDataDontLoad fails without a stored response; only-if-cached gives 504")
    func policies() async throws {
        let origin = ScriptedOrigin()
        let cache = makeCache()
        await #expect(throws: HTTPCacheError.self) {
            try await cache.response(for: request(), cachePolicy: .returnCacheDataDontLoad, transport: origin.transport)
        }
        let onlyIfCached = try await cache.response(
            for: request("https://example.com/a", [("Cache-Control", "only-if-cached")]), transport: origin.transport)
        #expect(onlyIfCached.response.status.code == 504)
        #expect(onlyIfCached.source == .unsatisfiable && !onlyIfCached.source.isFromCache)
        #expect(cache.statistics.hits == 0 && cache.statistics.misses == 1, "a miss, not a hit")
        origin.enqueue(ok([]))
        _ = try await cache.response(
            for: request(), cachePolicy: .reloadIgnoringLocalAndRemoteCacheData, transport: origin.transport)
        #expect(origin.received.last?.headerFields[.cacheControl] == "no-cache")
        // The request's own directives stay: replaced, its no-store reached no cache upstream.
        origin.enqueue(ok([]))
        _ = try await cache.response(
            for: request("https://example.com/", [("Cache-Control", "no-store")]),
            cachePolicy: .reloadIgnoringLocalAndRemoteCacheData, transport: origin.transport)
        #expect(origin.received.last?.headerFields[.cacheControl] == "no-store, no-cache")
    }

    @Test("HEAD is answered from a stored GET without a body")
    func head() async throws {
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60")])])
        let cache = makeCache()
        _ = try await cache.response(for: request(), transport: origin.transport)
        let head = try await cache.response(for: request(method: .head), transport: origin.transport)
        #expect(head.source == .cache && head.body.isEmpty)
    }

    @Test("A damaged or foreign stored entry is a miss, removed and counted")
    func damagedEntry() async throws {
        let cache = makeCache()
        let key = try CacheKey(try #require(HTTPCacheKey.defaultKey(for: request())))
        _ = memory.store(CacheEntry(value: Array("TCHE\u{1}\u{1}garbage".utf8), storedAt: epoch), forKey: key)
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60")])])
        #expect(try await cache.response(for: request(), transport: origin.transport).source == .network)
        #expect(cache.statistics.corruptEntriesRemoved == 1)
    }

    @Test("Cache then network: the stored response first, then the fresh one")
    func cacheThenNetwork() async throws {
        let origin = ScriptedOrigin([
            ok([("Cache-Control", "max-age=60")], body: "v1"), ok([("Cache-Control", "max-age=60")], body: "v2"),
        ])
        let cache = makeCache()
        _ = try await cache.response(for: request(), transport: origin.transport)
        var bodies: [String] = []
        for try await result in cache.responses(for: request(), transport: origin.transport) {
            bodies.append("\(result.source):\(String(decoding: result.body, as: UTF8.self))")
        }
        #expect(bodies == ["cache:v1", "network:v2"])
    }

    @Test("Storage policy per scheme: http responses stay in memory, https reach disk")
    func schemePolicies() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("http-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let disk = try LMDBTier(directory: directory, capacity: 4 << 20)
        let cache = HTTPCache(
            storage: TieredCache(tiers: [memory, disk]),
            configuration: .init(storagePolicies: .standard, clock: clock.cacheClock))
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60")]), ok([("Cache-Control", "max-age=60")])])
        _ = try await cache.response(for: request("http://example.com/plain"), transport: origin.transport)
        _ = try await cache.response(for: request("https://example.com/secure"), transport: origin.transport)
        #expect(try disk.usage().entries == 1)
        #expect(memory.usage().entries == 2)
    }

    @Test("A response only on disk is read once per tier: one memory miss, one disk hit, then promoted")
    func diskHitReadsEachTierOnce() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("http-tiers-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (cache, disk, origin) = try await storedOnlyOnDisk(in: directory)
        let before = (memory: memory.statistics(), disk: disk.statistics())

        let fromDisk = try await cache.response(for: request(), transport: origin.transport)
        #expect(fromDisk.source == .cache && fromDisk.body == Data("hello".utf8))
        #expect(
            memory.statistics().misses - before.memory.misses == 1, "the memory tier was read once, not again below")
        #expect(disk.statistics().hits - before.disk.hits == 1)
        #expect(memory.usage().entries == 1, "promoted into memory")

        let fromMemory = try await cache.response(for: request(), transport: origin.transport)
        #expect(fromMemory.source == .cache)
        #expect(disk.statistics().hits - before.disk.hits == 1, "answered from memory without reading the disk")
        #expect(origin.received.count == 1)
        #expect(cache.statistics.hits == 2)
    }

    /// The proxy answers hits on its event loop through this read: a disk read there (a cold
    /// page, a large body decompressed) stalled every connection on the loop.
    @Test("The memory-only synchronous read leaves a response stored only on disk to the async path")
    func memoryOnlySynchronousRead() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("http-tiers-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (cache, disk, origin) = try await storedOnlyOnDisk(in: directory)
        let diskHits = disk.statistics().hits
        #expect(cache.usableStoredResponseInMemory(for: request()) == nil)
        #expect(disk.statistics().hits == diskHits, "the disk was read")
        #expect(cache.usableStoredResponse(for: request())?.body == Data("hello".utf8), "every local tier")
        // Promoted by that read: now in memory, and answered from it.
        #expect(cache.usableStoredResponseInMemory(for: request())?.body == Data("hello".utf8))
        #expect(disk.statistics().hits == diskHits + 1)
        // With no memory tier in front, nothing is read.
        let diskOnly = HTTPCache(storage: TieredCache(tiers: [disk]), configuration: .init(clock: clock.cacheClock))
        #expect(diskOnly.usableStoredResponseInMemory(for: request()) == nil)
        #expect(origin.received.count == 1)
    }

    /// A cache of `memory` over an LMDB tier in `directory` holding one response ("hello", fresh
    /// for a minute) on disk only, as after a restart; and the origin that served it.
    private func storedOnlyOnDisk(in directory: URL) async throws -> (HTTPCache, LMDBTier, ScriptedOrigin) {
        let disk = try LMDBTier(directory: directory, capacity: 4 << 20)
        let cache = HTTPCache(
            storage: TieredCache(tiers: [memory, disk]), configuration: .init(clock: clock.cacheClock))
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60")])])
        _ = try await cache.response(for: request(), transport: origin.transport)
        memory.removeAll()
        return (cache, disk, origin)
    }
}

@Suite("HTTPCache keeps per-response policies")
struct PolicyPersistenceTests {
    @Test("A revalidation keeps a hook's memory-only policy: the freshened response never reaches disk")
    func revalidationKeepsPolicy() async throws {
        let clock = ManualCacheClock(start: epoch)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "http-policy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let memory = try MemoryTier(capacity: 4 << 20)
        let disk = try LMDBTier(directory: directory, capacity: 4 << 20)
        let cache = HTTPCache(
            storage: TieredCache(tiers: [memory, disk]),
            configuration: .init(storeHooks: [.storagePolicy { _, _ in .allowedInMemoryOnly }], clock: clock.cacheClock)
        )
        let origin = ScriptedOrigin([
            .respond(
                response(200, [("Date", HTTPDate.format(epoch)), ("Cache-Control", "max-age=60"), ("ETag", "\"a\"")]),
                "personal")
        ])
        _ = try await cache.response(for: request(), transport: origin.transport)
        clock.advance(by: 120)
        origin.enqueue(.respond(response(304, [("ETag", "\"a\"")]), ""))
        #expect(try await cache.response(for: request(), transport: origin.transport).source == .revalidated)
        #expect(try disk.usage().entries == 0)
        #expect(memory.usage().entries == 1)
    }
}
