import Foundation
import HTTPCaching
import HTTPCachingFoundation
import HTTPTypes
import OpenCombineShim
import Testing
import TierCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The seeds' scenarios, adopted by configuration: each example is the code an app would write
// (kept compiling here, as README examples are), and each test checks what it promises.

// MARK: A small Alamofire-like wrapper over URLSession

/// What an Alamofire-style library looks like from the cache's side: it owns a URLSession made
/// from a configuration, and offers a `willCacheResponse`-style hook (Alamofire's
/// `CachedResponseHandler`). Adoption is the one configuration line in ``init(configuration:)``'s
/// caller; the wrapper itself knows nothing of TierCache.
final class MiniAlamofire: Sendable {
    let session: URLSession
    /// Alamofire's `CachedResponseHandler`: return the response to cache (possibly modified), or
    /// `nil` to cache nothing.
    let cachedResponseHandler: @Sendable (CachedURLResponse) -> CachedURLResponse?

    init(
        configuration: URLSessionConfiguration,
        cachedResponseHandler: @escaping @Sendable (CachedURLResponse) -> CachedURLResponse? = { $0 }
    ) {
        self.session = URLSession(configuration: configuration)
        self.cachedResponseHandler = cachedResponseHandler
    }

    func request(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await session.loaded(request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        #if canImport(FoundationNetworking)
        // FoundationNetworking never asks `willCacheResponse` nor stores (see TieredURLCache), so
        // on Linux the wrapper runs its handler and stores, as URLSession does on Apple platforms.
        if let cache = session.configuration.urlCache, cache.cachedResponse(for: request) == nil,
            let cacheable = cachedResponseHandler(CachedURLResponse(response: http, data: data))
        {
            cache.storeCachedResponse(cacheable, for: request)
        }
        #endif
        return (data, http)
    }
}

// MARK: Combine: cachedResponseOnError

extension Publisher where Output == (Data, URLResponse), Failure == any Error {
    /// On failure, the response `cache` holds for `request` instead of the error (the error
    /// when it holds none): the seed's `cachedResponseOnError`.
    func cachedResponseOnError(
        _ cache: URLCache, for request: URLRequest
    ) -> AnyPublisher<(Data, URLResponse), any Error> {
        self.catch { error -> AnyPublisher<(Data, URLResponse), any Error> in
            guard let cached = cache.cachedResponse(for: request) else {
                return Fail(error: error).eraseToAnyPublisher()
            }
            return Just((cached.data, cached.response)).setFailureType(to: (any Error).self).eraseToAnyPublisher()
        }
        .eraseToAnyPublisher()
    }
}

/// A publisher of `session`'s answer to `request`.
func loadPublisher(_ session: URLSession, _ request: URLRequest) -> AnyPublisher<(Data, URLResponse), any Error> {
    let subject = PassthroughSubject<(Data, URLResponse), any Error>()
    let box = SubjectSender(subject)
    return subject.handleEvents(receiveSubscription: { _ in
        Task {
            do { box.send(try await session.loaded(request)) } catch { box.fail(error) }
        }
    }).eraseToAnyPublisher()
}

/// Sends to a subject from a task.
final class SubjectSender: @unchecked Sendable {
    // The subject is used only from the one task that loads; OpenCombine's subjects lock
    // internally, so sends from that task race with nothing.
    private let subject: PassthroughSubject<(Data, URLResponse), any Error>
    init(_ subject: PassthroughSubject<(Data, URLResponse), any Error>) { self.subject = subject }
    func send(_ value: (Data, URLResponse)) {
        subject.send(value)
        subject.send(completion: .finished)
    }
    func fail(_ error: any Error) { subject.send(completion: .failure(error)) }
}

/// Everything `publisher` sends, or its failure.
func collectValues(_ publisher: AnyPublisher<(Data, URLResponse), any Error>) async throws -> [(Data, URLResponse)] {
    let box = ExampleCancellableBox()
    return try await withCheckedThrowingContinuation { continuation in
        var values: [(Data, URLResponse)] = []
        box.cancellable = publisher.sink(
            receiveCompletion: { completion in
                switch completion {
                case .finished: continuation.resume(returning: values)
                case .failure(let error): continuation.resume(throwing: error)
                }
            },
            receiveValue: { values.append($0) })
    }
}

/// Keeps a subscription alive until the publisher completes.
final class ExampleCancellableBox: @unchecked Sendable {
    // Written once, before the subscription delivers anything; read by nobody.
    var cancellable: AnyCancellable?
}

// MARK: Offline fallback: fresh, or cached with its date

/// What the app shows: the content, and when it is not fresh, the date it was stored.
struct Loaded: Equatable {
    var body: String
    /// `nil` when fresh from the origin or the cache; the origin's `Date` when the network failed.
    var cachedAt: String?
}

/// Loads through a session configured with ``HTTPCacheURLProtocol``: the `Cache-Status` field
/// says whether the answer is an offline fallback, and `Date` carries the stored date.
func loadFreshOrCached(_ session: URLSession, _ url: URL) async throws -> Loaded {
    let (data, response) = try await session.loaded(URLRequest(url: url))
    let http = response as? HTTPURLResponse
    let isFallback = http?.value(forHTTPHeaderField: "Cache-Status")?.contains("stale-network-failed") ?? false
    return Loaded(body: text(data), cachedAt: isFallback ? http?.value(forHTTPHeaderField: "Date") : nil)
}

@Suite("Examples: the seeds' scenarios, adopted by configuration", .serialized)
struct AdoptionExampleTests {
    @Test("Alamofire-style willCacheResponse: authentication fields stripped, cache date stamped in userInfo")
    func alamofireHook() async throws {
        let origin = try await LoopbackOrigin.start()
        // The adoption: one line on the configuration the library is given.
        let urlCache = TieredURLCache(
            storage: TieredCache(
                tiers: [try MemoryTier(capacity: 4 << 20)], policyTable: .init(["http": .allowed], default: .notAllowed)
            ),
            storeHooks: [
                .stripAuthenticationFields(),
                .stampUserInfo("cachedAt") { _, _ in ISO8601DateFormatter().string(from: Date()) },
            ])
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = urlCache
        let client = MiniAlamofire(configuration: configuration)

        let request = URLRequest(url: origin.url("/cookie"))
        let (first, firstResponse) = try await client.request(request)
        #expect(firstResponse.value(forHTTPHeaderField: "Set-Cookie") == "session=secret")  // the caller sees it
        let cached = try #require(urlCache.cachedResponse(for: request))
        #expect((cached.response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Set-Cookie") == nil)
        let stamp = try #require(cached.userInfo?["cachedAt"] as? String)
        #expect(ISO8601DateFormatter().date(from: stamp) != nil)
        let (second, _) = try await client.request(request)
        #expect(text(first) == "with cookie 1" && text(second) == "with cookie 1")
        #expect(origin.log.requests(to: "/cookie").count == 1)
        try await origin.stop()
    }

