import Foundation
import HTTPTypes
import MetricsTestKit
import Synchronization
import Testing
import TierCache
import TierCacheLMDB
import TierCacheTesting

@testable import HTTPCaching

/// Purging by tag (surrogate keys) and by URL, hard and soft: tags are recorded from
/// `Surrogate-Key` and `Cache-Tag`, a purge writes one record per tag in the lowest tier, and
/// stored responses are judged by those records when read, in this engine and in any other
/// that shares the lowest tier.
@Suite("HTTPCache: purge by tag and by URL")
struct HTTPCacheTagPurgeTests {
    let clock = ManualCacheClock(start: epoch)

    func tagged(
        _ tags: [(String, String)], body: String = "v1", extra: [(String, String)] = []
    )
        -> ScriptedOrigin
        .Reply
    {
        .respond(
            response(200, [("Date", HTTPDate.format(clock.now)), ("Cache-Control", "max-age=600")] + tags + extra),
            body)
    }

    func engine(
        _ tiers: [any CacheTier], tagging: HTTPCache.Tagging = .init(), metrics: TestMetrics? = nil
    ) -> HTTPCache {
        HTTPCache(
            storage: TieredCache(tiers: tiers),
            configuration: .init(
                mode: .shared, clock: clock.cacheClock, metricsFactory: metrics, tagging: tagging))
    }

    func get(_ cache: HTTPCache, _ origin: ScriptedOrigin, _ path: String = "/a") async throws -> HTTPCacheResponse {
        try await cache.response(for: request("https://example.com" + path), transport: origin.transport)
    }

    @Test("Tags come from Surrogate-Key (spaces) and Cache-Tag (commas); both fields are removed from what is served")
    func tagsAreRecordedAndFieldsRemoved() async throws {
        let cache = engine([try MemoryTier(capacity: 1 << 20)])
        let origin = ScriptedOrigin([tagged([("Surrogate-Key", "product-1  catalog"), ("Cache-Tag", "eu, catalog")])])
        let first = try await get(cache, origin)
        let hit = try await get(cache, origin)
        for answer in [first, hit] {
            #expect(answer.response.headerFields[HTTPField.Name("Surrogate-Key")!] == nil)
            #expect(answer.response.headerFields[HTTPField.Name("Cache-Tag")!] == nil)
        }
        #expect(hit.source == .cache)
        let key = try #require(cache.primaryKey(for: request()))
        let stored = try #require(await cache.lookup(primaryKey: key, request: request()))
        #expect(stored.response.tags == ["product-1", "catalog", "eu"])
        #expect(stored.response.tagStamps.allSatisfy { $0.epoch != 0 }, "stamped at the write")
    }

    @Test("With removesFields off the fields reach the client")
    func fieldsKeptWhenConfigured() async throws {
        let cache = engine([try MemoryTier(capacity: 1 << 20)], tagging: .init(removesFields: false))
        let origin = ScriptedOrigin([tagged([("Surrogate-Key", "a b")])])
        let first = try await get(cache, origin)
        let hit = try await get(cache, origin)
        #expect(first.response.headerFields[HTTPField.Name("Surrogate-Key")!] == "a b")
        #expect(hit.response.headerFields[HTTPField.Name("Surrogate-Key")!] == "a b" && hit.source == .cache)
    }

    @Test("A hard purge of a tag makes every response carrying it a miss, and leaves the others")
    func hardPurgeByTag() async throws {
        let cache = engine([try MemoryTier(capacity: 1 << 20)])
        let origin = ScriptedOrigin([
            tagged([("Surrogate-Key", "product-1 catalog")]), tagged([("Surrogate-Key", "product-2 catalog")]),
            tagged([("Surrogate-Key", "product-2")]), tagged([], body: "v2"), tagged([], body: "v2"),
        ])
        _ = try await get(cache, origin, "/1")
        _ = try await get(cache, origin, "/2")
        _ = try await get(cache, origin, "/untagged")
        try await cache.purge(tags: ["product-1"])
        #expect(try await get(cache, origin, "/2").source == .cache, "another tag: kept")
        #expect(try await get(cache, origin, "/untagged").source == .cache)
        let purged = try await get(cache, origin, "/1")
        #expect(purged.source == .network && purged.body == Data("v2".utf8))
        #expect(origin.received.count == 4)
        try await cache.purge(tags: ["catalog"])
        #expect(try await get(cache, origin, "/1").source == .cache, "the refetched /1 carries no tag: kept")
        #expect(try await get(cache, origin, "/2").source == .network)
        #expect(cache.statistics.purges == 2 && cache.statistics.purgedEntriesRemoved == 2)
    }

