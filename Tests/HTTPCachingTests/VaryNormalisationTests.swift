import Foundation
import HTTPTypes
import Testing
import TierCache
import TierCacheTesting

@testable import HTTPCaching

/// RFC 9111 §4.1: a cache may normalise the selecting header fields before comparing them, as
/// long as the normalisation keeps their semantics. The content-negotiation fields have a known
/// syntax (RFC 9110 §12.5): case-insensitive tokens and ranges, optional whitespace, weights
/// that say the preference whatever the order; other fields have only their whitespace
/// normalised.
@Suite("Vary: normalised selecting fields")
struct VaryNormalisationTests {
    static func value(_ name: String, _ lines: [String]) -> String? {
        Vary.normalizedValue(of: name, in: request("https://example.com/a", lines.map { (name, $0) }))
    }

    @Test(
        "Requests that ask for the same thing select alike",
        arguments: [
            ("Accept-Encoding", ["gzip, br"], ["gzip,br"]),
            ("Accept-Encoding", ["gzip, br"], ["GZIP , BR"]),
            ("Accept-Encoding", ["gzip", "br"], ["gzip, br"]),  // field lines are one list (RFC 9110 §5.3)
            ("Accept-Encoding", ["gzip;q=1.0, br;q=0.8"], ["br; q=0.80, gzip"]),
            ("Accept-Language", ["en-US, fr;q=0.5"], ["fr; q=0.50, en-us"]),
            ("Accept-Language", ["en-US, fr;q=0.5"], ["en-US;q=1, fr;q=0.500"]),
            ("Accept", ["text/html;level=1, */*;q=0.1"], ["TEXT/HTML; LEVEL=1,*/*; q=0.10"]),
            // An empty member is no member.
            ("Accept", ["text/html, application/json"], ["text/html,  application/json,"]),
            ("Accept-Charset", ["utf-8, iso-8859-1;q=0.5"], ["ISO-8859-1;Q=0.5, UTF-8"]),
            ("Accept", ["text/html;charset=utf-8"], ["text/html; Charset=UTF-8"]),  // charsets ignore case
        ])
    func equivalent(name: String, first: [String], second: [String]) {
        #expect(Self.value(name, first) == Self.value(name, second), "\(first) vs \(second)")
        #expect(Self.value(name, first) != nil)
    }

    @Test(
        "Requests that ask for different things select apart",
        arguments: [
            ("Accept-Encoding", ["gzip"], ["br"]),
            ("Accept-Language", ["en;q=0.5, fr"], ["en, fr;q=0.5"]),  // the weights differ
            // Equal weights in another order: many servers take the first (RFC 9110 §12.5.4).
            ("Accept-Language", ["en, fr"], ["fr, en"]),
            ("Accept", ["application/json, text/html"], ["text/html, application/json"]),
            ("Accept-Encoding", ["gzip;q=0"], ["gzip"]),  // q=0 is "not acceptable"
            ("Accept", ["text/plain;foo=\"ABC\""], ["text/plain;foo=\"abc\""]),  // a quoted value keeps its case
            // So does an unquoted one: only the parameter knows whether its case matters (§8.3.1).
            ("Accept", ["application/x-report;format=A4"], ["application/x-report;format=a4"]),
            ("Accept", ["text/plain;q=0.5"], ["text/plain;q=0.05"]),
            ("X-Custom", ["a, b"], ["b, a"]),  // unknown syntax: only whitespace
            ("X-Custom", ["A"], ["a"]),
        ])
    func distinct(name: String, first: [String], second: [String]) {
        #expect(Self.value(name, first) != Self.value(name, second), "\(first) vs \(second)")
    }

