import AsyncHTTPClient
import Foundation
import HTTPCaching
import HTTPCachingAsyncHTTPClient
import HTTPCachingCombine
import HTTPCachingFoundation
import HTTPTypes
import OpenCombineShim
import Testing
@_spi(TierCacheInternals) import TierCache
import TierCacheTesting

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

func makeCache(
    clock: ManualCacheClock, connectivity: @escaping @Sendable (any Error) -> Bool = { !($0 is CancellationError) }
) throws -> HTTPCache {
    HTTPCache(
        storage: TieredCache(tiers: [try MemoryTier(capacity: 4 << 20)]),
        configuration: .init(
            storagePolicies: .init(["http": .allowed], default: .notAllowed), isConnectivityError: connectivity,
            clock: clock.cacheClock))
}

func ephemeralSession() -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.urlCache = nil
    configuration.timeoutIntervalForRequest = 10
    return URLSession(configuration: configuration)
}

@Suite("URLSession adapter, end to end against a loopback origin", .serialized)
struct URLSessionAdapterTests {
    @Test("A fresh response is served from the cache; the origin sees one request")
    func hit() async throws {
        let origin = try await LoopbackOrigin.start()
        let clock = ManualCacheClock(start: Date())
        let cache = try makeCache(clock: clock)
        let session = ephemeralSession()
        let request = URLRequest(url: origin.url("/max-age/60"))
        let (firstBody, _, first) = try await cache.data(for: request, session: session)
        clock.advance(by: 5)
        let (secondBody, secondResponse, second) = try await cache.data(for: request, session: session)
        #expect(first.source == .network && second.source == .cache)
        #expect(firstBody == secondBody && String(decoding: secondBody, as: UTF8.self) == "response 1")
        #expect(secondResponse.value(forHTTPHeaderField: "Age") != nil)
        #expect(origin.log.requests(to: "/max-age/60").count == 1)
        try await origin.stop()
    }

    @Test("A stale response is revalidated with If-None-Match and a 304 from the origin")
    func revalidation() async throws {
        let origin = try await LoopbackOrigin.start()
        let clock = ManualCacheClock(start: Date())
        let cache = try makeCache(clock: clock)
        let session = ephemeralSession()
        _ = try await cache.data(for: URLRequest(url: origin.url("/etag")), session: session)
        clock.advance(by: 1)
        let (body, response, result) = try await cache.data(for: URLRequest(url: origin.url("/etag")), session: session)
        #expect(result.source == .revalidated && response.statusCode == 200)
        #expect(String(decoding: body, as: UTF8.self) == "etag body")
        #expect(origin.log.requests(to: "/etag").last?.headers["If-None-Match"] == ["\"v1\""])
        try await origin.stop()
    }

    @Test("Vary: each Accept-Language gets its own stored response")
    func vary() async throws {
        let origin = try await LoopbackOrigin.start()
        let cache = try makeCache(clock: ManualCacheClock(start: Date()))
        let session = ephemeralSession()
        for language in ["en", "fr", "en", "fr"] {
            var request = URLRequest(url: origin.url("/vary"))
            request.setValue(language, forHTTPHeaderField: "Accept-Language")
            let (body, _, _) = try await cache.data(for: request, session: session)
            #expect(String(decoding: body, as: UTF8.self) == "language: \(language)")
        }
        #expect(origin.log.requests(to: "/vary").count == 2)
        try await origin.stop()
    }

    @Test("A HEAD of a gzip resource, answered encoded, freshens the decoded GET stored for it instead of removing it")
    func headOfDecodedContent() async throws {
        let origin = try await LoopbackOrigin.start()
        let clock = ManualCacheClock(start: Date())
        let cache = try makeCache(clock: clock)
        let session = ephemeralSession()
        let (body, _, _) = try await cache.data(for: URLRequest(url: origin.url("/gzip")), session: session)
        #expect(String(decoding: body, as: UTF8.self) == "hello, decoded world")
        clock.advance(by: 7_200)
        var head = URLRequest(url: origin.url("/gzip"))
        head.httpMethod = "HEAD"
        _ = try await cache.data(for: head, session: session)
        #expect(origin.log.requests(to: "/gzip").map(\.method) == [.GET, .HEAD])
        // The HEAD freshened the stored GET: it answers without the origin.
        var stored = URLRequest(url: origin.url("/gzip"))
        stored.cachePolicy = .returnCacheDataDontLoad
        let (again, _, result) = try await cache.data(for: stored, session: session)
        #expect(String(decoding: again, as: UTF8.self) == "hello, decoded world" && result.source == .cache)
        try await origin.stop()
    }

