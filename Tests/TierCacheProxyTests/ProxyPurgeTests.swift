import AsyncHTTPClient
import Foundation
import Testing

@testable import TierCacheProxy

/// `PURGE` through the proxy process: by URL and by tag, hard and soft, only with the configured
/// bearer token; the tag fields never reach clients.
@Suite("Caching proxy: PURGE")
struct ProxyPurgeTests {
    static let token = "0123456789abcdef-test-token"

    /// The proxy with a purge token, from a file as an operator would give it.
    func withPurgingProxy(_ body: (ScriptedOrigin, ProxyProcess) async throws -> Void) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("purge-token-\(UUID().uuidString)")
        try Data((Self.token + "\n").utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withProxy(["--purge-token-file", file.path], body)
    }

    func purge(_ url: String, _ headers: [(String, String)] = []) async throws -> Received {
        try await send(.RAW(value: "PURGE"), url, headers: [("Authorization", "Bearer \(Self.token)")] + headers)
    }

    @Test("PURGE of a URL removes it; the tag fields are not passed to clients")
    func purgeURL() async throws {
        try await withPurgingProxy { origin, proxy in
            let first = try await send(.GET, "\(proxy.url)/tagged-a")
            #expect(first.field("Surrogate-Key") == nil && first.body == "a")
            #expect(try await send(.GET, "\(proxy.url)/tagged-a").cacheStatus.hasPrefix("TierCache;hit"))
            let purged = try await purge("\(proxy.url)/tagged-a")
            #expect(purged.status == 200 && purged.body.hasPrefix("purged /tagged-a (hard)"))
            #expect(try await send(.GET, "\(proxy.url)/tagged-a").cacheStatus.contains("fwd=uri-miss"))
            #expect(origin.count("/tagged-a") == 2)
        }
    }

    @Test("A target with bytes a URI may not hold reaches the origin encoded once, and PURGE of it finds it")
    func targetEncodedOnce() async throws {
        try await withPurgingProxy { origin, proxy in
            // As browsers send a query with brackets: unencoded, beside an encoded é.
            func send(_ method: String, _ fields: String = "") async throws -> String {
                try await RawHTTP.exchange(
                    port: proxy.port,
                    Array(
                        ("\(method) /target?q=caf%C3%A9&tag[]=new HTTP/1.1\r\nHost: 127.0.0.1\r\n\(fields)"
                            + "Connection: close\r\n\r\n").utf8))
            }
            // Encoded a second time, the origin got `q=caf%25C3%25A9`: a search for other text.
            let first = try await send("GET")
            #expect(first.hasSuffix("/target?q=caf%C3%A9&tag%5B%5D=new"), "\(first)")
            let hit = try await send("GET").lowercased()
            #expect(hit.contains("cache-status: tiercache;hit"), "\(hit)")
            let purged = try await send("PURGE", "Authorization: Bearer \(Self.token)\r\n")
            #expect(purged.hasPrefix("HTTP/1.1 200") && purged.contains("purged /target"), "\(purged)")
            _ = try await send("GET")
            #expect(origin.count("/target") == 2, "the purge named another key than the stored one")
        }
    }

    @Test("PURGE with Purge-Tags removes every response carrying a tag; soft mode revalidates instead")
    func purgeTags() async throws {
        try await withPurgingProxy { origin, proxy in
            for path in ["/tagged-a", "/tagged-b", "/fresh"] { _ = try await send(.GET, "\(proxy.url)\(path)") }
            let soft = try await purge("\(proxy.url)/", [("Purge-Tags", "product-2"), ("Purge-Mode", "soft")])
            #expect(soft.status == 200 && soft.body.hasPrefix("purged 1 tag(s) (soft)"))
            let revalidated = try await send(.GET, "\(proxy.url)/tagged-b")
            #expect(revalidated.body == "b" && origin.count("/tagged-b") == 2)
            #expect(origin.lastRequestFields("/tagged-b")?[.ifNoneMatch] == "\"b1\"", "a conditional request")

            let hard = try await purge("\(proxy.url)/", [("Purge-Tags", "catalog")])
            #expect(hard.status == 200)
            #expect(try await send(.GET, "\(proxy.url)/fresh").cacheStatus.hasPrefix("TierCache;hit"), "untagged")
            for path in ["/tagged-a", "/tagged-b"] {
                #expect(try await send(.GET, "\(proxy.url)\(path)").cacheStatus.contains("fwd=uri-miss"))
            }
            #expect(origin.count("/tagged-a") == 2 && origin.count("/tagged-b") == 3)
        }
    }

    @Test("Without the token PURGE is 401, with another 403, and nothing is purged")
    func purgeNeedsTheToken() async throws {
        try await withPurgingProxy { origin, proxy in
            _ = try await send(.GET, "\(proxy.url)/tagged-a")
            let missing = try await send(.RAW(value: "PURGE"), "\(proxy.url)/tagged-a")
            #expect(missing.status == 401 && missing.field("WWW-Authenticate") == "Bearer")
            for credentials in ["Bearer wrong-token-of-some-length", "Bearer \(Self.token)x", "Basic \(Self.token)"] {
                let wrong = try await send(
                    .RAW(value: "PURGE"), "\(proxy.url)/",
                    headers: [("Authorization", credentials), ("Purge-Tags", "catalog")])
                #expect(wrong.status == 403)
            }
            #expect(try await send(.GET, "\(proxy.url)/tagged-a").cacheStatus.hasPrefix("TierCache;hit"))
            #expect(origin.count("/tagged-a") == 1)
            let badMode = try await purge("\(proxy.url)/tagged-a", [("Purge-Mode", "gentle")])
            #expect(badMode.status == 400)
            let noTags = try await purge("\(proxy.url)/", [("Purge-Tags", " , ")])
            #expect(noTags.status == 400)
        }
    }

    @Test("Bearer tokens compare exactly")
    func tokenComparison() {
        #expect(CachingProxy.bearerTokenMatches("Bearer abc", "abc"))
        #expect(CachingProxy.bearerTokenMatches("bearer abc", "abc"))
        #expect(!CachingProxy.bearerTokenMatches("Bearer abcd", "abc"))
        #expect(!CachingProxy.bearerTokenMatches("Bearer ab", "abc"))
        #expect(!CachingProxy.bearerTokenMatches("Bearer", "abc"))
        #expect(!CachingProxy.bearerTokenMatches("Bearer ", ""))
    }

    @Test("A short purge token is refused at start")
    func shortToken() throws {
        let configuration = CachingProxy.Configuration(
            upstream: try .init("http://127.0.0.1:1"), port: 0, purgeToken: "short")
        #expect(throws: CachingProxyError.self) { try configuration.validate() }
    }
}
