import Crypto
import Foundation
import HTTPTypes
import Testing
import TierCache
import TierCacheEncryption
import TierCacheLMDB
import TierCacheTesting

@testable import HTTPCaching

/// The HTTP layer stores responses through the disk tier's sealing path: headers (cookies set,
/// personal fields), bodies and URLs are unreadable in the file, and a response sealed under a
/// key the app no longer has is a miss that goes to the network, never an error.
@Suite("HTTPCache on an encrypted disk tier")
struct HTTPCacheEncryptedDiskTests {
    static let key = SymmetricKey(data: [UInt8](repeating: 0x42, count: 32))
    static let secret = SymmetricKey(data: [UInt8](repeating: 0x43, count: 32))

    static func disk(_ directory: URL, key: SymmetricKey = key) throws -> LMDBTier {
        let encryption = try EncryptionAtRest(currentKey: .init(id: 1, key: key), keyNames: .hashed(with: secret))
        return try LMDBTier(directory: directory, configuration: .init(capacity: 4 << 20, encryption: encryption))
    }

    @Test("Headers, body and URL are sealed on disk; the response is served from disk after a restart")
    func sealedResponses() async throws {
        let clock = ManualCacheClock(start: epoch)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "http-sealed-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = "https://bank.example/accounts/ada-lovelace"
        let origin = ScriptedOrigin([
            .respond(
                response(
                    200,
                    [
                        ("Cache-Control", "private, max-age=600"), ("X-Account-Holder", "Ada Lovelace"),
                        ("ETag", "\"v1\""),
                    ]),
                "IBAN DE44500105175407324931")
        ])
        do {
            let cache = HTTPCache(
                storage: TieredCache(tiers: [try Self.disk(directory)]), configuration: .init(clock: clock.cacheClock))
            _ = try await cache.response(for: request(url), transport: origin.transport)
        }
        let file = try Data(contentsOf: directory.appendingPathComponent("data.mdb"))
        for visible in ["Ada Lovelace", "DE44500105175407324931", "bank.example", "max-age=600"] {
            #expect(file.range(of: Data(visible.utf8)) == nil, "\(visible) is readable in data.mdb")
        }
        // A new process with the key: served from disk, headers intact.
        let cache = HTTPCache(
            storage: TieredCache(tiers: [try Self.disk(directory)]), configuration: .init(clock: clock.cacheClock))
        let served = try await cache.response(for: request(url), transport: origin.transport)
        #expect(served.source == .cache)
        #expect(served.body == Data("IBAN DE44500105175407324931".utf8))
        #expect(served.response.headerFields[HTTPField.Name("X-Account-Holder")!] == "Ada Lovelace")
        #expect(origin.received.count == 1)
    }

    @Test("With plain key names, a response varying on credentials keeps them out of the keys in the file")
    func credentialsStayOutOfPlainKeys() async throws {
        let clock = ManualCacheClock(start: epoch)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "http-sealed-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let varying = response(200, [("Cache-Control", "private, max-age=600"), ("Vary", "Authorization, Cookie")])
        let origin = ScriptedOrigin([.respond(varying, "Ada's profile"), .respond(varying, "Bob's profile")])
        let encryption = try EncryptionAtRest(currentKey: .init(id: 1, key: Self.key))
        let cache = HTTPCache(
            storage: TieredCache(tiers: [
                try LMDBTier(directory: directory, configuration: .init(capacity: 4 << 20, encryption: encryption))
            ]),
            configuration: .init(clock: clock.cacheClock))
        let ada = [("Authorization", "Bearer ada-token-8f3k2"), ("Cookie", "session=ada-cookie-77q")]
        let url = "https://api.example/me"
        _ = try await cache.response(for: request(url, ada), transport: origin.transport)
        let again = try await cache.response(for: request(url, ada), transport: origin.transport)
        #expect(again.source == .cache && again.body == Data("Ada's profile".utf8))
        let bob = try await cache.response(
            for: request(url, [("Authorization", "Bearer bob-token-1x9"), ("Cookie", "session=ada-cookie-77q")]),
            transport: origin.transport)
        #expect(bob.source != .cache && bob.body == Data("Bob's profile".utf8))
        let file = try Data(contentsOf: directory.appendingPathComponent("data.mdb"))
        #expect(file.range(of: Data("api.example/me".utf8)) != nil, "plain key names: the URL is listed")
        for secret in ["ada-token-8f3k2", "ada-cookie-77q", "bob-token-1x9"] {
            #expect(file.range(of: Data(secret.utf8)) == nil, "\(secret) is readable in data.mdb")
        }
    }

    @Test("With another key, the stored response is a counted miss and the request goes to the origin")
    func wrongKeyGoesToTheNetwork() async throws {
        let clock = ManualCacheClock(start: epoch)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "http-sealed-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let origin = ScriptedOrigin([
            .respond(response(200, [("Cache-Control", "max-age=600")]), "first"),
            .respond(response(200, [("Cache-Control", "max-age=600")]), "second"),
        ])
        do {
            let cache = HTTPCache(
                storage: TieredCache(tiers: [try Self.disk(directory)]), configuration: .init(clock: clock.cacheClock))
            _ = try await cache.response(for: request(), transport: origin.transport)
        }
        let disk = try LMDBTier(
            directory: directory,
            configuration: .init(
                capacity: 4 << 20,
                encryption: try EncryptionAtRest(
                    currentKey: .init(id: 1, key: SymmetricKey(data: [UInt8](repeating: 7, count: 32))),
                    keyNames: .hashed(with: Self.secret))))
        let cache = HTTPCache(storage: TieredCache(tiers: [disk]), configuration: .init(clock: clock.cacheClock))
        let answer = try await cache.response(for: request(), transport: origin.transport)
        #expect(answer.body == Data("second".utf8))
        #expect(origin.received.count == 2)
        #expect(disk.statistics().unopenableRecords == 1)
    }
}
