import AsyncHTTPClient
import Foundation
import HTTPCaching
import HTTPCachingAsyncHTTPClient
import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1
import TierCache

/// A caching reverse proxy: an `HTTPCache` (shared mode by default) between HTTP clients and one
/// origin server.
///
/// ```swift
/// let proxy = try CachingProxy(
///     configuration: .init(upstream: try .init("http://127.0.0.1:9000"), port: 8080),
///     storage: TieredCache(tiers: [try MemoryTier(capacity: 256 << 20)]))
/// try await proxy.run()                      // until SIGTERM or SIGINT; in-flight requests finish
/// ```
///
/// Every response carries `Via` and `Cache-Status` (RFC 9211); responses from storage carry `Age`.
/// Hop-by-hop fields are removed both ways (RFC 9110 §7.6.1). A client's conditional GET is
/// answered 304 from storage when the stored response matches. HEAD is answered from a stored
/// GET (a HEAD miss fetches the GET, as nginx does). Responses larger than
/// ``Configuration/maximumCacheableBodyBytes`` stream through uncached; so do range requests.
/// The origin unreachable gives 502, too slow 504, unless a stale response may stand in.
public final class CachingProxy: Sendable {
    /// The proxy's settings.
    public let configuration: Configuration
    /// The cache engine between clients and the origin.
    public let cache: HTTPCache
    let upstream: UpstreamTransport
    let logger: Logger
    let metrics: ProxyMetrics
    let via: String
    let memo = AnswerMemo()
    /// The value of ``missingHostMark`` in this process: random, so that no client can send it.
    let missingHostToken = String(UInt64.random(in: 1...UInt64.max), radix: 36)
    /// The buffered answer bodies being sent, within ``Configuration/maximumAnswerBytesInFlight``.
    let answerBudget: AnswerBudget

    /// The client this proxy created (and must shut down), when none was given.
    private let ownedClient: HTTPClient?

    /// Creates a proxy. `cacheConfiguration` is shared mode by default, and must be, unless
    /// ``Configuration/servesSingleUser`` says the proxy only ever serves one user; the proxy makes
    /// sure a response too large to cache never counts as a network failure.
    ///
    /// - Parameters:
    ///   - configuration: the origin, the listening address and the proxy's limits.
    ///   - storage: the tiers responses are stored in.
    ///   - cacheConfiguration: the HTTP cache's rules.
    ///   - httpClient: the client for the origin; by default one made by
    ///     ``makeUpstreamClient(_:)`` and shut down by ``shutdown()``. A client of your own must
    ///     not follow redirects or decompress bodies (a proxy passes both on as they are).
    ///   - logger: where the proxy logs each request (at `info`) and failures of the origin.
    /// - Throws: ``CachingProxyError`` for invalid settings, and for a cache in private mode in a
    ///   proxy that does not serve a single user.
    public init(
        configuration: Configuration, storage: TieredCache,
        cacheConfiguration: HTTPCache.Configuration = HTTPCache.Configuration(
            mode: .shared, isConnectivityError: HTTPCache.isAsyncHTTPClientConnectivityError),
        httpClient: HTTPClient? = nil, logger: Logger = Logger(label: "tiercache.proxy")
    ) throws(CachingProxyError) {
        try configuration.validate()
        var targeted: HTTPField.Name?
        if let name = configuration.targetedCacheControl {
            guard let fieldName = HTTPField.Name(name) else { throw CachingProxyError("'\(name)' is not a field name") }
            targeted = fieldName
        }
        self.configuration = configuration
        let cache = HTTPCache(storage: storage, configuration: cacheConfiguration)
        if !configuration.servesSingleUser {
            // The engine's own check, as the middleware makes it: a proxy answers many users.
            do throws(HTTPCacheError) {
                try cache.requireSharedMode(for: "CachingProxy")
            } catch {
                throw CachingProxyError(error.message + " (for the proxy: `Configuration.servesSingleUser`)")
            }
        }
        self.cache = cache
        self.metrics = ProxyMetrics()
        self.answerBudget = AnswerBudget(limit: configuration.maximumAnswerBytesInFlight)
        self.ownedClient = httpClient == nil ? Self.makeUpstreamClient(configuration) : nil
        self.upstream = UpstreamTransport(
            client: httpClient ?? ownedClient ?? .shared, timeout: configuration.upstreamTimeout,
            bufferLimit: configuration.maximumCacheableBodyBytes,
            targetedCacheControl: targeted, latency: metrics.upstreamLatency)
        self.logger = logger
        self.via = "1.1 \(configuration.name)"
    }

