import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
@_spi(TierCacheInternals) import TierCache

/// A real HTTP/1.1 origin on 127.0.0.1 for end-to-end tests, with scripted routes:
///
/// - `/max-age/N`: 200 with `Cache-Control: max-age=N`; the body counts the requests to the path
/// - `/etag`: 200 with `ETag: "v1"` and `max-age=0`, or 304 when `If-None-Match` matches
/// - `/vary`: `Vary: Accept-Language`; the body echoes the request's `Accept-Language`
/// - `/no-store`: `Cache-Control: no-store`
/// - `/cookie`: 200 with `Set-Cookie` and `Cache-Control: max-age=3600`
/// - `/status/N`: status N
/// - `/gzip`: "hello, decoded world" gzip-compressed, with `Content-Encoding: gzip`, the
///   compressed `Content-Length`, `ETag: "g1"` and `max-age=3600` (to HEAD, the head alone)
/// - `/echo`: 200, `no-store`; the body is the request's method, a space and the request's body
/// - `/flip`: the first request gets 200 with `ETag: "v1"` and `max-age=0`; later ones a 302 to
///   `/etag` (whose `ETag` is the same)
/// - `/moved/N?to=PATH`: status N with `Location: PATH` (by default `/max-age/3600`; `self`: the
///   request's own path and query), no freshness
///
/// A request with `X-Delay-Milliseconds: N` is answered N ms late, like a slow origin; one with
/// `X-Body-Delay-Milliseconds: N` gets its head at once and its body N ms later.
final class LoopbackOrigin: Sendable {
    let port: Int
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup
    let log: RequestLog

    /// What the origin received, per path.
    final class RequestLog: Sendable {
        private let state = Locked<[String: [HTTPRequestHead]]>([:])
        func record(_ head: HTTPRequestHead) -> Int {
            state.withLock { state in
                let path = String(head.uri.split(separator: "?", maxSplits: 1).first ?? "")
                state[path, default: []].append(head)
                return state[path, default: []].count
            }
        }
        func requests(to path: String) -> [HTTPRequestHead] { state.withLock { $0[path] ?? [] } }
    }