    @Test("URLRequest.cachePolicy is honoured")
    func cachePolicies() async throws {
        let origin = try await LoopbackOrigin.start()
        let cache = try makeCache(clock: ManualCacheClock(start: Date()))
        let session = ephemeralSession()
        var request = URLRequest(url: origin.url("/max-age/60"))
        request.cachePolicy = .returnCacheDataDontLoad
        await #expect(throws: HTTPCacheError.self) { try await cache.data(for: request, session: session) }
        request.cachePolicy = .useProtocolCachePolicy
        _ = try await cache.data(for: request, session: session)
        request.cachePolicy = .reloadIgnoringLocalCacheData
        let (_, _, reloaded) = try await cache.data(for: request, session: session)
        #expect(reloaded.source == .network && origin.log.requests(to: "/max-age/60").count == 2)
        try await origin.stop()
    }

    @Test("Offline: when the origin is gone, the stale response is served with its age")
    func offline() async throws {
        let origin = try await LoopbackOrigin.start()
        let clock = ManualCacheClock(start: Date())
        let cache = try makeCache(clock: clock, connectivity: HTTPCache.isURLConnectivityError)
        let session = ephemeralSession()
        let request = URLRequest(url: origin.url("/max-age/60"))
        _ = try await cache.data(for: request, session: session)
        try await origin.stop()
        clock.advance(by: 3_600)
        let (body, _, result) = try await cache.data(for: request, session: session)
        #expect(result.source == .staleFallback && String(decoding: body, as: UTF8.self) == "response 1")
        #expect((result.age ?? 0) >= 3_600 && result.networkError is URLError)
        await #expect(throws: URLError.self) {
            try await cache.data(for: URLRequest(url: origin.url("/max-age/61")), session: session)
        }
    }
}

@Suite("Slow origins and timeouts, end to end", .serialized)
struct SlowOriginTests {
    @Test("A request that times out against a slow origin falls back to the stored response")
    func timeoutFallsBack() async throws {
        let origin = try await LoopbackOrigin.start()
        let clock = ManualCacheClock(start: Date())
        let cache = try makeCache(clock: clock, connectivity: HTTPCache.isURLConnectivityError)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.timeoutIntervalForRequest = 1  // whole seconds: corelibs Foundation truncates fractions
        let session = URLSession(configuration: configuration)
        // Stored through a session without the short timeout: on a loaded machine the first,
        // undelayed response may itself take more than a second.
        _ = try await cache.data(for: URLRequest(url: origin.url("/max-age/1")), session: ephemeralSession())
        clock.advance(by: 60)
        var slow = URLRequest(url: origin.url("/max-age/1"))
        slow.setValue("5000", forHTTPHeaderField: "X-Delay-Milliseconds")
        let (_, _, result) = try await cache.data(for: slow, session: session)
        #expect(result.source == .staleFallback)
        #expect(result.networkError.map { ($0 as NSError).code } == URLError.Code.timedOut.rawValue)
        try await origin.stop()
    }

    @Test("The request's own timeoutInterval applies to the cache's fetch, not only the session's")
    func requestTimeout() async throws {
        let origin = try await LoopbackOrigin.start()
        let cache = try makeCache(
            clock: ManualCacheClock(start: Date()), connectivity: HTTPCache.isURLConnectivityError)
        var slow = URLRequest(url: origin.url("/max-age/60"))
        slow.setValue("5000", forHTTPHeaderField: "X-Delay-Milliseconds")
        slow.timeoutInterval = 1  // whole seconds: corelibs Foundation truncates fractions
        // The session allows 10 s: only the request's own second ends the wait.
        await #expect {
            _ = try await cache.data(for: slow, session: ephemeralSession())
        } throws: { error in
            (error as NSError).code == URLError.Code.timedOut.rawValue
        }
        try await origin.stop()
    }

    @Test("AsyncHTTPClient: timeouts of TLS, SOCKS and proxy handshakes are connectivity errors; a bad request is not")
    func asyncHTTPClientHandshakeTimeouts() {
        for error in [
            HTTPClientError.tlsHandshakeTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout, .connectTimeout,
        ] {
            #expect(HTTPCache.isAsyncHTTPClientConnectivityError(error), "\(error)")
        }
        #expect(!HTTPCache.isAsyncHTTPClientConnectivityError(HTTPClientError.invalidURL))
        #expect(!HTTPCache.isAsyncHTTPClientConnectivityError(CancellationError()))
    }

    @Test(
        "AsyncHTTPClient: a deadline against a slow origin, before its head or in its body, is a connectivity error and falls back"
    )
    func asyncHTTPClientDeadline() async throws {
        let origin = try await LoopbackOrigin.start()
        let clock = ManualCacheClock(start: Date())
        let cache = try makeCache(clock: clock, connectivity: HTTPCache.isAsyncHTTPClientConnectivityError)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            _ = try await cache.execute(HTTPRequest(method: .get, url: origin.url("/max-age/1")), on: client)
            clock.advance(by: 60)
            var slow = HTTPRequest(method: .get, url: origin.url("/max-age/1"))
            slow.headerFields[HTTPField.Name("X-Delay-Milliseconds")!] = "5000"
            let result = try await cache.execute(slow, on: client, timeout: .milliseconds(500))
            #expect(result.source == .staleFallback)
            // The deadline covers the body too: an origin that sends its head and then stalls.
            var stalled = HTTPRequest(method: .get, url: origin.url("/max-age/1"))
            stalled.headerFields[HTTPField.Name("X-Body-Delay-Milliseconds")!] = "5000"
            let afterStall = try await cache.execute(stalled, on: client, timeout: .milliseconds(500))
            #expect(afterStall.source == .staleFallback)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
        try await origin.stop()
    }
}

