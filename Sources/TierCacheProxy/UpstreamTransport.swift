import AsyncHTTPClient
import Foundation
import HTTPCaching
import HTTPTypes
import Metrics
import NIOCore
import NIOHTTP1

/// Exchanges with the origin through AsyncHTTPClient, for the cache engine.
///
/// A response body is read whole only up to the proxy's cacheable limit; past it the transport
/// throws ``OversizedResponse`` so the response streams to the client instead of being buffered.
struct UpstreamTransport: Sendable {
    let client: HTTPClient
    let timeout: TimeAmount
    let bufferLimit: Int
    /// The targeted cache-control field (RFC 9213) to apply, if any.
    let targetedCacheControl: HTTPField.Name?
    let latency: Metrics.Timer

    /// Where the origin's own `Cache-Control` waits while a targeted field stands in for it.
    static let originCacheControl = HTTPField.Name("TierCache-Origin-Cache-Control")!

    var transport: HTTPCache.Transport {
        { request, body in try await exchange(request, body: body) }
    }

    /// Sends `request` and reads its response (up to the buffer limit).
    func exchange(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, Data) {
        let (head, response) = try await send(request, body: body)
        if let length = head.headerFields[.contentLength].flatMap(Int.init), length > bufferLimit {
            throw OversizedResponse(head: head, buffered: ByteBuffer(), rest: response.body.makeAsyncIterator())
        }
        var iterator = response.body.makeAsyncIterator()
        var collected = ByteBuffer()
        while var chunk = try await iterator.next() {
            guard collected.readableBytes + chunk.readableBytes <= bufferLimit else {
                collected.writeBuffer(&chunk)
                throw OversizedResponse(head: head, buffered: collected, rest: iterator)
            }
            collected.writeBuffer(&chunk)
        }
        return (head, Data(collected.readableBytesView))
    }

    /// Sends `request`; returns the response head (hop-by-hop fields removed, targeted cache
    /// control applied) and the response, whose body is still to be read.
    func send(_ request: HTTPRequest, body: Data?) async throws -> (HTTPResponse, HTTPClientResponse) {
        guard let url = request.url else { throw CachingProxyError("the request has no absolute URL: \(request)") }
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
        outgoing.headers = HTTPHeaders(request.headerFields.map { ($0.name.rawName, $0.value) })
        if let body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let started = ContinuousClock.now
        let response = try await client.execute(outgoing, timeout: timeout)
        let elapsed = started.duration(to: .now).components
        latency.recordNanoseconds(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)

        var fields = HTTPFields()
        for (name, value) in response.headers {
            guard let fieldName = HTTPField.Name(name), fieldName != Self.originCacheControl else { continue }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        fields = HopByHop.removing(from: fields)
        if let targeted = targetedCacheControl, fields[targeted] != nil {
            fields[Self.originCacheControl] = fields[values: .cacheControl].joined(separator: ", ")
            fields[values: .cacheControl] = fields[values: targeted]
        }
        let status = HTTPResponse.Status(code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase)
        return (HTTPResponse(status: status, headerFields: fields), response)
    }

    /// Puts back the origin's `Cache-Control` where a targeted field stood in for it.
    static func restoringOriginCacheControl(_ fields: inout HTTPFields) {
        guard let original = fields[originCacheControl] else { return }
        fields[values: .cacheControl] = original.isEmpty ? [] : [original]
        fields[originCacheControl] = nil
    }
}
