import Foundation
import HTTPCaching
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
@_spi(TierCacheInternals) import TierCache

/// An origin server on 127.0.0.1 with scripted responses, counting the requests each path gets
/// and remembering the last request's fields.
final class ScriptedOrigin: Sendable {
    private let recorder = Recorder()
    /// From now on every route answers 500 (to test stale-if-error).
    func startFailing() { recorder.failing.store(true, ordering: .relaxed) }
    /// Requests to `/gated` wait here until the test opens the gate.
    let gate = Gate()
    private let group: ServiceGroup
    private let runner: Task<Void, any Error>
    let port: Int

    static let largeBody = String(repeating: "0123456789abcdef", count: 1 << 16)  // 1 MiB
    /// Larger than the kernel's socket buffers on loopback hold (4 MiB each way at most).
    static let hugeBody = String(repeating: "0123456789abcdef", count: 1 << 19)  // 8 MiB
    static let mediumBody = String(repeating: "fedcba9876543210", count: 100 << 6)  // 100 KiB

    init() async throws {
        // A HEAD is its GET without the body, as origins answer it.
        let router = Router(options: .autoGenerateHeadEndpoints)
        let gate = self.gate
        router.middlewares.add(CountingMiddleware(recorder: recorder))

        router.get("/fresh") { _, _ in
            Self.text(
                "fresh",
                ["Cache-Control": "max-age=600", "ETag": "\"f1\"", "Last-Modified": "Sun, 01 Nov 2026 00:00:00 GMT"])
        }
        router.post("/fresh") { _, _ in Self.text("posted", [:]) }
        // An unsafe request whose answer is large (4 MiB), as an export the origin runs for a POST.
        router.post("/export") { _, _ in Self.text(String(Self.hugeBody.prefix(4 << 20)), [:]) }
        // Labelled by a cache between the origin and the proxy (RFC 9211).
        router.get("/upstream-labelled") { _, _ in
            Self.text("labelled", ["Cache-Control": "max-age=600", "Cache-Status": "Upstream;hit"])
        }
        // More header fields than any real response, within AsyncHTTPClient's parser's limits
        // (65,534 fields, 80 KiB of names and values).
        router.get("/many-fields") { _, _ in
            var response = Self.text("many", ["Cache-Control": "max-age=600"])
            for _ in 0..<10_001 { response.headers.append(HTTPField(name: .init("a")!, value: "")) }
            return response
        }
        // Tagged for purging (Fastly's field, Cloudflare's), with a validator for soft purges.
        router.get("/tagged-a") { _, _ in
            Self.text("a", ["Cache-Control": "max-age=600", "Surrogate-Key": "product-1 catalog", "ETag": "\"a1\""])
        }
        router.get("/tagged-b") { _, _ in
            Self.text("b", ["Cache-Control": "max-age=600", "Cache-Tag": "product-2,catalog", "ETag": "\"b1\""])
        }
        // Stale to a GET, fresh for ten minutes to a HEAD, the same entity tag: a HEAD that the
        // proxy forwards updates the stored GET response (RFC 9111 §4.3.5).
        router.get("/head-update") { request, _ in
            Self.text(
                "body", ["ETag": "\"h1\"", "Cache-Control": request.method == .head ? "max-age=600" : "max-age=0"])
        }
        // Expires with the month in capitals (valid to browsers and to this cache) and in UTC (invalid).
        router.get("/expires-case") { _, _ in Self.text("case", ["Expires": "Thu, 18 AUG 2050 02:01:18 GMT"]) }
        router.get("/expires-utc") { _, _ in Self.text("utc", ["Expires": "Thu, 18 Aug 2050 02:01:18 UTC"]) }
        // A POST whose response is the target's representation (RFC 9110 §9.3.3).
        router.post("/posted") { _, _ in
            Self.text("from the post", ["Cache-Control": "max-age=600", "Content-Location": "/posted"])
        }
        router.get("/posted") { _, _ in Self.text("from a get", ["Cache-Control": "max-age=600"]) }
        router.get("/etag") { request, _ in
            if request.headers[.ifNoneMatch] == "\"v1\"" {
                return Response(status: .notModified, headers: [.eTag: "\"v1\"", .cacheControl: "max-age=0"])
            }
            return Self.text("validated", ["Cache-Control": "max-age=0", "ETag": "\"v1\""])
        }
        router.get("/private") { _, _ in Self.text("mine", ["Cache-Control": "private, max-age=600"]) }
        router.get("/s-maxage") { _, _ in Self.text("shared", ["Cache-Control": "max-age=0, s-maxage=600"]) }
        router.get("/no-store") { _, _ in Self.text("never", ["Cache-Control": "no-store"]) }
        router.get("/vary") { request, _ in
            let language = request.headers[.acceptLanguage] ?? "none"
            return Self.text("hello in \(language)", ["Cache-Control": "max-age=600", "Vary": "Accept-Language"])
        }
        // A search API reading its query from a GET's body.
        router.get("/search-body") { request, _ in
            let query = try await request.body.collect(upTo: 1 << 10)
            return Self.text("\(query.readableBytes) bytes", ["Cache-Control": "max-age=600"])
        }
        // The target as it arrived, byte for byte.
        router.get("/target") { request, _ in Self.text(request.uri.description, ["Cache-Control": "max-age=600"]) }
        router.get("/echo") { request, _ in
            let lines = request.headers.map { "\($0.name.canonicalName): \($0.value)" }.sorted().joined(separator: "\n")
            return Self.text(lines, [:])
        }
        router.get("/reflect") { request, _ in
            // An origin that builds its page from fields the cache key does not cover (a web
            // cache poisoning gadget): what it says must not depend on what one client sent.
            let host = request.headers[HTTPField.Name("X-Forwarded-Host")!] ?? "origin.example"
            let method = request.headers[HTTPField.Name("X-HTTP-Method-Override")!] ?? "GET"
            return Self.text("<a href=\"https://\(host)/\">\(method)</a>", ["Cache-Control": "max-age=600"])
        }
        router.get("/hop") { _, _ in
            Self.text(
                "hop",
                [
                    "Cache-Control": "max-age=600", "Connection": "X-Secret", "X-Secret": "1",
                    "Keep-Alive": "timeout=5", "X-Kept": "yes",
                ])
        }
        router.get("/swr") { _, _ in
            Self.text("swr", ["Cache-Control": "max-age=0, stale-while-revalidate=600", "ETag": "\"s1\""])
        }
        router.get("/sie") { _, _ in Self.text("sie", ["Cache-Control": "max-age=0, stale-if-error=600"]) }
        router.get("/no-cache") { request, _ in
            if request.headers[.ifNoneMatch] == "\"n1\"" {
                return Response(status: .notModified, headers: [.eTag: "\"n1\""])
            }
            return Self.text("check first", ["Cache-Control": "no-cache", "ETag": "\"n1\""])
        }
        // A 304 that repeats no validator, as many origins send (RFC 9110 §15.4.5 notwithstanding).
        router.get("/bare-304") { request, _ in
            if request.headers[.ifNoneMatch] == "\"b1\"" { return Response(status: .notModified) }
            return Self.text("validated once", ["Cache-Control": "no-cache", "ETag": "\"b1\""])
        }
        router.get("/must-revalidate") { _, _ in Self.text("strict", ["Cache-Control": "max-age=0, must-revalidate"]) }
        router.get("/proxy-revalidate") { _, _ in
            Self.text("strict for proxies", ["Cache-Control": "max-age=0, proxy-revalidate"])
        }
        router.get("/heuristic") { _, _ in
            // No explicit lifetime: a tenth of the time since Last-Modified (about a year) applies.
            Self.text("old news", ["Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"])
        }
        router.get("/cdn") { _, _ in
            Self.text("cdn", ["Cache-Control": "no-store", "CDN-Cache-Control": "max-age=600"])
        }
        // Expires a day ahead, which the targeted field sets aside (RFC 9213 §2.2): no lifetime.
        router.get("/cdn-expires") { _, _ in
            Self.text("cdn", ["CDN-Cache-Control": "must-revalidate", "Expires": HTTPDate.format(Date() + 86_400)])
        }
        // A 304 that does not repeat CDN-Cache-Control (RFC 9110 §15.4.5 does not ask it to).
        router.get("/cdn-304") { request, _ in
            if request.headers[.ifNoneMatch] == "\"c1\"" {
                return Response(status: .notModified, headers: [.eTag: "\"c1\"", .cacheControl: "max-age=86400"])
            }
            return Self.text(
                "cdn", ["Cache-Control": "max-age=86400", "CDN-Cache-Control": "max-age=0", "ETag": "\"c1\""])
        }
        // Targeted fields that are not valid Dictionaries of the right types (RFC 9213 §2.1).
        router.get("/cdn-string") { _, _ in
            Self.text("cdn", ["Cache-Control": "no-store", "CDN-Cache-Control": "max-age=\"600\""])
        }
        router.get("/cdn-bad-flag") { _, _ in
            Self.text("cdn", ["Cache-Control": "max-age=600", "CDN-Cache-Control": "no-store=3"])
        }
        router.get("/large") { _, _ in Self.text(Self.largeBody, ["Cache-Control": "max-age=600"]) }
        router.get("/large-tagged") { _, _ in
            Self.text(Self.largeBody, ["Cache-Control": "max-age=600", "ETag": "\"big\"", "Surrogate-Key": "big-file"])
        }
        router.get("/huge") { _, _ in Self.text(Self.hugeBody, ["Cache-Control": "max-age=600"]) }
        router.get("/medium") { _, _ in Self.text(Self.mediumBody, ["Cache-Control": "max-age=600"]) }
        // Varies, so each answer is its own copy (not memoized).
        router.get("/medium-vary") { _, _ in
            Self.text(Self.mediumBody, ["Cache-Control": "max-age=600", "Vary": "Accept-Language"])
        }
        router.get("/large-chunked") { _, _ in
            // No Content-Length: the proxy finds out the size while reading.
            Response(
                status: .ok, headers: [.cacheControl: "max-age=600"],
                body: ResponseBody { writer in
                    for _ in 0..<16 {
                        try await writer.write(ByteBuffer(string: String(repeating: "x", count: 1 << 16)))
                    }
                    try await writer.finish(nil)
                })
        }
        router.get("/slow") { _, _ in
            try await Task.sleep(for: .seconds(2))  // the origin being slow is what is under test
            return Self.text("late", [:])
        }
        router.get("/stalled-body") { _, _ in
            // A head and the first bytes at once, then the rest late: the origin stalling is
            // what is under test.
            Response(
                status: .ok, headers: [.cacheControl: "max-age=600", .contentLength: "20"],
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: "first ten "))
                    try await Task.sleep(for: .seconds(2))
                    try await writer.write(ByteBuffer(string: "last ten. "))
                    try await writer.finish(nil)
                })
        }
        router.get("/gated") { _, _ in
            await gate.arriveAndWait()
            return Self.text("gated", ["Cache-Control": "max-age=600"])
        }

        let (portStream, portContinuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "origin")
        logger.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let group = self.group
        runner = Task { try await group.run() }
        var iterator = portStream.makeAsyncIterator()
        port = await iterator.next() ?? 0
    }

    var url: String { "http://127.0.0.1:\(port)" }

    func count(_ path: String) -> Int { recorder.counts.withLock { $0[path] ?? 0 } }
    func lastRequestFields(_ path: String) -> HTTPFields? { recorder.lastFields.withLock { $0[path] } }
    /// The methods of the requests for `path`, in order.
    func methods(_ path: String) -> [String] { recorder.methods.withLock { $0[path] ?? [] } }

    func stop() async {
        await group.triggerGracefulShutdown()
        _ = await runner.result
    }

    static func text(_ body: String, _ fields: [String: String]) -> Response {
        var headers = HTTPFields()
        for (name, value) in fields {
            if let name = HTTPField.Name(name) { headers.append(HTTPField(name: name, value: value)) }
        }
        headers[.contentType] = "text/plain"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}