    @Test func canonicalForm() {
        #expect(
            Vary.normalizedPreferenceList(" fr ;Q=0.50 , EN-us,de;q=0.500, *;q=0") == "en-us, fr;q=0.5, de;q=0.5, *;q=0"
        )
        #expect(
            Vary.normalizedPreferenceList("text/plain; Format=\"Flowed, Yes\"") == "text/plain;format=\"Flowed, Yes\"")
        #expect(
            Vary.normalizedPreferenceList("gzip;q=2, br;q=abc") == "gzip;q=2, br;q=abc", "not weights: kept as written")
        #expect(Vary.normalizedPreferenceList(", ,") == "")
        #expect(Self.value("X-Custom", ["  a   b  "]) == "a b")
    }

    /// End to end: a response that varies on Accept-Language, stored for one spelling of a
    /// preference, answers another spelling of the same preference, and not a different one.
    @Test func storedResponseIsSelectedByAnEquivalentRequest() async throws {
        let clock = ManualCacheClock(start: epoch)
        let cache = try memoryCache(clock: clock)
        let fields = [
            ("Date", HTTPDate.format(clock.now)), ("Cache-Control", "max-age=60"), ("Vary", "Accept-Language"),
        ]
        let origin = ScriptedOrigin([.respond(response(200, fields), "en"), .respond(response(200, fields), "de")])
        _ = try await cache.response(
            for: request("https://example.com/a", [("Accept-Language", "en-US, fr;q=0.5")]), transport: origin.transport
        )
        let same = try await cache.response(
            for: request("https://example.com/a", [("Accept-Language", "FR; q=0.50,en-us")]),
            transport: origin.transport)
        #expect(same.source == .cache && same.body == Data("en".utf8))
        let other = try await cache.response(
            for: request("https://example.com/a", [("Accept-Language", "de")]), transport: origin.transport)
        #expect(other.source == .network && other.body == Data("de".utf8))
        #expect(origin.received.count == 2)
    }

    /// Variants stored before equal weights kept their order recorded `fr, en` as `en, fr`: read
    /// as they are, one made for `fr, en` would answer `en, fr`. They are under keys of their own
    /// (`vary`, not `vary2`) and not read.
    @Test func variantsStoredUnderTheEarlierOrderingAreNotUsed() async throws {
        let clock = ManualCacheClock(start: epoch)
        let storage = TieredCache(tiers: [try MemoryTier(capacity: 1 << 20)])
        let cache = HTTPCache(storage: storage, configuration: .init(clock: clock.cacheClock))
        let fields = [
            ("Date", HTTPDate.format(clock.now)), ("Cache-Control", "max-age=60"), ("Vary", "Accept-Language"),
        ]
        // What the earlier version stored for `fr, en`: its variant under the earlier key, the
        // members sorted, and an index listing it.
        let primaryKey = try #require(cache.primaryKey(for: request()))
        let varying = [StoredResponse.VaryingField(name: "accept-language", value: "en, fr")]
        let legacyKey = CacheKey(primaryKey, appending: "\u{1F}vary\u{1F}accept-language=\"en, fr\"")
        let french = StoredResponse(
            response: response(200, fields), body: Data("fr".utf8), requestTime: epoch, responseTime: epoch,
            storedAt: epoch, varyingFields: varying)
        _ = await cache.writeEntry(.response(french), under: legacyKey, policy: .allowed)
        _ = await cache.writeEntry(
            .variants(VariantIndex(fieldNames: ["accept-language"], variantKeys: [legacyKey])), under: primaryKey,
            policy: .allowed)

        let origin = ScriptedOrigin([.respond(response(200, fields), "en")])
        let english = try await cache.response(
            for: request("https://example.com/a", [("Accept-Language", "en, fr")]), transport: origin.transport)
        #expect(english.source == .network && english.body == Data("en".utf8))
        let again = try await cache.response(
            for: request("https://example.com/a", [("Accept-Language", "en, fr")]), transport: origin.transport)
        #expect(again.source == .cache && again.body == Data("en".utf8))
    }

    @Test(
        "Credentials a response varies on are recorded and keyed as digests, never as themselves",
        arguments: ["Authorization", "Proxy-Authorization", "Cookie"])
    func credentialsAreDigests(field: String) {
        let alice = request("https://example.com/a", [(field, "Bearer  alice-token-1")])
        let aliceAgain = request("https://example.com/a", [(field, "Bearer alice-token-1")])
        let bob = request("https://example.com/a", [(field, "Bearer bob-token-2")])
        let recorded = Vary.varyingFields([field.lowercased()], of: alice)
        let value = recorded.first?.value ?? ""
        #expect(!value.contains("alice") && value.hasPrefix("#") && value.count == 33, "\(value)")
        #expect(Vary.matches(aliceAgain, recorded), "whitespace normalised before the digest")
        #expect(!Vary.matches(bob, recorded))
        #expect(!Vary.matches(request("https://example.com/a"), recorded), "absent is not any value")
    }

    @Test("SHA-256 as FIPS 180-4's examples give it, across block boundaries")
    func sha256Vectors() {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(SHA256.hash([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            hex(SHA256.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            hex(SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            hex(SHA256.hash([UInt8](repeating: 0x61, count: 1_000)))
                == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
        #expect(CredentialDigest.of("abc") == "#ba7816bf8f01cfea414140de5dae2223")
    }

    @Test("Routing fields vary a 200, and a 304 only when it has a Vary of its own (which replaces the stored one)")
    func routingVaryOn304() {
        let names = [HTTPField.Name("X-Forwarded-Host")!]
        var ok = HTTPFields()
        ClientRoutingFields.addVary(names, to: &ok)
        #expect(ok[.vary] == "X-Forwarded-Host")
        var bare304 = HTTPFields()
        ClientRoutingFields.addVary(names, to: &bare304, to304: true)
        #expect(bare304[.vary] == nil, "the stored Vary stands")
        var varying304: HTTPFields = [.vary: "Accept-Encoding"]
        ClientRoutingFields.addVary(names, to: &varying304, to304: true)
        #expect(
            Vary.fieldNames(of: HTTPResponse(status: .notModified, headerFields: varying304)) == [
                "accept-encoding", "x-forwarded-host",
            ])
    }
}