@Suite("AsyncHTTPClient adapter, end to end against a loopback origin", .serialized)
struct AsyncHTTPClientAdapterTests {
    @Test("A client that decompresses: the decoded body is stored and returned without Content-Encoding")
    func decompressingClient() async throws {
        let origin = try await LoopbackOrigin.start()
        let cache = try makeCache(clock: ManualCacheClock(start: Date()))
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: HTTPClient.Configuration(decompression: .enabled(limit: .none)))
        do {
            for _ in 0..<2 {
                let result = try await cache.execute(HTTPRequest(method: .get, url: origin.url("/gzip")), on: client)
                #expect(String(decoding: result.body, as: UTF8.self) == "hello, decoded world")
                #expect(result.response.headerFields[.contentEncoding] == nil, "decoded bytes labelled gzip")
                #expect(result.response.headerFields[.contentLength] == String(result.body.count))
            }
            #expect(origin.log.requests(to: "/gzip").count == 1, "the second answer came from the cache")
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
        try await origin.stop()
    }

    @Test("Hit, revalidation and offline fallback")
    func endToEnd() async throws {
        let origin = try await LoopbackOrigin.start()
        let clock = ManualCacheClock(start: Date())
        let cache = try makeCache(clock: clock, connectivity: HTTPCache.isAsyncHTTPClientConnectivityError)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let fresh = HTTPRequest(method: .get, url: origin.url("/max-age/60"))
            #expect(try await cache.execute(fresh, on: client).source == .network)
            #expect(try await cache.execute(fresh, on: client).source == .cache)

            let etag = HTTPRequest(method: .get, url: origin.url("/etag"))
            _ = try await cache.execute(etag, on: client)
            clock.advance(by: 1)
            let revalidated = try await cache.execute(etag, on: client)
            #expect(
                revalidated.source == .revalidated && String(decoding: revalidated.body, as: UTF8.self) == "etag body")

            let noStore = HTTPRequest(method: .get, url: origin.url("/no-store"))
            _ = try await cache.execute(noStore, on: client)
            #expect(
                String(decoding: try await cache.execute(noStore, on: client).body, as: UTF8.self) == "not stored 2")

            try await origin.stop()
            clock.advance(by: 3_600)
            let offline = try await cache.execute(fresh, on: client)
            #expect(offline.source == .staleFallback && offline.storedAt != nil)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    @Test("A client that follows redirects: the page it reaches is not stored under the redirect's URL")
    func redirects() async throws {
        let origin = try await LoopbackOrigin.start()
        let cache = try makeCache(clock: ManualCacheClock(start: Date()))
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let moved = HTTPRequest(method: .get, url: origin.url("/moved/302"))
            let first = try await cache.execute(moved, on: client)
            #expect(String(decoding: first.body, as: UTF8.self) == "response 1" && !first.wasStored)
            let second = try await cache.execute(moved, on: client)
            #expect(second.source == .network && String(decoding: second.body, as: UTF8.self) == "response 2")
            #expect(origin.log.requests(to: "/moved/302").count == 2)
            // Not redirected, the same page is stored as usual.
            let direct = HTTPRequest(method: .get, url: origin.url("/max-age/3600"))
            #expect(try await cache.execute(direct, on: client).wasStored)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }
}

@Suite("Combine adapter (OpenCombine on Linux)", .serialized)
struct CombineAdapterTests {
    @Test("The publisher delivers the stored response with its stored-at date when the network fails")
    func offlinePublisher() async throws {
        let origin = try await LoopbackOrigin.start()
        let clock = ManualCacheClock(start: Date())
        let cache = try makeCache(clock: clock, connectivity: HTTPCache.isURLConnectivityError)
        let transport = HTTPCache.urlSessionTransport(ephemeralSession())
        let request = HTTPRequest(method: .get, url: origin.url("/max-age/60"))
        _ = try await cache.response(for: request, transport: transport)
        try await origin.stop()
        clock.advance(by: 600)

        let values = try await collect(cache.publisher(for: request, transport: transport))
        #expect(values.count == 1)
        #expect(
            values.first?.source == .staleFallback && values.first?.storedAt != nil && values.first?.networkError != nil
        )
        await #expect(throws: URLError.self) {
            _ = try await collect(
                cache.publisher(for: HTTPRequest(method: .get, url: origin.url("/max-age/1")), transport: transport))
        }
    }
}

