import Foundation
import HTTPCaching
import HTTPTypes
import HTTPTypesFoundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// URLSession as `HTTPCache`'s transport: fetch through the cache with a `URLSession`.
extension HTTPCache {
    /// A transport that performs exchanges with `session`.
    ///
    /// Requests go out with `.reloadIgnoringLocalCacheData` so the session's own `URLCache`
    /// neither answers nor stores them (TierCache is the cache); give the session a
    /// configuration with `urlCache = nil` to skip it entirely.
    ///
    /// The session follows redirects as it is configured to. A response it reached by following
    /// one answers another URL than the request's, so it is returned with `Cache-Control:
    /// no-store` (replacing the field) and is not stored under the request's key; a revalidation
    /// answered 304 that way is sent again without its validators, since the 304 confirmed
    /// another resource. ``data(for:session:followingRedirects:)`` does better: it follows each
    /// redirect through the cache, under each hop's own key.
    ///
    /// A body the session decoded (gzip, deflate, Brotli) comes back without `Content-Encoding`
    /// and with `Content-Length` its decoded size, so what is stored describes what it holds.
    public static func urlSessionTransport(_ session: URLSession) -> Transport {
        urlSessionTransport(session, followingRedirects: true)
    }

    /// ``urlSessionTransport(_:)``, or, when `followingRedirects` is false, one that asks the
    /// session to answer with a redirect rather than follow it (a task delegate declining it).
    /// swift-corelibs-foundation does not consult task delegates about redirects, only the
    /// session's, so there a session whose delegate does not decline still follows, and the
    /// response it reaches is marked as ``urlSessionTransport(_:)`` marks it.
    ///
    /// With `settings`, each request goes out with that `URLRequest`'s own settings (timeout,
    /// cookie handling, cellular and expensive network access, service type, main document URL)
    /// and the exchange's method, URL, fields and body: what the app set on the request it asked
    /// the cache for applies to the cache's fetch.
    static func urlSessionTransport(
        _ session: URLSession, followingRedirects: Bool, settings: URLRequest? = nil
    ) -> Transport {
        { request, body in
            try await exchangeFollowingRedirects(request) { request in
                guard let converted = URLRequest(httpRequest: request) else {
                    throw HTTPCacheError(.invalidRequest, "the request has no absolute URL: \(request)")
                }
                var urlRequest = settings ?? converted
                urlRequest.url = converted.url
                urlRequest.httpMethod = converted.httpMethod
                // Field by field, every one of the app's first removed: the exchange's fields
                // are what goes out (the cache may have removed validators or hop-by-hop fields),
                // whether assigning `allHTTPHeaderFields` replaces or merges.
                for name in (urlRequest.allHTTPHeaderFields ?? [:]).keys {
                    urlRequest.setValue(nil, forHTTPHeaderField: name)
                }
                for (name, value) in converted.allHTTPHeaderFields ?? [:] {
                    urlRequest.setValue(value, forHTTPHeaderField: name)
                }
                urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
                urlRequest.httpBodyStream = nil
                urlRequest.httpBody = body
                let (data, response) =
                    followingRedirects
                    ? try await session.data(for: urlRequest)
                    : try await session.data(for: urlRequest, delegate: RedirectRefusal())
                guard let httpURLResponse = response as? HTTPURLResponse,
                    let httpResponse = httpURLResponse.httpResponse
                else {
                    throw HTTPCacheError(
                        .invalidRequest,
                        "\(urlRequest.url?.absoluteString ?? "the request") did not get an HTTP response")
                }
                // Compared with what was sent first: the keys only when the URLs differ at all.
                return (
                    DecodedContent.describing(
                        data, in: httpResponse, to: request, decoding: DecodedContent.urlSessionCodings), data,
                    httpURLResponse.url == urlRequest.url ? nil : httpURLResponse.url
                )
            }
        }
    }

    /// Whether a `URLError` means the network could not be reached: no connection, a timeout, a
    /// refused or lost connection, a failed DNS lookup. Use it as
    /// `HTTPCache.Configuration.isConnectivityError` so other failures (a bad URL, a TLS
    /// error) propagate instead of falling back to stale data.
    public static let isURLConnectivityError: @Sendable (any Error) -> Bool = { error in
        let connectivity: Set<URLError.Code> = [
            .notConnectedToInternet, .timedOut, .cannotConnectToHost, .networkConnectionLost, .cannotFindHost,
            .dnsLookupFailed, .internationalRoamingOff, .dataNotAllowed, .callIsActive,
        ]
        if let urlError = error as? URLError { return connectivity.contains(urlError.code) }
        // swift-corelibs-foundation may deliver these as plain NSErrors in NSURLErrorDomain.
        let nsError = error as NSError
        return nsError.domain == NSURLErrorDomain && connectivity.contains { $0.rawValue == nsError.code }
    }

