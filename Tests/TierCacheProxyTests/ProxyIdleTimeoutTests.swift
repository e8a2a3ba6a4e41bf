import HTTPCaching
import NIOCore
import Testing
import TierCache
import TierCacheProxy

/// A client that begins a request and sends nothing more held its connection (and on the async
/// path, a task waiting for the body) for good: the idle timer let a connection with a request
/// under way be. In-process, for an idle timeout short enough to test.
@Suite("Caching proxy, stalled clients", .timeLimit(.minutes(2)))
struct ProxyIdleTimeoutTests {
    @Test("A request left unfinished closes after the idle timeout; a slow origin's answer is still sent")
    func unfinishedRequestsAreClosed() async throws {
        try await withProxy(idleTimeout: .milliseconds(300)) { port, _ in
            try await unfinishedRequestsAreClosed(port: port)
        }
    }

    /// A slow-loris client: were each byte to restart the idle timer, a head trickled in would
    /// hold the connection for as long as the client liked (thousands of them, every descriptor).
    /// The timer sits after the HTTP decoder, so only a whole head (or body part) restarts it.
    @Test("A head sent a byte at a time, each within the idle timeout, is closed once the timeout has passed")
    func trickledHeadIsClosed() async throws {
        try await withProxy(idleTimeout: .milliseconds(500)) { port, origin in
            let head = Array(
                "GET /fresh HTTP/1.1\r\nHost: x\r\nX-Slow: \(String(repeating: "a", count: 40))\r\n\r\n".utf8)
            // 100 ms a byte: about 7 s for the whole head, fourteen idle timeouts.
            let sent = try await RawHTTP.bytesTrickled(port: port, head, pause: 100)
            #expect(sent < head.count, "the connection stayed open for the whole head")
            #expect(origin.count("/fresh") == 0)
            // A head sent at once, after an answer, has its own time: the connection serves on.
            let answers = try await RawHTTP.exchange(
                port: port,
                Array(
                    "GET /fresh HTTP/1.1\r\nHost: x\r\n\r\nGET /fresh HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                        .utf8), readTimeout: 60)
            #expect(answers.components(separatedBy: "HTTP/1.1 200").count == 3, "\(answers.prefix(120))")
        }
    }

    private func unfinishedRequestsAreClosed(port: Int) async throws {
        let unfinished = [
            // A GET whose body never comes (held by the event-loop path).
            "GET /fresh HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n",
            // A POST whose body stops (on the async path, a task waits for it).
            "POST /fresh HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc",
            // A head cut short.
            "GET /fresh HTTP/1.1\r\nHost: x\r\n",
        ]
        for request in unfinished {
            #expect(try await RawHTTP.isClosed(port: port, after: Array(request.utf8)), "\(request.debugDescription)")
        }
        // Waiting on the origin (2 s, past the idle timeout) is not idleness. The read allows a
        // loaded machine's pace (in the full parallel run the answer once took more than the
        // default 10 s): it only bounds a failure, where the connection closes without one.
        let slow = try await RawHTTP.exchange(
            port: port, Array("GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8),
            readTimeout: 60)
        #expect(slow.hasPrefix("HTTP/1.1 200") && slow.hasSuffix("late"), "\(slow.prefix(80))")
    }

    @Test("A slow client still reading an answer much longer than the idle timeout gets all of it")
    func slowReaderGetsTheWholeAnswer() async throws {
        try await withProxy(idleTimeout: .seconds(1), cacheableBytes: 32 << 20, memory: 512 << 20) { port, origin in
            // The miss (the async path), then the hit (the event loop's path): 8 MiB at about
            // 2.6 MB/s each, three idle timeouts long, a 256 KiB slice sent every 0.1 s.
            let request = Array("GET /huge HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
            for path in ["miss", "hit"] {
                let read = try await RawHTTP.bytesReadSlowly(port: port, request, slice: 64 << 10, pause: 25)
                #expect(
                    read > ScriptedOrigin.hugeBody.utf8.count, "\(path): \(read) bytes before the connection closed")
            }
            #expect(origin.count("/huge") == 1)
        }
    }

    /// Runs `body` with the port of an in-process proxy (shared mode, one memory tier of
    /// `memory` bytes) in front of a scripted origin.
    private func withProxy(
        idleTimeout: TimeAmount, cacheableBytes: Int = 8 << 20, memory: Int = 16 << 20,
        _ body: (Int, ScriptedOrigin) async throws -> Void
    ) async throws {
        let origin = try await ScriptedOrigin()
        let proxy = try CachingProxy(
            configuration: .init(
                upstream: CachingProxy.Upstream(origin.url), port: 0, maximumCacheableBodyBytes: cacheableBytes,
                idleTimeout: idleTimeout),
            storage: TieredCache(tiers: [try MemoryTier(capacity: memory)]),
            cacheConfiguration: HTTPCache.Configuration(mode: .shared))
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let server = try proxy.makeServer { listening.yield($0) }
        let running = Task { try await server.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        do {
            try await body(port, origin)
        } catch {
            Issue.record(error)
        }
        running.cancel()
        _ = try? await running.value
        try await proxy.shutdown()
        await origin.stop()
    }
}
