import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import Testing
import TierCache

@testable import HTTPCaching
@testable import HTTPCachingHummingbird

/// Identical requests at once make one call of the route, in the first request's task. When an
/// app's own timeout cancels that request while its route runs, the route has not answered: the
/// requests that joined the call must not be sent a 500 for it.
@Suite("HTTPCacheMiddleware when the request running the route is cancelled", .timeLimit(.minutes(2)))
struct HTTPCacheMiddlewareCancellationTests {
    @Test("A request that joined a cancelled request's route call runs the route itself")
    func joinedRequestOutlivesTheCancelledOne() async throws {
        let cache = HTTPCache(
            storage: TieredCache(tiers: [try MemoryTier(capacity: 1 << 20)]), configuration: .init(mode: .shared))
        let middleware = try HTTPCacheMiddleware<BasicRequestContext>(cache: cache)
        // A context needs a channel; nothing is sent through it.
        let channel = try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let context = BasicRequestContext(source: .init(channel: channel, logger: Logger(label: "test")))
        let head = HTTPRequest(method: .get, scheme: "http", authority: "example.com", path: "/slow")
        let (started, routeStarted) = AsyncStream.makeStream(of: Void.self)

        let first = Task {
            try await middleware.handle(Request(head: head, body: RequestBody(buffer: ByteBuffer())), context: context)
            {
                _, _ in
                routeStarted.yield()
                // The route runs until its request is cancelled.
                try await Task.sleep(for: .seconds(600))
                return Response(status: .ok)
            }
        }
        var iterator = started.makeAsyncIterator()
        await iterator.next()
        let second = Task {
            try await middleware.handle(Request(head: head, body: RequestBody(buffer: ByteBuffer())), context: context)
            {
                _, _ in
                Response(
                    status: .ok, headers: [.cacheControl: "max-age=60"],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: "the second request's own")))
            }
        }
        while cache.inFlight.joinCount < 1 { await Task.yield() }
        first.cancel()
        let response = try await second.value
        #expect(response.status == .ok)
        #expect(
            try await HTTPCacheMiddleware<BasicRequestContext>.collect(response.body)
                == Data("the second request's own".utf8))
        _ = await first.result
        try await channel.close()
    }
}
