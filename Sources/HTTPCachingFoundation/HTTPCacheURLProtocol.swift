import Foundation
import HTTPCaching
import HTTPTypes
@_spi(TierCacheInternals) import TierCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `URLProtocol` that answers `http` and `https` requests through an `HTTPCache`, for apps
/// that want TierCache's rules instead of URLSession's: full RFC 9111 freshness and
/// revalidation, `stale-while-revalidate`, `stale-if-error`, the offline fallback (a stored
/// response, with its `Date` and `Age`, when the origin cannot be reached), coalescing of
/// concurrent identical requests, store hooks, and a `Cache-Status` field (RFC 9211) on every
/// response.
///
/// Adoption is one line per session configuration:
/// ```swift
/// HTTPCacheURLProtocol.install(cache, in: configuration)
/// ```
/// which registers `cache` and puts this class first in `configuration.protocolClasses`.
///
/// The registration is process-wide, like `URLProtocol.registerClass`: every session whose
/// configuration lists this class answers from the cache registered last. (URLSession creates
/// protocol instances itself and tells them nothing about their session's configuration, so a
/// per-session cache would need one subclass per cache.)
///
/// The cache fetches from the origin with a `URLSession` of its own. ``install(_:in:transport:)``
/// makes it from a copy of the configuration it installs into, so what the app configured there
/// carries over to what the cache fetches: cookies (`httpCookieStorage`, `httpShouldSetCookies`),
/// `httpAdditionalHeaders`, timeouts, proxies, TLS minimums and the app's other protocol classes.
/// Only that copy's `urlCache` is removed (`HTTPCache` is the cache) and this class taken out of
/// its protocol classes (a fetch must not come back through the cache). A session *delegate*
/// cannot carry over: a `URLProtocol` never learns its session, so authentication challenges,
/// certificate pinning and task metrics that a delegate handles do not apply to the cache's
/// fetches unless you pass `transport:` a `URLSession` created with that delegate (and a
/// configuration without this class). ``register(_:transport:)`` without a transport fetches
/// with an ephemeral session. Do not register the class globally with
/// `URLProtocol.registerClass`: the fetching session would route through it.
///
/// Redirects are followed inside the cache, as `HTTPCache.data(for:session:)` follows them: each
/// hop is looked up and stored under its own URL, and the response URLSession receives is the
/// last hop's, with its URL. The app's redirect delegate is not consulted
/// (swift-corelibs-foundation traps when a `URLProtocol` reports a redirect). A session passed as
/// `transport:` should decline redirects in its delegate
/// (`urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:)` calling
/// `completionHandler(nil)`): on Linux, where only a session's delegate is asked, one that
/// follows them leaves the responses it reaches that way unstored.
///
/// The response goes to URLSession with `cacheStoragePolicy: .notAllowed`, so the session's own
/// `URLCache` (if any) keeps nothing: `HTTPCache` is the cache. The request's `cachePolicy`
/// is honoured (see `RequestCachePolicy`).
///
/// Client callbacks come from the task that ran the request, not the thread that called
/// `startLoading()`. FoundationNetworking (Linux) accepts that; on Apple platforms the URL
/// loading system documents calls on the loading thread, which this class does not guarantee.
///
/// Cost: one `Task` per request; a memory hit does not touch the network session.
public final class HTTPCacheURLProtocol: URLProtocol {
    /// What the request's task needs of the protocol: itself and its client, to report to.
    ///
    /// @unchecked Sendable: URLProtocol is not Sendable (FoundationNetworking marks it so), but
    /// the task only passes `owner` back to `client`'s callbacks, which URLSession's protocol
    /// client accepts from any thread (it hops to its own queues); `owner`'s `request` and
    /// `client` are set at init and never change, and the task touches no other state of it.
    private final class Delivery: @unchecked Sendable {
        let owner: URLProtocol
        let client: (any URLProtocolClient)?
        let stop: StopFlag
        init(owner: URLProtocol, client: (any URLProtocolClient)?, stop: StopFlag) {
            self.owner = owner
            self.client = client
            self.stop = stop
        }

