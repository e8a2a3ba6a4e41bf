import AsyncHTTPClient
import Foundation
import NIOHTTP1
import Testing

/// The proxy's limits and failure paths: bad requests, oversized headers and bodies, an origin
/// that is down or slow, clients that go away, bad options, and shutdown.
@Suite("Caching proxy, limits and failures", .timeLimit(.minutes(5)))
struct ProxyFailureTests {
    @Test("An origin that refuses connections gives 502; one that is too slow, or stalls within its body, gives 504")
    func upstreamDownAndSlow() async throws {
        let closedPort = try ReservedPort()
        let down = try await ProxyProcess.start(["--upstream", "http://127.0.0.1:\(closedPort.port)"])
        let refused = try await send(.GET, "\(down.url)/anything")
        #expect(refused.status == 502)
        #expect(refused.cacheStatus.contains("detail=proxy-error"))
        #expect(await down.stopped() == 0)

        try await withProxy(["--upstream-timeout", "0.3"]) { _, proxy in
            let slow = try await send(.GET, "\(proxy.url)/slow")
            #expect(slow.status == 504)
            let stalled = try await send(.GET, "\(proxy.url)/stalled-body")
            #expect(stalled.status == 504)
        }
    }

    /// Serving adds fields (`Via`, `Cache-Status`, `Age`), and `HTTPFields` stops the process at
    /// 65,535: stored, such a response crashed every process that served it, after restarts too.
    @Test("A response with more header fields than the limit gives 502, is not stored, and the proxy stays up")
    func tooManyResponseFields() async throws {
        try await withProxy { origin, proxy in
            for _ in 0..<2 {
                let answer = try await send(.GET, "\(proxy.url)/many-fields")
                #expect(answer.status == 502)
            }
            #expect(origin.count("/many-fields") == 2)
            #expect(try await send(.GET, "\(proxy.url)/fresh").status == 200)
        }
    }

