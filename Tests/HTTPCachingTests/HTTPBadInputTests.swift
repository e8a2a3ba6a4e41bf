import Foundation
import HTTPTypes
import Testing
import TierCache
import TierCacheTesting

@testable import HTTPCaching

@Suite("HTTPCache with bad input")
struct HTTPBadInputTests {
    let clock = ManualCacheClock(start: epoch)

    func makeCache() throws -> (HTTPCache, MemoryTier) {
        let memory = try MemoryTier(capacity: 4 << 20)
        return (HTTPCache(storage: TieredCache(tiers: [memory]), configuration: .init(clock: clock.cacheClock)), memory)
    }

    func ok(_ fields: [(String, String)], body: String = "hello") -> ScriptedOrigin.Reply {
        .respond(response(200, [("Date", HTTPDate.format(clock.now))] + fields), body)
    }

    @Test(
        "Huge (64 KiB), duplicated and non-ASCII field values are handled",
        arguments: [
            ("Cache-Control", String(repeating: "max-age=60, ", count: 5_500)),
            ("Cache-Control", "max-age=60, max-age=60, max-age=60"),
            ("Cache-Control", "max-age=6\u{00F6}0, münchen"),
            ("Expires", String(repeating: "x", count: 65_536)),
            ("Vary", String(repeating: "Accept, ", count: 8_000)),
        ])
    func hugeAndOddFields(_ name: String, _ value: String) async throws {
        let (cache, _) = try makeCache()
        let origin = ScriptedOrigin([ok([(name, value)]), ok([(name, value)])])
        let first = try await cache.response(for: request(), transport: origin.transport)
        #expect(first.source == .network)
        _ = try await cache.response(for: request(), transport: origin.transport)
    }

    @Test("A 64 KiB request field named by Vary still stores and matches its variant")
    func hugeVaryingValue() async throws {
        let (cache, _) = try makeCache()
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60"), ("Vary", "X-Big")])])
        let big = request("https://example.com/a", [("X-Big", String(repeating: "b", count: 65_536))])
        _ = try await cache.response(for: big, transport: origin.transport)
        #expect(try await cache.response(for: big, transport: origin.transport).source == .cache)
        let other = request("https://example.com/a", [("X-Big", String(repeating: "c", count: 65_536))])
        origin.enqueue(ok([("Cache-Control", "max-age=60"), ("Vary", "X-Big")], body: "other"))
        #expect(try await cache.response(for: other, transport: origin.transport).body == Data("other".utf8))
    }

    @Test("A URL too long for a cache key is fetched and not cached")
    func overlongURL() async throws {
        let (cache, memory) = try makeCache()
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60")])])
        let long = request("https://example.com/" + String(repeating: "p", count: CacheKey.maximumUTF8Length))
        #expect(try await cache.response(for: long, transport: origin.transport).source == .network)
        #expect(memory.usage().entries == 0)
    }

    @Test(
        "Negative, overflowing and fractional max-age",
        arguments: [("-1", false), ("99999999999999999999", true), ("1.5", false)])
    func oddMaxAge(_ value: String, _ reusable: Bool) async throws {
        let (cache, _) = try makeCache()
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=\(value)")]), ok([])])
        _ = try await cache.response(for: request(), transport: origin.transport)
        clock.advance(by: 1)
        let second = try await cache.response(for: request(), transport: origin.transport)
        #expect((second.source == .cache) == reusable)
    }