        /// `client`, unless the protocol was stopped.
        var liveClient: (any URLProtocolClient)? { stop.isRaised ? nil : client }
    }

    /// Raised by `stopLoading()`: the client hears nothing more. Checked before each callback,
    /// so at most the callback already under way when the protocol is stopped still arrives. An
    /// object of its own, held by the protocol and its delivery alike: the protocol holding the
    /// delivery, which holds the protocol, would keep both alive for good.
    private final class StopFlag: Sendable {
        private let raised = Locked(false)
        var isRaised: Bool { raised.withLock { $0 } }
        func raise() { raised.withLock { $0 = true } }
    }

    private struct Registration: Sendable {
        let cache: HTTPCache
        let transport: URLSession
        /// The credential fields of the app's `httpAdditionalHeaders` (see
        /// ``fetchingConfiguration(from:)``), put on a request that lacks them.
        var credentials: [(name: String, value: String)] = []
        /// Whether configurations with different credential fields were installed since the last
        /// ``unregister()``: then none are added.
        var credentialsConflict = false
        /// The configuration ``install(_:in:transport:)`` installed into (nil for ``register(_:transport:)``).
        var configuration: InstalledConfiguration?
    }

    /// A configuration ``install(_:in:transport:)`` installed into, held so that its address is
    /// not reused: compared by `ObjectIdentifier` alone, a configuration freed once its session
    /// was made (`URLSession` copies it) and another allocated at its address counted as the same
    /// one, and its credentials replaced the first's on the first's requests.
    private final class InstalledConfiguration: @unchecked Sendable {
        // Unchecked: `configuration` is never read or written through this reference, only kept
        // alive; identity is compared through `===` on the box, which the `let` fixes.
        private let configuration: URLSessionConfiguration
        init(_ configuration: URLSessionConfiguration) { self.configuration = configuration }
        func holds(_ other: URLSessionConfiguration) -> Bool { configuration === other }
    }

    /// Whether two lists of fields hold the same names (ignoring case) and values, in any order.
    private static func sameFields(_ a: [(name: String, value: String)], _ b: [(name: String, value: String)]) -> Bool {
        func normalized(_ fields: [(name: String, value: String)]) -> [String] {
            fields.map { $0.name.lowercased() + ":" + $0.value }.sorted()
        }
        return normalized(a) == normalized(b)
    }

    private static let registration = Locked<Registration?>(nil)
    private let work = Locked<(task: Task<Void, Never>, stop: StopFlag)?>(nil)

    /// The `Cache-Status` field name (RFC 9211) and this cache's name in it.
    public static let cacheStatusField = "Cache-Status"
    /// The cache's identifier in ``cacheStatusField``.
    public static let cacheName = "TierCache"

    /// Makes `cache` the one this protocol answers from, fetching with `transport` (by default
    /// an ephemeral session with no `URLCache`). Later registrations replace earlier ones.
    ///
    /// A session made here is kept for the process's life, even when a later registration
    /// replaces this one: requests still running (their redirect hops, a background
    /// revalidation) may create tasks on it, which an invalidated session refuses. Register once
    /// per configuration, not per request.
    public static func register(_ cache: HTTPCache, transport: URLSession? = nil) {
        let session = transport ?? fetchingSession(from: .ephemeral)
        registration.withLock { $0 = Registration(cache: cache, transport: session) }
    }