    @Test("Combine cachedResponseOnError: the origin's answer while it is up, the cached one after")
    func combineFallback() async throws {
        let origin = try await LoopbackOrigin.start()
        let urlCache = TieredURLCache(
            storage: TieredCache(tiers: [try MemoryTier(capacity: 4 << 20)], policyTable: .init(["http": .allowed])))
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = urlCache
        let session = URLSession(configuration: configuration)
        // Reload every time, so the cache is used only on error.
        var request = URLRequest(url: origin.url("/max-age/3600"))
        request.cachePolicy = .reloadIgnoringLocalCacheData
        let online = try await collectValues(
            loadPublisher(session, request).cachedResponseOnError(urlCache, for: request))
        #expect(online.map { text($0.0) } == ["response 1"])
        #if canImport(FoundationNetworking)
        urlCache.storeCachedResponse(CachedURLResponse(response: online[0].1, data: online[0].0), for: request)
        #endif
        try await origin.stop()
        let offline = try await collectValues(
            loadPublisher(session, request).cachedResponseOnError(urlCache, for: request))
        #expect(offline.map { text($0.0) } == ["response 1"])
        let uncached = URLRequest(url: origin.url("/max-age/5"))
        await #expect(throws: (any Error).self) {
            _ = try await collectValues(loadPublisher(session, uncached).cachedResponseOnError(urlCache, for: uncached))
        }
    }

    @Test("Per-scheme storage policy: https kept in memory only, every other scheme not stored")
    func perSchemePolicy() throws {
        let memory = try MemoryTier(capacity: 1 << 20)
        let urlCache = TieredURLCache(
            storage: TieredCache(
                tiers: [memory], policyTable: .init(["https": .allowedInMemoryOnly], default: .notAllowed)))
        for (scheme, kept) in [("https", true), ("http", false), ("ftp", false)] {
            let url = try #require(URL(string: "\(scheme)://example.com/item"))
            let response = try #require(
                HTTPURLResponse(
                    url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Cache-Control": "max-age=60"]))
            urlCache.storeCachedResponse(
                CachedURLResponse(response: response, data: Data("x".utf8)), for: URLRequest(url: url))
            #expect((urlCache.cachedResponse(for: URLRequest(url: url)) != nil) == kept, "\(scheme)")
            // Kept as memory-only, whatever the response asked for.
            if kept {
                #expect(urlCache.cachedResponse(for: URLRequest(url: url))?.storagePolicy == .allowedInMemoryOnly)
            }
        }
    }
}

// HTTPCacheURLProtocol has one registration per process, so the examples that use it run in its
// serialized suite.
extension HTTPCacheURLProtocolTests {
    @Test("Example, offline fallback: fresh while the origin answers, cached with its date once it is gone")
    func exampleOfflineFreshOrCached() async throws {
        let origin = try await LoopbackOrigin.start()
        let cache = HTTPCache(
            storage: TieredCache(tiers: [try MemoryTier(capacity: 4 << 20)]),
            configuration: .init(
                storagePolicies: .init(["http": .allowed], default: .notAllowed),
                isConnectivityError: HTTPCache.isURLConnectivityError))
        let configuration = URLSessionConfiguration.ephemeral
        HTTPCacheURLProtocol.install(cache, in: configuration)  // the adoption
        let session = URLSession(configuration: configuration)
        let url = origin.url("/max-age/0")
        let fresh = try await loadFreshOrCached(session, url)
        #expect(fresh == Loaded(body: "response 1", cachedAt: nil))
        try await origin.stop()
        let offline = try await loadFreshOrCached(session, url)
        #expect(offline.body == "response 1")
        let date = try #require(offline.cachedAt)
        #expect(date.hasSuffix(" GMT"))
    }