    @Test("A 304 with a body keeps the stored body; a 304 nothing asked for passes through")
    func notModifiedOddities() async throws {
        let (cache, _) = try makeCache()
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=0"), ("ETag", "\"a\"")], body: "stored")])
        _ = try await cache.response(for: request(), transport: origin.transport)
        clock.advance(by: 1)
        origin.enqueue(.respond(response(304, [("ETag", "\"a\"")]), "junk"))
        #expect(try await cache.response(for: request(), transport: origin.transport).body == Data("stored".utf8))

        origin.enqueue(.respond(response(304), ""))
        let own = request("https://example.com/unseen", [("If-None-Match", "\"z\"")])
        let passed = try await cache.response(for: own, transport: origin.transport)
        #expect(passed.source == .network && passed.response.status.code == 304)
    }

    @Test("A stored entry of another format version is a miss and is removed")
    func otherVersion() async throws {
        let (cache, memory) = try makeCache()
        let key = try CacheKey(try #require(HTTPCacheKey.defaultKey(for: request())))
        var bytes = StoredEntryCodec.encode(.response(stored(response(200, [("Cache-Control", "max-age=600")]))))
        bytes[4] = StoredEntryCodec.flaggedVersion + 1  // the version byte
        _ = memory.store(CacheEntry(value: bytes, storedAt: epoch), forKey: key)
        let origin = ScriptedOrigin([ok([("Cache-Control", "max-age=60")])])
        #expect(try await cache.response(for: request(), transport: origin.transport).source == .network)
        #expect(cache.statistics.corruptEntriesRemoved == 1)
    }

    @Test("A stored entry with more fields than HTTPFields holds decodes as a failure, never a crash")
    func tooManyFields() throws {
        // One field, "a: x", then the same field 65,535 times under the count's new value.
        let one = StoredEntryCodec.encode(.response(stored(response(200, [("a", "x")]))))
        let field: [UInt8] = [1, 0, 0, 0, UInt8(ascii: "a"), 1, 0, 0, 0, UInt8(ascii: "x")]
        let start = try #require(one.firstRange(of: [1, 0, 0, 0] + field)?.lowerBound, "the field count and field")
        func entry(fields count: Int) -> [UInt8] {
            Array(
                one[..<start] + withUnsafeBytes(of: UInt32(count).littleEndian, Array.init)
                    + Array([[UInt8]](repeating: field, count: count).joined()) + one[(start + 4 + field.count)...])
        }
        for count in [65_535, StoredEntryCodec.maximumFieldCount + 1] {
            let failure = #expect(throws: StoredEntryCodec.DecodeFailure.self) {
                try StoredEntryCodec.decode(entry(fields: count))
            }
            #expect(failure?.description.hasPrefix("\(count) fields") == true, "\(String(describing: failure))")
        }
        // At the limit, a (strange) response like any other, with room for the fields serving adds.
        guard
            case .response(var decoded) = try StoredEntryCodec.decode(entry(fields: StoredEntryCodec.maximumFieldCount))
        else {
            Issue.record("not a response")
            return
        }
        for name in ["Age", "Via", "Cache-Status"] {
            decoded.response.headerFields.append(HTTPField(name: try #require(HTTPField.Name(name)), value: "1"))
        }
        #expect(decoded.response.headerFields.count == StoredEntryCodec.maximumFieldCount + 3)
    }

    @Test("Every truncation of a stored entry decodes as a failure, never a crash")
    func truncations() throws {
        let bytes = StoredEntryCodec.encode(
            .response(stored(response(200, [("Cache-Control", "max-age=600"), ("Vary", "Accept")]))))
        _ = try StoredEntryCodec.decode(bytes)  // the whole entry decodes
        for length in 0..<bytes.count {
            #expect(throws: StoredEntryCodec.DecodeFailure.self) {
                try StoredEntryCodec.decode(Array(bytes.prefix(length)))
            }
        }
    }

    /// Version 3 only for an entry with a flag, so that a release reading version 2 still reads
    /// the others.
    @Test("A response to a request with Authorization is written in version 3 and reads back flagged")
    func authorizationFlag() throws {
        var flagged = stored(response(200, [("Cache-Control", "max-age=600")]))
        #expect(StoredEntryCodec.encode(.response(flagged))[4] == StoredEntryCodec.version)
        flagged.answeredAuthorization = true
        var bytes = StoredEntryCodec.encode(.response(flagged))
        #expect(bytes[4] == StoredEntryCodec.flaggedVersion)
        guard case .response(let decoded) = try StoredEntryCodec.decode(bytes) else {
            Issue.record("not a response")
            return
        }
        #expect(decoded.answeredAuthorization && decoded == flagged)
        #expect(throws: StoredEntryCodec.DecodeFailure.self) {
            try StoredEntryCodec.decode(bytes.dropLast(1).map { $0 })
        }
        bytes[bytes.count - 1] = 2  // a flag this release does not know
        let failure = #expect(throws: StoredEntryCodec.DecodeFailure.self) { try StoredEntryCodec.decode(bytes) }
        #expect(failure?.description == "unknown flags 2")
    }
}