    @Test("Malformed requests get 400, CONNECT and non-origin-form targets too (never an open proxy)")
    func badRequests() async throws {
        try await withProxy { origin, proxy in
            let garbage = try await RawHTTP.exchange(port: proxy.port, Array("THIS IS NOT HTTP\r\n\r\n".utf8))
            #expect(garbage.hasPrefix("HTTP/1.1 400"))
            let connect = try await RawHTTP.exchange(
                port: proxy.port,
                Array("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nConnection: close\r\n\r\n".utf8))
            #expect(connect.hasPrefix("HTTP/1.1 400"))
            let asterisk = try await RawHTTP.exchange(
                port: proxy.port, Array("OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
            #expect(asterisk.hasPrefix("HTTP/1.1 400"))
            // Absolute form naming another host still goes to the configured origin only.
            let absolute = try await RawHTTP.exchange(
                port: proxy.port,
                Array("GET http://example.com/fresh HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n".utf8))
            #expect(absolute.hasPrefix("HTTP/1.1 200"))
            #expect(absolute.hasSuffix("fresh"))
            #expect(origin.count("/fresh") == 1)
        }
    }

    @Test("A header section over --max-request-header gets 431; a body over --max-request-body gets 413")
    func sizeLimits() async throws {
        try await withProxy(["--max-request-header", "8KiB", "--max-request-body", "1KiB"]) { origin, proxy in
            for _ in 0..<2 { _ = try await send(.GET, "\(proxy.url)/fresh") }  // stored, and the answer reused
            let huge = try await send(
                .GET, "\(proxy.url)/fresh", headers: [("X-Big", String(repeating: "a", count: 10 << 10))])
            #expect(huge.status == 431)
            let tooLong = try await send(.POST, "\(proxy.url)/fresh", body: String(repeating: "b", count: 2 << 10))
            #expect(tooLong.status == 413)
            let fine = try await send(.POST, "\(proxy.url)/fresh", body: "small")
            #expect(fine.status == 200 && fine.body == "posted")
            #expect(origin.count("/fresh") == 2, "the first GET and the small POST reached the origin")
        }
    }

    @Test("A response larger than the cacheable limit streams through uncached, with or without Content-Length")
    func oversizedResponsesStream() async throws {
        try await withProxy(["--max-cacheable-body", "512KiB"]) { origin, proxy in
            for _ in 0..<2 {
                let large = try await send(.GET, "\(proxy.url)/large")
                #expect(large.status == 200 && large.body == ScriptedOrigin.largeBody)
                #expect(large.cacheStatus.contains("detail=too-large"))
                let chunked = try await send(.GET, "\(proxy.url)/large-chunked")
                #expect(chunked.body.count == 1 << 20 && chunked.body.allSatisfy { $0 == "x" })
            }
            #expect(origin.count("/large") == 2)
            #expect(origin.count("/large-chunked") == 2)

            // The client's own validators are answered as for a stored response (RFC 9110 §13.1.2).
            let same = try await send(.GET, "\(proxy.url)/large-tagged", headers: [("If-None-Match", "\"big\"")])
            #expect(same.status == 304 && same.body.isEmpty && same.field("ETag") == "\"big\"")
            let other = try await send(.GET, "\(proxy.url)/large-tagged", headers: [("If-None-Match", "\"old\"")])
            #expect(other.status == 200 && other.body == ScriptedOrigin.largeBody)
            // Tags are for purging, not for clients, on this path too.
            #expect(other.field("Surrogate-Key") == nil && same.field("Surrogate-Key") == nil)
        }
    }

    /// RFC 9112 §6.1: a server must not send Transfer-Encoding to an HTTP/1.0 request, which has
    /// no chunked coding: the client read the chunk sizes as part of the body. A body of unknown
    /// length is ended by closing the connection instead, which the answer announces.
    @Test("An HTTP/1.0 client gets a streamed body of unknown length unchunked, ended by the connection's close")
    func http10StreamedBody() async throws {
        try await withProxy(["--max-cacheable-body", "512KiB"]) { origin, proxy in
            for keepAlive in [false, true] {
                let request =
                    "GET /large-chunked HTTP/1.0\r\nHost: x\r\n" + (keepAlive ? "Connection: keep-alive\r\n" : "")
                let answer = try await RawHTTP.exchange(
                    port: proxy.port, Array((request + "\r\n").utf8), readTimeout: 20)
                let parts = answer.components(separatedBy: "\r\n\r\n")
                let head = parts[0].lowercased()
                #expect(head.hasPrefix("http/1.0 200"), "\(head.prefix(80))")
                #expect(!head.contains("transfer-encoding"), "\(head)")
                #expect(head.contains("connection: close"), "\(head)")
                let body = parts.dropFirst().joined(separator: "\r\n\r\n")
                #expect(body.utf8.count == 1 << 20 && body.allSatisfy { $0 == "x" }, "keep-alive \(keepAlive)")
            }
            #expect(origin.count("/large-chunked") == 2)
            // With a length: the connection is kept only when the request asks for it (two
            // answers, then the close the second request's 1.0 default asks for).
            let twoRequests = "GET /fresh HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /fresh HTTP/1.0\r\n\r\n"
            let answers = try await RawHTTP.exchange(port: proxy.port, Array(twoRequests.utf8), readTimeout: 20)
            #expect(answers.components(separatedBy: "HTTP/1.0 200").count == 3, "\(answers.prefix(200))")
            #expect(answers.lowercased().contains("connection: keep-alive"))
            #expect(answers.lowercased().contains("connection: close"))
        }
    }

    /// RFC 9110 §10.1.1: a client that sends `Expect: 100-continue` waits for the interim answer
    /// before its body (curl for a second, for bodies over 1 MiB); the proxy reads the body itself,
    /// so it answers, and does not pass the expectation on. Over the body limit, 413 instead.
    @Test("Expect: 100-continue gets 100 Continue before the body is sent, and is not forwarded; 413 over the limit")
    func expectContinue() async throws {
        try await withProxy(["--max-request-body", "1KiB"]) { origin, proxy in
            let head =
                "POST /fresh HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"
            let (interim, final) = try await RawHTTP.exchangeInTwoSteps(
                port: proxy.port, head: Array(head.utf8), body: Array("small".utf8), interimTimeout: 10)
            #expect(interim.hasPrefix("HTTP/1.1 100 Continue"), "\(interim.prefix(80))")
            let whole = interim + final
            #expect(whole.contains("HTTP/1.1 200") && whole.hasSuffix("posted"), "\(whole.suffix(80))")
            #expect(origin.count("/fresh") == 1)
            #expect(origin.lastRequestFields("/fresh")?[.expect] == nil, "the expectation is the proxy's to meet")

            let tooLarge =
                "POST /fresh HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"
            let refused = try await RawHTTP.exchange(port: proxy.port, Array(tooLarge.utf8), readTimeout: 10)
            #expect(refused.hasPrefix("HTTP/1.1 413"), "\(refused.prefix(80))")
        }
    }

    @Test("A disk tier refuses a response over 5% of its capacity; a smaller one is stored on disk")
    func diskTierFivePercentRule() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tiercache-proxy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        // 4 MiB of disk: entries up to 209,715 bytes. /medium (100 KiB, compressible) fits; /large (1 MiB) does not.
        try await withProxy(["--memory", "0", "--disk", directory.path, "--disk-capacity", "4MiB"]) { origin, proxy in
            #expect(proxy.summary.contains("tiers [lmdb 4 MiB]"))
            #expect(proxy.summary.contains("cacheable bodies up to 205 KiB"))
            for _ in 0..<2 {
                let medium = try await send(.GET, "\(proxy.url)/medium")
                let large = try await send(.GET, "\(proxy.url)/large")
                #expect(medium.body == ScriptedOrigin.mediumBody && large.body == ScriptedOrigin.largeBody)
            }
            #expect(origin.count("/medium") == 1)
            #expect(origin.count("/large") == 2)
        }
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("data.mdb").path))
    }

    @Test("A client that disconnects mid-response leaves nothing half-stored")
    func clientDisconnects() async throws {
        try await withProxy(["--max-cacheable-body", "4MiB"]) { origin, proxy in
            // Read the head and a little of /large, then hang up.
            let partial = try await RawHTTP.exchange(
                port: proxy.port, Array("GET /large HTTP/1.1\r\nHost: x\r\n\r\n".utf8), readLimit: 4096)
            #expect(partial.hasPrefix("HTTP/1.1 200"))
            let whole = try await send(.GET, "\(proxy.url)/large")
            #expect(whole.body == ScriptedOrigin.largeBody)
            #expect(whole.field("Content-Length") == String(ScriptedOrigin.largeBody.utf8.count))
            #expect(
                origin.count("/large") == 1, "the first, whole download was stored before any byte went to the client")
        }
    }

    @Test("SIGTERM lets a request in flight finish, then the proxy exits 0")
    func gracefulShutdown() async throws {
        let origin = try await ScriptedOrigin()
        let proxy = try await ProxyProcess.start(["--upstream", origin.url])
        async let inFlight = send(.GET, "\(proxy.url)/gated")
        await origin.gate.waitForArrival()
        kill(proxy.process.processIdentifier, SIGTERM)
        origin.gate.open()
        let response = try await inFlight
        #expect(response.status == 200 && response.body == "gated")
        // The connection closes after it: a client reusing connections must not send another.
        #expect(response.field("Connection") == "close")
        #expect(await proxy.stopped() == 0)
        await origin.stop()
    }

    /// Hits answered on the event loop never reach the server's own handlers, which, told to
    /// shut down, closed the connection with the answer half sent; and their close after a last
    /// answer of their own failed the writes still queued (a large miss's end).
    @Test(
        "SIGTERM lets an answer being sent finish, every byte, hit or miss, then the proxy exits 0",
        arguments: ["hit", "miss"])
    func gracefulShutdownOfAnAnswer(_ kind: String) async throws {
        let origin = try await ScriptedOrigin()
        let proxy = try await ProxyProcess.start(["--upstream", origin.url])
        // Stored by a first request: the next one is a hit on the event loop's path.
        if kind == "hit" { #expect(try await send(.GET, "\(proxy.url)/huge").status == 200) }
        let pid = proxy.process.processIdentifier
        let read = try await RawHTTP.bytesRead(
            port: proxy.port, Array("GET /huge HTTP/1.1\r\nHost: x\r\n\r\n".utf8), first: 64 << 10
        ) { kill(pid, SIGTERM) }
        #expect(read > ScriptedOrigin.hugeBody.utf8.count, "\(read) bytes: the head and all 8 MiB")
        #expect(origin.count("/huge") == 1)
        #expect(await proxy.stopped() == 0)
        await origin.stop()
    }

    /// Each answer from storage holds a copy of the body until its client has taken the last
    /// byte: clients that stopped reading a large response held a copy each, without bound.
    @Test(
        "Past the memory budget for answers in flight, answers are 503 with Retry-After until the stalled reader goes")
    func answerMemoryBudget() async throws {
        try await withProxy(["--max-answer-memory", "10MiB"]) { origin, proxy in
            #expect(try await send(.GET, "\(proxy.url)/huge").status == 200)  // stored: 8 MiB
            // A client reads 64 KiB of the hit and stops: its 8 MiB stay in flight.
            let stalled = try await RawHTTP.stalledReader(
                port: proxy.port, Array("GET /huge HTTP/1.1\r\nHost: x\r\n\r\n".utf8), first: 64 << 10)
            // Another 8 MiB would pass 10 MiB: refused, on the event loop's path and the async one.
            let refused = try await send(.GET, "\(proxy.url)/huge")
            #expect(refused.status == 503 && refused.field("Retry-After") == "1", "\(refused.status)")
            let refusedAsync = try await send(.GET, "\(proxy.url)/huge", headers: [("Connection", "keep-alive")])
            #expect(refusedAsync.status == 503, "\(refusedAsync.status)")
            // A small answer still fits.
            #expect(try await send(.GET, "\(proxy.url)/fresh").status == 200)
            // The origin's 4 MiB answer to a POST it has run goes out past the budget: a 503
            // said it had not run, and a client's retry ran it twice.
            let exported = try await send(.POST, "\(proxy.url)/export", body: "all")
            #expect(exported.status == 200 && exported.body.utf8.count == 4 << 20, "\(exported.status)")
            #expect(origin.count("/export") == 1)
            close(stalled)
            // The stalled answer's bytes return once the proxy sees the connection gone (its
            // writes fail): each attempt is a request, not a wait.
            var status = 0
            for _ in 0..<1_000 where status != 200 { status = try await send(.GET, "\(proxy.url)/huge").status }
            #expect(status == 200)
            #expect(origin.count("/huge") == 1)
        }
    }

    /// Shutdown let requests in flight finish however long they took: a client trickling an
    /// upload, a byte within every idle timeout, held the process after SIGTERM for as long as
    /// it liked.
    @Test("After SIGTERM, a request still in flight at the shutdown timeout is cut off and the proxy exits")
    func shutdownTimeout() async throws {
        let origin = try await ScriptedOrigin()
        let proxy = try await ProxyProcess.start(["--upstream", origin.url, "--shutdown-timeout", "0.5"])
        let pid = proxy.process.processIdentifier
        // 40 bytes at 250 ms each: 10 s, far past the half second the proxy gives it.
        let sent = try await RawHTTP.bodyTrickled(
            port: proxy.port,
            head: Array(
                "POST /fresh HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\nExpect: 100-continue\r\n\r\n".utf8),
            body: Array(repeating: UInt8(ascii: "a"), count: 40), pause: 250
        ) { kill(pid, SIGTERM) }
        #expect(sent < 40, "the upload ran to its end: shutdown waited for it")
        _ = await proxy.stopped()
        await origin.stop()
    }

    /// Every connection holds a descriptor, and one whose client trickles an upload holds it for
    /// long: without a bound, enough of them took every descriptor the process had.
    @Test("Past --max-connections, a new connection waits in the backlog until one closes")
    func connectionLimit() async throws {
        try await withProxy(["--max-connections", "2"]) { _, proxy in
            let request = Array("GET /fresh HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
            // Reads one answer (a 200's head and its short body arrive in one read here), or
            // nothing within `seconds`.
            let answer: @Sendable (Int32, Int) async throws -> String = { socket, seconds in
                try await RawHTTP.onDispatch {
                    var timeout = timeval(tv_sec: seconds, tv_usec: 0)
                    setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    let count = recv(socket, &buffer, buffer.count, 0)
                    return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : ""
                }
            }
            var open: [Int32] = []
            defer { for socket in open { close(socket) } }
            for _ in 0..<2 {
                let socket = try RawHTTP.connect(port: proxy.port)
                open.append(socket)
                try RawHTTP.send(socket, request)
                #expect(try await answer(socket, 10).hasPrefix("HTTP/1.1 200"), "the first two are served")
            }
            let third = try RawHTTP.connect(port: proxy.port)
            open.append(third)
            try RawHTTP.send(third, request)
            #expect(try await answer(third, 1) == "", "a third connection was served beside two open ones")
            close(open.removeFirst())
            #expect(try await answer(third, 10).hasPrefix("HTTP/1.1 200"), "served once one of the two closed")
        }
    }

    @Test("Bad options are refused with a message and a non-zero exit")
    func badOptions() async throws {
        let cases: [([String], String)] = [
            (["--upstream", "ftp://example.com"], "http:// or https://"),
            (["--upstream", "http://127.0.0.1:1", "--listen", "nowhere"], "is not HOST:PORT"),
            (["--upstream", "http://127.0.0.1:1", "--storage-policy", "https=sometimes"], "SCHEME=POLICY"),
            // A scheme with a space, or none, named no URL's scheme and was accepted.
            (["--upstream", "http://127.0.0.1:1", "--storage-policy", "https =allowed"], "SCHEME=POLICY"),
            (["--upstream", "http://127.0.0.1:1", "--storage-policy", "=allowed"], "SCHEME=POLICY"),
            (["--upstream", "http://127.0.0.1:1", "--storage-policy", "1http=allowed"], "SCHEME=POLICY"),
            (["--upstream", "http://127.0.0.1:1", "--memory", "lots"], "memory"),
            (["--upstream", "http://127.0.0.1:1", "--memory", "0"], "no tiers"),
            (["--upstream", "http://127.0.0.1:1", "--targeted-cache-control", "Bad Name"], "targeted cache control"),
            (["--upstream", "http://127.0.0.1:1", "--upstream-timeout", "1e10"], "--upstream-timeout"),
            (["--upstream", "http://127.0.0.1:1", "--upstream-timeout", "0"], "--upstream-timeout"),
            (["--upstream", "http://127.0.0.1:1", "--upstream-timeout", "nan"], "--upstream-timeout"),
            (["--upstream", "http://127.0.0.1:1", "--set-cookie", "sometimes"], "--set-cookie"),
            (["--upstream", "http://127.0.0.1:1", "--max-connections", "0"], "maximumConnections must be positive"),
            (["--upstream", "http://127.0.0.1:1", "--max-answer-memory", "0"], "maximumAnswerBytesInFlight"),
            (["--upstream", "http://127.0.0.1:1", "--shutdown-timeout", "-1"], "--shutdown-timeout"),
            (["--upstream", "http://127.0.0.1:1", "--shutdown-timeout", "nan"], "--shutdown-timeout"),
            // Doubled for the parser's limit, it trapped the process before any message.
            (["--upstream", "http://127.0.0.1:1", "--max-request-header", "4194304T"], "maximumRequestHeaderBytes"),
            // Options of a tier not asked for were accepted and ignored.
            (["--upstream", "http://127.0.0.1:1", "--disk-capacity", "10GiB"], "give --disk"),
            (["--upstream", "http://127.0.0.1:1", "--redis-cluster"], "give --redis"),
            (["--upstream", "http://127.0.0.1:1", "--redis-capacity", "1GiB"], "give --redis"),
        ]
        for (arguments, expected) in cases {
            let (status, message, _) = try await ProxyProcess.refusal(arguments)
            #expect(status != 0, "\(arguments)")
            #expect(message.contains(expected), "\(arguments): \(message)")
        }
    }

    @Test("`tiercache proxy` runs tiercache-proxy with the same options, by its path or found on PATH")
    func throughTheMainTool() throws {
        let directory = try ProxyProcess.executable().deletingLastPathComponent()
        // Found on PATH, argv[0] is the bare name; the current directory is elsewhere.
        let launches: [(URL, [String], [String: String]?)] = [
            (directory.appendingPathComponent("tiercache"), [], nil),
            (URL(fileURLWithPath: "/usr/bin/env"), ["tiercache"], ["PATH": directory.path + ":/usr/bin:/bin"]),
        ]
        for (executable, prefix, environment) in launches {
            let process = Process()
            process.executableURL = executable
            process.arguments = prefix + ["proxy", "--upstream", "gopher://example.com"]
            process.currentDirectoryURL = URL(fileURLWithPath: "/")
            if let environment { process.environment = environment }
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus != 0)
            #expect(
                message.contains("the upstream must be an http:// or https:// URL; got 'gopher://example.com'"),
                "\(prefix): \(message)")
        }
    }

    @Test("--metrics serves Prometheus counters of requests by outcome, and the libraries' own metrics")
    func metrics() async throws {
        try await withProxy(["--metrics", "127.0.0.1:0"]) { _, proxy in
            let metricsPort = try #require(proxy.metricsPort, "the summary names the metrics port: \(proxy.summary)")
            for _ in 0..<3 { _ = try await send(.GET, "\(proxy.url)/fresh") }
            let text = try await send(.GET, "http://127.0.0.1:\(metricsPort)/metrics").body
            #expect(text.contains(#"tiercache_proxy_requests_total{outcome="hit"} 2"#))
            #expect(text.contains(#"tiercache_proxy_requests_total{outcome="miss"} 1"#))
            #expect(text.contains("tiercache_proxy_response_body_bytes_total 15"))
            #expect(text.contains("tiercache_proxy_upstream_latency_seconds"))
            #expect(
                text.contains("tiercache_proxy_event_loop_answers_total 2"), "both hits were answered on the event loop"
            )
            // The engine, the tiered cache and the memory tier record through the bootstrapped
            // factory with no code of the proxy's: one response fetched and stored, two hits.
            #expect(text.contains(#"tiercache_http_requests_total{result="hit"} 2"#), "\(text)")
            #expect(text.contains(#"tiercache_http_requests_total{result="miss"} 1"#))
            #expect(text.contains(#"tiercache_http_stores_total{outcome="stored"} 1"#))
            #expect(text.contains(#"tiercache_tier_stores_total{tier="memory",outcome="stored"} 1"#))
            #expect(text.contains(#"tiercache_tier_lookups_total{tier="memory",result="hit"}"#))
            #expect(text.contains(#"tiercache_tier_lookups_total{tier="memory",result="miss"}"#))
            #expect(text.contains(#"tiercache_lookups_total{result="hit"}"#))
            #expect(text.contains("tiercache_tier_lookup_duration_seconds_bucket"))
            let bytes = text.split(separator: "\n").first { $0.hasPrefix(#"tiercache_tier_bytes{tier="memory"}"#) }
            #expect(
                (bytes?.split(separator: " ").last).flatMap { Double($0) }.map { $0 > 0 } == true,
                "a stored response occupies memory")
        }
    }

    @Test("An address that cannot be bound stops the proxy with an error naming the option, before any summary")
    func unbindableAddress() async throws {
        let taken = try ReservedPort()
        for option in ["--metrics", "--listen"] {
            var arguments = ["--upstream", "http://127.0.0.1:1", "--listen", "127.0.0.1:0", "--log-level", "critical"]
            arguments += [option, "127.0.0.1:\(taken.port)"]
            let (status, message, output) = try await ProxyProcess.refusal(arguments)
            #expect(status != 0)
            #expect(message.contains("could not serve \(option) on 127.0.0.1:\(taken.port)"), "\(message)")
            #expect(output.isEmpty, "no summary line: a test or a person waiting for it would connect to nothing")
        }
    }

    @Test("A Redis tier behind the proxy keeps responses for a second proxy process")
    func redisTier() async throws {
        guard let redisURL = ProcessInfo.processInfo.environment["TIERCACHE_REDIS_URL"] else {
            print("skipped: TIERCACHE_REDIS_URL is not set (scripts/test starts a Redis server)")
            return
        }
        let origin = try await ScriptedOrigin()
        let path = "/fresh?redis=\(UUID().uuidString)"
        for _ in 0..<2 {
            let proxy = try await ProxyProcess.start(["--upstream", origin.url, "--memory", "0", "--redis", redisURL])
            let response = try await send(.GET, "\(proxy.url)\(path)")
            #expect(response.body == "fresh")
            #expect(await proxy.stopped() == 0)
        }
        #expect(origin.count("/fresh") == 1, "the second proxy found the response in Redis")
        await origin.stop()
    }
}