    /// Loads `urlRequest` through the cache with `session`, honouring its `cachePolicy`. Like
    /// `HTTPCache.response(for:body:cachePolicy:transport:)`, a memory hit is answered on the
    /// caller's executor (the main actor's, for UI code) and everything else off it.
    ///
    /// Redirects (301, 302, 303, 307, 308) are followed as URLSession follows them, each hop
    /// through the cache under its own URL: a redirect and the page it leads to are stored
    /// apart, and a stored redirect answers without the network. A 303, and a 301 or 302
    /// answering a POST, continue as a GET without a body; a hop to another origin drops the
    /// `Authorization`, `Proxy-Authorization`, `Cookie` and `Origin` fields (as AsyncHTTPClient
    /// does); URLSession adds its configuration's `httpAdditionalHeaders` to every request that
    /// lacks them, so keep credentials out of `session`'s additional headers (as Apple advises) and
    /// on the request, or they go to every hop. More than 16 redirects fail with `URLError.httpTooManyRedirects`. With
    /// `followingRedirects: false` a redirect is the answer (stored under its own URL like any
    /// response), for an app that follows redirects itself or inspects `Location`: the session's
    /// delegate is not asked about redirects (on Apple's platforms a task delegate declining them
    /// takes its place).
    ///
    /// The request's own settings (`timeoutInterval`, `httpShouldHandleCookies`,
    /// `allowsCellularAccess` and the like) apply to the fetches the cache makes for it. A body the
    /// session decoded (gzip, deflate, Brotli) is stored and returned without `Content-Encoding`,
    /// with `Content-Length` its decoded size.
    ///
    /// Each hop asks `session` not to follow the redirect itself. On swift-corelibs-foundation
    /// (Linux) only a session's delegate is asked, so there a session whose delegate does not
    /// decline redirects (`completionHandler(nil)` in
    /// `urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:)`) follows
    /// them itself: the answer is right, but a response reached that way is not stored, and the
    /// returned `HTTPURLResponse`'s `url` is the request's.
    ///
    /// - Returns: the body, the response as `HTTPURLResponse` (with `Age` when from the cache, and
    ///   the last hop's URL), and the full `HTTPCacheResponse` of the last hop.
    nonisolated(nonsending) public func data(
        for urlRequest: URLRequest, session: URLSession, followingRedirects: Bool = true
    ) async throws -> (Data, HTTPURLResponse, HTTPCacheResponse) {
        let transport = Self.urlSessionTransport(session, followingRedirects: false, settings: urlRequest)
        var hop = (request: urlRequest, body: try urlRequest.bodyData())
        for _ in 0...(followingRedirects ? Redirects.limit : 0) {
            guard let request = hop.request.httpRequest else {
                throw HTTPCacheError(
                    .invalidRequest,
                    "\(hop.request.url?.absoluteString ?? "the request") cannot be expressed as an HTTP request")
            }
            let result = try await response(
                for: request, body: hop.body, cachePolicy: RequestCachePolicy(hop.request.cachePolicy),
                transport: transport)
            if followingRedirects,
                let next = Redirects.nextRequest(after: hop.request, body: hop.body, response: result.response)
            {
                hop = next
                continue
            }
            guard let url = hop.request.url,
                let httpURLResponse = HTTPURLResponse(httpResponse: result.response, url: url)
            else {
                throw HTTPCacheError(.invalidRequest, "the response cannot be expressed as HTTPURLResponse")
            }
            return (result.body, httpURLResponse, result)
        }
        throw URLError(
            .httpTooManyRedirects,
            userInfo: [
                NSLocalizedDescriptionKey:
                    "\(urlRequest.url?.absoluteString ?? "the request") was redirected more than \(Redirects.limit) times"
            ])
    }
}

extension URLRequest {
    /// The request's body: `httpBody`, or what `httpBodyStream` holds, read to its end. Inside a
    /// `URLProtocol` the loader has already turned `httpBody` into a stream, so a POST read from
    /// `httpBody` alone would go out empty.
    ///
    /// - Throws: `HTTPCacheError` with code `invalidRequest` when the stream fails.
    func bodyData() throws(HTTPCacheError) -> Data? {
        if let httpBody { return httpBody }
        guard let stream = httpBodyStream else { return nil }
        stream.open()
        defer { stream.close() }
        var body = Data()
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = stream.read(&chunk, maxLength: chunk.count)
            if count == 0 { return body }
            guard count > 0 else {
                throw HTTPCacheError(
                    .invalidRequest,
                    "the body of \(url?.absoluteString ?? "the request") could not be read: \(stream.streamError.map { "\($0)" } ?? "stream error")"
                )
            }
            body.append(contentsOf: chunk[0..<count])
        }
    }
}

/// Conversion from `URLRequest.CachePolicy`.
extension RequestCachePolicy {
    /// The policy matching a `URLRequest.CachePolicy`.
    public init(_ policy: URLRequest.CachePolicy) {
        switch policy {
        case .reloadIgnoringLocalCacheData: self = .reloadIgnoringLocalCacheData
        case .reloadIgnoringLocalAndRemoteCacheData: self = .reloadIgnoringLocalAndRemoteCacheData
        case .returnCacheDataElseLoad: self = .returnCacheDataElseLoad
        case .returnCacheDataDontLoad: self = .returnCacheDataDontLoad
        case .reloadRevalidatingCacheData: self = .reloadRevalidatingCacheData
        default: self = .useProtocolCachePolicy
        }
    }
}