    @Test("Stored again after a purge, a response with the tag is a hit again")
    func storeAfterPurgeIsCurrent() async throws {
        let cache = engine([try MemoryTier(capacity: 1 << 20)])
        let origin = ScriptedOrigin([tagged([("Cache-Tag", "t")]), tagged([("Cache-Tag", "t")], body: "v2")])
        _ = try await get(cache, origin)
        try await cache.purge(tags: ["t"])
        #expect(try await get(cache, origin).body == Data("v2".utf8))
        let hit = try await get(cache, origin)
        #expect(hit.source == .cache && hit.body == Data("v2".utf8))
    }

    @Test("A soft purge makes tagged responses stale: revalidated, served by stale-while-revalidate meanwhile")
    func softPurgeByTag() async throws {
        let cache = engine([try MemoryTier(capacity: 1 << 20)])
        let origin = ScriptedOrigin([
            tagged(
                [("Surrogate-Key", "t"), ("ETag", "\"v1\"")], extra: [("Cache-Control", "stale-while-revalidate=60")]),
            .respond(response(304, [("ETag", "\"v1\""), ("Cache-Control", "max-age=600")]), ""),
        ])
        _ = try await get(cache, origin)
        clock.advance(by: 5)
        try await cache.purge(tags: ["t"], mode: .soft)
        let stale = try await get(cache, origin)
        #expect(stale.source == .staleWhileRevalidate && stale.body == Data("v1".utf8))
        await cache.waitForBackgroundRevalidations()
        #expect(origin.received.count == 2)
        #expect(origin.received.last?.headerFields[.ifNoneMatch] == "\"v1\"", "a revalidation, not a refetch")
        let fresh = try await get(cache, origin)
        #expect(fresh.source == .cache && origin.received.count == 2, "the 304 freshened it: fresh again")
    }

    @Test("A softly purged response is served by stale-if-error when the origin fails")
    func softPurgeServesStaleOnError() async throws {
        let cache = engine([try MemoryTier(capacity: 1 << 20)])
        let origin = ScriptedOrigin([
            tagged([("Surrogate-Key", "t")], extra: [("Cache-Control", "stale-if-error=300")]),
            .fail(.cannotConnectToHost),
        ])
        _ = try await get(cache, origin)
        try await cache.purge(tags: ["t"], mode: .soft)
        let fallback = try await get(cache, origin)
        #expect(fallback.source == .staleFallback && fallback.body == Data("v1".utf8))
        #expect(origin.received.count == 2, "the origin was asked first")
    }

    @Test("Purge by URL: hard removes every variant, soft marks them stale")
    func purgeByURL() async throws {
        let cache = engine([try MemoryTier(capacity: 1 << 20)])
        let vary = [("Vary", "Accept-Language"), ("ETag", "\"v1\"")]
        let origin = ScriptedOrigin([
            tagged(vary), tagged(vary),
            .respond(response(304, [("ETag", "\"v1\""), ("Cache-Control", "max-age=600")]), ""),
            tagged([], body: "v2"),
        ])
        let url = "https://example.com/a"
        for language in ["en", "fr"] {
            _ = try await cache.response(
                for: request(url, [("Accept-Language", language)]), transport: origin.transport)
        }
        try await cache.purge(url: URL(string: url)!, mode: .soft)
        let revalidated = try await cache.response(
            for: request(url, [("Accept-Language", "en")]), transport: origin.transport)
        #expect(revalidated.source == .revalidated)
        try await cache.purge(url: URL(string: url)!)
        let refetched = try await cache.response(
            for: request(url, [("Accept-Language", "fr")]), transport: origin.transport)
        #expect(refetched.source == .network && refetched.body == Data("v2".utf8))
        #expect(cache.statistics.purges == 2)
        await #expect(throws: HTTPCacheError.self) { try await cache.purge(url: URL(string: "relative")!) }
    }