    @Test("Example, a cache key that drops volatile query items (SDWebImage's cacheKeyFilter), in both modes")
    func exampleVolatileQueryItems() async throws {
        let origin = try await LoopbackOrigin.start()
        let isVolatile: @Sendable (String) -> Bool = { $0 == "token" || $0.hasPrefix("utm_") }
        // URLProtocol mode: the engine's key function.
        let cache = HTTPCache(
            storage: TieredCache(tiers: [try MemoryTier(capacity: 4 << 20)]),
            configuration: .init(
                storagePolicies: .init(["http": .allowed], default: .notAllowed),
                key: HTTPCacheKey.droppingQueryItems(where: isVolatile)))
        let configuration = URLSessionConfiguration.ephemeral
        HTTPCacheURLProtocol.install(cache, in: configuration)
        let session = URLSession(configuration: configuration)
        let base = origin.url("/max-age/3600").absoluteString
        for query in ["?id=7&token=a", "?token=b&id=7&utm_source=x"] {
            let (body, _) = try await session.loaded(URLRequest(url: try #require(URL(string: base + query))))
            #expect(text(body) == "response 1")
        }
        let (other, _) = try await session.loaded(URLRequest(url: try #require(URL(string: base + "?id=8&token=a"))))
        #expect(text(other) == "response 2")
        #expect(origin.log.requests(to: "/max-age/3600").count == 2)
        try await origin.stop()

        // URLCache mode: TieredURLCache's key function.
        let urlCache = TieredURLCache(storage: TieredCache(tiers: [try MemoryTier(capacity: 4 << 20)])) { request in
            guard let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
                return nil
            }
            components.queryItems = components.queryItems?.filter { !isVolatile($0.name) }
            return components.url?.absoluteString
        }
        let first = try #require(URL(string: "https://example.com/a.png?w=100&token=1"))
        let second = try #require(URL(string: "https://example.com/a.png?token=2&w=100"))
        let response = try #require(
            HTTPURLResponse(
                url: first, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Cache-Control": "max-age=60"]))
        urlCache.storeCachedResponse(
            CachedURLResponse(response: response, data: Data("png".utf8)), for: URLRequest(url: first))
        #expect(urlCache.cachedResponse(for: URLRequest(url: second)).map { text($0.data) } == "png")
        #expect(
            urlCache.cachedResponse(for: URLRequest(url: try #require(URL(string: "https://example.com/a.png?w=200"))))
                == nil)
    }

    @Test("Example, the Alamofire-like wrapper in URLProtocol mode: one configuration line, TierCache's rules")
    func exampleWrapperWithProtocol() async throws {
        let origin = try await LoopbackOrigin.start()
        let cache = HTTPCache(
            storage: TieredCache(tiers: [try MemoryTier(capacity: 4 << 20)]),
            configuration: .init(
                storagePolicies: .init(["http": .allowed], default: .notAllowed),
                storeHooks: [.stripAuthenticationFields()]))
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        HTTPCacheURLProtocol.install(cache, in: configuration)  // the adoption
        let client = MiniAlamofire(configuration: configuration)
        let request = URLRequest(url: origin.url("/cookie"))
        let (first, firstResponse) = try await client.request(request)
        let (second, secondResponse) = try await client.request(request)
        #expect(text(first) == "with cookie 1" && text(second) == "with cookie 1")
        #expect(firstResponse.value(forHTTPHeaderField: "Set-Cookie") == "session=secret")
        // The hit is the stored copy, which the hook stripped.
        #expect(secondResponse.value(forHTTPHeaderField: "Cache-Status") == "TierCache;hit")
        #expect(secondResponse.value(forHTTPHeaderField: "Set-Cookie") == nil)
        #expect(origin.log.requests(to: "/cookie").count == 1)
        try await origin.stop()
    }
}
