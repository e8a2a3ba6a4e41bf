import AsyncHTTPClient
import Foundation
import HTTPCaching
import HTTPCachingAsyncHTTPClient
import HTTPTypes
import Testing
import TierCache
import TierCacheTesting

@testable import HTTPCachingFoundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A session delegate that declines redirects, as `HTTPCache.data(for:session:)` asks of a
/// session on Linux (swift-corelibs-foundation consults only the session's delegate).
private final class DecliningRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}

private func decliningSession() -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.urlCache = nil
    configuration.timeoutIntervalForRequest = 10
    return URLSession(configuration: configuration, delegate: DecliningRedirects(), delegateQueue: nil)
}

@Suite("Redirects: each hop through the cache under its own URL, against a loopback origin", .serialized)
struct RedirectTests {
    @Test("A redirect and the page it leads to are stored apart: the page is not kept under the redirect's URL")
    func eachHopUnderItsOwnKey() async throws {
        let origin = try await LoopbackOrigin.start()
        let cache = try makeCache(clock: ManualCacheClock(start: Date()))
        let session = decliningSession()
        let (body, response, result) = try await cache.data(
            for: URLRequest(url: origin.url("/moved/302")), session: session)
        #expect(text(body) == "response 1" && result.source == .network && result.wasStored)
        #expect(response.url == origin.url("/max-age/3600"), "the response carries the last hop's URL")
        let (_, _, target) = try await cache.data(for: URLRequest(url: origin.url("/max-age/3600")), session: session)
        #expect(target.source == .cache, "the page was stored under its own URL")
        // The 302 has no freshness: asked again, the origin redirects again, and the page answers
        // from the cache.
        let (again, _, lastHop) = try await cache.data(for: URLRequest(url: origin.url("/moved/302")), session: session)
        #expect(text(again) == "response 1" && lastHop.source == .cache)
        #expect(origin.log.requests(to: "/moved/302").count == 2)
        #expect(origin.log.requests(to: "/max-age/3600").count == 1)
        try await origin.stop()
    }