    /// Registers `cache` and puts this class first in `configuration.protocolClasses`: the
    /// whole adoption for a session made from `configuration` afterwards.
    ///
    /// Credential fields in `httpAdditionalHeaders` (`Authorization`, `Cookie`, ...) are put on
    /// each request's first hop. The registration is process-wide, so once two configurations
    /// with different credential fields have been installed (until ``unregister()``), none are
    /// added: one session's token would otherwise go to every other session's hosts. The cache's
    /// logger says so. In an app of several sessions, put credentials on the requests
    /// themselves; to replace a token, install into the same configuration again (or
    /// ``unregister()`` first). The configuration is kept (its identity tells a new token from
    /// another configuration's) until the next install or ``unregister()``.
    ///
    /// The cache fetches every session's requests with the one session made for the
    /// configuration installed last (its other headers, cookie storage, proxy and timeouts): in
    /// an app whose sessions differ in those, pass each install the same `transport`, or call
    /// `HTTPCache.data(for:session:)` with each session instead of installing this class.
    ///
    /// Without `transport`, the cache fetches with a session made from a copy of
    /// `configuration` as it is now (see ``fetchingConfiguration(from:)``), so the app's
    /// cookies, headers, timeouts and protocol classes apply to the cache's fetches too. Pass
    /// `transport` for a session with a delegate of the app's (challenges, pinning). As with
    /// ``register(_:transport:)``, a session made here lives as long as the process: install once
    /// per configuration, not per request.
    public static func install(
        _ cache: HTTPCache, in configuration: URLSessionConfiguration, transport: URLSession? = nil
    ) {
        var registered = Registration(
            cache: cache, transport: transport ?? fetchingSession(from: configuration),
            credentials: credentialFields(of: configuration), configuration: InstalledConfiguration(configuration))
        let conflicting = registration.withLock { current in
            // One registration answers every session (see above): credentials of one
            // configuration's headers put on another's requests went to that session's hosts
            // (an API token to an image CDN). Installs into different configurations that
            // disagree get none added, and say so; installing into the same configuration again
            // (a new token) replaces its credentials.
            let conflicting =
                current.map {
                    $0.credentialsConflict
                        || ($0.configuration?.holds(configuration) != true
                            && !sameFields($0.credentials, registered.credentials))
                } ?? false
            if conflicting {
                registered.credentials = []
                registered.credentialsConflict = true
            }
            current = registered
            return conflicting
        }
        if conflicting {
            cache.configuration.logger?.error(
                "HTTPCacheURLProtocol installed in configurations whose httpAdditionalHeaders hold different credentials: the registration is process-wide, so none of them is added to requests; put credentials on the requests themselves"
            )
        }
        configuration.protocolClasses =
            [HTTPCacheURLProtocol.self]
            + (configuration.protocolClasses ?? []).filter { $0 != HTTPCacheURLProtocol.self }
    }

    /// The configuration the cache fetches with by default: a copy of `configuration` without a
    /// `URLCache` (`HTTPCache` is the cache) and without this class among its protocol classes
    /// (a fetch must not come back through the cache). Everything else is kept as it is.
    ///
    /// URLSession adds a configuration's `httpAdditionalHeaders` to every request that lacks
    /// them, the hops of a redirect the cache follows included, so credentials there
    /// (`Authorization`, `Proxy-Authorization`, `Cookie`, `Origin`) go to whatever origin a
    /// redirect names. The session ``install(_:in:transport:)`` makes leaves them out and puts
    /// them on each request's first hop instead, where the cache keeps them only on hops to the
    /// same origin; a session you make from this configuration for `transport:` sends them on
    /// every hop: keep credentials out of the additional headers, or on the requests.
    public static func fetchingConfiguration(from configuration: URLSessionConfiguration) -> URLSessionConfiguration {
        // A copy, so that the app's configuration is not changed; `copy()` of a configuration is
        // documented to return a configuration, and an ephemeral one stands in if it did not.
        let fetching = configuration.copy() as? URLSessionConfiguration ?? .ephemeral
        fetching.urlCache = nil
        fetching.protocolClasses = fetching.protocolClasses?.filter { $0 != HTTPCacheURLProtocol.self }
        return fetching
    }