    /// A client for the origin as a proxy needs one: redirects and bodies passed on untouched,
    /// one connection attempt per request (a refused connection is a 502 at once, not retried
    /// until the deadline), connections bounded by the upstream timeout, and no wait for the
    /// origin's next bytes longer than it (an origin that sends its head, then stalls, is a 504,
    /// not a request and its coalesced followers held for good).
    public static func makeUpstreamClient(_ configuration: Configuration) -> HTTPClient {
        var client = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(
                connect: min(configuration.upstreamTimeout, .seconds(10)), read: configuration.upstreamTimeout),
            decompression: .disabled)
        client.connectionPool.retryConnectionEstablishment = false
        client.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        client.httpVersion = .http1Only
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: client)
    }

    /// Shuts down the client the proxy made for the origin (after the server stopped).
    public func shutdown() async throws {
        try await ownedClient?.shutdown()
    }

    /// One line describing the running configuration, for the start-up log.
    ///
    /// - Parameter tierCapacities: The capacity of each of the storage's tiers, in their order,
    ///   as configured. Without them each tier is asked its `usage()`, which for a
    ///   Redis tier reads the length of every key on the server before the line is ready.
    public func summary(tierCapacities: [Int]? = nil) async -> String {
        var tiers: [String] = []
        for (index, tier) in cache.storage.tiers.enumerated() {
            let capacity: Int?
            if let tierCapacities, tierCapacities.indices.contains(index) {
                capacity = tierCapacities[index]
            } else {
                capacity = try? await tier.usage().capacity
            }
            tiers.append(tier.name + (capacity.map { " " + ByteCount.format($0) } ?? ""))
        }
        let mode = cache.configuration.mode == .shared ? "shared" : "private"
        // An IPv6 address in brackets, as `--listen` takes it (`::1:8080` reads as a host `::1:8080`).
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        let listenAddress = "\(host):\(configuration.port)"
        var line =
            "tiercache proxy: \(listenAddress) -> \(configuration.upstream), \(mode) cache, tiers [\(tiers.joined(separator: ", "))]"
        line += ", cacheable bodies up to \(ByteCount.format(configuration.maximumCacheableBodyBytes))"
        if let targeted = configuration.targetedCacheControl { line += ", targeted cache control \(targeted)" }
        return line
    }

    // MARK: Requests

    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    /// Answers one request from a client (the path for everything the event loop did not answer
    /// from storage, see ``CacheHitFastPath``).
    func respond(to request: Request, writer: consuming ResponseWriter, client: String? = nil) async throws {
        let started = ContinuousClock.now
        var answer = await answer(request, client: client)
        var reserved = 0
        if case .buffered(let body) = answer.body {
            if answerBudget.reserve(body.readableBytes) {
                reserved = body.readableBytes
            } else if Invalidation.safeMethods.contains(request.head.method) {
                answer = overloadedAnswer()
            } else {
                // The origin has acted on an unsafe request: a 503 would tell the client it had
                // not (RFC 9110 §15.6.4), and a retried POST runs twice. Its answer goes out, past
                // the budget, which the answers after it then find used up.
                answerBudget.reserveRegardless(body.readableBytes)
                reserved = body.readableBytes
            }
        }
        // Returned once the writer has taken the last slice (it waits for the client as it goes).
        defer { answerBudget.release(reserved) }
        var sent = 0
        switch answer.body {
        case .buffered(let body):
            sent = body.readableBytes
            try await writer.write(
                response: answer.head, body: sent == 0 ? ResponseBody() : ResponseBody(contentsOf: body.writeSlices))
        case .streamed(let oversized):
            var bodyWriter = try await writer.writeHead(answer.head)
            do {
                while let chunk = try await oversized.next() {
                    sent += chunk.readableBytes
                    try await bodyWriter.write(chunk)
                }
                try await bodyWriter.finish(nil)
            } catch {
                // The client sees a connection closed early; the operator sees it here.
                metrics.abortedResponses.increment()
                logger.notice(
                    "response cut off after \(sent) bytes",
                    metadata: ["path": "\(request.head.path ?? "")", "error": "\(error)"])
                record(answer, for: request.head, bytesSent: sent, started: started)
                throw error
            }
        }
        record(answer, for: request.head, bytesSent: sent, started: started)
    }

    /// The 503 for an answer that would take the bodies in flight past
    /// ``Configuration/maximumAnswerBytesInFlight``.
    func overloadedAnswer() -> Answer {
        metrics.answersRefusedForMemory.increment()
        var answer = errorAnswer(.serviceUnavailable, "too many answers are being sent; try again")
        answer.head.headerFields[.retryAfter] = "1"
        return answer
    }

    /// Counts and logs one answered request.
    func record(_ answer: Answer, for request: HTTPRequest, bytesSent: Int, started: ContinuousClock.Instant) {
        record(
            answer.outcome, method: request.method.rawValue, path: request.path ?? "", status: answer.head.status.code,
            cacheStatus: answer.head.headerFields[values: CacheStatus.fieldName].last, bytesSent: bytesSent,
            started: started)
    }

    /// Counts and logs one answered request.
    func record(
        _ outcome: ProxyMetrics.Outcome, method: String, path: String, status: Int,
        cacheStatus: @autoclosure () -> String?,
        bytesSent: Int,
        started: ContinuousClock.Instant
    ) {
        metrics.count(outcome)
        metrics.bytesSent.increment(by: bytesSent)
        guard logger.logLevel <= .info else { return }
        let elapsed = started.duration(to: .now).components
        logger.info(
            "\(method) \(path) \(status) \(bytesSent)B",
            metadata: [
                // Read only when logged (the proxy's own member, the last: upstream caches' come first).
                "cache_status": "\(cacheStatus() ?? "")",
                "duration_us": "\(elapsed.seconds * 1_000_000 + elapsed.attoseconds / 1_000_000_000_000)",
            ])
    }

    /// A request as it goes to the cache and the origin.
    struct Forwarding: Sendable {
        /// To the upstream: its URL, forwarded fields, `Via`, and HEAD as GET (a HEAD is answered
        /// from the GET's stored response; a miss fetches the GET, as nginx does).
        var outgoing: HTTPRequest
        /// The client's own conditional fields, evaluated by the proxy.
        var preconditions: ClientPreconditions?
        /// Whether `Cache-Status` should carry the cache key.
        var wantsKey: Bool
        /// What the client routing fields kept for the origin ask of the cache
        /// (``CachingProxy/Configuration/forwardsClientRoutingFields``): nothing when they are
        /// removed.
        var steering = ClientRoutingFields.Steering.vary([])
    }

    /// The checks that come before anything else (header size, method, target form) and the
    /// request to forward; or the error answer.
    /// `addingVia: false` leaves out the `Via` field, for a lookup that will not reach the origin.
    /// `client`, the client's address, goes to the origin in `X-Forwarded-For`.
    func prepare(_ head: HTTPRequest, addingVia: Bool = true, client: String? = nil) -> Result<Forwarding, AnswerError>
    {
        var headerBytes = head.path?.utf8.count ?? 0
        var hasRoutingFields = false
        var hasSecondHost = false
        var lacksHost = false
        for field in head.headerFields {
            headerBytes += field.name.rawName.utf8.count + field.value.utf8.count + 4
            if ClientRoutingFields.contains(field.name) { hasRoutingFields = true }
            if field.name.canonicalName == "host" { hasSecondHost = true }
            if field.name == Self.missingHostMark, field.value == missingHostToken { lacksHost = true }
        }
        guard headerBytes <= configuration.maximumRequestHeaderBytes else {
            return .failure(
                AnswerError(
                    answer: errorAnswer(
                        .init(code: 431, reasonPhrase: "Request Header Fields Too Large"),
                        "request header section over \(configuration.maximumRequestHeaderBytes) bytes")))
        }
        // RFC 9112 §3.2: a request with more than one Host field gets 400. The first became the
        // authority; a second one is left among the fields.
        guard !hasSecondHost else {
            return .failure(AnswerError(answer: errorAnswer(.badRequest, "more than one Host field")))
        }
        // And an HTTP/1.1 request with none (marked by the connection's handler, which knows the
        // version, with this process's token: a client's own mark, were the handler missing, is
        // not one).
        guard !lacksHost else {
            return .failure(AnswerError(answer: errorAnswer(.badRequest, "an HTTP/1.1 request needs a Host field")))
        }
        // `utf8.first`, not `hasPrefix`: with Foundation imported, `hasPrefix` resolved to a
        // `range(of:)` search that cost 3.5% of a hit.
        guard head.method != .connect, let path = head.path, path.utf8.first == UInt8(ascii: "/") else {
            return .failure(
                AnswerError(
                    answer: errorAnswer(
                        .badRequest, "only origin-form requests are forwarded (this proxy is not an open proxy)")))
        }
        // Under an upstream path prefix, `/../admin` would reach `/public/../admin`, which an origin
        // that resolves dot segments serves as `/admin`: out of the prefix.
        if !configuration.upstream.pathPrefix.isEmpty, Self.hasDotSegment(path) {
            return .failure(
                AnswerError(
                    answer: errorAnswer(.badRequest, "a path with . or .. segments would leave the upstream's prefix")))
        }
        var outgoing = HTTPRequest(
            method: head.method == .head && configuration.convertsHEADToGET ? .get : head.method,
            scheme: configuration.upstream.scheme,
            authority: configuration.upstream.authority, path: configuration.upstream.pathPrefix + path,
            headerFields: Self.forwardedFields(
                hasRoutingFields && !configuration.forwardsClientRoutingFields
                    ? ClientRoutingFields.removing(from: head.headerFields) : head.headerFields))
        if addingVia { outgoing.headerFields.append(HTTPField(name: .via, value: via)) }
        if let client {
            // The origin learns who asked (its logs, its rate limits), as from Varnish: the
            // client's own `X-Forwarded-For` was removed with the other routing fields, or, kept
            // for the origin behind a proxy that sets them, gets this address appended.
            let earlier = outgoing.headerFields[values: Self.forwardedFor]
            outgoing.headerFields[values: Self.forwardedFor] = [(earlier + [client]).joined(separator: ", ")]
        }
        let preconditions = ClientPreconditions.extract(from: &outgoing)
        var forwarding = Forwarding(
            outgoing: outgoing, preconditions: preconditions,
            wantsKey: configuration.exposesCacheKeys && head.headerFields[Self.cacheKeyRequest] != nil)
        if hasRoutingFields, configuration.forwardsClientRoutingFields {
            forwarding.steering = ClientRoutingFields.steering(of: head.headerFields)
        }
        // A GET or HEAD with content (a search API's query in its body) goes past the cache,
        // with its body: it was dropped, and the answer to the bare URL stored for every query.
        if head.method == .get || head.method == .head, head.announcesContent { forwarding.steering = .bypass }
        return .success(forwarding)
    }

    /// Whether `target`'s path (before any query) has a `.` or `..` segment, plain or
    /// percent-encoded (`%2e`), alone or before `;` parameters (`..;`: Tomcat, Jetty and Spring
    /// drop a segment's parameters and then resolve the dots). Segments end at `/`, and at what
    /// origins decode into one or read as one: `%2f`, `%5c` and `\` (IIS and ASP.NET, Tomcat
    /// with encoded slashes allowed, Apache with `AllowEncodedSlashes`), so `/..%2fadmin` counts.
    ///
    /// One pass over the bytes, allocating nothing: it runs on every request, hits included,
    /// when the upstream has a path prefix.
    static func hasDotSegment(_ target: String) -> Bool {
        var dots = 0  // the segment's dots so far, `.` or `%2e`
        var other = false  // whether the segment has anything else
        var escape: UInt8 = 0  // the escape under way: 0, `%`, or `%` and its first digit, `2` or `5`
        for byte in target.utf8 {
            if byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
            let lower = byte | 0x20
            let endsSegment =
                switch escape {
                case 0: byte == UInt8(ascii: "/") || byte == UInt8(ascii: "\\")
                case UInt8(ascii: "2"): lower == UInt8(ascii: "f")
                case UInt8(ascii: "5"): lower == UInt8(ascii: "c")
                default: false
                }
            if endsSegment {
                if !other, dots == 1 || dots == 2 { return true }
                (dots, other, escape) = (0, false, 0)
                continue
            }
            if byte == UInt8(ascii: ";"), !other {
                if escape == 0, dots == 1 || dots == 2 { return true }
                other = true  // the parameters that follow are not part of the segment's name
                continue
            }
            switch (escape, lower) {
            case (0, _) where byte == UInt8(ascii: "."): dots += 1
            case (0, _) where byte == UInt8(ascii: "%"): escape = UInt8(ascii: "%")
            case (UInt8(ascii: "%"), _) where byte == UInt8(ascii: "2") || byte == UInt8(ascii: "5"): escape = byte
            case (UInt8(ascii: "2"), UInt8(ascii: "e")):
                dots += 1
                escape = 0
            default:
                other = true
                escape = 0
            }
        }
        return !other && escape == 0 && (dots == 1 || dots == 2)
    }

    /// An answer from storage at the HTTP/1 level, as the event-loop path writes it.
    struct StorageAnswer {
        var head: HTTPResponseHead
        var body: ByteBuffer
        var outcome: ProxyMetrics.Outcome
    }

    /// The answer from the memory tiers, found without suspending, when a stored response may be
    /// used as it is; `nil` when the request needs the full path (a miss, revalidation, a body, a
    /// range, a response stored only in a tier below memory, which that path reads and promotes).
    /// Repeated plain hits reuse the answer (``AnswerMemo``).
    func answerFromStorage(_ head: HTTPRequestHead) -> StorageAnswer? {
        let now = ContinuousClock.now
        let generation = cache.storageGeneration
        // Kept routing fields may ask to bypass the cache or select a variant (`prepare`), which
        // a reused answer would not hear.
        let memoKey =
            configuration.forwardsClientRoutingFields
                && head.headers.contains(where: { ClientRoutingFields.steersCache(named: $0.name) })
            ? nil : AnswerMemo.key(for: head, maximumHeaderBytes: configuration.maximumRequestHeaderBytes)
        if let memoKey, let reused = memo.answer(forKey: memoKey, generation: generation, now: now) {
            cache.countReusedHits()
            return StorageAnswer(head: reused.head, body: reused.body, outcome: .hit)
        }
        guard let request = try? HTTPRequest(head, secure: false, splitCookie: false),
            let (answer, reuseWindow) = answerFromStorage(request), case .buffered(let body) = answer.body
        else { return nil }
        let responseHead = HTTPResponseHead(answer.head)
        if let memoKey, let reuseWindow {
            memo.remember(
                AnswerMemo.Entry(
                    head: responseHead, body: body, generation: generation, validUntil: now + .seconds(reuseWindow)),
                forKey: memoKey)
        }
        return StorageAnswer(head: responseHead, body: body, outcome: answer.outcome)
    }

    /// ``answerFromStorage(_:)-(HTTPRequestHead)`` in HTTP types, and for how many seconds the
    /// answer may be reused (while its `Age` and `Cache-Status` ttl read the same and it is fresh;
    /// `nil` when it may not be: not a plain hit, or the response varies).
    func answerFromStorage(_ head: HTTPRequest) -> (Answer, reuseWindow: Double?)? {
        guard head.method == .get || head.method == .head,
            case .success(let forwarding) = prepare(head, addingVia: false), forwarding.steering != .bypass,
            forwarding.outgoing.headerFields[.range] == nil,
            let result = cache.usableStoredResponseInMemory(for: forwarding.outgoing)
        else { return nil }
        let answer = cachedAnswer(result, request: head, forwarding: forwarding)
        guard answer.outcome == .hit, result.response.headerFields[.vary] == nil, let age = result.age,
            let lifetime = result.freshnessLifetime
        else { return (answer, nil) }
        let remaining = lifetime - age
        let window = min(1 - (age - age.rounded(.down)), remaining - remaining.rounded(.down), remaining)
        return (answer, window > 0 ? window : nil)
    }

    /// What to send for `request`, from the client at address `client`.
    func answer(_ request: Request, client: String? = nil) async -> Answer {
        let head = request.head
        var forwarding: Forwarding
        switch prepare(head, client: client) {
        case .success(let prepared): forwarding = prepared
        case .failure(let failure): return failure.answer
        }
        if head.method == Self.purgeMethod, let token = configuration.purgeToken {
            return await purgeAnswer(head, outgoing: forwarding.outgoing, token: token)
        }
        var body: Data?
        if head.method != .get && head.method != .head || head.announcesContent {
            switch await collectBody(of: request) {
            case .success(let collected): body = collected
            case .failure(let failure): return failure.answer
            }
        }
        var outgoing = forwarding.outgoing
        if outgoing.headerFields[.range] != nil {
            if head.method == .head {
                // Range is defined for GET only (RFC 9110 §14.2); the proxy fetches a HEAD as a GET.
                outgoing.headerFields[values: .range] = []
                outgoing.headerFields[values: .ifRange] = []
            } else if let preconditions = forwarding.preconditions {
                // The engine cuts the range from the whole response, after the client's own
                // preconditions (a 304 comes before a 206, RFC 9110 §13.2.2): it evaluates them.
                outgoing = preconditions.restored(into: outgoing)
                forwarding.preconditions = nil
            }
        }
        // Routing fields kept for the origin (behind a proxy that sets them) are handled as the
        // middleware handles them: a GET or HEAD overriding its method goes past the cache, and a
        // response is stored varying on the fields naming what the client reached, so that a
        // value a client made up (one the proxy in front does not set) answers only its requests.
        var transport = upstream.transport
        switch forwarding.steering {
        case .bypass where head.method == .get || head.method == .head:
            return await bypass(head, outgoing: outgoing, body: body, preconditions: forwarding.preconditions)
        case .vary(let names) where !names.isEmpty:
            transport = upstream.varying(on: names)
        default:
            break
        }
        do {
            let result = try await cache.response(for: outgoing, body: body, transport: transport)
            return cachedAnswer(result, request: head, forwarding: forwarding)
        } catch let oversized as OversizedResponse {
            guard oversized.claim() else {
                // A coalesced fetch handed this body to another request: fetch it again.
                return await bypass(head, outgoing: outgoing, body: body, preconditions: forwarding.preconditions)
            }
            var status = CacheStatus(cacheName: configuration.name)
            status.forward = head.method == .get || head.method == .head ? .uriMiss : .method
            status.detail = "too-large"
            // The client's validators were taken out of what went to the origin: they are
            // answered here, as for a stored response (RFC 9110 §13.1.2).
            return streamedAnswer(oversized, request: head, status: status, preconditions: forwarding.preconditions)
        } catch {
            return upstreamFailure(error)
        }
    }

    /// Forwards a request past the cache and streams the response back.
    private func bypass(
        _ head: HTTPRequest, outgoing: HTTPRequest, body: Data?, preconditions: ClientPreconditions?
    ) async -> Answer {
        var outgoing = outgoing
        outgoing.method = head.method
        if let preconditions {
            outgoing.headerFields[values: .ifNoneMatch] = preconditions.ifNoneMatch
            if let since = preconditions.ifModifiedSince {
                outgoing.headerFields[.ifModifiedSince] = HTTPDate.format(since)
            }
        }
        do {
            let (responseHead, response) = try await upstream.send(outgoing, body: body)
            var status = CacheStatus(cacheName: configuration.name)
            status.forward = .bypass
            let oversized = OversizedResponse(
                head: responseHead, buffered: ByteBuffer(), rest: response.body.makeAsyncIterator())
            _ = oversized.claim()
            return streamedAnswer(oversized, request: head, status: status)
        } catch {
            return upstreamFailure(error)
        }
    }

    // MARK: Building answers

    /// A response to send: its head, and its body in memory or still streaming from the origin.
    struct Answer: Sendable {
        enum Body: Sendable {
            case buffered(ByteBuffer)
            case streamed(OversizedResponse)
        }

        var head: HTTPResponse
        var body: Body
        var outcome: ProxyMetrics.Outcome
    }

    /// The name of the request field that asks for the cache key in `Cache-Status`, answered only
    /// under ``Configuration/exposesCacheKeys`` (and never forwarded).
    public static let cacheKeyRequest = HTTPField.Name("TierCache-Debug-Key")!

    /// The field `CacheHitFastPath` adds to an HTTP/1.1 request that came without `Host`, with
    /// ``missingHostToken`` as its value, for ``prepare(_:addingVia:client:)`` to refuse (a
    /// client's own is removed first).
    static let missingHostMark = HTTPField.Name(missingHostMarkName.description)!
    /// ``missingHostMark``'s name, lower-case, as the connection's handler compares it.
    static let missingHostMarkName: StaticString = "tiercache-missing-host"

    private func cachedAnswer(_ result: HTTPCacheResponse, request: HTTPRequest, forwarding: Forwarding) -> Answer {
        let outgoing = forwarding.outgoing
        var status = CacheStatus(cacheName: configuration.name)
        let outcome: ProxyMetrics.Outcome
        switch result.source {
        case .cache:
            status.hit = true
            outcome = .hit
        case .staleWhileRevalidate:
            status.hit = true
            status.detail = "stale-while-revalidate"
            outcome = .staleWhileRevalidate
        case .revalidated:
            status.forward = CacheStatus.forward(ofRevalidated: result)
            status.forwardStatus = 304
            outcome = .revalidated
        case .staleFallback:
            status.forward = .stale
            status.detail = "stale-on-error"
            outcome = .staleOnError
        case .unsatisfiable:
            // The proxy's own 504: neither a hit nor sent forward.
            status.detail = "only-if-cached"
            outcome = .error
        case .network:
            if request.method != .get && request.method != .head {
                status.forward = .method
            } else {
                status.forward = CacheStatus.forward(
                    ofNetworkResponse: result,
                    requestDirectives: CacheControl(fieldValues: outgoing.headerFields[values: .cacheControl]))
            }
            status.forwardStatus = result.response.status.code
            status.stored = result.wasStored
            outcome = .miss
        }
        if result.source.isFromCache || result.wasStored { status.ttl = timeToLive(of: result) }
        if forwarding.wantsKey { status.key = cache.configuration.key(outgoing) }

        // Hop-by-hop fields are gone already: the transport removes them from every origin
        // response, before the cache stores it.
        var head = result.response
        UpstreamTransport.restoringOriginFields(&head.headerFields)
        head.headerFields.append(HTTPField(name: .via, value: via))
        Self.addCacheStatus(status, to: &head.headerFields)
        if let preconditions = forwarding.preconditions,
            preconditions.notModified(head, isStored: result.source.isFromCache)
        {
            return Answer(
                head: Self.notModified(answering: head), body: .buffered(ByteBuffer()), outcome: .notModified)
        }
        // A HEAD answered by a HEAD response keeps that response's Content-Length: its body is
        // empty, but it describes the GET's.
        if forwarding.outgoing.method != .head { head.headerFields[.contentLength] = String(result.body.count) }
        let body = request.method == .head ? ByteBuffer() : ByteBuffer(bytes: result.body)
        return Answer(head: head, body: .buffered(body), outcome: outcome)
    }

    /// The answer streaming `oversized` from the origin, or a 304 when the client's own
    /// `preconditions` (taken out of the request the origin got) say it has it. An answer without
    /// the body leaves it unread: AsyncHTTPClient ends that request.
    private func streamedAnswer(
        _ oversized: OversizedResponse, request: HTTPRequest, status: CacheStatus,
        preconditions: ClientPreconditions? = nil
    ) -> Answer {
        var head = oversized.head
        var status = status
        status.forwardStatus = head.status.code
        UpstreamTransport.restoringOriginFields(&head.headerFields)
        // The engine takes tags out of the responses it returns; these never went through it.
        cache.configuration.tagging.removeFields(from: &head.headerFields)
        head.headerFields.append(HTTPField(name: .via, value: via))
        Self.addCacheStatus(status, to: &head.headerFields)
        if let preconditions, preconditions.notModified(head) {
            return Answer(
                head: Self.notModified(answering: head), body: .buffered(ByteBuffer()), outcome: .notModified)
        }
        if request.method == .head { return Answer(head: head, body: .buffered(ByteBuffer()), outcome: .bypass) }
        return Answer(head: head, body: .streamed(oversized), outcome: .bypass)
    }

    /// Seconds of freshness left (negative when stale), as `Cache-Status` reports it.
    private func timeToLive(of result: HTTPCacheResponse) -> Int {
        let response = result.response
        let lifetime =
            result.freshnessLifetime
            ?? Freshness.lifetime(
                of: response, directives: CacheControl(fieldValues: response.headerFields[values: .cacheControl]),
                responseTime: cache.configuration.clock.now(), shared: cache.configuration.mode == .shared,
                heuristics: cache.configuration.heuristics)
        let remaining = lifetime - (result.age ?? 0)
        return Int(max(min(remaining, Double(Int32.max)), Double(Int32.min)).rounded(.down))
    }

    private func upstreamFailure(_ error: any Error) -> Answer {
        if let invalid = error as? CachingProxyError {
            // The request could not be turned into one for the origin (a target that is no URL).
            return errorAnswer(.badRequest, invalid.message)
        }
        if let clientError = error as? HTTPClientError,
            [.deadlineExceeded, .readTimeout, .connectTimeout, .getConnectionFromPoolTimeout].contains(clientError)
        {
            return errorAnswer(.gatewayTimeout, "the origin did not answer in time")
        }
        if let invalid = error as? HTTPCacheError, invalid.code == .invalidResponse {
            logger.warning("upstream response refused", metadata: ["error": "\(invalid.message)"])
            return errorAnswer(.badGateway, "the origin's response could not be served")
        }
        logger.warning("upstream request failed", metadata: ["error": "\(error)"])
        return errorAnswer(.badGateway, "the origin could not be reached")
    }

    /// Adds the proxy's member to `Cache-Status` after those of the caches upstream, which stay
    /// (RFC 9211 §2: the list runs from the origin's side to the client's, and a cache adding
    /// its member SHOULD keep the others, for debugging the whole chain).
    static func addCacheStatus(_ status: CacheStatus, to fields: inout HTTPFields) {
        fields.append(HTTPField(name: CacheStatus.fieldName, value: status.description))
    }

    /// The 304 that stands for `head` (a 200 the client's own validators match), with the
    /// proxy's `Via` and `Cache-Status`, which every answer carries.
    static func notModified(answering head: HTTPResponse) -> HTTPResponse {
        var notModified = ClientPreconditions.notModifiedResponse(for: head)
        for name in [HTTPField.Name.via, CacheStatus.fieldName] {
            notModified.headerFields[values: name] = head.headerFields[values: name]
        }
        return notModified
    }

    func errorAnswer(_ status: HTTPResponse.Status, _ message: String) -> Answer {
        let body = ByteBuffer(string: "\(status.code) \(status.reasonPhrase): \(message)\n")
        var cacheStatus = CacheStatus(cacheName: configuration.name)
        cacheStatus.detail = "proxy-error"
        let head = HTTPResponse(
            status: status,
            headerFields: [
                .contentType: "text/plain; charset=utf-8", .contentLength: String(body.readableBytes), .via: via,
                CacheStatus.fieldName: cacheStatus.description,
            ])
        return Answer(head: head, body: .buffered(body), outcome: .error)
    }

    // MARK: Requests to the origin

    /// The request's fields as forwarded: without hop-by-hop fields, credentials meant for this
    /// proxy (`Proxy-Authorization`) and `Expect`, which the proxy meets itself (it reads the
    /// body before sending it on, and answers `100 Continue`).
    static func forwardedFields(_ fields: HTTPFields) -> HTTPFields {
        var forwarded = HopByHop.removing(from: fields)
        if forwarded[.expect] != nil { forwarded[values: .expect] = [] }
        // Only when present: an assignment would copy the fields on every request.
        if forwarded[.proxyAuthorization] != nil { forwarded[values: .proxyAuthorization] = [] }
        if forwarded[cacheKeyRequest] != nil { forwarded[values: cacheKeyRequest] = [] }
        return forwarded
    }

    /// The request body, or the 413 to answer when it is larger than allowed.
    private func collectBody(of request: Request) async -> Result<Data?, AnswerError> {
        let limit = configuration.maximumRequestBodyBytes
        let tooLarge = AnswerError(answer: errorAnswer(.contentTooLarge, "request body over \(limit) bytes"))
        if let declared = request.head.headerFields[.contentLength].flatMap(Int.init), declared > limit {
            return .failure(tooLarge)
        }
        var collected = ByteBuffer()
        do {
            for try await var chunk in request.body {
                guard collected.readableBytes + chunk.readableBytes <= limit else { return .failure(tooLarge) }
                collected.writeBuffer(&chunk)
            }
        } catch {
            return .failure(AnswerError(answer: errorAnswer(.badRequest, "the request body could not be read")))
        }
        // RFC 9110 §9.3.8: a client must not send content in a TRACE request (the origin's
        // client would refuse to send it: a 502 blamed the origin).
        if collected.readableBytes > 0, request.head.method == .trace {
            return .failure(AnswerError(answer: errorAnswer(.badRequest, "a TRACE request carries no content")))
        }
        return .success(
            collected.readableBytes == 0 && request.head.headerFields[.contentLength] == nil
                ? nil : Data(collected.readableBytesView))
    }

    struct AnswerError: Error {
        let answer: Answer
    }
}