    @Test("Purges survive a restart: the records live in the disk tier")
    func purgesSurviveARestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tags-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let origin = ScriptedOrigin([
            tagged([("Surrogate-Key", "a")]), tagged([("Surrogate-Key", "b")]), tagged([], body: "v2"),
        ])
        do {
            let disk = try LMDBTier(directory: directory, capacity: 4 << 20)
            let cache = engine([try MemoryTier(capacity: 1 << 20), disk])
            _ = try await get(cache, origin, "/a")
            _ = try await get(cache, origin, "/b")
            try await cache.purge(tags: ["a"])
        }
        let disk = try LMDBTier(directory: directory, capacity: 4 << 20)
        let restarted = engine([try MemoryTier(capacity: 1 << 20), disk])
        #expect(try await get(restarted, origin, "/b").source == .cache, "an unpurged tag's response survives")
        #expect(try await get(restarted, origin, "/a").source == .network, "the purge survives")
    }

    @Test("Another engine sharing the lowest tier sees a purge within its recheck interval")
    func purgeReachesAnotherEngine() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tags-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let disk = try LMDBTier(directory: directory, capacity: 4 << 20)
        let origin = ScriptedOrigin([tagged([("Cache-Tag", "t")]), tagged([], body: "v2")])
        let first = engine([try MemoryTier(capacity: 1 << 20), disk])
        let second = engine([try MemoryTier(capacity: 1 << 20), disk])
        _ = try await get(first, origin)
        #expect(try await get(second, origin).source == .cache, "read from the shared tier")
        try await first.purge(tags: ["t"])
        #expect(try await get(second, origin).source == .cache, "within the second's recheck interval")
        clock.advance(by: 1)
        let after = try await get(second, origin)
        #expect(after.source == .network && after.body == Data("v2".utf8))
    }

    @Test("A tag record lost from the lowest tier turns its responses into misses, never back into hits")
    func lostRecordIsAMiss() async throws {
        let memory = try MemoryTier(capacity: 1 << 20)
        let lowest = try MemoryTier(capacity: 1 << 20)
        let cache = engine([memory, lowest])
        let origin = ScriptedOrigin([tagged([("Cache-Tag", "t")]), tagged([], body: "v2")])
        _ = try await get(cache, origin)
        lowest.removeEntry(forKey: HTTPCache.tagKey("t"))
        clock.advance(by: 1)
        #expect(try await get(cache, origin).source == .network)
    }

    @Test("A damaged tag record counts as lost")
    func damagedRecordIsLost() async throws {
        let lowest = try MemoryTier(capacity: 1 << 20)
        let cache = engine([lowest])
        let origin = ScriptedOrigin([tagged([("Cache-Tag", "t")]), tagged([], body: "v2")])
        _ = try await get(cache, origin)
        _ = lowest.store(
            CacheEntry(value: Array("TCTG".utf8) + [1, 0, 0], storedAt: clock.now), forKey: HTTPCache.tagKey("t"))
        clock.advance(by: 1)
        #expect(try await get(cache, origin).source == .network)
        #expect(TagRecordCodec.decode([]) == nil && TagRecordCodec.decode(Array(repeating: 0xFF, count: 30)) == nil)
    }

    @Test(
        "When the lowest tier cannot be read, a tagged response is revalidated before use, not trusted",
        arguments: ["", "stale-while-revalidate=600"])
    func unreadableRecordMeansRevalidate(moreCacheControl: String) async throws {
        let lowest = SwitchableTier(try MemoryTier(capacity: 1 << 20))
        let cache = engine([try MemoryTier(capacity: 1 << 20), lowest])
        let origin = ScriptedOrigin([
            tagged(
                [("Cache-Tag", "t"), ("ETag", "\"v1\"")],
                extra: moreCacheControl.isEmpty ? [] : [("Cache-Control", moreCacheControl)]),
            .respond(response(304, [("ETag", "\"v1\""), ("Cache-Control", "max-age=600")]), ""),
        ])
        _ = try await get(cache, origin)
        #expect(try await get(cache, origin).source == .cache, "while the ledger trusts what it read")
        // A fresh engine over the same tiers knows nothing of the tag, and cannot read it.
        let unknowing = HTTPCache(storage: cache.storage, configuration: cache.configuration)
        lowest.isBroken.store(true, ordering: .relaxed)
        let answer = try await get(unknowing, origin)
        #expect(answer.source == .revalidated && origin.received.count == 2)
        // Freshened by the 304, it keeps the stamp it had (the record could not be read to
        // stamp it anew): once the tier reads again, it is current, not purged.
        lowest.isBroken.store(false, ordering: .relaxed)
        clock.advance(by: 1)
        #expect(try await get(unknowing, origin).source == .cache)
        #expect(unknowing.statistics.purgedEntriesRemoved == 0)
    }

    /// A tier that answers a failed read with a miss (RedisTier, by default): the record read as
    /// missing, so the response was purged from every tier and the record written anew, a purge
    /// of every response stamped with it across the fleet.
    @Test("A failed read of a tag record is not a missing record, where the tier answers failed reads with misses")
    func failedReadIsNotAMissingRecord() async throws {
        let lowest = SwitchableTier(try MemoryTier(capacity: 1 << 20))
        lowest.failedReadsAreMisses.store(true, ordering: .relaxed)
        let cache = engine([try MemoryTier(capacity: 1 << 20), lowest])
        let origin = ScriptedOrigin([tagged([("Cache-Tag", "t"), ("ETag", "\"v1\"")])])
        _ = try await get(cache, origin)
        let record = try #require(await lowest.entry(forKey: HTTPCache.tagKey("t"))?.value)
        let unknowing = HTTPCache(storage: cache.storage, configuration: cache.configuration)
        lowest.readsAreBroken.store(true, ordering: .relaxed)
        origin.enqueue(.respond(response(304, [("ETag", "\"v1\""), ("Cache-Control", "max-age=600")]), ""))
        #expect(try await get(unknowing, origin).source == .revalidated, "revalidated, not fetched anew")
        lowest.readsAreBroken.store(false, ordering: .relaxed)
        #expect(try await lowest.entry(forKey: HTTPCache.tagKey("t"))?.value == record, "the record was replaced")
        clock.advance(by: 1)
        #expect(try await get(cache, origin).source == .cache, "purged by nobody")
        #expect(unknowing.statistics.purgedEntriesRemoved == 0 && cache.statistics.purgedEntriesRemoved == 0)
    }

    @Test("A tag record that cannot be read is not replaced: the fleet's purges stand, nothing is purged")
    func unreadableRecordIsNotReplaced() async throws {
        let lowest = SwitchableTier(try MemoryTier(capacity: 1 << 20))
        let first = engine([try MemoryTier(capacity: 1 << 20), lowest])
        let origin = ScriptedOrigin([
            tagged([("Cache-Tag", "t")], body: "a"), tagged([("Cache-Tag", "t")], body: "b"),
            tagged([("Cache-Tag", "t")], body: "b again"),
        ])
        _ = try await get(first, origin, "/a")
        let record = try #require(await lowest.entry(forKey: HTTPCache.tagKey("t"))?.value)
        // Another engine, knowing nothing of the tag, stores a response tagged with it while the
        // lowest tier refuses reads (a Redis timeout, a full reader table) and takes writes.
        let second = engine([try MemoryTier(capacity: 1 << 20), lowest])
        lowest.readsAreBroken.store(true, ordering: .relaxed)
        _ = try await get(second, origin, "/b")
        lowest.readsAreBroken.store(false, ordering: .relaxed)
        #expect(try await lowest.entry(forKey: HTTPCache.tagKey("t"))?.value == record, "the record was replaced")
        clock.advance(by: 1)
        #expect(try await get(first, origin, "/a").source == .cache, "purged by nobody")
        // The response stamped without a record reads as purged: fetched again.
        #expect(try await get(second, origin, "/b").source == .network)
    }

    @Test("A purge the lowest tier cannot record throws purgeFailed")
    func purgeFailure() async throws {
        let lowest = SwitchableTier(try MemoryTier(capacity: 1 << 20))
        let cache = engine([try MemoryTier(capacity: 1 << 20), lowest])
        lowest.isBroken.store(true, ordering: .relaxed)
        await #expect {
            try await cache.purge(tags: ["t"])
        } throws: { ($0 as? HTTPCacheError)?.code == .purgeFailed }
        await #expect {
            try await cache.purge(tags: ["t"], mode: .soft)
        } throws: { ($0 as? HTTPCacheError)?.code == .purgeFailed }
        #expect(cache.statistics.purges == 0)
    }

    /// A URL purge swallowed the tiers' failures: a shared tier that timed out kept the response
    /// (and the next read promoted it again) while the purge reported success.
    @Test("A URL purge a tier fails throws purgeFailed, hard or soft, and purges the other tiers")
    func urlPurgeFailure() async throws {
        let memory = try MemoryTier(capacity: 1 << 20)
        let lowest = SwitchableTier(try MemoryTier(capacity: 1 << 20))
        let cache = engine([memory, lowest])
        let url = try #require(URL(string: "https://example.com/a"))
        let origin = ScriptedOrigin([tagged([("ETag", "\"v1\"")]), tagged([("ETag", "\"v1\"")])])
        for mode in [HTTPCache.PurgeMode.soft, .hard] {
            _ = try await get(cache, origin)
            lowest.isBroken.store(true, ordering: .relaxed)
            await #expect {
                try await cache.purge(url: url, mode: mode)
            } throws: { ($0 as? HTTPCacheError)?.code == .purgeFailed }
            lowest.isBroken.store(false, ordering: .relaxed)
            let key = try #require(cache.primaryKey(for: request()))
            #expect(try await lowest.entry(forKey: key) != nil, "the failing tier keeps it: nothing says otherwise")
            if mode == .hard { #expect(memory.entry(forKey: key) == nil, "the other tiers are purged") }
            try await cache.purge(url: url, mode: .hard)
        }
        #expect(cache.statistics.purges == 2, "the two that succeeded")
    }

    /// A soft purge marks what it reads: held only by a tier whose failed reads are misses (a
    /// Redis timeout), the response was read as absent, nothing was written, and the purge
    /// succeeded while the shared tier kept its fresh copy.
    @Test("A soft URL purge that reads nothing where a tier fails its reads as misses fails, not succeeds")
    func softPurgeOfAnUnreadTier() async throws {
        let memory = try MemoryTier(capacity: 1 << 20)
        let lowest = SwitchableTier(try MemoryTier(capacity: 1 << 20))
        lowest.failedReadsAreMisses.store(true, ordering: .relaxed)
        let cache = engine([memory, lowest])
        let url = try #require(URL(string: "https://example.com/a"))
        _ = try await get(cache, ScriptedOrigin([tagged([("ETag", "\"v1\"")])]))
        memory.removeAll()
        lowest.isBroken.store(true, ordering: .relaxed)
        await #expect {
            try await cache.purge(url: url, mode: .soft)
        } throws: { ($0 as? HTTPCacheError)?.code == .purgeFailed }
        lowest.isBroken.store(false, ordering: .relaxed)
        // Readable again: marked stale, so the next request revalidates it.
        try await cache.purge(url: url, mode: .soft)
        let origin = ScriptedOrigin([.respond(response(304, [("ETag", "\"v1\"")]), "")])
        #expect(try await get(cache, origin).source == .revalidated)
    }

    @Test(
        "A response with too many tags, or too long a tag, is not stored, and counted",
        arguments: [
            (String(repeating: "t ", count: 5), HTTPCache.Tagging(maximumTagsPerResponse: 4)),
            ("ok " + String(repeating: "x", count: 33), HTTPCache.Tagging(maximumTagLength: 32)),
        ])
    func boundedTagLists(field: String, tagging: HTTPCache.Tagging) async throws {
        let unique = field.split(separator: " ").enumerated().map { "\($0.element)\($0.offset)" }.joined(separator: " ")
        let metrics = TestMetrics()
        let cache = engine([try MemoryTier(capacity: 1 << 20)], tagging: tagging, metrics: metrics)
        let origin = ScriptedOrigin([tagged([("Surrogate-Key", unique)]), tagged([("Surrogate-Key", unique)])])
        let first = try await get(cache, origin)
        #expect(!first.wasStored && first.response.headerFields[HTTPField.Name("Surrogate-Key")!] == nil)
        #expect(try await get(cache, origin).source == .network)
        #expect(cache.statistics.tagListsRefused == 2)
        #expect(
            try metrics.expectCounter("tiercache_http_stores_total", [("outcome", "tag_list_refused")]).totalValue == 2)
    }

    @Test("Purges and purged entries removed reach the metrics backend")
    func purgeMetrics() async throws {
        let metrics = TestMetrics()
        let cache = engine([try MemoryTier(capacity: 1 << 20)], metrics: metrics)
        let origin = ScriptedOrigin([tagged([("Cache-Tag", "t")]), tagged([])])
        _ = try await get(cache, origin)
        try await cache.purge(tags: ["t"])
        try await cache.purge(tags: ["t"], mode: .soft)
        try await cache.purge(url: URL(string: "https://example.com/b")!, mode: .soft)
        _ = try await get(cache, origin)
        func purges(_ target: String, _ mode: String) throws -> Int64 {
            try metrics.expectCounter("tiercache_http_purges_total", [("target", target), ("mode", mode)]).totalValue
        }
        #expect(try purges("tag", "hard") == 1 && purges("tag", "soft") == 1 && purges("url", "soft") == 1)
        #expect(try metrics.expectCounter("tiercache_http_purged_entries_removed_total").totalValue == 1)
    }

    @Test("Stored entries of format version 1 (before tags) still decode; version 2 keeps tags and the purge mark")
    func entryFormatVersions() throws {
        var stored = stored(response(200, [("Cache-Control", "max-age=60")]))
        stored.tagStamps = [TagStamp(tag: "a", epoch: 7)]
        stored.invalidatedAt = epoch
        let encoded = StoredEntryCodec.encode(.response(stored))
        #expect(try StoredEntryCodec.decode(encoded) == .response(stored))
        // Version 1: no trailer after the body.
        stored.tagStamps = []
        stored.invalidatedAt = nil
        var version1 = StoredEntryCodec.encode(.response(stored))
        version1.removeLast(1 + 8 + 4)
        version1[4] = 1
        #expect(try StoredEntryCodec.decode(version1) == .response(stored))
        version1[4] = 3
        #expect(throws: StoredEntryCodec.DecodeFailure.self) { try StoredEntryCodec.decode(version1) }
    }
}

