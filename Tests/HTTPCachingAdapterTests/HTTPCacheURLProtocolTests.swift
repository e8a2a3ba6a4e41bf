import Foundation
import HTTPCaching
import HTTPCachingFoundation
import HTTPTypes
import Testing
import TierCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// These tests share `HTTPCacheURLProtocol`'s one registration, so they run one at a time.
@Suite("HTTPCacheURLProtocol: URLSession answered through HTTPCache, against a loopback origin", .serialized)
struct HTTPCacheURLProtocolTests {
    func installedSession(_ cache: HTTPCache) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.timeoutIntervalForRequest = 10
        HTTPCacheURLProtocol.install(cache, in: configuration)
        return URLSession(configuration: configuration)
    }

    func makeHTTPCache() throws -> HTTPCache {
        HTTPCache(
            storage: TieredCache(tiers: [try MemoryTier(capacity: 4 << 20)]),
            configuration: .init(
                storagePolicies: .init(["http": .allowed], default: .notAllowed),
                isConnectivityError: HTTPCache.isURLConnectivityError))
    }

    @Test("A fresh response is answered by the cache with Cache-Status: hit; the origin sees one request")
    func hit() async throws {
        let origin = try await LoopbackOrigin.start()
        let cache = try makeHTTPCache()
        let session = installedSession(cache)
        let request = URLRequest(url: origin.url("/max-age/3600"))
        let (first, firstResponse) = try await session.loaded(request)
        let (second, secondResponse) = try await session.loaded(request)
        #expect(text(first) == "response 1" && text(second) == "response 1")
        let firstStatus = (firstResponse as? HTTPURLResponse)?.value(forHTTPHeaderField: "Cache-Status")
        let secondStatus = (secondResponse as? HTTPURLResponse)?.value(forHTTPHeaderField: "Cache-Status")
        #expect(firstStatus == "TierCache;fwd=uri-miss;fwd-status=200;stored")
        #expect(secondStatus == "TierCache;hit")
        #expect((secondResponse as? HTTPURLResponse)?.value(forHTTPHeaderField: "Age") != nil)
        #expect(origin.log.requests(to: "/max-age/3600").count == 1)
        // The async API goes through the protocol too.
        let (third, _) = try await session.data(for: request)
        #expect(text(third) == "response 1")
        #expect(origin.log.requests(to: "/max-age/3600").count == 1)
        try await origin.stop()
    }

    @Test(
        "Credentials in the configuration's additional headers reach the first origin, not one a redirect leads to")
    func additionalCredentialsStayWithTheirOrigin() async throws {
        let first = try await LoopbackOrigin.start()
        let other = try await LoopbackOrigin.start()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = ["Authorization": "Bearer secret", "X-App-Version": "7.1"]
        configuration.timeoutIntervalForRequest = 10
        HTTPCacheURLProtocol.unregister()  // the earlier tests' installs, without credentials
        HTTPCacheURLProtocol.install(try makeHTTPCache(), in: configuration)
        let session = URLSession(configuration: configuration)
        let target = other.url("/max-age/3600").absoluteString
        let (body, _) = try await session.loaded(URLRequest(url: first.url("/moved/302?to=\(target)")))
        #expect(text(body) == "response 1")
        let asked = try #require(first.log.requests(to: "/moved/302").first)
        #expect(asked.headers["Authorization"] == ["Bearer secret"], "the app's own origin gets its credentials")
        let redirected = try #require(other.log.requests(to: "/max-age/3600").first)
        #expect(redirected.headers["Authorization"].isEmpty, "sent to another origin: \(redirected.headers)")
        #expect(redirected.headers["X-App-Version"] == ["7.1"])
        try await first.stop()
        try await other.stop()
    }

    /// The registration is process-wide: an API session's token, installed after an image
    /// session, went with the image session's requests to their hosts.
    @Test("Two configurations with different credentials: neither's are added to requests, until unregister")
    func credentialsOfTwoConfigurationsAreNotShared() async throws {
        let origin = try await LoopbackOrigin.start()
        HTTPCacheURLProtocol.unregister()
        let images = URLSessionConfiguration.ephemeral
        images.timeoutIntervalForRequest = 10
        HTTPCacheURLProtocol.install(try makeHTTPCache(), in: images)
        let api = URLSessionConfiguration.ephemeral
        api.httpAdditionalHeaders = ["Authorization": "Bearer secret"]
        api.timeoutIntervalForRequest = 10
        HTTPCacheURLProtocol.install(try makeHTTPCache(), in: api)
        _ = try await URLSession(configuration: images).loaded(URLRequest(url: origin.url("/max-age/3600")))
        let asked = try #require(origin.log.requests(to: "/max-age/3600").first)
        #expect(asked.headers["Authorization"].isEmpty, "the image session's request carried the API's token")
        // The same configuration installed again replaces its own credentials: no conflict.
        HTTPCacheURLProtocol.unregister()
        HTTPCacheURLProtocol.install(try makeHTTPCache(), in: api)
        api.httpAdditionalHeaders = ["Authorization": "Bearer renewed"]
        HTTPCacheURLProtocol.install(try makeHTTPCache(), in: api)
        _ = try await URLSession(configuration: api).loaded(URLRequest(url: origin.url("/max-age/60")))
        #expect(origin.log.requests(to: "/max-age/60").first?.headers["Authorization"] == ["Bearer renewed"])
        try await origin.stop()
    }

    @Test(
        "The cache fetches with a copy of the app's configuration: its headers reach the origin, its URLCache does not")
    func fetchesWithTheAppsConfiguration() async throws {
        let origin = try await LoopbackOrigin.start()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = ["X-App-Version": "7.1"]
        configuration.timeoutIntervalForRequest = 12
        HTTPCacheURLProtocol.install(try makeHTTPCache(), in: configuration)
        let session = URLSession(configuration: configuration)
        _ = try await session.loaded(URLRequest(url: origin.url("/max-age/3600")))
        #expect(origin.log.requests(to: "/max-age/3600").first?.headers["X-App-Version"] == ["7.1"])

        let fetching = HTTPCacheURLProtocol.fetchingConfiguration(from: configuration)
        #expect(fetching.timeoutIntervalForRequest == 12)
        #expect(fetching.urlCache == nil)
        #expect(!(fetching.protocolClasses ?? []).contains { $0 == HTTPCacheURLProtocol.self })
        #expect(
            (configuration.protocolClasses ?? []).first == HTTPCacheURLProtocol.self,
            "the app's configuration is the one that routes through the cache")
        try await origin.stop()
    }

    @Test("A stale response is revalidated with If-None-Match; a 304 is answered from the cache")
    func revalidation() async throws {
        let origin = try await LoopbackOrigin.start()
        let session = installedSession(try makeHTTPCache())
        _ = try await session.loaded(URLRequest(url: origin.url("/etag")))
        let (body, response) = try await session.loaded(URLRequest(url: origin.url("/etag")))
        #expect(text(body) == "etag body")
        #expect(
            (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Cache-Status")
                == "TierCache;fwd=stale;fwd-status=304")
        #expect(origin.log.requests(to: "/etag").last?.headers["If-None-Match"] == ["\"v1\""])
        try await origin.stop()
    }

    @Test(
        "Offline fallback: with the origin gone, the stored response comes back with its Date and a stale Cache-Status")
    func offlineFallback() async throws {
        let origin = try await LoopbackOrigin.start()
        let session = installedSession(try makeHTTPCache())
        let request = URLRequest(url: origin.url("/max-age/0"))
        let (_, firstResponse) = try await session.loaded(request)
        let storedDate = (firstResponse as? HTTPURLResponse)?.value(forHTTPHeaderField: "Date")
        try await origin.stop()
        let (body, response) = try await session.loaded(request)
        let http = try #require(response as? HTTPURLResponse)
        #expect(text(body) == "response 1")
        #expect(http.value(forHTTPHeaderField: "Cache-Status") == "TierCache;hit;detail=stale-network-failed")
        #expect(storedDate != nil && http.value(forHTTPHeaderField: "Date") == storedDate)
        // Without a stored response the error reaches the caller.
        await #expect(throws: (any Error).self) { try await session.loaded(URLRequest(url: origin.url("/max-age/5"))) }
    }

    @Test("Concurrent identical requests are coalesced into one origin request")
    func coalescing() async throws {
        let origin = try await LoopbackOrigin.start()
        let session = installedSession(try makeHTTPCache())
        var delayed = URLRequest(url: origin.url("/max-age/3600"))
        delayed.setValue("300", forHTTPHeaderField: "X-Delay-Milliseconds")
        let request = delayed
        let bodies = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<6 { group.addTask { text(try await session.loaded(request).0) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(bodies == Array(repeating: "response 1", count: 6))
        #expect(origin.log.requests(to: "/max-age/3600").count == 1)
        try await origin.stop()
    }

    @Test("cachePolicy reaches the engine: reloadIgnoringLocalCacheData fetches again")
    func cachePolicy() async throws {
        let origin = try await LoopbackOrigin.start()
        let session = installedSession(try makeHTTPCache())
        var request = URLRequest(url: origin.url("/max-age/3600"))
        _ = try await session.loaded(request)
        request.cachePolicy = .reloadIgnoringLocalCacheData
        let (body, _) = try await session.loaded(request)
        #expect(text(body) == "response 2")
        #expect(origin.log.requests(to: "/max-age/3600").count == 2)
        try await origin.stop()
    }

    @Test(
        "returnCacheDataDontLoad with nothing stored fails as URLSession's loader fails it; a gzip body arrives decoded, and is described so"
    )
    func dontLoadAndDecodedContent() async throws {
        let origin = try await LoopbackOrigin.start()
        let session = installedSession(try makeHTTPCache())
        var request = URLRequest(url: origin.url("/gzip"))
        request.cachePolicy = .returnCacheDataDontLoad
        await #expect {
            _ = try await session.loaded(request)
        } throws: { error in
            (error as? URLError)?.code == .resourceUnavailable
                || (error as NSError).code == URLError.Code.resourceUnavailable.rawValue
        }
        #expect(origin.log.requests(to: "/gzip").isEmpty)
        request.cachePolicy = .useProtocolCachePolicy
        for _ in 0..<2 {
            let (body, response) = try await session.loaded(request)
            let http = try #require(response as? HTTPURLResponse)
            #expect(text(body) == "hello, decoded world")
            #expect(http.value(forHTTPHeaderField: "Content-Encoding") == nil)
            #expect(http.value(forHTTPHeaderField: "Content-Length") == "20")
        }
        #expect(origin.log.requests(to: "/gzip").count == 1)
        try await origin.stop()
    }

    @Test("A request's body reaches the origin: set as httpBody, as a stream, or given to an upload task")
    func requestBodies() async throws {
        let origin = try await LoopbackOrigin.start()
        let session = installedSession(try makeHTTPCache())
        var request = URLRequest(url: origin.url("/echo"))
        request.httpMethod = "POST"
        request.httpBody = Data("order=42".utf8)
        let (posted, _) = try await session.loaded(request)
        #expect(text(posted) == "POST order=42")
        request.httpMethod = "PUT"
        request.httpBody = nil
        request.httpBodyStream = InputStream(data: Data("order=43".utf8))
        let (streamed, _) = try await session.loaded(request)
        #expect(text(streamed) == "PUT order=43")
        // An upload task's body is not given to a URLProtocol: where the task cannot go past the
        // cache (Linux), it fails with a message rather than reach the origin empty.
        request.httpMethod = "POST"
        request.httpBodyStream = nil
        do {
            let (uploaded, _) = try await session.upload(for: request, from: Data("order=44".utf8))
            #expect(text(uploaded) == "POST order=44", "went past the cache, body and all")
        } catch let error as URLError {
            #expect(error.code == .unsupportedURL)
            #expect(origin.log.requests(to: "/echo").count == 2, "nothing reached the origin")
        }
        try await origin.stop()
    }

    @Test("The cache's own 504 for only-if-cached is not labelled a hit")
    func unsatisfiableIsNotAHit() {
        let answer = HTTPCacheResponse(
            response: HTTPResponse(status: .gatewayTimeout), body: Data(), source: .unsatisfiable)
        #expect(HTTPCacheURLProtocol.cacheStatus(of: answer) == "TierCache;detail=only-if-cached")
    }

    /// Every response from the network was `fwd=uri-miss`, which RFC 9211 §2.2 keeps for a cache
    /// that held nothing for the URI.
    @Test("A response from the network says what the cache held and passed over, and a POST says fwd=method")
    func forwardReasons() throws {
        var answer = HTTPCacheResponse(response: HTTPResponse(status: .ok), body: Data(), source: .network)
        let url = try #require(URL(string: "https://example.com/a"))
        var get = URLRequest(url: url)
        #expect(HTTPCacheURLProtocol.cacheStatus(of: answer, for: get) == "TierCache;fwd=uri-miss;fwd-status=200")
        get.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
        #expect(HTTPCacheURLProtocol.cacheStatus(of: answer, for: get) == "TierCache;fwd=request;fwd-status=200")
        var post = URLRequest(url: url)
        post.httpMethod = "POST"
        #expect(HTTPCacheURLProtocol.cacheStatus(of: answer, for: post) == "TierCache;fwd=method;fwd-status=200")
        var search = URLRequest(url: url)
        search.httpBody = Data("{}".utf8)
        #expect(HTTPCacheURLProtocol.cacheStatus(of: answer, for: search) == "TierCache;fwd=bypass;fwd-status=200")
        answer.replacedStoredResponse = .stale
        #expect(HTTPCacheURLProtocol.cacheStatus(of: answer) == "TierCache;fwd=stale;fwd-status=200")
        answer.replacedStoredResponse = .passedOverByRequest
        #expect(HTTPCacheURLProtocol.cacheStatus(of: answer) == "TierCache;fwd=request;fwd-status=200")
    }

    /// The cache's member replaced an upstream cache's `Cache-Status`.
    @Test("RFC 9211 §2: the cache's Cache-Status member follows those of caches upstream, which stay")
    func upstreamCacheStatusStays() async throws {
        let origin = try await LoopbackOrigin.start()
        let session = installedSession(try makeHTTPCache())
        var statuses: [String?] = []
        for _ in 0..<2 {
            let (_, response) = try await session.loaded(URLRequest(url: origin.url("/upstream-labelled")))
            statuses.append((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Cache-Status"))
        }
        #expect(
            statuses == [
                "Upstream;fwd=uri-miss, TierCache;fwd=uri-miss;fwd-status=200;stored",
                "Upstream;fwd=uri-miss, TierCache;hit",
            ])
        try await origin.stop()
    }

    @Test("A redirect is followed inside the cache: the page is stored under its own URL, not the redirect's")
    func redirects() async throws {
        let origin = try await LoopbackOrigin.start()
        let session = installedSession(try makeHTTPCache())
        let (body, response) = try await session.loaded(URLRequest(url: origin.url("/moved/302")))
        #expect(text(body) == "response 1")
        #expect(response.url == origin.url("/max-age/3600"), "the response is the last hop's")
        let (_, target) = try await session.loaded(URLRequest(url: origin.url("/max-age/3600")))
        #expect((target as? HTTPURLResponse)?.value(forHTTPHeaderField: "Cache-Status") == "TierCache;hit")
        // The 302 has no freshness: asked again, the origin redirects again.
        _ = try await session.loaded(URLRequest(url: origin.url("/moved/302")))
        #expect(origin.log.requests(to: "/moved/302").count == 2)
        #expect(origin.log.requests(to: "/max-age/3600").count == 1)
        try await origin.stop()
    }

    @Test("Only http and https are taken, and only while a cache is registered")
    func canInit() throws {
        HTTPCacheURLProtocol.register(try makeHTTPCache())
        let http = URLRequest(url: try #require(URL(string: "http://example.com/")))
        let file = URLRequest(url: try #require(URL(string: "file:///tmp/x")))
        #expect(HTTPCacheURLProtocol.canInit(with: http))
        #expect(!HTTPCacheURLProtocol.canInit(with: file))
        HTTPCacheURLProtocol.unregister()
        #expect(!HTTPCacheURLProtocol.canInit(with: http))
    }
}
