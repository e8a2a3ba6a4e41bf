import AsyncHTTPClient
import Foundation
import HTTPCaching
import HTTPCachingAsyncHTTPClient
import HTTPTypes
import Metrics
import NIOCore

/// Exchanges with the origin through AsyncHTTPClient, for the cache engine.
///
/// A response body is read whole only up to the proxy's cacheable limit; past it the transport
/// throws ``OversizedResponse`` so the response streams to the client instead of being buffered.
struct UpstreamTransport: Sendable {
    let client: HTTPClient
    let timeout: TimeAmount
    let bufferLimit: Int
    /// The targeted cache-control field (RFC 9213) to obey instead of `Cache-Control`, if any.
    let targetedCacheControl: HTTPField.Name?
    let latency: Metrics.Timer

    /// Where the origin's own `Cache-Control` waits while a targeted field stands in for it.
    static let originCacheControl = TargetedCacheControl.originCacheControlField
    /// Where the origin's `Expires` waits while a targeted field stands in for `Cache-Control`:
    /// RFC 9213 §2.2 has the cache ignore both.
    static let originExpires = TargetedCacheControl.originExpiresField

    var transport: HTTPCache.Transport {
        { request, body in try await exchange(request, body: body) }
    }

    /// ``transport``, adding `names` to each response's `Vary` (`ClientRoutingFields.addVary`, a 304 as it says).
    func varying(on names: [HTTPField.Name]) -> HTTPCache.Transport {
        { request, body in
            var (head, data) = try await exchange(request, body: body)
            ClientRoutingFields.addVary(names, to: &head.headerFields, to304: head.status == .notModified)
            return (head, data)
        }
    }

    /// Sends `request` and reads its response (up to the buffer limit), head and body within one
    /// deadline: AsyncHTTPClient's covers the head alone, so the body's chunks are held to what is
    /// left of it (an origin that trickles bytes), and each wait for one to the read timeout of the
    /// proxy's own client (an origin that stalls).
    func exchange(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, Data) {
        let deadline = NIODeadline.now() + timeout
        let (head, response) = try await send(request, body: body, deadline: deadline)
        if let length = head.headerFields[.contentLength].flatMap(Int.init), length > bufferLimit {
            throw OversizedResponse(head: head, buffered: ByteBuffer(), rest: response.body.makeAsyncIterator())
        }
        var iterator = response.body.makeAsyncIterator()
        var collected = ByteBuffer()
        while var chunk = try await iterator.next() {
            guard NIODeadline.now() <= deadline else { throw HTTPClientError.deadlineExceeded }
            guard collected.readableBytes + chunk.readableBytes <= bufferLimit else {
                collected.writeBuffer(&chunk)
                throw OversizedResponse(head: head, buffered: collected, rest: iterator)
            }
            collected.writeBuffer(&chunk)
        }
        return (head, Data(collected.readableBytesView))
    }

    /// Sends `request`; returns the response head (hop-by-hop fields removed, targeted cache
    /// control applied), due by `deadline` (the timeout from now by default), and the response,
    /// whose body is still to be read.
    func send(
        _ request: HTTPRequest, body: Data?, deadline: NIODeadline? = nil
    ) async throws -> (HTTPResponse, HTTPClientResponse) {
        guard let outgoing = HTTPCache.clientRequest(for: request, body: body) else {
            throw CachingProxyError("the request has no absolute URL: \(request)")
        }
        let started = ContinuousClock.now
        let response = try await client.execute(outgoing, deadline: deadline ?? .now() + timeout)
        let elapsed = started.duration(to: .now).components
        latency.recordNanoseconds(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)

        var head = try HTTPCache.responseHead(of: response)
        var fields = head.headerFields
        // The stash fields are the proxy's own: an origin cannot set them.
        for stash in [Self.originCacheControl, Self.originExpires] where fields[stash] != nil {
            fields[values: stash] = []
        }
        fields = HopByHop.removing(from: fields)
        // A targeted field stands in for Cache-Control only when it is a valid Dictionary (RFC
        // 9213 §2.1); otherwise the origin's Cache-Control rules, as if the field were absent.
        // Standing in, it sets aside Expires too (§2.2): `CDN-Cache-Control: must-revalidate`
        // gives a response no lifetime, whatever Expires says to other caches.
        if let targeted = targetedCacheControl, fields[targeted] != nil,
            let directives = TargetedCacheControl.cacheControlValue(of: fields[values: targeted])
        {
            fields[Self.originCacheControl] = fields[values: .cacheControl].joined(separator: ", ")
            fields[values: .cacheControl] = directives.isEmpty ? [] : [directives]
            if fields[.expires] != nil {
                fields[Self.originExpires] = fields[values: .expires].joined(separator: ", ")
                fields[values: .expires] = []
            }
        }
        head.headerFields = fields
        return (head, response)
    }

    /// Puts back the origin's `Cache-Control` and `Expires` where a targeted field stood in for
    /// them.
    static func restoringOriginFields(_ fields: inout HTTPFields) {
        if let original = fields[originExpires] {
            fields[values: .expires] = [original]
            fields[originExpires] = nil
        }
        guard let original = fields[originCacheControl] else { return }
        fields[values: .cacheControl] = original.isEmpty ? [] : [original]
        fields[originCacheControl] = nil
    }
}