/// A remote tier over a memory tier, failing every operation while `isBroken` is set.
final class SwitchableTier: CacheTier {
    let name = "switchable"
    let medium = TierMedium.remote
    let isBroken = Atomic<Bool>(false)
    /// Fails reads alone while set.
    let readsAreBroken = Atomic<Bool>(false)
    /// While set, a failed read is a miss (as `RedisTier` answers one by default), reported only
    /// by ``entryReportingFailures(forKey:)``.
    let failedReadsAreMisses = Atomic<Bool>(false)
    private let inner: MemoryTier

    init(_ inner: MemoryTier) { self.inner = inner }

    private func check() throws(TierCacheError) {
        if isBroken.load(ordering: .relaxed) { throw TierCacheError(.storageFailure, "the test's tier is broken") }
    }
    func entry(forKey key: CacheKey) async throws -> CacheEntry? {
        do {
            return try await entryReportingFailures(forKey: key)
        } catch  where failedReadsAreMisses.load(ordering: .relaxed) {
            return nil
        }
    }
    func entryReportingFailures(forKey key: CacheKey) async throws -> CacheEntry? {
        try check()
        if readsAreBroken.load(ordering: .relaxed) { throw TierCacheError(.storageFailure, "the test's reads fail") }
        return inner.entry(forKey: key)
    }
    func store(_ entry: CacheEntry, forKey key: CacheKey) async throws -> StoreOutcome {
        try check()
        return inner.store(entry, forKey: key)
    }
    func removeEntry(forKey key: CacheKey) async throws {
        try check()
        inner.removeEntry(forKey: key)
    }
    func removeAll() async throws {
        try check()
        inner.removeAll()
    }
    func usage() async throws -> TierUsage { inner.usage() }
    func statistics() async -> TierStatistics { inner.statistics() }
}

