import AsyncHTTPClient
import Foundation
import Testing

/// Two `tiercache-proxy` processes over one Redis with `--coherent`, as two nodes of a fleet: a
/// purge on one reaches the other's memory tier at once.
@Suite(
    "Caching proxy: coherent nodes",
    .enabled(
        if: ProcessInfo.processInfo.environment["TIERCACHE_REDIS_URL"] != nil,
        "TIERCACHE_REDIS_URL is not set: run the tests through scripts/test, which starts Redis on loopback"),
    .timeLimit(.minutes(5)))
struct ProxyCoherenceTests {
    @Test("A PURGE on one node makes the response a miss on the other, which had it in memory")
    func purgeReachesTheOtherNode() async throws {
        let redis = try #require(ProcessInfo.processInfo.environment["TIERCACHE_REDIS_URL"])
        let token = ProxyPurgeTests.token
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("purge-token-\(UUID().uuidString)")
        try Data(token.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let arguments = ["--redis", redis, "--coherent", "--purge-token-file", file.path, "--metrics", "127.0.0.1:0"]
        try await withProxy(arguments) { origin, a in
            let b = try await ProxyProcess.start(["--upstream", origin.url] + arguments)
            defer { _ = b.stop() }
            #expect(b.summary.contains("coherent with Redis"))
            // B prints its summary before its tracking connection is up: a PURGE before B subscribes
            // never reaches it, and B's flush when tracking begins would empty its memory mid-test.
            // So B's first flush, which follows its subscription, comes first.
            let trackingBegan = "tiercache_coherence_flushes_total{cause=\"tracking_began\"}"
            #expect(try await metric(b, trackingBegan, above: 0) >= 1, "B never began tracking")
            // A fetches and stores (memory and Redis); B finds it in Redis and keeps it in memory.
            // The path is unique to this run: the nodes share Redis with the other suites.
            let path = "/fresh?run=\(UUID().uuidString)"
            #expect(try await send(.GET, a.url + path).cacheStatus.contains("fwd=uri-miss"))
            #expect(try await send(.GET, b.url + path).cacheStatus.hasPrefix("TierCache;hit"))
            #expect(try await send(.GET, b.url + path).cacheStatus.hasPrefix("TierCache;hit"))
            let invalidated = "tiercache_coherence_invalidated_keys_total"
            let before = try await metric(b, invalidated)

            let purged = try await send(
                .RAW(value: "PURGE"), a.url + path, headers: [("Authorization", "Bearer \(token)")])
            #expect(purged.status == 200)
            // B applies the invalidation on its own: wait for its counter, then ask B.
            #expect(try await metric(b, invalidated, above: before) > before, "B never applied an invalidation")
            #expect(try await send(.GET, b.url + path).cacheStatus.contains("fwd=uri-miss"))
            #expect(origin.count("/fresh") == 2)
            #expect(await b.stopped() == 0, "B exits cleanly on SIGTERM")
        }
    }

    @Test("--coherent without --redis, or with nothing above it, is refused")
    func refusals() async throws {
        for arguments in [
            ["--upstream", "http://127.0.0.1:1", "--coherent"],
            ["--upstream", "http://127.0.0.1:1", "--memory", "0", "--redis", "redis://127.0.0.1:1", "--coherent"],
        ] {
            let refusal = try await ProxyProcess.refusal(arguments)
            #expect(refusal.status != 0 && refusal.message.contains("--coherent"), "\(refusal.message)")
        }
    }

    /// The value of `series` once it is above `floor`, or after 20 s, whichever comes first
    /// (an external process gives no event to wait on, so its metrics endpoint is polled).
    private func metric(_ proxy: ProxyProcess, _ series: String, above floor: Int) async throws -> Int {
        let deadline = ContinuousClock.now + .seconds(20)
        var value = try await metric(proxy, series)
        while value <= floor, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            value = try await metric(proxy, series)
        }
        return value
    }

    /// The value of the first series of `proxy`'s metrics endpoint that starts with `series`
    /// (a name, or a name and labels), 0 when there is none yet.
    private func metric(_ proxy: ProxyProcess, _ series: String) async throws -> Int {
        let port = try #require(proxy.metricsPort)
        let text = try await send(.GET, "http://127.0.0.1:\(port)/metrics").body
        let line = text.split(separator: "\n").first { $0.hasPrefix(series) }
        return line.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }.map { Int($0) } ?? 0
    }
}
