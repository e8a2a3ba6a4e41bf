import Foundation
import HTTPCaching
import HTTPTypes
import Hummingbird
import NIOCore

/// A Hummingbird middleware that caches the responses of the app's own routes with an
/// `HTTPCache`: a fresh stored response is answered without running the route; a stale one is
/// revalidated through the route (which may answer 304 to the conditional request); unsafe
/// methods run the route and invalidate what they change (RFC 9111 §4.4).
///
/// ```swift
/// let cache = HTTPCache(storage: TieredCache(tiers: [memory]), configuration: .init(mode: .shared))
/// let router = Router()
/// router.add(middleware: try HTTPCacheMiddleware(cache: cache))
/// router.get("/report") { _, _ in
///     Response(status: .ok, headers: [.cacheControl: "max-age=60"], body: .init(byteBuffer: ByteBuffer(string: "…")))
/// }
/// ```
///
/// The route's response body is read whole before it is stored and sent (the tiers refuse what is
/// too large for them, counted in their statistics), unless its head shows the cache would not
/// keep it: a response to a GET announcing more than ``maximumCacheableBodyBytes``, a stream of
/// server-sent events (`text/event-stream`), or one the engine may not store (`no-store`,
/// `private` in a shared cache, a status it does not cache without a lifetime) goes to the client
/// as the route writes it, and identical requests that joined its call run the route themselves.
/// A body without `Content-Length` that the head does not mark so is still read whole: put the
/// middleware on a router group of cacheable routes rather than in front of streaming downloads.
///
/// A server's cache answers many users, so the engine must be in shared mode
/// (`HTTPCache.Mode.shared`): it then never stores `private` responses, nor responses to
/// requests with `Authorization` unless they say `public`, `s-maxage` or `must-revalidate` (RFC
/// 9111 §3.5). A route whose page depends on a session cookie must mark it `private`: a response
/// that says nothing about caching may be stored, and, with `Last-Modified`, served to others
/// while heuristically fresh. ``init(cache:scheme:maximumCacheableBodyBytes:)`` refuses an engine
/// in private mode (the engine's default, meant for clients);
/// ``init(singleUserCache:scheme:maximumCacheableBodyBytes:)`` accepts one, for a server that only
/// ever serves one user (an app's embedded server on a device).
///
/// A route that throws has answered, with its error's status (an `HTTPResponseError`'s, else
/// 500): the engine judges that as the origin's response, so a stale response stands in for it
/// only where `stale-if-error` allows, never as for an unreachable origin. When the error's answer
/// is the one sent, from the request's own call of the route, the error itself is thrown on to the
/// app's error handling, as without the cache; a request that shared that call (identical
/// requests at once make one) is sent the response the error stands for. A body that fails while
/// it is written is the route's failure too (a 500). A GET or HEAD whose `Host` is not
/// `host[:port]`, or that announces content (`Content-Length` or `Transfer-Encoding`), bypasses
/// the cache. (Over HTTP/2 a body need not be announced: a GET sending one without
/// `Content-Length` is cached as if it had none.)
///
/// Request fields a client could use to steer a route without changing the cache key (web cache
/// poisoning: a route that builds links from `X-Forwarded-Host`) are handled as follows: a GET or
/// HEAD with a method override (`X-HTTP-Method-Override` and the like) bypasses the cache; a
/// response to a request carrying `X-Forwarded-Host`, `-Proto`, `-Scheme`, `-Port`, `-Prefix` or
/// `-Server`, `X-Host`, `X-Original-Host`, `X-Original-URL` or `X-Rewrite-URL` varies on those
/// it carried (`Vary`, also sent to the client), so a value a client made up is served only to
/// requests with the same value. Behind a load balancer that sets them, the value is the same for
/// every request and no hits are lost. `Forwarded` (RFC 7239) carries the client's address beside
/// the host and scheme, so it cannot be varied on without a copy per client: a request whose
/// `Forwarded` names a `host=` or `proto=` bypasses the cache (behind a load balancer setting
/// those, set `X-Forwarded-Host` and `X-Forwarded-Proto` instead). `X-Forwarded-For` names only
/// the client and is not varied on: a route that builds responses from the client's address
/// must say so in its own `Vary` or mark them `private`.
///
/// Routes run in the request that needs them: a background revalidation
/// (`stale-while-revalidate`) cannot call a route after its request ended, so the stale response
/// keeps being served within its window and the first request after it revalidates.
///
/// Two things the engine does that an app behind a CDN should know: the tag fields
/// (`Surrogate-Key`, `Cache-Tag`) are taken out of the responses it answers, as a CDN takes them
/// out (keep them for a CDN in front with `HTTPCache.Tagging(removesFields: false)` in the engine's
/// configuration); and a client's request directives are obeyed as RFC 9111 §5.2.1 reads them
/// (`Cache-Control: no-cache` or `max-age=0` revalidates through the route), so any client can
/// have an expensive route run: put a rate limit in front of it where that matters.
public struct HTTPCacheMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The cache the responses are kept in.
    public let cache: HTTPCache
    /// The scheme of the cache keys (requests reach a server without one); `http` by default.
    public let scheme: String
    /// The largest body a route's response may announce (`Content-Length`) to be read and offered
    /// to the cache; a larger one streams to the client uncached. 8 MiB by default; 0 or less
    /// streams every response that announces content.
    public let maximumCacheableBodyBytes: Int

    /// A middleware storing responses in `cache`, a shared cache, with cache keys in `scheme`.
    ///
    /// - Throws: `HTTPCacheError` with code `privateCacheOnServer` when `cache` is in private mode,
    ///   which would serve one user's `private` or authorized responses to every user.
    public init(
        cache: HTTPCache, scheme: String = "http", maximumCacheableBodyBytes: Int = 8 << 20
    ) throws(HTTPCacheError) {
        try cache.requireSharedMode(for: "HTTPCacheMiddleware")
        self.cache = cache
        self.scheme = scheme
        self.maximumCacheableBodyBytes = maximumCacheableBodyBytes
    }

    /// A middleware for a server that only ever serves one user, whose `cache` may be in private
    /// mode (storing `private` responses and responses to authorized requests).
    ///
    /// Never use it in a server that more than one user reaches: every user would be served what
    /// the cache stored for another. ``init(cache:scheme:maximumCacheableBodyBytes:)`` is the
    /// initializer for everything else.
    public init(singleUserCache cache: HTTPCache, scheme: String = "http", maximumCacheableBodyBytes: Int = 8 << 20) {
        self.cache = cache
        self.scheme = scheme
        self.maximumCacheableBodyBytes = maximumCacheableBodyBytes
    }

    /// Answers `request` from the cache when a stored response may be used, else through `next`,
    /// storing what `next` returns when it may be stored.
    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var head = request.head
        head.scheme = scheme
        if head.authority == nil { head.authority = "localhost" }
        guard head.method == .get || head.method == .head else {
            let response = try await next(request, context)
            await cache.invalidate(after: head, response: response.head)
            return response
        }
        // A GET or HEAD with content (a search API's query in the body): the key cannot see it,
        // and the route would be called without it. It bypasses the cache.
        if head.announcesContent { return try await next(request, context) }
        // A Host that is not host[:port] (RFC 9112 §3.2) could name one origin to the route and
        // another to the key (`evil.example#@shop.example` is keyed as shop.example, whose users
        // would then be served what the route made for evil.example): it bypasses the cache. (An
        // unsafe method above still invalidates: removing is always safe.)
        // So does a Host the key writes otherwise than the route reads it (`SHOP.EXAMPLE`,
        // `shop.example:80`: a route redirecting to its canonical host would have its redirect
        // stored for the canonical host's users), and a target the key writes otherwise: with a
        // fragment, which an origin-form target never has (RFC 9112 §3.2) and the key drops while
        // the route reads it (`/posts/hello#x` would store the route's answer for `x` as
        // `/posts/hello`'s), or with bytes a URI may not hold, which the key percent-encodes while
        // the route reads them raw (`?tag[]=new` shares a key with `?tag%5B%5D=new`, in which the
        // route finds no `tag[]`).
        guard let authority = head.authority, Self.isHostAndPort(authority),
            HTTPCacheKey.keepsAuthorityAsWritten(authority, scheme: scheme),
            HTTPCacheKey.keepsTargetAsWritten(head.path ?? "/")
        else {
            return try await next(request, context)
        }
        // Fields steering the route that the key does not see (ClientRoutingFields): a method
        // override bypasses the cache; what the request says of the host, scheme, port or path is
        // added to the response's Vary, so that what the route made for one value answers only
        // requests with that value.
        guard case .vary(let routingFields) = ClientRoutingFields.steering(of: head.headerFields) else {
            return try await next(request, context)
        }
        // The engine calls the transport from its own tasks; the route must run here, in this
        // request's scope. Calls arrive as jobs and are served until the engine's answer is in.
        let (jobs, jobSink) = AsyncStream.makeStream(of: RouteCall.self)
        let transport: HTTPCache.Transport = { routeRequest, _ in
            try await withCheckedThrowingContinuation { continuation in
                // The request that could run the route has ended before its answer: it was
                // cancelled (an answer ends only after the calls it made). A request that joined
                // this call runs the route itself (below).
                if case .terminated = jobSink.yield(RouteCall(request: routeRequest, continuation: continuation)) {
                    continuation.resume(throwing: CancellationError())
                }
            }
        }
        let cache = self.cache
        let cacheRequest = head
        // No background revalidation: it would call the route after (or, racing the answer, in)
        // this request.
        async let answer = { () async throws -> HTTPCacheResponse in
            defer { jobSink.finish() }
            return try await HTTPCache.$revalidatesInBackground.withValue(false) {
                try await cache.response(for: cacheRequest, transport: transport)
            }
        }()
        // A route that throws has answered: the engine gets the response the error stands for
        // (a 500 for one that is not an `HTTPResponseError`), not a transport failure, which it
        // would answer with the stale response (RFC 9111 §4.2.4 allows that only when the origin
        // cannot be reached). When the answer sent is that response, from this request's own call
        // of the route, the error is thrown on, to the app's error handling, as if no cache were
        // there.
        var routeFailure: (error: any Error, status: HTTPResponse.Status)?
        // The route's response when it goes to the client as the route writes it, past the cache.
        var streamedPast: Response?
        for await call in jobs {
            let routeRequest = Request(head: call.request, body: RequestBody(buffer: ByteBuffer()))
            var routeResponse: Response
            let body: Data
            do {
                routeResponse = try await next(routeRequest, context)
                if streamsPastCache(routeResponse.head, answering: call.request) {
                    streamedPast = routeResponse
                    call.continuation.resume(throwing: RouteResponseStreamedPast())
                    continue
                }
                // Read here: a body that fails while it is written is the route's failure too.
                body = try await Self.collect(routeResponse.body)
                routeFailure = nil
            } catch _ where Task.isCancelled {
                // This request was cancelled (a timeout of the app's own): the route did not
                // answer. Not a 500 for the requests that joined this call, which run it again.
                call.continuation.resume(throwing: CancellationError())
                continue
            } catch {
                // The route has answered, with its error's response (not a transport failure,
                // which the engine would answer with a stale response as for an unreachable
                // origin). An error's `response(from:context:)` that throws, or a body that
                // fails, is a 500.
                routeResponse =
                    (try? (error as? any HTTPResponseError)?.response(from: routeRequest, context: context))
                    ?? Response(status: .internalServerError)
                body = (try? await Self.collect(routeResponse.body)) ?? Data()
                routeFailure = (error, routeResponse.status)
            }
            // A streamed body has no length in its head: the stored response gets one, which a
            // HEAD answered from it then keeps. A HEAD route's empty body says nothing of the
            // length (an explicit HEAD handler writes none): `Content-Length: 0` made the engine
            // judge the stored GET changed, and remove it. The engine keeps no body for a HEAD.
            let isHEAD = call.request.method == .head
            if routeResponse.headers[.contentLength] == nil, Self.hasContent(routeResponse.status),
                !(isHEAD && body.isEmpty)
            {
                routeResponse.headers[.contentLength] = String(body.count)
            }
            ClientRoutingFields.addVary(
                routingFields, to: &routeResponse.headers, to304: routeResponse.status == .notModified)
            call.continuation.resume(returning: (routeResponse.head, isHEAD ? Data() : body))
        }
        let result: HTTPCacheResponse
        do {
            result = try await answer
        } catch is CancellationError where !Task.isCancelled {
            // The request whose route call this one joined was cancelled before the route
            // answered: this one is not, and asks again (identical requests now joining it).
            return try await handle(request, context: context, next: next)
        } catch is RouteResponseStreamedPast {
            // This request's route answered with what the cache does not keep; a request that
            // joined its call runs the route itself, past the cache.
            guard var streamed = streamedPast else { return try await next(request, context) }
            ClientRoutingFields.addVary(routingFields, to: &streamed.headers, to304: false)
            return streamed
        }
        if var streamed = streamedPast {
            // (The engine answered anyway: the route's response is the one this request got.)
            ClientRoutingFields.addVary(routingFields, to: &streamed.headers, to304: false)
            return streamed
        }
        if let routeFailure, result.source == .network, result.response.status == routeFailure.status {
            throw routeFailure.error
        }
        var response = Response(status: result.response.status, headers: result.response.headerFields)
        // A HEAD answer keeps the stored GET's Content-Length (RFC 9110 §9.3.2): its body is
        // empty, the representation is not.
        if head.method == .get {
            response.body = ResponseBody(byteBuffer: ByteBuffer(bytes: result.body))
            // Not on a 204 or 304 (RFC 9110 §8.6: a 304's would have to be the stored response's).
            if Self.hasContent(result.response.status) { response.headers[.contentLength] = String(result.body.count) }
        }
        return response
    }

    /// Whether the route's `response` to `request` goes to the client as the route writes it,
    /// past the cache, judged by its head: a GET's response with content that announces more
    /// than ``maximumCacheableBodyBytes``, is a stream of server-sent events, or that the engine
    /// may not store. A 304 and a server error always reach the engine (which freshens a stored
    /// response with one, and may answer the other with a stale one, `stale-if-error`).
    func streamsPastCache(_ response: HTTPResponse, answering request: HTTPRequest) -> Bool {
        guard request.method == .get, Self.hasContent(response.status), response.status.code < 500 else { return false }
        if let length = response.headerFields[.contentLength].flatMap({ Int($0) }), length > maximumCacheableBodyBytes {
            return true
        }
        if let type = response.headerFields[.contentType],
            type.lowercased().trimmingCharacters(in: .whitespaces).hasPrefix("text/event-stream")
        {
            return true
        }
        return Storability.reasonNotToStore(
            request: request, requestDirectives: CacheControl(fieldValues: request.headerFields[values: .cacheControl]),
            response: response, directives: CacheControl(fieldValues: response.headerFields[values: .cacheControl]),
            shared: cache.configuration.mode == .shared) != nil
    }

    /// Whether a response of `status` has content whose length `Content-Length` states: not
    /// 1xx, 204 or 304 (RFC 9110 §8.6).
    static func hasContent(_ status: HTTPResponse.Status) -> Bool {
        status.code >= 200 && status.code != 204 && status.code != 304
    }

    /// Whether `authority` is `host[:port]`, with no user information, path, query or fragment
    /// in it: reg-name, IPv4 and IP-literal characters and the port's colon (RFC 3986 §3.2).
    static func isHostAndPort(_ authority: String) -> Bool {
        !authority.isEmpty
            && authority.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    return true
                default:
                    return "-._~%!$&'()*+,;=:[]".utf8.contains(byte)
                }
            }
    }

    /// The whole body of a route's response.
    static func collect(_ body: ResponseBody) async throws -> Data {
        let collector = BodyCollector()
        try await body.write(CollectingWriter(collector: collector))
        return Data(collector.buffer.readableBytesView)
    }
}

/// What the engine's call of the route gets when the route's response goes to the client past
/// the cache (`HTTPCacheMiddleware.streamsPastCache(_:answering:)`).
private struct RouteResponseStreamedPast: ResponseSentPastCache {}

/// One call of the route, asked for by the engine.
private struct RouteCall: Sendable {
    let request: HTTPRequest
    let continuation: CheckedContinuation<(HTTPResponse, Data), any Error>
}

/// Where ``CollectingWriter`` puts a route's response body; used by one task.
private final class BodyCollector {
    var buffer = ByteBuffer()
}

private struct CollectingWriter: ResponseBodyWriter {
    let collector: BodyCollector

    mutating func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        collector.buffer.writeBuffer(&buffer)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
