import AsyncHTTPClient
import Foundation
import HTTPCaching
import HTTPCachingAsyncHTTPClient
import HTTPCachingFoundation
import HTTPTypes
import Testing
import TierCache
import TierCacheLMDB

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The README's HTTP examples, run against a loopback origin. The code between each pair of
/// markers is the README's block of that name, character for character (`ReadmeSnippetTests`).
@Suite("README HTTP examples", .serialized)
struct ReadmeHTTPExampleTests {
    struct Item: Decodable { let id: Int }

    @Test("URLSession through the cache, with a storage-policy table and the auth-stripping hook")
    func urlSession() async throws {
        let origin = try await LoopbackOrigin.start()
        let url = origin.url("/max-age/3600")
        let cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: cacheDirectory) }
        // README:begin http-urlsession
        let memory = try MemoryTier(capacity: 32 << 20)
        let disk = try LMDBTier(directory: cacheDirectory, capacity: 512 << 20)
        let cache = HTTPCache(
            storage: TieredCache(tiers: [memory, disk]),
            configuration: .init(
                storagePolicies: StoragePolicyTable(
                    ["https": .allowed, "http": .allowedInMemoryOnly], default: .notAllowed),
                isConnectivityError: HTTPCache.isURLConnectivityError,
                storeHooks: [.stripAuthenticationFields()]))  // Authorization, Set-Cookie, ... never stored

        let (data, response, result) = try await cache.data(for: URLRequest(url: url), session: .shared)
        print(response.statusCode, result.source, data.count)  // 200 network 10, then: 200 cache 10
        // README:end
        let (_, _, second) = try await cache.data(for: URLRequest(url: url), session: .shared)
        #expect(result.source == .network && second.source == .cache)
        try await origin.stop()
    }

    @Test("AsyncHTTPClient through the cache")
    func asyncHTTPClient() async throws {
        let origin = try await LoopbackOrigin.start()
        let url = origin.url("/max-age/3600")
        // README:begin http-async-http-client
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let upstreamCache = HTTPCache(  // a server calling others for many users: a shared cache
            storage: TieredCache(tiers: [try MemoryTier(capacity: 32 << 20)]),
            configuration: .init(mode: .shared, isConnectivityError: HTTPCache.isAsyncHTTPClientConnectivityError))
        let result = try await upstreamCache.execute(HTTPRequest(method: .get, url: url), on: client)
        print(result.response.status, result.source)  // 200 OK network
        try await client.shutdown()
        // README:end
        #expect(result.source == .network)
        try await origin.stop()
    }

    @Test("The offline banner pattern")
    func offlineBanner() async throws {
        let origin = try await LoopbackOrigin.start()
        let url = origin.url("/max-age/0")
        let cache = HTTPCache(
            storage: TieredCache(tiers: [try MemoryTier(capacity: 32 << 20)]),
            configuration: .init(isConnectivityError: HTTPCache.isURLConnectivityError))
        _ = try await cache.response(
            for: HTTPRequest(method: .get, url: url), transport: HTTPCache.urlSessionTransport(.shared))
        try await origin.stop()
        var banner = ""
        let value = try await cache.cachedValue(
            for: HTTPRequest(method: .get, url: url), transport: HTTPCache.urlSessionTransport(.shared)
        ) { String(decoding: $0.body, as: UTF8.self) }
        switch value {
        case .fresh(let text):
            print(text)
        case .cached(let text, let storedAt):
            banner = "Offline: showing data from \(storedAt)"
            print(text, banner)
        }
        #expect(banner.hasPrefix("Offline"))
    }
}

@Suite("README snippets")
struct ReadmeSnippetTests {
    @Test("Every README block marked in the tests and examples is in the README, character for character")
    func snippetsMatch() throws {
        let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(
            contentsOf: testsDirectory.deletingLastPathComponent().appendingPathComponent("README.md"), encoding: .utf8)
        var found = 0
        // The tests, and the Examples package (a user's own package, built and run by scripts/examples).
        let examples = testsDirectory.deletingLastPathComponent().appendingPathComponent("Examples/Sources")
        let files = [testsDirectory, examples].flatMap { directory in
            FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)?.compactMap {
                $0 as? URL
            } ?? []
        }
        for file in files where file.pathExtension == "swift" {
            let lines = try String(contentsOf: file, encoding: .utf8).split(
                separator: "\n", omittingEmptySubsequences: false)
            var block: [Substring]?
            var indent = 0
            for line in lines {
                let trimmed = line.drop { $0 == " " }
                if trimmed.hasPrefix("// README:begin ") {
                    block = []
                    indent = line.count - trimmed.count
                } else if trimmed.hasPrefix("// README:end"), let lines = block {
                    let snippet = lines.map { $0.count >= indent ? String($0.dropFirst(indent)) : "" }.joined(
                        separator: "\n")
                    #expect(
                        readme.contains("```swift\n" + snippet + "\n```"),
                        "README.md lacks the block from \(file.lastPathComponent):\n\(snippet)")
                    found += 1
                    block = nil
                } else if block != nil {
                    block?.append(line)
                }
            }
        }
        #expect(found >= 4, "the README examples are all marked in tests")
    }
}