/// What the origin has been asked.
private final class Recorder: Sendable {
    let counts = Locked<[String: Int]>([:])
    let lastFields = Locked<[String: HTTPFields]>([:])
    let methods = Locked<[String: [String]]>([:])
    let failing = Atomic(false)
}

private struct CountingMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let recorder: Recorder

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        recorder.counts.withLock { $0[path, default: 0] += 1 }
        recorder.lastFields.withLock { $0[path] = request.headers }
        recorder.methods.withLock { $0[path, default: []].append(request.method.rawValue) }
        if recorder.failing.load(ordering: .relaxed) { return Response(status: .internalServerError) }
        return try await next(request, context)
    }
}

/// Lets a test know a request reached the origin, and hold it there until released.
final class Gate: Sendable {
    private let arrivals: AsyncStream<Void>
    private let arrivalSink: AsyncStream<Void>.Continuation
    private let waiting = Locked<[CheckedContinuation<Void, Never>]>([])
    private let opened = Locked(false)

    init() { (arrivals, arrivalSink) = AsyncStream.makeStream(of: Void.self) }

    func arriveAndWait() async {
        arrivalSink.yield()
        await withCheckedContinuation { continuation in
            let open = opened.withLock { open in
                if !open { waiting.withLock { $0.append(continuation) } }
                return open
            }
            if open { continuation.resume() }
        }
    }

    /// Returns once a request has arrived.
    func waitForArrival() async {
        var iterator = arrivals.makeAsyncIterator()
        _ = await iterator.next()
    }

    func open() {
        let released = opened.withLock { open in
            open = true
            return waiting.withLock { list in
                defer { list = [] }
                return list
            }
        }
        for continuation in released { continuation.resume() }
    }
}
