import AsyncHTTPClient
import Foundation
import HTTPCaching
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Network)
import Network
#endif

/// AsyncHTTPClient as `HTTPCache`'s transport.
extension HTTPCache {
    /// A transport that performs exchanges with an AsyncHTTPClient `HTTPClient`.
    ///
    /// The client follows redirects as it is configured to (AsyncHTTPClient's default follows up
    /// to five). A response it reached by following one answers another URL than the request's,
    /// so it is returned with `Cache-Control: no-store` (replacing the field) and is not stored
    /// under the request's key; a revalidation answered 304 that way is sent again without its
    /// validators, since the 304 confirmed another resource. A client made with `redirectConfiguration: .disallow` returns redirects
    /// themselves, which are cached under their own URLs like any response.
    ///
    /// A client made with `decompression: .enabled` decodes gzip and deflate bodies: the
    /// response is then stored and returned as decoded, without `Content-Encoding`.
    ///
    /// - Parameters:
    ///   - client: the client that sends the requests; the caller owns it and shuts it down.
    ///   - timeout: the deadline for each exchange, body included.
    ///   - maximumBodySize: the largest response body read; a larger one fails the exchange
    ///     (rather than growing memory without bound). 64 MiB by default.
    public static func asyncHTTPClientTransport(
        _ client: HTTPClient, timeout: TimeAmount = .seconds(30), maximumBodySize: Int = 64 << 20
    ) -> Transport {
        { request, body in
            // A client following redirects (AsyncHTTPClient's default) answers with the last hop's
            // response: not to be stored under the first URL, nor to revalidate it.
            try await exchangeFollowingRedirects(request) { request in
                guard let outgoing = clientRequest(for: request, body: body) else {
                    throw HTTPCacheError(.invalidRequest, "the request has no absolute URL: \(request)")
                }
                // AsyncHTTPClient's deadline covers the head alone: the body is held to what is left.
                let deadline = NIODeadline.now() + timeout
                let response = try await client.execute(outgoing, deadline: deadline)
                let bytes = try await collect(response.body, upTo: maximumBodySize, by: deadline)
                let body = Data(bytes.readableBytesView)
                // A client made with `decompression: .enabled` hands over a decoded body under the
                // server's `Content-Encoding` and `Content-Length`.
                let head = DecodedContent.describing(
                    body, in: try responseHead(of: response), to: request,
                    decoding: DecodedContent.asyncHTTPClientCodings,
                    layers: 1)
                return (head, body, response.history.count > 1 ? response.url : nil)
            }
        }
    }

    /// `body`, collected up to `limit` bytes, or `HTTPClientError.deadlineExceeded` once
    /// `deadline` passes first (an origin that sends its head and then stalls): the collection is
    /// cancelled, which ends the request.
    private static func collect(
        _ body: HTTPClientResponse.Body, upTo limit: Int, by deadline: NIODeadline
    ) async throws -> ByteBuffer {
        try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask { try await body.collect(upTo: limit) }
            group.addTask {
                let remaining = max(0, (deadline - .now()).nanoseconds)
                try await Task.sleep(for: .nanoseconds(remaining))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let bytes = first else {
                throw HTTPClientError.deadlineExceeded
            }
            return bytes
        }
    }

    /// `request` (and its body) for AsyncHTTPClient; `nil` when it has no absolute URL. Shared with
    /// the caching proxy's upstream transport. The target goes as the client wrote it, with only
    /// the bytes a URI may not hold percent-encoded (``RequestTarget``): through `URL`, a target
    /// such as `?q=caf%C3%A9&tag[]=new` was encoded a second time.
    package static func clientRequest(for request: HTTPRequest, body: Data?) -> HTTPClientRequest? {
        guard let uri = RequestTarget.absoluteURI(of: request) else { return nil }
        var outgoing = HTTPClientRequest(url: uri)
        outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
        outgoing.headers = HTTPHeaders(request.headerFields.map { ($0.name.rawName, $0.value) })
        if let body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        return outgoing
    }

    /// The status and fields of an AsyncHTTPClient response (fields with invalid names dropped).
    /// Throws ``HTTPCacheError/Code/invalidResponse`` for one with more fields than
    /// ``HTTPCache/maximumResponseFieldCount``, before copying them.
    package static func responseHead(of response: HTTPClientResponse) throws(HTTPCacheError) -> HTTPResponse {
        try checkFieldCount(response.headers.count)
        var fields = HTTPFields()
        for (name, value) in response.headers {
            guard let fieldName = HTTPField.Name(name) else { continue }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        let status = HTTPResponse.Status(code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase)
        return HTTPResponse(status: status, headerFields: fields)
    }

    /// Whether an AsyncHTTPClient or NIO error means the origin could not be reached (refused or
    /// lost connections, timeouts, handshakes that never finished; on Apple platforms, where the
    /// client runs on Network.framework, its POSIX and resolution errors); for
    /// `HTTPCache.Configuration.isConnectivityError`.
    public static let isAsyncHTTPClientConnectivityError: @Sendable (any Error) -> Bool = { error in
        if let clientError = error as? HTTPClientError {
            return [
                .connectTimeout, .deadlineExceeded, .remoteConnectionClosed, .readTimeout, .writeTimeout,
                .getConnectionFromPoolTimeout, .tlsHandshakeTimeout, .socksHandshakeTimeout,
                .httpProxyHandshakeTimeout,
            ]
            .contains(clientError)
        }
        #if canImport(Network)
        if error is HTTPClient.NWPOSIXError { return true }
        if let network = error as? NWError {
            // Not TLS failures (a certificate the client refuses): the service was reached.
            switch network {
            case .posix, .dns: return true
            default: return false
            }
        }
        #endif
        return error is NIOConnectionError || (error as? IOError) != nil || error is ChannelError
    }

    /// Executes `request` through the cache with `client`. Like
    /// `HTTPCache.response(for:body:cachePolicy:transport:)`, a memory hit is answered on the
    /// caller's executor.
    ///
    /// A server calling other services on behalf of many users needs a shared engine
    /// (`HTTPCache.Configuration(mode: .shared)`): the default private mode stores responses to
    /// one user's `Authorization` and `private` responses, and would serve them to the next.
    nonisolated(nonsending) public func execute(
        _ request: HTTPRequest, body: Data? = nil, on client: HTTPClient,
        cachePolicy: RequestCachePolicy = .useProtocolCachePolicy,
        timeout: TimeAmount = .seconds(30)
    ) async throws -> HTTPCacheResponse {
        try await response(
            for: request, body: body, cachePolicy: cachePolicy,
            transport: Self.asyncHTTPClientTransport(client, timeout: timeout))
    }
}
