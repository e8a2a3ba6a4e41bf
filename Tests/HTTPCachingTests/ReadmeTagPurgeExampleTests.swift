import Foundation
import HTTPTypes
import Testing
import TierCache
import TierCacheLMDB

@testable import HTTPCaching

/// Keeps the README's (and the DocC catalog's) purge example compiling and true: the code between
/// the markers is the README's block, character for character (`ReadmeSnippetTests` checks that).
@Suite("README example: purge by tag")
struct ReadmeTagPurgeExampleTests {
    @Test("Tagged responses are purged by tag, softly by tag, and by URL")
    func purgeExample() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "readme-tags-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let memory = try MemoryTier(capacity: 64 << 20)
        let disk = try LMDBTier(directory: directory, capacity: 256 << 20)
        let productURL = try #require(URL(string: "https://shop.example.com/products/42"))
        let productPage = HTTPRequest(method: .get, url: productURL)
        let surrogateKey = try #require(HTTPField.Name("Surrogate-Key"))
        let origin: HTTPCache.Transport = { _, _ in
            let fields: HTTPFields = [.cacheControl: "max-age=3600", surrogateKey: "product-42 catalog"]
            return (HTTPResponse(status: .ok, headerFields: fields), Data("<h1>42</h1>".utf8))
        }
        // README:begin tags
        let cache = HTTPCache(storage: TieredCache(tiers: [memory, disk]), configuration: .init(mode: .shared))
        // The origin tags its responses: `Surrogate-Key: product-42 catalog` (or `Cache-Tag: product-42,catalog`).
        let page = try await cache.response(for: productPage, transport: origin)
        print(page.response.headerFields[surrogateKey] == nil)  // true: tags are not passed on

        try await cache.purge(tags: ["product-42"])  // every response tagged product-42 is gone, in every tier
        try await cache.purge(tags: ["catalog"], mode: .soft)  // stale: revalidated, stale-if-error may serve
        try await cache.purge(url: productURL)  // one URL, every variant
        print(cache.statistics.purges)  // 3
        // README:end
        #expect(page.response.headerFields[surrogateKey] == nil && page.wasStored)
        #expect(cache.statistics.purges == 3)
        let again = try await cache.response(for: productPage, transport: origin)
        #expect(again.source == .network)
        #expect(try await cache.response(for: productPage, transport: origin).source == .cache)
        try await cache.purge(tags: ["product-42"])
        #expect(try await cache.response(for: productPage, transport: origin).source == .network)
    }
}
