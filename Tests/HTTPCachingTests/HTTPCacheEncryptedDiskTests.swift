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
