import Foundation
import HTTPTypes
import Testing
import TierCache
import TierCacheTesting

@testable import HTTPCaching

/// A shared cache that stored a response with `Set-Cookie` would send one visitor's cookie to
/// every later visitor: by default it does not store it (``HTTPCache/SetCookieInSharedCache``).
@Suite("HTTPCache: responses that set cookies, in shared and private caches")
struct HTTPCacheSetCookieTests {
    let clock = ManualCacheClock(start: epoch)

    func makeCache(
        _ mode: HTTPCache.Mode, _ setCookie: HTTPCache.SetCookieInSharedCache = .responseNotStored
    ) throws -> HTTPCache {
        HTTPCache(
            storage: TieredCache(tiers: [try MemoryTier(capacity: 1 << 20)]),
            configuration: .init(mode: mode, clock: clock.cacheClock, setCookieInSharedCache: setCookie))
    }

    func reply(_ fields: [(String, String)], status: Int = 200, body: String = "page") -> ScriptedOrigin.Reply {
        .respond(response(status, [("Date", HTTPDate.format(clock.now)), ("ETag", "\"v1\"")] + fields), body)
    }

    let alice = [("Cache-Control", "public, max-age=60"), ("Set-Cookie", "sid=alice")]

    /// Two visitors ask in turn; returns what the second got and how many requests the origin saw.
    func twoVisitors(_ cache: HTTPCache) async throws -> (second: HTTPCacheResponse, originRequests: Int) {
        let origin = ScriptedOrigin([reply(alice), reply([("Cache-Control", "public, max-age=60")])])
        let first = try await cache.response(for: request(), transport: origin.transport)
        #expect(first.response.headerFields[.setCookie] == "sid=alice", "the visitor who caused the fetch gets it")
        let second = try await cache.response(for: request(), transport: origin.transport)
        return (second, origin.received.count)
    }

    @Test("Shared, by default: not stored, counted; the next visitor gets the origin's own answer")
    func sharedDefault() async throws {
        let cache = try makeCache(.shared)
        let (second, requests) = try await twoVisitors(cache)
        #expect(second.source == .network && requests == 2)
        #expect(second.response.headerFields[.setCookie] == nil)
        #expect(cache.statistics.notStorable[.setCookie] == 1)
    }

    @Test("Shared, storedWithoutCookie: stored, and the next visitor gets the page without the cookie")
    func sharedWithoutCookie() async throws {
        let (second, requests) = try await twoVisitors(try makeCache(.shared, .storedWithoutCookie))
        #expect(second.source == .cache && requests == 1)
        #expect(second.response.headerFields[.setCookie] == nil)
    }

    @Test("Shared, stored (RFC 9111's letter), and private: stored with the cookie")
    func storedWithCookie() async throws {
        for cache in [try makeCache(.shared, .stored), try makeCache(.private)] {
            let (second, requests) = try await twoVisitors(cache)
            #expect(second.source == .cache && requests == 1)
            #expect(second.response.headerFields[.setCookie] == "sid=alice")
        }
    }

    @Test("Shared: a cookie that private=\"Set-Cookie\" withholds does not keep the response out")
    func withheldCookie() async throws {
        let cache = try makeCache(.shared)
        let origin = ScriptedOrigin([
            reply([("Cache-Control", "max-age=60, private=\"Set-Cookie\""), ("Set-Cookie", "sid=alice")])
        ])
        _ = try await cache.response(for: request(), transport: origin.transport)
        let second = try await cache.response(for: request(), transport: origin.transport)
        #expect(second.source == .cache && second.response.headerFields[.setCookie] == nil)
    }

    @Test(
        "Shared: a 304 that sets a cookie freshens the stored copy without it, and a cookie stored before goes too")
    func notModifiedWithCookie() async throws {
        let storage = TieredCache(tiers: [try MemoryTier(capacity: 1 << 20)])
        func cache(_ setCookie: HTTPCache.SetCookieInSharedCache) -> HTTPCache {
            HTTPCache(
                storage: storage,
                configuration: .init(mode: .shared, clock: clock.cacheClock, setCookieInSharedCache: setCookie))
        }
        // Stored with a cookie, as a cache told `.stored` (or one from before) left it.
        let origin = ScriptedOrigin([reply(alice)])
        _ = try await cache(.stored).response(for: request(), transport: origin.transport)
        clock.advance(by: 120)
        origin.enqueue(reply([("Cache-Control", "public, max-age=60"), ("Set-Cookie", "sid=bob")], status: 304))
        let revalidated = try await cache(.responseNotStored).response(for: request(), transport: origin.transport)
        #expect(revalidated.source == .revalidated && revalidated.response.headerFields[.setCookie] == "sid=bob")
        let next = try await cache(.responseNotStored).response(for: request(), transport: origin.transport)
        #expect(next.source == .cache, "freshened by the 304")
        #expect(next.response.headerFields[.setCookie] == nil, "a visitor's cookie went to the next visitor")
        #expect(origin.received.count == 2)
    }

    @Test(
        "Shared: a request joining another's fetch does not get the cookie set for that one; it fetches alone",
        arguments: [HTTPCache.SetCookieInSharedCache.responseNotStored, .storedWithoutCookie, .stored])
    func joinedFetches(setCookie: HTTPCache.SetCookieInSharedCache) async throws {
        let cache = try makeCache(.shared, setCookie)
        let origin = ScriptedOrigin([
            // Fresh for a minute: without the cookie, the joined request would get this response.
            reply([("Cache-Control", "max-age=60"), ("Set-Cookie", "sid=alice")]),
            reply([("Cache-Control", "max-age=60"), ("Set-Cookie", "sid=bob")]),
        ])
        origin.hold()
        let cookies = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    try await cache.response(for: request(), transport: origin.transport).response.headerFields[
                        .setCookie]
                }
            }
            while cache.inFlight.joinCount < 1 { await Task.yield() }
            origin.release()
            return try await group.reduce(into: []) { $0.append($1) }
        }
        if setCookie == .stored {
            #expect(cookies == ["sid=alice", "sid=alice"] && origin.received.count == 1)
        } else {
            #expect(cookies.sorted { ($0 ?? "") < ($1 ?? "") } == ["sid=alice", "sid=bob"])
            #expect(origin.received.count == 2)
        }
    }
}