@Suite("HTTPCache: keys kept for the engine's records")
struct EngineRecordKeyTests {
    @Test("A key function's key starting with a unit separator is refused, so it cannot overwrite a tag's record")
    func unitSeparatorKeysAreRefused() throws {
        let cache = HTTPCache(
            storage: TieredCache(tiers: [try MemoryTier(capacity: 1 << 20)]),
            configuration: .init(key: { _ in "\u{1F}tag\u{1F}catalog" }))
        #expect(cache.primaryKey(for: request()) == nil)
        #expect(cache.statistics.invalidKeys == 1)
    }
}

@Suite("HTTPCache.Tagging: reading tag lists")
struct TagListReadingTests {
    func taking(_ fields: [(String, String)], _ tagging: HTTPCache.Tagging = .init()) -> (ResponseTags, HTTPFields) {
        var response = HTTPResponse(status: .ok)
        for (name, value) in fields {
            if let name = HTTPField.Name(name) { response.headerFields.append(HTTPField(name: name, value: value)) }
        }
        let tags = tagging.take(from: &response)
        return (tags, response.headerFields)
    }

    @Test("Spaces, commas and tabs separate; empty pieces and repeats are dropped; order is kept")
    func separators() {
        let (tags, _) = taking([("Surrogate-Key", " a\tb,,c  a "), ("Cache-Tag", "c, d,")])
        #expect(tags == ResponseTags(tags: ["a", "b", "c", "d"]))
    }

