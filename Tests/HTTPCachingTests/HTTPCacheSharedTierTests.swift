import Foundation
import HTTPTypes
import Testing
import TierCache
import TierCacheTesting

@testable import HTTPCaching

/// A shared engine reading a tier a private engine writes too (a client engine and a proxy on
/// one disk or Redis tier, or one engine whose mode changed) finds responses only a private
/// cache may use: `private` ones, which it does not use on any path (not fresh, not as a stale
/// fallback when the origin fails), ones answering a request with `Authorization` that §3.5 does
/// not let a shared cache reuse, and ones holding a field `private` names or `Set-Cookie`, which
/// it uses without those fields.
@Suite("HTTPCache: a shared engine reading a private engine's responses")
struct HTTPCacheSharedTierTests {
    let clock = ManualCacheClock(start: epoch)

    func engines() throws -> (client: HTTPCache, proxy: HTTPCache) {
        let storage = TieredCache(tiers: [try MemoryTier(capacity: 1 << 20)])
        return (
            HTTPCache(storage: storage, configuration: .init(mode: .private, clock: clock.cacheClock)),
            HTTPCache(storage: storage, configuration: .init(mode: .shared, clock: clock.cacheClock))
        )
    }

    func reply(_ fields: [(String, String)], _ body: String) -> ScriptedOrigin.Reply {
        .respond(response(200, [("Date", HTTPDate.format(clock.now))] + fields), body)
    }

    @Test("A private response is absent to a shared engine: fetched when fresh, no fallback when stale")
    func privateResponseIsAbsent() async throws {
        let (client, proxy) = try engines()
        let origin = ScriptedOrigin([reply([("Cache-Control", "private, max-age=60")], "alice's page")])
        _ = try await client.response(for: request(), transport: origin.transport)
        #expect(try await client.response(for: request(), transport: origin.transport).source == .cache)
        origin.enqueue(reply([("Cache-Control", "private, max-age=60")], "bob's page"))
        let fetched = try await proxy.response(for: request(), transport: origin.transport)
        #expect(fetched.source == .network && fetched.body == Data("bob's page".utf8))

        // Stale, the origin down: an error, not alice's page as a stale fallback.
        clock.advance(by: 120)
        let down = ScriptedOrigin([.fail(.cannotConnectToHost)])
        await #expect(throws: URLError.self) { try await proxy.response(for: request(), transport: down.transport) }
    }

    @Test(
        "A response to a request with Authorization is absent to a shared engine unless §3.5 lets it reuse it",
        arguments: [
            ("max-age=60", false), ("public, max-age=60", true), ("max-age=60, s-maxage=60", true),
            ("must-revalidate, max-age=60", true),
        ])
    func authorizedResponse(cacheControl: String, shared: Bool) async throws {
        let (client, proxy) = try engines()
        let origin = ScriptedOrigin([reply([("Cache-Control", cacheControl)], "alice's account")])
        let alice = request("https://example.com/a", [("Authorization", "Bearer alice")])
        _ = try await client.response(for: alice, transport: origin.transport)
        #expect(try await client.response(for: alice, transport: origin.transport).source == .cache)
        origin.enqueue(reply([("Cache-Control", cacheControl)], "the public page"))
        let answer = try await proxy.response(for: request(), transport: origin.transport)
        #expect(answer.source == (shared ? .cache : .network))
        #expect(answer.body == Data((shared ? "alice's account" : "the public page").utf8))
    }

    @Test("A response to a request with Authorization is no stale fallback for a shared engine")
    func authorizedResponseIsNoFallback() async throws {
        let (client, proxy) = try engines()
        let origin = ScriptedOrigin([reply([("Cache-Control", "max-age=60")], "alice's account")])
        let alice = request("https://example.com/a", [("Authorization", "Bearer alice")])
        _ = try await client.response(for: alice, transport: origin.transport)

        // Fresh, and stale with the origin down: an error each time, never alice's account.
        let down = ScriptedOrigin([
            .fail(.cannotConnectToHost), .fail(.cannotConnectToHost), .fail(.cannotConnectToHost),
        ])
        await #expect(throws: URLError.self) { try await proxy.response(for: request(), transport: down.transport) }
        clock.advance(by: 120)
        await #expect(throws: URLError.self) { try await proxy.response(for: request(), transport: down.transport) }
        // The private engine, whose entry it is, still falls back to it.
        let fallback = try await client.response(for: alice, transport: down.transport)
        #expect(fallback.body == Data("alice's account".utf8))
    }

    @Test(
        "The fields only a private cache keeps are not served by a shared engine",
        arguments: [
            ("X-User", [("Cache-Control", "private=\"X-User\", max-age=60"), ("X-User", "alice")]),
            ("Set-Cookie", [("Cache-Control", "max-age=60"), ("Set-Cookie", "session=alice")]),
        ])
    func privateFieldsAreNotServed(field: String, fields: [(String, String)]) async throws {
        let (client, proxy) = try engines()
        let origin = ScriptedOrigin([reply(fields, "page")])
        _ = try await client.response(for: request(), transport: origin.transport)
        let name = try #require(HTTPField.Name(field))
        #expect(
            try await client.response(for: request(), transport: origin.transport).response.headerFields[name] != nil)
        let shared = try await proxy.response(for: request(), transport: origin.transport)
        #expect(shared.source == .cache && shared.body == Data("page".utf8))
        #expect(shared.response.headerFields[name] == nil)
        #expect(origin.received.count == 1)
    }

    /// Used without the fields a private cache keeps, a tagged response is still judged by its
    /// tags' purge records: a purge of its tag makes it a miss.
    @Test("A response used without its private fields still answers to its tags' purges")
    func strippedResponsesHonourPurges() async throws {
        let (client, proxy) = try engines()
        let fields = [("Cache-Control", "max-age=600"), ("Surrogate-Key", "product-1"), ("Set-Cookie", "s=alice")]
        let origin = ScriptedOrigin([reply(fields, "page")])
        _ = try await client.response(for: request(), transport: origin.transport)
        #expect(try await proxy.response(for: request(), transport: origin.transport).source == .cache)
        try await proxy.purge(tags: ["product-1"])
        origin.enqueue(reply([("Cache-Control", "max-age=600")], "page, again"))
        let after = try await proxy.response(for: request(), transport: origin.transport)
        #expect(after.source == .network && after.body == Data("page, again".utf8))
    }
}