    /// Whether an `httpAdditionalHeaders` key names a field a redirect to another origin drops.
    private static func isCredentialField(_ name: AnyHashable) -> Bool {
        guard let name = name.base as? String else { return false }
        return Redirects.crossOriginFields.contains { $0.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// The credential fields of `configuration`'s `httpAdditionalHeaders`, with string values.
    private static func credentialFields(of configuration: URLSessionConfiguration) -> [(name: String, value: String)] {
        (configuration.httpAdditionalHeaders ?? [:]).compactMap { name, value in
            guard isCredentialField(name), let name = name.base as? String, let value = value as? String else {
                return nil
            }
            return (name, value)
        }
    }

    /// A session fetching with ``fetchingConfiguration(from:)`` whose delegate declines
    /// redirects: the cache follows them, each under its own key (see
    /// `HTTPCache.data(for:session:)`).
    private static func fetchingSession(from configuration: URLSessionConfiguration) -> URLSession {
        let fetching = fetchingConfiguration(from: configuration)
        // Credentials go on first hops instead (see `fetchingConfiguration(from:)`).
        if let headers = fetching.httpAdditionalHeaders {
            fetching.httpAdditionalHeaders = headers.filter { name, _ in !isCredentialField(name) }
        }
        return URLSession(configuration: fetching, delegate: RedirectRefusal(), delegateQueue: nil)
    }

    /// Removes the registration; requests then fall through to the next protocol class.
    public static func unregister() {
        registration.withLock { $0 = nil }
    }

    /// `http` and `https` requests, while a cache is registered.
    public override class func canInit(with request: URLRequest) -> Bool {
        guard let scheme = request.url?.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return false
        }
        return registration.withLock { $0 != nil }
    }

    /// Not upload tasks: a `URLProtocol` is not given their body (it is neither the request's
    /// `httpBody` nor its stream), so they go to the next protocol class, straight to the origin.
    /// Their unsafe requests therefore do not invalidate stored responses (RFC 9111 §4.4); send
    /// writes that should as data tasks whose request carries the body.
    ///
    /// Not download tasks either: the cache holds a response's whole body in memory, and a
    /// download task is how an app fetches what should go to a file instead (a 2 GB file through
    /// the cache would need 2 GB of memory, and report no progress). They go straight to the
    /// origin. (swift-corelibs-foundation does not ask this method; there a download task goes
    /// through the cache.)
    public override class func canInit(with task: URLSessionTask) -> Bool {
        guard !(task is URLSessionUploadTask), !(task is URLSessionDownloadTask),
            let request = task.currentRequest ?? task.originalRequest
        else {
            return false
        }
        return canInit(with: request)
    }

    /// The error an upload task gets where it cannot bypass the cache: its body is out of reach.
    static func uploadTaskRefusal(for request: URLRequest) -> URLError {
        URLError(
            .unsupportedURL,
            userInfo: [
                NSLocalizedDescriptionKey:
                    "HTTPCacheURLProtocol cannot send an upload task's body (URLProtocol is not given it) to \(request.url?.absoluteString ?? "the origin"); send it as a data task whose request carries the body, or from a session without HTTPCacheURLProtocol"
            ])
    }

    /// The request unchanged: the cache computes its own keys.
    public override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    /// Starts answering the request through the registered cache.
    public override func startLoading() {
        guard let registration = Self.registration.withLock({ $0 }) else {
            client?.urlProtocol(self, didFailWithError: URLError(.unsupportedURL))
            return
        }
        // Where `canInit(with:)` for tasks is not consulted (swift-corelibs-foundation), an upload
        // task still arrives here, without its body: it fails, rather than reach the origin empty.
        if task is URLSessionUploadTask {
            client?.urlProtocol(self, didFailWithError: Self.uploadTaskRefusal(for: request))
            return
        }
        var request = self.request
        // As URLSession would add them (to the first hop only: see `fetchingConfiguration`).
        for (name, value) in registration.credentials where request.value(forHTTPHeaderField: name) == nil {
            request.setValue(value, forHTTPHeaderField: name)
        }
        let stop = StopFlag()
        let delivery = Delivery(owner: self, client: client, stop: stop)
        let task = Task { await HTTPCacheURLProtocol.answer(request, from: registration, to: delivery) }
        work.withLock { $0 = (task, stop) }
    }

    /// Loads `request` through the cache and reports the outcome to `delivery`'s client.
    private static func answer(_ request: URLRequest, from registration: Registration, to delivery: Delivery) async {
        do {
            let (body, response, result) = try await registration.cache.data(
                for: request, session: registration.transport)
            delivery.liveClient?.urlProtocol(
                delivery.owner, didReceive: labelled(response, with: result, for: request),
                cacheStoragePolicy: .notAllowed)
            delivery.liveClient?.urlProtocol(delivery.owner, didLoad: body)
            delivery.liveClient?.urlProtocolDidFinishLoading(delivery.owner)
        } catch {
            delivery.liveClient?.urlProtocol(delivery.owner, didFailWithError: urlError(for: error, request: request))
        }
    }

    /// The error URLSession's client expects for `error`: a request under
    /// `.returnCacheDataDontLoad` with nothing stored fails as Apple's loader fails it,
    /// `URLError.resourceUnavailable`; other errors pass as they are.
    static func urlError(for error: any Error, request: URLRequest) -> any Error {
        guard let cacheError = error as? HTTPCacheError, cacheError.code == .notCached else { return error }
        return URLError(
            .resourceUnavailable,
            userInfo: [
                NSLocalizedDescriptionKey:
                    "\(request.url?.absoluteString ?? "the request") is not in the cache, and its cache policy (returnCacheDataDontLoad) forbids loading it",
                NSUnderlyingErrorKey: cacheError,
            ])
    }

    /// Cancels the request's task; the cache's fetch, if shared with other requests, goes on
    /// for them. The client hears nothing more from this protocol.
    public override func stopLoading() {
        work.withLock { work in
            work?.stop.raise()
            work?.task.cancel()
        }
    }

    /// `response` with a `Cache-Status` field saying where it came from (RFC 9211): the cache's
    /// member after those of caches upstream, which stay (§2).
    static func labelled(
        _ response: HTTPURLResponse, with result: HTTPCacheResponse, for request: URLRequest
    ) -> HTTPURLResponse {
        guard let url = response.url else { return response }
        var fields: [String: String] = [:]
        var upstream: [String] = []
        for (name, value) in response.allHeaderFields {
            guard let name = name as? String, let value = value as? String else { continue }
            // Field names are case-insensitive; one spelled otherwise would stand beside ours.
            if name.caseInsensitiveCompare(cacheStatusField) == .orderedSame {
                upstream.append(value)
            } else {
                fields[name] = value
            }
        }
        // The request's method and fields describe the answer unless a redirect was followed
        // (a POST answered by a 303 ends in a GET).
        let own = cacheStatus(of: result, for: url == request.url ? request : nil)
        fields[cacheStatusField] = (upstream + [own]).joined(separator: ", ")
        return HTTPURLResponse(url: url, statusCode: response.statusCode, httpVersion: "HTTP/1.1", headerFields: fields)
            ?? response
    }

    /// The `Cache-Status` value for `result`, the answer to `request` (nil when a redirect was
    /// followed to it): without the request, a response from the network that replaced nothing
    /// stored is `fwd=uri-miss` whatever the request's method, body or directives.
    public static func cacheStatus(of result: HTTPCacheResponse, for request: URLRequest? = nil) -> String {
        var status = CacheStatus(cacheName: cacheName)
        switch result.source {
        case .cache:
            status.hit = true
        case .revalidated:
            status.forward = CacheStatus.forward(ofRevalidated: result)
            status.forwardStatus = 304
        case .staleWhileRevalidate:
            status.hit = true
            status.detail = "stale-while-revalidate"
        case .staleFallback:
            status.hit = true
            status.detail = "stale-network-failed"
        case .unsatisfiable:
            status.detail = "only-if-cached"
        case .network:
            let method = request?.httpMethod?.uppercased() ?? "GET"
            if method != "GET" && method != "HEAD" {
                status.forward = .method
            } else if let request, request.httpBody?.isEmpty == false || request.httpBodyStream != nil {
                // A GET or HEAD with a body goes past the cache (`HTTPCache.response(for:body:)`).
                status.forward = .bypass
            } else {
                status.forward = CacheStatus.forward(
                    ofNetworkResponse: result,
                    requestDirectives: CacheControl(
                        fieldValues: request?.value(forHTTPHeaderField: "Cache-Control").map { [$0] } ?? []))
            }
            status.forwardStatus = result.response.status.code
            status.stored = result.wasStored
        }
        return status.description
    }
}
