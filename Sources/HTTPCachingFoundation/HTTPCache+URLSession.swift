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
    public static func urlSessionTransport(_ session: URLSession) -> Transport {
        { request, body in
            guard var urlRequest = URLRequest(httpRequest: request) else {
                throw HTTPCacheError(.invalidRequest, "the request has no absolute URL: \(request)")
            }
            urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
            urlRequest.httpBody = body
            let (data, response) = try await session.data(for: urlRequest)
            guard let httpResponse = (response as? HTTPURLResponse)?.httpResponse else {
                throw HTTPCacheError(
                    .invalidRequest, "\(urlRequest.url?.absoluteString ?? "the request") did not get an HTTP response")
            }
            return (httpResponse, data)
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
    /// - Returns: the body, the response as `HTTPURLResponse` (with `Age` when from the cache),
    ///   and the full `HTTPCacheResponse` saying where it came from.
    nonisolated(nonsending) public func data(
        for urlRequest: URLRequest, session: URLSession
    ) async throws -> (Data, HTTPURLResponse, HTTPCacheResponse) {
        guard let request = urlRequest.httpRequest else {
            throw HTTPCacheError(
                .invalidRequest,
                "\(urlRequest.url?.absoluteString ?? "the request") cannot be expressed as an HTTP request")
        }
        let result = try await response(
            for: request, body: try urlRequest.bodyData(), cachePolicy: RequestCachePolicy(urlRequest.cachePolicy),
            transport: Self.urlSessionTransport(session))
        guard let url = urlRequest.url, let httpURLResponse = HTTPURLResponse(httpResponse: result.response, url: url)
        else {
            throw HTTPCacheError(.invalidRequest, "the response cannot be expressed as HTTPURLResponse")
        }
        return (result.body, httpURLResponse, result)
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
