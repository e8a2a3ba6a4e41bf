import Foundation
import HTTPTypes
import Testing
import TierCache
import TierCacheTesting

@testable import HTTPCaching

/// RFC 9111 §3.2: a 304 (or a HEAD response) updates a stored response's fields "except header
/// fields excepted from storage in Section 3.1". The updated response is kept as a new one would
/// be: without the fields `private="…"` (shared) and `no-cache="…"` name, through the store hooks,
/// and not at all when it may not be stored.
@Suite("HTTPCache: what a 304 updates is kept as a new response would be")
struct HTTPCacheFreshenedStorageTests {
    let clock = ManualCacheClock(start: epoch)

    func makeCache(mode: HTTPCache.Mode = .private, hooks: [StoreHook] = []) throws -> HTTPCache {
        HTTPCache(
            storage: TieredCache(tiers: [try MemoryTier(capacity: 1 << 20)]),
            configuration: .init(mode: mode, storeHooks: hooks, clock: clock.cacheClock))
    }

    func reply(_ status: Int, _ fields: [(String, String)], body: String = "hello") -> ScriptedOrigin.Reply {
        .respond(response(status, [("Date", HTTPDate.format(clock.now)), ("ETag", "\"v1\"")] + fields), body)
    }

    /// Stores a response with `fields`, lets it go stale, and revalidates it with a 304 carrying
    /// `notModified`; returns the origin (one request each so far).
    func revalidate(
        _ cache: HTTPCache, stored fields: [(String, String)], notModified: [(String, String)]
    ) async throws -> ScriptedOrigin {
        let origin = ScriptedOrigin([reply(200, fields)])
        _ = try await cache.response(for: request(), transport: origin.transport)
        clock.advance(by: 120)
        origin.enqueue(reply(304, notModified))
        let revalidated = try await cache.response(for: request(), transport: origin.transport)
        #expect(revalidated.source == .revalidated)
        return origin
    }

    @Test("§3.1, §5.2.2.7: a shared cache keeps no Set-Cookie a 304 names private: the next user does not get it")
    func privateFieldsOfA304AreNotKept() async throws {
        let cache = try makeCache(mode: .shared)
        let directives = ("Cache-Control", "max-age=60, private=\"Set-Cookie\"")
        let origin = try await revalidate(
            cache, stored: [directives, ("Set-Cookie", "sid=alice")],
            notModified: [directives, ("Set-Cookie", "sid=bob")])
        let next = try await cache.response(for: request(), transport: origin.transport)
        #expect(next.source == .cache)
        #expect(next.response.headerFields[.setCookie] == nil, "kept: \(next.response.headerFields)")
        #expect(origin.received.count == 2)
    }

    /// The stored Age counted again on top of the revalidation's times: stored past its lifetime
    /// (an upstream cache served it at `Age: 4000`), the response was stale again the moment it
    /// was revalidated, and went to the origin on every request.
    @Test("§4.2.3, §5.1: a 304 without Age restarts the age; one with Age sets it")
    func revalidationRestartsTheAge() async throws {
        let cache = try makeCache(mode: .shared)
        let origin = try await revalidate(
            cache, stored: [("Cache-Control", "max-age=3600"), ("Age", "4000")], notModified: [])
        let next = try await cache.response(for: request(), transport: origin.transport)
        #expect(next.source == .cache && origin.received.count == 2)
        #expect(next.response.headerFields[.age] == "0")

        let upstream = try makeCache(mode: .shared)
        let second = try await revalidate(
            upstream, stored: [("Cache-Control", "max-age=3600"), ("Age", "4000")], notModified: [("Age", "100")])
        let answer = try await upstream.response(for: request(), transport: second.transport)
        #expect(answer.source == .cache && answer.response.headerFields[.age] == "100")
    }

    @Test("§5.2.2.4: a 304's fields that no-cache names are not kept either")
    func noCacheFieldsOfA304AreNotKept() async throws {
        let cache = try makeCache()
        let directives = ("Cache-Control", "max-age=60, no-cache=\"X-Session\"")
        let origin = try await revalidate(
            cache, stored: [directives], notModified: [directives, ("X-Session", "bob")])
        let next = try await cache.response(for: request(), transport: origin.transport)
        #expect(next.source == .cache && next.response.headerFields[HTTPField.Name("X-Session")!] == nil)
    }

    @Test("A store hook shapes what a 304 updates: stripAuthenticationFields keeps no Set-Cookie from it")
    func storeHooksRunOnWhatA304Updates() async throws {
        let cache = try makeCache(hooks: [.stripAuthenticationFields()])
        let origin = try await revalidate(
            cache, stored: [("Cache-Control", "max-age=60")],
            notModified: [("Cache-Control", "max-age=60"), ("Set-Cookie", "sid=bob")])
        let next = try await cache.response(for: request(), transport: origin.transport)
        #expect(next.source == .cache && next.response.headerFields[.setCookie] == nil)
    }

    @Test("A hook's override of Cache-Control outlives a 304 that sends its own")
    func overriddenCacheControlOutlivesA304() async throws {
        let cache = try makeCache(hooks: [.overrideCacheControl("max-age=100")])
        let origin = try await revalidate(
            cache, stored: [("Cache-Control", "max-age=60")], notModified: [("Cache-Control", "no-cache")])
        clock.advance(by: 50)
        let next = try await cache.response(for: request(), transport: origin.transport)
        #expect(next.source == .cache, "the stored copy keeps the hook's max-age=100, not the 304's no-cache")
    }

    @Test(
        "A 304 that may not be stored (no-store) or that a hook vetoes removes the stored copy: the next request goes to the origin",
        arguments: [false, true])
    func unstorableNotModifiedRemovesTheStoredCopy(vetoed: Bool) async throws {
        let veto = StoreHook.storagePolicy { _, response in
            response.headerFields[HTTPField.Name("X-Veto")!] == nil ? nil : .notAllowed
        }
        let cache = try makeCache(hooks: [veto])
        let notModified = vetoed ? [("Cache-Control", "max-age=60"), ("X-Veto", "1")] : [("Cache-Control", "no-store")]
        let origin = try await revalidate(cache, stored: [("Cache-Control", "max-age=60")], notModified: notModified)
        origin.enqueue(reply(200, [("Cache-Control", "max-age=60")], body: "again"))
        let next = try await cache.response(for: request(), transport: origin.transport)
        #expect(next.source == .network && next.body == Data("again".utf8))
        #expect(origin.received.count == 3)
    }
}