/// Requests answered on the event loop and requests that take the async path, on one connection.
@Suite("Caching proxy, event-loop hits", .timeLimit(.minutes(5)))
struct ProxyFastPathTests {
    @Test("Pipelined requests are answered in order when a hit follows a request on the async path")
    func pipelinedOrder() async throws {
        try await withProxy { origin, proxy in
            _ = try await send(.GET, "\(proxy.url)/fresh")  // stored: the next one is an event-loop hit
            let pipelined =
                "GET /etag HTTP/1.1\r\nHost: x\r\n\r\nGET /fresh HTTP/1.1\r\nHost: x\r\n\r\nGET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            let output = try await RawHTTP.exchange(port: proxy.port, Array(pipelined.utf8))
            let validated = try #require(output.range(of: "validated"))
            let fresh = try #require(output.range(of: "\r\n\r\nfresh"))
            let echo = try #require(output.range(of: "via: 1.1 TierCache"))
            #expect(validated.upperBound <= fresh.lowerBound && fresh.upperBound <= echo.lowerBound)
            #expect(origin.count("/fresh") == 1)
        }
    }

    @Test("A hit answered on the event loop carries the same fields as one from the async path")
    func sameFieldsEitherWay() async throws {
        try await withProxy { _, proxy in
            _ = try await send(.GET, "\(proxy.url)/fresh")
            let eventLoopHit = try await send(.GET, "\(proxy.url)/fresh")
            // Connection: close keeps a request off the fast path.
            let asyncHit = try await send(.GET, "\(proxy.url)/fresh", headers: [("Connection", "close")])
            for hit in [eventLoopHit, asyncHit] {
                #expect(hit.body == "fresh")
                #expect(hit.cacheStatus.hasPrefix("TierCache;hit;ttl="))
                #expect(hit.field("Age") != nil && hit.field("Via") == "1.1 TierCache" && hit.field("ETag") == "\"f1\"")
                #expect(hit.field("Content-Length") == "5")
            }
        }
    }
}