@Suite("Combine publishers: one fetch per subscription, values kept for the subscriber's demand")
struct CombinePublisherSubscriptionTests {
    /// A transport that fails its first `failures` exchanges, then answers `no-store` responses
    /// numbered by exchange (so nothing is served from the cache), counting every exchange.
    final class CountingTransport: Sendable {
        let exchanges = Locked(0)
        let failures: Int
        init(failures: Int = 0) { self.failures = failures }

        var transport: HTTPCache.Transport {
            { [self] _, _ in
                let number = exchanges.withLock { count -> Int in
                    count += 1
                    return count
                }
                if number <= failures { throw URLError(.notConnectedToInternet) }
                let response = HTTPResponse(status: .ok, headerFields: [.cacheControl: "no-store"])
                return (response, Data("exchange \(number)".utf8))
            }
        }
    }

    static let request = HTTPRequest(method: .get, url: URL(string: "http://origin.test/page")!)

    @Test("Each subscription to one publisher fetches for itself and gets its own value")
    func resubscribing() async throws {
        let cache = try makeCache(clock: ManualCacheClock(start: Date()))
        let counting = CountingTransport()
        let publisher = cache.publisher(for: Self.request, transport: counting.transport)
        let first = try await collect(publisher)
        let second = try await collect(publisher)
        #expect(first.map { String(decoding: $0.body, as: UTF8.self) } == ["exchange 1"])
        #expect(second.map { String(decoding: $0.body, as: UTF8.self) } == ["exchange 2"])
    }

    @Test("retry subscribes again and fetches again: a failure then a success publishes the success")
    func retrying() async throws {
        let cache = try makeCache(clock: ManualCacheClock(start: Date()))
        let counting = CountingTransport(failures: 1)
        let values = try await collect(
            cache.publisher(for: Self.request, transport: counting.transport).retry(1).eraseToAnyPublisher())
        #expect(values.map { String(decoding: $0.body, as: UTF8.self) } == ["exchange 2"])
        #expect(counting.exchanges.withLock { $0 } == 2)
    }

    @Test("Nothing is fetched before the subscriber asks, and a value waits for its demand")
    func demand() async throws {
        let cache = try makeCache(clock: ManualCacheClock(start: Date()))
        let counting = CountingTransport()
        let subscriber = ManualDemandSubscriber()
        cache.publisher(for: Self.request, transport: counting.transport).subscribe(subscriber)
        #expect(counting.exchanges.withLock { $0 } == 0)
        let values = await subscriber.request(.max(1))
        #expect(values.map { String(decoding: $0.body, as: UTF8.self) } == ["exchange 1"])
        #expect(counting.exchanges.withLock { $0 } == 1)
    }
}

/// A subscriber that asks for nothing until ``request(_:)``, which waits for the completion.
final class ManualDemandSubscriber: Subscriber, @unchecked Sendable {
    // The subscription and the continuation are set before any value can arrive (the publisher
    // starts on demand, which only `request` makes); values arrive one at a time.
    typealias Input = HTTPCacheResponse
    typealias Failure = any Error
    private var subscription: (any Subscription)?
    private var values: [HTTPCacheResponse] = []
    private var finished: CheckedContinuation<[HTTPCacheResponse], Never>?

    func receive(subscription: any Subscription) { self.subscription = subscription }
    func receive(_ input: HTTPCacheResponse) -> Subscribers.Demand {
        values.append(input)
        return .none
    }
    func receive(completion: Subscribers.Completion<any Error>) { finished?.resume(returning: values) }

    func request(_ demand: Subscribers.Demand) async -> [HTTPCacheResponse] {
        await withCheckedContinuation { continuation in
            finished = continuation
            subscription?.request(demand)
        }
    }
}

/// Everything a publisher sends, or its failure.
func collect(_ publisher: AnyPublisher<HTTPCacheResponse, any Error>) async throws -> [HTTPCacheResponse] {
    let box = CancellableBox()
    return try await withCheckedThrowingContinuation { continuation in
        var values: [HTTPCacheResponse] = []
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
final class CancellableBox: @unchecked Sendable {
    // Written once, before the subscription delivers anything; read by nobody.
    var cancellable: AnyCancellable?
}
