import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import Testing

/// A response as a client saw it.
struct Received {
    var status: Int
    var headers: HTTPHeaders
    var body: String

    func field(_ name: String) -> String? { headers.first(name: name) }
    /// Every `Cache-Status` field line, as one list.
    var cacheStatus: String { headers["Cache-Status"].joined(separator: ", ") }
}

/// A scripted origin and a proxy process in front of it, stopped again at the end.
func withProxy(
    _ arguments: [String] = [], _ body: (ScriptedOrigin, ProxyProcess) async throws -> Void
) async throws {
    let origin = try await ScriptedOrigin()
    let proxy: ProxyProcess
    do {
        proxy = try await ProxyProcess.start(["--upstream", origin.url] + arguments)
    } catch {
        await origin.stop()
        throw error
    }
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    do {
        try await TestClient.$current.withValue(client) { try await body(origin, proxy) }
    } catch {
        _ = await proxy.stopped()
        await origin.stop()
        try? await client.shutdown()
        throw error
    }
    #expect(await proxy.stopped() == 0, "the proxy exits cleanly on SIGTERM")
    await origin.stop()
    try await client.shutdown()
}

/// The client `send` uses: one per proxy fixture, so that no pooled connection outlives the
/// process it was open to (ports are reused from test to test).
enum TestClient {
    @TaskLocal static var current: HTTPClient?
}

/// Sends one request through AsyncHTTPClient.
func send(
    _ method: HTTPMethod = .GET, _ url: String, headers: [(String, String)] = [], body: String? = nil,
    timeout: TimeAmount = .seconds(20)
) async throws -> Received {
    var request = HTTPClientRequest(url: url)
    request.method = method
    request.headers = HTTPHeaders(headers)
    if let body { request.body = .bytes(ByteBuffer(string: body)) }
    if let client = TestClient.current { return try await exchange(request, on: client, timeout: timeout) }
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    do {
        let received = try await exchange(request, on: client, timeout: timeout)
        try await client.shutdown()
        return received
    } catch {
        try? await client.shutdown()
        throw error
    }
}

private func exchange(_ request: HTTPClientRequest, on client: HTTPClient, timeout: TimeAmount) async throws -> Received
{
    let response = try await client.execute(request, timeout: timeout)
    let bytes = try await response.body.collect(upTo: 64 << 20)
    return Received(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
}