    @Test("A session that follows redirects itself: the answer is right, and not stored under the first URL")
    func sessionThatFollows() async throws {
        let origin = try await LoopbackOrigin.start()
        let cache = try makeCache(clock: ManualCacheClock(start: Date()))
        let session = ephemeralSession()
        for _ in 0..<2 {
            let (body, _, _) = try await cache.data(for: URLRequest(url: origin.url("/moved/301")), session: session)
            #expect(text(body).hasPrefix("response "))
        }
        #expect(
            origin.log.requests(to: "/moved/301").count == 2,
            "the redirect's URL is asked again, not answered with the page")
        // The transport alone, as the session follows: what it reached is marked not to be stored.
        let (response, _) = try await HTTPCache.urlSessionTransport(session)(
            HTTPRequest(method: .get, url: origin.url("/moved/307")), nil)
        #expect(response.status == .ok && response.headerFields[.cacheControl]?.contains("no-store") == true)
        let (direct, _) = try await HTTPCache.urlSessionTransport(session)(
            HTTPRequest(method: .get, url: origin.url("/max-age/3600")), nil)
        #expect(direct.headerFields[.cacheControl] == "max-age=3600", "a response not redirected is left as it is")
        try await origin.stop()
    }

    @Test("303, and 301 or 302 after a POST, continue as a GET without a body; 307 and 308 keep the method and body")
    func methodsAndBodies() async throws {
        let origin = try await LoopbackOrigin.start()
        let cache = try makeCache(clock: ManualCacheClock(start: Date()))
        let session = decliningSession()
        for (status, expected) in [
            (303, "GET "), (302, "GET "), (301, "GET "), (307, "POST order=42"), (308, "POST order=42"),
        ] {
            var request = URLRequest(url: origin.url("/moved/\(status)?to=/echo"))
            request.httpMethod = "POST"
            request.httpBody = Data("order=42".utf8)
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            let (body, _, _) = try await cache.data(for: request, session: session)
            #expect(text(body) == expected, "after \(status)")
        }
        let echoed = origin.log.requests(to: "/echo")
        #expect(echoed.map(\.method.rawValue) == ["GET", "GET", "GET", "POST", "POST"])
        #expect(echoed.prefix(3).allSatisfy { $0.headers["Content-Type"].isEmpty }, "a GET carries no body's fields")
        try await origin.stop()
    }

    @Test("A redirect loop fails with httpTooManyRedirects after 16 redirects")
    func loop() async throws {
        let origin = try await LoopbackOrigin.start()
        let cache = try makeCache(clock: ManualCacheClock(start: Date()))
        await #expect {
            try await cache.data(for: URLRequest(url: origin.url("/moved/302?to=self")), session: decliningSession())
        } throws: { error in
            (error as? URLError)?.code == .httpTooManyRedirects
        }
        #expect(origin.log.requests(to: "/moved/302").count == Redirects.limit + 1)
        try await origin.stop()
    }

    @Test("followingRedirects: false answers with the redirect itself")
    func notFollowing() async throws {
        let origin = try await LoopbackOrigin.start()
        let cache = try makeCache(clock: ManualCacheClock(start: Date()))
        let (_, response, _) = try await cache.data(
            for: URLRequest(url: origin.url("/moved/302")), session: decliningSession(), followingRedirects: false)
        #expect(response.statusCode == 302 && response.value(forHTTPHeaderField: "Location") == "/max-age/3600")
        #expect(origin.log.requests(to: "/max-age/3600").isEmpty)
        try await origin.stop()
    }

    @Test(
        "A revalidation the client follows to a 304 of another page does not refresh the stored response",
        arguments: ["URLSession", "AsyncHTTPClient"])
    func revalidationRedirected(client name: String) async throws {
        let origin = try await LoopbackOrigin.start()
        let clock = ManualCacheClock(start: Date())
        let cache = try makeCache(clock: clock)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        func load() async throws -> HTTPCacheResponse {
            name == "URLSession"
                ? try await cache.data(for: URLRequest(url: origin.url("/flip")), session: ephemeralSession()).2
                : try await cache.execute(HTTPRequest(method: .get, url: origin.url("/flip")), on: client)
        }
        do {
            #expect(text(try await load().body) == "flip body")
            clock.advance(by: 1)
            // The stored /flip is revalidated with If-None-Match: "v1"; the client follows the 302
            // to /etag, whose ETag is "v1" too, and gets 304.
            let second = try await load()
            #expect(text(second.body) == "etag body" && second.source != .revalidated)
            let etag = origin.log.requests(to: "/etag").map { $0.headers["If-None-Match"] }
            #expect(etag == [["\"v1\""], []], "sent again without validators")
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
        try await origin.stop()
    }

    @Test(
        "The next request: relative Location, credentials kept only on the same origin, the fragment, HEAD after 303, what is not followed"
    )
    func nextRequest() throws {
        var request = URLRequest(url: try #require(URL(string: "https://shop.example/account?x=1#top")))
        request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
        request.setValue("session=1", forHTTPHeaderField: "Cookie")
        request.setValue("Basic cHJveHk=", forHTTPHeaderField: "Proxy-Authorization")
        request.setValue("https://shop.example", forHTTPHeaderField: "Origin")
        func redirect(_ status: Int, to location: String?) -> HTTPResponse {
            var response = HTTPResponse(status: .init(code: status))
            if let location { response.headerFields[.location] = location }
            return response
        }
        let sameOrigin = try #require(
            Redirects.nextRequest(after: request, body: nil, response: redirect(302, to: "/login")))
        #expect(sameOrigin.request.url?.absoluteString == "https://shop.example/login#top", "the fragment is kept")
        for field in Redirects.crossOriginFields {
            #expect(sameOrigin.request.value(forHTTPHeaderField: field) == request.value(forHTTPHeaderField: field))
        }
        let withFragment = Redirects.nextRequest(after: request, body: nil, response: redirect(302, to: "/login#form"))
        #expect(withFragment?.request.url?.absoluteString == "https://shop.example/login#form")
        for location in ["https://other.example/login", "http://shop.example/login", "https://shop.example:8443/login"]
        {
            let crossOrigin = try #require(
                Redirects.nextRequest(after: request, body: nil, response: redirect(307, to: location)))
            for field in ["Authorization", "Cookie", "Proxy-Authorization", "Origin"] {
                #expect(crossOrigin.request.value(forHTTPHeaderField: field) == nil, "\(field) to \(location)")
            }
        }
        request.httpMethod = "HEAD"
        #expect(
            Redirects.nextRequest(after: request, body: nil, response: redirect(303, to: "/a"))?.request.httpMethod
                == "HEAD")
        #expect(Redirects.nextRequest(after: request, body: nil, response: redirect(300, to: "/a")) == nil)
        #expect(Redirects.nextRequest(after: request, body: nil, response: redirect(304, to: "/a")) == nil)
        #expect(Redirects.nextRequest(after: request, body: nil, response: redirect(302, to: nil)) == nil)
        #expect(
            Redirects.nextRequest(after: request, body: nil, response: redirect(302, to: "ftp://shop.example/a")) == nil
        )
    }
}