    @Test("Tags are bytes between separators: non-ASCII tags come through whole")
    func nonASCIITags() {
        let (tags, _) = taking([("Surrogate-Key", "café 商品-1 e\u{301}")])
        #expect(tags.tags == ["café", "商品-1", "e\u{301}"])
    }

    @Test("Only the tag fields are removed, every line of them, and the other fields keep their order")
    func fieldsRemoved() {
        let (_, fields) = taking([
            ("Content-Type", "text/plain"), ("Surrogate-Key", "a"), ("ETag", "\"1\""), ("Surrogate-Key", "b"),
            ("Cache-Tag", "c"),
        ])
        #expect(fields.map(\.name.canonicalName) == ["content-type", "etag"])
    }

    @Test("A response without tags is left as it is")
    func untagged() {
        let (tags, fields) = taking([("Content-Type", "text/plain"), ("ETag", "\"1\"")])
        #expect(tags == ResponseTags() && fields.count == 2)
    }

    @Test("Repeats are dropped past the first 16 tags as before them, and the bound counts distinct tags")
    func longListsDeduplicated() {
        let distinct = (0..<40).map { "t\($0)" }
        let (tags, _) = taking(
            [("Surrogate-Key", (distinct + distinct).joined(separator: " "))],
            HTTPCache.Tagging(maximumTagsPerResponse: 40))
        #expect(tags.tags == distinct && tags.refusal == nil)
        let (refused, fields) = taking(
            [("Surrogate-Key", distinct.joined(separator: " "))], HTTPCache.Tagging(maximumTagsPerResponse: 39))
        #expect(refused.tags.isEmpty && refused.refusal == "40 tags; the limit is 39" && fields.isEmpty)
    }

    @Test("With tagging off, nothing is read and nothing removed")
    func off() {
        let (tags, fields) = taking([("Surrogate-Key", "a")], .off)
        #expect(tags == ResponseTags() && fields.count == 1)
    }
}