    static func start() async throws -> LoopbackOrigin {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let log = RequestLog()
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMapThrowing {
                    try channel.pipeline.syncOperations.addHandler(OriginHandler(log: log))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return LoopbackOrigin(channel: channel, group: group, log: log, port: channel.localAddress?.port ?? 0)
    }

    private init(channel: any Channel, group: MultiThreadedEventLoopGroup, log: RequestLog, port: Int) {
        self.channel = channel
        self.group = group
        self.log = log
        self.port = port
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Stops listening: later connections are refused, as with a server that went away.
    func stop() async throws {
        try await channel.close()
        try await group.shutdownGracefully()
    }
}

/// One connection's handler, on its event loop.
private final class OriginHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    let log: LoopbackOrigin.RequestLog
    /// An `/echo` request whose body is still arriving.
    private var echo: (head: HTTPRequestHead, body: ByteBuffer)?

    init(log: LoopbackOrigin.RequestLog) { self.log = log }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            answer(head, context: context)
        case .body(var part):
            echo?.body.writeBuffer(&part)
        case .end:
            guard let (head, body) = echo else { return }
            echo = nil
            let text = "\(head.method.rawValue) \(String(buffer: body))"
            let fields = HTTPHeaders([("Cache-Control", "no-store"), ("Content-Length", "\(text.utf8.count)")])
            send(HTTPResponseHead(version: head.version, status: .ok, headers: fields), text, context: context)
        }
    }

    private func answer(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let count = log.record(head)
        let path = String(head.uri.split(separator: "?", maxSplits: 1).first ?? "")
        if path == "/echo" {
            echo = (head, ByteBuffer())
            return
        }
        if path == "/gzip" {
            let fields = HTTPHeaders([
                ("Cache-Control", "max-age=3600"), ("Content-Encoding", "gzip"), ("ETag", "\"g1\""),
                ("Content-Length", "\(Self.gzippedGreeting.count)"),
            ])
            let responseHead = HTTPResponseHead(version: head.version, status: .ok, headers: fields)
            context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
            if head.method != .HEAD {
                context.write(
                    wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: Self.gzippedGreeting)))), promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        var headers = HTTPHeaders([("Date", HTTPDateFormat.now())])
        var status = HTTPResponseStatus.ok
        var body = ""
        if path.hasPrefix("/max-age/") {
            headers.add(name: "Cache-Control", value: "max-age=\(path.dropFirst("/max-age/".count))")
            body = "response \(count)"
        } else if path == "/etag" {
            headers.add(name: "ETag", value: "\"v1\"")
            headers.add(name: "Cache-Control", value: "max-age=0")
            if head.headers["If-None-Match"].contains("\"v1\"") {
                status = .notModified
            } else {
                body = "etag body"
            }
        } else if path == "/upstream-labelled" {
            // As a cache between the origin and this one labels what it passes on (RFC 9211).
            headers.add(name: "Cache-Control", value: "max-age=3600")
            headers.add(name: "cache-status", value: "Upstream;fwd=uri-miss")
            body = "labelled upstream"
        } else if path == "/vary" {
            headers.add(name: "Cache-Control", value: "max-age=3600")
            headers.add(name: "Vary", value: "Accept-Language")
            body = "language: \(head.headers["Accept-Language"].first ?? "none")"
        } else if path == "/cookie" {
            // An hour, not a minute: the tests that read it twice expect one origin request, and on
            // a loaded machine (the whole suite at once) 81 s once passed between the two.
            headers.add(name: "Cache-Control", value: "max-age=3600")
            headers.add(name: "Set-Cookie", value: "session=secret")
            body = "with cookie \(count)"
        } else if path == "/no-store" {
            headers.add(name: "Cache-Control", value: "no-store")
            body = "not stored \(count)"
        } else if path.hasPrefix("/moved/"), let code = Int(path.dropFirst("/moved/".count)) {
            status = HTTPResponseStatus(statusCode: code)
            let query = head.uri.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
            let target = query.hasPrefix("to=") ? String(query.dropFirst(3)) : "/max-age/3600"
            headers.add(name: "Location", value: target == "self" ? head.uri : target)
        } else if path == "/flip" {
            // Stored once, then moved: a revalidation of the stored response meets a redirect.
            if count == 1 {
                headers.add(name: "ETag", value: "\"v1\"")
                headers.add(name: "Cache-Control", value: "max-age=0")
                body = "flip body"
            } else {
                status = .found
                headers.add(name: "Location", value: "/etag")
            }
        } else if path.hasPrefix("/status/"), let code = Int(path.dropFirst("/status/".count)) {
            status = HTTPResponseStatus(statusCode: code)
            body = "status \(code)"
        } else {
            status = .notFound
        }
        headers.add(name: "Content-Length", value: "\(body.utf8.count)")
        let responseHead = HTTPResponseHead(version: head.version, status: status, headers: headers)
        if let bodyDelay = head.headers["X-Body-Delay-Milliseconds"].first.flatMap(Int64.init) {
            // The head now, the body late: an origin that stalls mid-response.
            context.writeAndFlush(wrapOutboundOut(.head(responseHead)), promise: nil)
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let delayedBody = body
            context.eventLoop.scheduleTask(in: .milliseconds(bodyDelay)) {
                let (handler, context) = bound.value
                context.write(
                    handler.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: delayedBody)))), promise: nil)
                context.writeAndFlush(handler.wrapOutboundOut(.end(nil)), promise: nil)
            }
            return
        }
        let delay = head.headers["X-Delay-Milliseconds"].first.flatMap(Int64.init) ?? 0
        guard delay > 0 else {
            send(responseHead, body, context: context)
            return
        }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let delayedBody = body
        context.eventLoop.scheduleTask(in: .milliseconds(delay)) {
            let (handler, context) = bound.value
            handler.send(responseHead, delayedBody, context: context)
        }
    }

    /// "hello, decoded world" compressed by gzip (Python's `gzip.compress` with `mtime=0`).
    static let gzippedGreeting: [UInt8] = [
        0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xCB, 0x48, 0xCD, 0xC9, 0xC9, 0xD7, 0x51, 0x48,
        0x49, 0x4D, 0xCE, 0x4F, 0x49, 0x4D, 0x51, 0x28, 0xCF, 0x2F, 0xCA, 0x49, 0x01, 0x00, 0x43, 0xD0, 0xD9, 0xC8,
        0x14, 0x00, 0x00, 0x00,
    ]

    private func send(_ head: HTTPResponseHead, _ body: String, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !body.isEmpty { context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

private enum HTTPDateFormat {
    static func now() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date())
    }
}