@Suite("Decoded forms kept in a tier entry's memo")
struct DecodedFormTests {
    @Test("A hit uses the decoded form in the entry's memo, but only one made under the same key")
    func memoUnderItsKey() async throws {
        let memory = try MemoryTier(capacity: 1 << 20)
        let cache = HTTPCache(
            storage: TieredCache(tiers: [memory]),
            configuration: .init(clock: ManualCacheClock(start: epoch).cacheClock))
        let key = try CacheKey(try #require(HTTPCacheKey.defaultKey(for: request())))
        let decoded = DecodedEntry.response(
            Located(response: stored(response(200, [("Cache-Control", "max-age=600")])), key: key))
        // Bytes that do not decode, with a decoded form in the memo: the memo answers.
        let entry = CacheEntry(value: Array("not an encoded response".utf8), storedAt: epoch)
        entry.memo.setIfEmpty(try #require(DecodedForm(key: key, entry: decoded, cost: 1, budget: cache.decodedForms)))
        _ = memory.store(entry, forKey: key)
        let origin = ScriptedOrigin([.respond(response(200, [("Cache-Control", "max-age=60")]), "network")])
        #expect(try await cache.response(for: request(), transport: origin.transport).source == .cache)
        #expect(origin.received.isEmpty)

        // The same entry under another key: its memo describes another key, so the bytes are
        // decoded, fail, and the entry is removed.
        let other = request("https://example.com/other")
        let otherKey = try CacheKey(try #require(HTTPCacheKey.defaultKey(for: other)))
        _ = memory.store(entry, forKey: otherKey)
        #expect(try await cache.response(for: other, transport: origin.transport).source == .network)
        #expect(cache.statistics.corruptEntriesRemoved == 1)
    }

    @Test("Decoded forms are bounded by the configured bytes, and give their share back when evicted")
    func budget() async throws {
        let memory = try MemoryTier(capacity: 4 << 20)
        let clock = ManualCacheClock(start: epoch)
        let cache = HTTPCache(
            storage: TieredCache(tiers: [memory]),
            configuration: .init(clock: clock.cacheClock, decodedResponsesLimit: 4_096))
        let body = String(repeating: "x", count: 1_000)
        let origin = ScriptedOrigin(
            (0..<10).map { _ in
                .respond(response(200, [("Date", HTTPDate.format(epoch)), ("Cache-Control", "max-age=600")]), body)
            })
        for number in 0..<10 {
            _ = try await cache.response(for: request("https://example.com/\(number)"), transport: origin.transport)
        }
        #expect(cache.decodedForms.bytesInUse > 0)
        #expect(cache.decodedForms.bytesInUse <= 4_096, "only as many decoded forms as the limit allows")
        for number in 0..<10 {
            let hit = try await cache.response(
                for: request("https://example.com/\(number)"), transport: origin.transport)
            #expect(hit.source == .cache && hit.body == Data(body.utf8), "past the limit, entries are decoded per hit")
        }
        memory.removeAll()
        #expect(cache.decodedForms.bytesInUse == 0, "evicted entries free their decoded forms")

        let off = DecodedFormBudget(limit: -1)
        #expect(off.limit == 0 && !off.reserve(1))
    }
}
