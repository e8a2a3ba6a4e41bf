import AsyncHTTPClient
import Foundation
import HTTPCaching
import HTTPCachingHummingbird
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Testing
@_spi(TierCacheInternals) import TierCache

/// `HTTPCacheMiddleware` in a real Hummingbird app on 127.0.0.1.
@Suite("HTTPCacheMiddleware in a Hummingbird app", .timeLimit(.minutes(5)))
struct HTTPCacheMiddlewareTests {
    /// Runs an app whose routes count their calls, with the middleware in front.
    func withApp(
        singleUser: Bool = false, routes: (Router<BasicRequestContext>, RouteCalls) -> Void = { _, _ in },
        _ body: (String, RouteCalls, HTTPCache) async throws -> Void
    ) async throws {
        let calls = RouteCalls()
        let memory = try MemoryTier(capacity: 1 << 20)
        let router: Router<BasicRequestContext>
        let cache: HTTPCache
        if singleUser {
            cache = HTTPCache(storage: TieredCache(tiers: [memory]), configuration: .init(mode: .private))
            router = Router()
            router.add(middleware: HTTPCacheMiddleware(singleUserCache: cache))
            router.get("/report") { _, _ in
                calls.increment("/report")
                return Response(
                    status: .ok, headers: [.cacheControl: "max-age=60"],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: "report")))
            }
        } else {
            (router, cache) = try readmeRouter(memory: memory, calls: calls)
        }
        router.get("/private") { _, _ in
            calls.increment("/private")
            return Response(
                status: .ok, headers: [.cacheControl: "private, max-age=60"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: "one user's page")))
        }
        router.get("/posts/:slug") { _, context in
            calls.increment("/posts")
            let slug = context.parameters.get("slug") ?? "-"
            return Response(
                status: .ok, headers: [.cacheControl: "max-age=60"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: "post \(slug)")))
        }
        router.get("/account") { request, _ in
            calls.increment("/account")
            let user = request.headers[.authorization] ?? "nobody"
            return Response(
                status: .ok, headers: [.cacheControl: "max-age=60"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: "account of \(user)")))
        }
        router.get("/orders") { request, _ in
            // A session's page that says nothing about caching, as most dynamic routes.
            calls.increment("/orders")
            let session = request.headers[.cookie] ?? "nobody"
            return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: "orders of \(session)")))
        }
        router.get("/validated") { request, _ in
            calls.increment("/validated")
            if request.headers[.ifNoneMatch] == "\"v1\"" {
                return Response(status: .notModified, headers: [.eTag: "\"v1\""])
            }
            return Response(
                status: .ok, headers: [.cacheControl: "no-cache", .eTag: "\"v1\""],
                body: ResponseBody(byteBuffer: ByteBuffer(string: "validated")))
        }
        router.get("/uncacheable") { _, _ in
            calls.increment("/uncacheable")
            return Response(
                status: .ok, headers: [.cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: "fresh every time")))
        }
        router.get("/swr") { _, _ in
            calls.increment("/swr")
            return Response(
                status: .ok, headers: [.cacheControl: "max-age=0, stale-while-revalidate=600"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: "swr")))
        }
        router.get("/gone") { _, _ in
            calls.increment("/gone")
            switch calls.count("/gone") {
            case 1:
                return Response(
                    status: .ok, headers: [.cacheControl: "max-age=0"],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: "article")))
            case 2: throw HTTPError(.notFound)
            default: throw RouteFailure()
            }
        }
        router.get("/fails-midway") { _, _ in
            calls.increment("/fails-midway")
            guard calls.count("/fails-midway") > 1 else {
                return Response(
                    status: .ok, headers: [.cacheControl: "max-age=0"],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: "v1")))
            }
            // The head is fine; the body fails while it is written (a database dropping mid-query).
            return Response(
                status: .ok, headers: [.cacheControl: "max-age=0"],
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: "partial"))
                    throw RouteFailure()
                })
        }
        // A search API that reads its query from a GET's body.
        router.get("/search") { request, _ in
            calls.increment("/search")
            let query = try await request.body.collect(upTo: 1 << 10)
            return Response(
                status: .ok, headers: [.cacheControl: "max-age=60"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: "\(query.readableBytes) bytes")))
        }
        router.get("/streamed") { _, _ in
            calls.increment("/streamed")
            return Response(
                status: .ok, headers: [.cacheControl: "max-age=60"],
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: "streamed"))
                    try await writer.finish(nil)
                })
        }
        // Builds its link from X-Forwarded-Host, as apps behind a load balancer do.
        router.get("/links") { request, _ in
            calls.increment("/links")
            let host = request.headers[HTTPField.Name("X-Forwarded-Host")!] ?? "localhost"
            return Response(
                status: .ok, headers: [.cacheControl: "max-age=60"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: "https://\(host)/next")))
        }
        router.post("/report") { _, _ in
            calls.increment("POST /report")
            return Response(status: .noContent)
        }
        routes(router, calls)
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "middleware-app")
        logger.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { portSink.yield($0.localAddress?.port ?? 0) }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let runner = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        do {
            try await body("http://127.0.0.1:\(port)", calls, cache)
        } catch {
            await group.triggerGracefulShutdown()
            throw error
        }
        await group.triggerGracefulShutdown()
        try await runner.value
    }

    /// The README's example: a shared cache in front of a route.
    func readmeRouter(memory: MemoryTier, calls: RouteCalls) throws -> (Router<BasicRequestContext>, HTTPCache) {
        let router = Router()
        // README:begin middleware
        let cache = HTTPCache(storage: TieredCache(tiers: [memory]), configuration: .init(mode: .shared))
        router.add(middleware: try HTTPCacheMiddleware(cache: cache))
        router.get("/report") { _, _ in
            calls.increment("/report")
            return Response(
                status: .ok, headers: [.cacheControl: "max-age=60", .eTag: "\"r1\""],
                body: ResponseBody(byteBuffer: ByteBuffer(string: "expensive report")))
        }
        // README:end
        return (router, cache)
    }

    @Test("An engine in private mode is refused with a typed error, unless the single-user initializer says so")
    func privateEngineRefused() throws {
        let cache = HTTPCache(storage: TieredCache(tiers: [try MemoryTier(capacity: 1 << 20)]))
        #expect(cache.configuration.mode == .private)
        let error = #expect(throws: HTTPCacheError.self) { try HTTPCacheMiddleware<BasicRequestContext>(cache: cache) }
        #expect(error?.code == .privateCacheOnServer)
        let singleUser = HTTPCacheMiddleware<BasicRequestContext>(singleUserCache: cache)
        #expect(singleUser.cache.configuration.mode == .private)
    }

    @Test(
        "RFC 9111 §3.5, §5.2.2.7: a private response and an authorized request's response are never served to another request"
    )
    func sharedCacheKeepsUsersApart() async throws {
        try await withApp { base, calls, cache in
            let first = try await send(.GET, "\(base)/private")
            let second = try await send(.GET, "\(base)/private")
            #expect(first.body == "one user's page" && second.body == "one user's page")
            #expect(calls.count("/private") == 2)
            // Neither authorized response is stored, so neither reaches the next request.
            let alice = try await send(.GET, "\(base)/account", headers: [("Authorization", "alice")])
            let bob = try await send(.GET, "\(base)/account", headers: [("Authorization", "bob")])
            let anonymous = try await send(.GET, "\(base)/account")
            #expect(alice.body == "account of alice")
            #expect(bob.body == "account of bob")
            #expect(anonymous.body == "account of nobody")
            #expect(calls.count("/account") == 3)
            #expect(cache.statistics.hits == 0)
        }
    }

    @Test("A session's page without Cache-Control never reaches a client asking for stale responses")
    func maxStaleGetsNoOtherSessionsPage() async throws {
        try await withApp { base, calls, _ in
            let alice = try await send(.GET, "\(base)/orders", headers: [("Cookie", "session=alice")])
            #expect(alice.body == "orders of session=alice")
            let mallory = try await send(.GET, "\(base)/orders", headers: [("Cache-Control", "max-stale")])
            #expect(mallory.body == "orders of nobody")
            #expect(calls.count("/orders") == 2)
        }
    }

    @Test("The single-user middleware, asked for by name, stores private responses")
    func singleUserStoresPrivate() async throws {
        try await withApp(singleUser: true) { base, calls, cache in
            for _ in 0..<2 { _ = try await send(.GET, "\(base)/private") }
            #expect(calls.count("/private") == 1)
            #expect(cache.statistics.hits == 1)
        }
    }

    @Test("Server-sent events reach the client as the route writes them, uncached")
    func eventStreamStreamsPast() async throws {
        let (release, releaser) = AsyncStream.makeStream(of: Void.self)
        defer { releaser.finish() }
        try await withApp(routes: { router, calls in
            router.get("/events") { _, _ in
                calls.increment("/events")
                return Response(
                    status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "max-age=60"],
                    body: ResponseBody { writer in
                        try await writer.write(ByteBuffer(string: "data: 1\n\n"))
                        // The next event waits for the client to have the head: read whole before
                        // it was sent, the stream never started.
                        for await _ in release { break }
                        try await writer.write(ByteBuffer(string: "data: 2\n\n"))
                        try await writer.finish(nil)
                    })
            }
        }) { base, calls, cache in
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            do {
                // Generous: in a full parallel run on two cores a request here took 15 seconds.
                // Read whole before it was sent, the head never came, however long.
                let response = try await client.execute(HTTPClientRequest(url: "\(base)/events"), timeout: .seconds(60))
                #expect(response.status == .ok && response.headers.first(name: "Content-Type") == "text/event-stream")
                releaser.finish()
                let body = try await response.body.collect(upTo: 1 << 10)
                #expect(String(buffer: body) == "data: 1\n\ndata: 2\n\n")
                try await client.shutdown()
            } catch {
                try? await client.shutdown()
                throw error
            }
            #expect(cache.statistics.stores == 0 && calls.count("/events") == 1)
        }
    }

    @Test("A response announcing more than the largest cacheable body streams past the cache, whole, every time")
    func largeBodyStreamsPast() async throws {
        let size = 9 << 20  // over the 8 MiB default
        try await withApp(routes: { router, calls in
            router.get("/large") { _, _ in
                calls.increment("/large")
                return Response(
                    status: .ok, headers: [.cacheControl: "max-age=60", .contentLength: String(size)],
                    body: ResponseBody(byteBuffer: ByteBuffer(repeating: 0x61, count: size)))
            }
        }) { base, calls, cache in
            for _ in 0..<2 {
                // 9 MiB through a debug build, beside the whole suite on two cores: not 20 seconds.
                let answer = try await send(.GET, "\(base)/large", timeout: .seconds(90))
                #expect(answer.status == 200 && answer.body.utf8.count == size)
            }
            #expect(calls.count("/large") == 2)
            for tier in cache.storage.tiers {
                #expect(await tier.statistics().refusedTooLarge == 0, "it was read whole and offered to the cache")
            }
        }
    }

    @Test("A fresh stored response is answered without running the route")
    func freshHit() async throws {
        try await withApp { base, calls, cache in
            let first = try await send(.GET, "\(base)/report")
            let second = try await send(.GET, "\(base)/report")
            #expect(first.body == "expensive report" && second.body == "expensive report")
            #expect(second.field("Age") != nil)
            #expect(calls.count("/report") == 1)
            #expect(cache.statistics.hits == 1)
        }
    }

    @Test("A stale response is revalidated through the route, which answers 304")
    func revalidation() async throws {
        try await withApp { base, calls, cache in
            _ = try await send(.GET, "\(base)/validated")
            let second = try await send(.GET, "\(base)/validated")
            #expect(second.status == 200 && second.body == "validated")
            #expect(calls.count("/validated") == 2)
            #expect(cache.statistics.revalidatedNotModified == 1)
        }
    }

    @Test("no-store responses run the route every time")
    func noStore() async throws {
        try await withApp { base, calls, _ in
            for _ in 0..<2 { _ = try await send(.GET, "\(base)/uncacheable") }
            #expect(calls.count("/uncacheable") == 2)
        }
    }

    @Test(
        "stale-while-revalidate serves the stored response and starts no background revalidation, which could not call the route"
    )
    func staleWhileRevalidate() async throws {
        try await withApp { base, calls, cache in
            _ = try await send(.GET, "\(base)/swr")
            let stale = try await send(.GET, "\(base)/swr")
            #expect(stale.status == 200 && stale.body == "swr")
            await cache.waitForBackgroundRevalidations()
            #expect(calls.count("/swr") == 1)
            #expect(cache.statistics.hits == 1)
        }
    }

    @Test("A route that throws has answered: its error's status is sent, not the stale response (RFC 9111 §4.2.4)")
    func throwingRouteIsAnAnswer() async throws {
        try await withApp { base, calls, _ in
            let stored = try await send(.GET, "\(base)/gone")
            let notFound = try await send(.GET, "\(base)/gone")
            let failed = try await send(.GET, "\(base)/gone")
            #expect(stored.body == "article")
            #expect(notFound.status == 404, "HTTPError(.notFound)")
            #expect(failed.status == 500, "another error")
            #expect(calls.count("/gone") == 3)
        }
    }

    @Test("A route whose body fails while it is written has answered 500: the stale response does not stand in")
    func bodyFailureIsAnAnswer() async throws {
        try await withApp { base, calls, _ in
            let stored = try await send(.GET, "\(base)/fails-midway")
            let failed = try await send(.GET, "\(base)/fails-midway")
            #expect(stored.body == "v1")
            #expect(failed.status == 500 && failed.body != "v1", "served \(failed.status) \(failed.body)")
            #expect(calls.count("/fails-midway") == 2)
        }
    }

    @Test("A GET with content bypasses the cache: the route reads the body the key does not see")
    func getWithContentBypasses() async throws {
        try await withApp { base, calls, _ in
            let short = try await send(.GET, "\(base)/search", body: "abc")
            let long = try await send(.GET, "\(base)/search", body: "abcdef")
            #expect(short.body == "3 bytes" && long.body == "6 bytes")
            #expect(calls.count("/search") == 2)
        }
    }

    @Test("RFC 9110 §9.3.2: a HEAD answered from the stored GET keeps its Content-Length")
    func headKeepsContentLength() async throws {
        try await withApp { base, _, _ in
            for (path, length) in [("/report", "16"), ("/streamed", "8")] {
                _ = try await send(.GET, "\(base)\(path)")
                let head = try await send(.HEAD, "\(base)\(path)")
                #expect(head.status == 200 && head.field("Content-Length") == length, "\(path)")
            }
        }
    }

    @Test(
        "A Host that is not host[:port], or that the key writes otherwise, bypasses the cache: it cannot store under another host's key",
        arguments: ["evil.example@localhost", "LOCALHOST", "localhost:80"])
    func hostKeyedOtherwiseBypassesTheCache(host: String) async throws {
        try await withApp { base, calls, cache in
            let port = try #require(base.split(separator: ":").last.flatMap { Int($0) })
            let poisoned = Array("GET /report HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n".utf8)
            for _ in 0..<2 {
                let answer = try await RawHTTP.exchange(port: port, poisoned)
                #expect(answer.hasPrefix("HTTP/1.1 200"))
            }
            #expect(calls.count("/report") == 2, "neither was answered from the cache")
            let plain = Array("GET /report HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8)
            let answer = try await RawHTTP.exchange(port: port, plain)
            #expect(answer.hasPrefix("HTTP/1.1 200"))
            #expect(calls.count("/report") == 3, "nothing was stored under localhost")
            #expect(cache.statistics.hits == 0)
        }
    }

    /// A target the key writes otherwise than the route reads it: `/posts/hello#x`'s answer was
    /// stored as `/posts/hello`'s (the key drops the fragment), and `/posts/a|b`'s under the key
    /// of `/posts/a%7Cb` (the key percent-encodes what the route reads raw).
    @Test(
        "A target the key writes otherwise (a fragment, bytes a URI may not hold) bypasses the cache",
        arguments: [("/posts/hello#x", "/posts/hello", "post hello"), ("/posts/a|b", "/posts/a%7Cb", "post a%7Cb")])
    func targetKeyedOtherwiseBypassesTheCache(target: String, keyedAs: String, keyedAnswer: String) async throws {
        try await withApp { base, calls, _ in
            let port = try #require(base.split(separator: ":").last.flatMap { Int($0) })
            func get(_ path: String) -> [UInt8] {
                Array("GET \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8)
            }
            for _ in 0..<2 { _ = try await RawHTTP.exchange(port: port, get(target)) }
            #expect(calls.count("/posts") == 2, "neither was answered from the cache")
            let answer = try await RawHTTP.exchange(port: port, get(keyedAs))
            #expect(answer.hasSuffix("\r\n\r\n" + keyedAnswer), "\(answer)")
            #expect(calls.count("/posts") == 3, "nothing was stored under its key")
        }
    }

    @Test("A forwarded host a client made up is served only to requests naming it (Vary), not to everyone")
    func forwardedHostDoesNotPoison() async throws {
        try await withApp { base, calls, _ in
            let poisoned = try await send(.GET, "\(base)/links", headers: [("X-Forwarded-Host", "evil.example")])
            #expect(poisoned.body == "https://evil.example/next")
            #expect(poisoned.field("Vary")?.lowercased().contains("x-forwarded-host") == true)
            for _ in 0..<2 {
                let plain = try await send(.GET, "\(base)/links")
                #expect(plain.body == "https://localhost/next")
            }
            #expect(calls.count("/links") == 2, "the plain response was stored and served")
        }
    }

    @Test("Behind a load balancer that sets the same forwarded host on every request, responses are still hits")
    func forwardedHostFromALoadBalancerStillHits() async throws {
        try await withApp { base, calls, cache in
            for _ in 0..<3 {
                let response = try await send(
                    .GET, "\(base)/links",
                    headers: [("X-Forwarded-Host", "shop.example"), ("X-Forwarded-For", "10.0.0.9")])
                #expect(response.body == "https://shop.example/next")
            }
            #expect(calls.count("/links") == 1)
            #expect(cache.statistics.hits == 2)
        }
    }

    @Test(
        "A GET overriding its method (X-HTTP-Method-Override) or naming a Forwarded host bypasses the cache both ways")
    func methodOverrideBypassesTheCache() async throws {
        try await withApp { base, calls, cache in
            for _ in 0..<2 {
                let response = try await send(.GET, "\(base)/report", headers: [("X-HTTP-Method-Override", "DELETE")])
                #expect(response.status == 200)
            }
            #expect(calls.count("/report") == 2, "neither was answered from the cache")
            _ = try await send(.GET, "\(base)/report")
            #expect(calls.count("/report") == 3, "nothing was stored for the overridden requests")
            _ = try await send(.GET, "\(base)/report", headers: [("X_HTTP_Method_Override", "DELETE")])
            #expect(calls.count("/report") == 4, "spelt with underscores, as CGI-style servers read it")
            _ = try await send(.GET, "\(base)/report", headers: [("Forwarded", "for=10.0.0.1;Host=evil.example")])
            #expect(calls.count("/report") == 5, "a Forwarded host, beside a client's address, bypasses it too")
            _ = try await send(.GET, "\(base)/report", headers: [("Forwarded", "for=10.0.0.1; proto = http")])
            #expect(calls.count("/report") == 6, "spaces around the = change nothing")
            _ = try await send(.GET, "\(base)/report", headers: [("Forwarded", "for=10.0.0.1")])
            #expect(calls.count("/report") == 6, "a Forwarded naming only the client is served from the cache")
            #expect(cache.statistics.hits == 1)
        }
    }

    @Test("RFC 9111 §4.4: a successful POST invalidates the stored GET, whatever its Host")
    func invalidation() async throws {
        try await withApp { base, calls, cache in
            _ = try await send(.GET, "\(base)/report")
            let post = try await send(.POST, "\(base)/report", body: "")
            #expect(post.status == 204)
            _ = try await send(.GET, "\(base)/report")
            #expect(calls.count("/report") == 2)
            #expect(cache.statistics.invalidations == 1)
            // A Host the cache will not key by still invalidates what its request changed.
            let port = try #require(base.split(separator: ":").last.flatMap { Int($0) })
            let odd = Array(
                "POST /report HTTP/1.1\r\nHost: u@127.0.0.1:\(port)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    .utf8)
            _ = try await RawHTTP.exchange(port: port, odd)
            _ = try await send(.GET, "\(base)/report")
            #expect(calls.count("/report") == 3, "the stored GET was invalidated")
        }
    }
}

/// An error a route throws that is not an `HTTPResponseError` (a database that is down).
struct RouteFailure: Error {}

/// How often each route ran.
final class RouteCalls: Sendable {
    private let counts = Locked<[String: Int]>([:])
    func increment(_ route: String) { counts.withLock { $0[route, default: 0] += 1 } }
    func count(_ route: String) -> Int { counts.withLock { $0[route] ?? 0 } }
}
