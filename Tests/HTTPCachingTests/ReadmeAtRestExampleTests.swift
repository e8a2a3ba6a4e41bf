import Crypto
import Foundation
import Testing
import TierCache
import TierCacheEncryption
import TierCacheLMDB

@testable import HTTPCaching

/// Keeps the example of small responses and encryption at rest (an encrypted disk tier with
/// automatic dictionaries under an `HTTPCache`, once a README block, the API the
/// `DictionariesAndEncryption` article shows) compiling and true.
@Suite("README example: dictionaries and encryption at rest")
struct ReadmeAtRestExampleTests {
    @Test("The example builds an encrypted disk tier with automatic dictionaries under an HTTPCache")
    func atRest() async throws {
        let cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "readme-at-rest-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: cacheDirectory) }
        let currentKey = SymmetricKey(size: .bits256), previousKey = SymmetricKey(size: .bits256)
        let keyHashingSecret = SymmetricKey(size: .bits256)
        let encryption = try EncryptionAtRest(
            currentKey: .init(id: 2, key: currentKey),  // SymmetricKey, 256 bits
            previousKeys: [.init(id: 1, key: previousKey)],  // still read; resealed under key 2 when read
            keyNames: .hashed(with: keyHashingSecret))  // the file holds HMACs, not URLs
        let disk = try LMDBTier(
            directory: cacheDirectory,
            configuration: .init(
                capacity: 512 << 20,
                dictionary: .automatic(),  // or .provided(bytesFromZstdTrain), or .off (the default)
                encryption: encryption))
        let http = HTTPCache(storage: TieredCache(tiers: [try MemoryTier(capacity: 32 << 20), disk]))
        let origin = ScriptedOrigin([.respond(response(200, [("Cache-Control", "max-age=60")]), "sealed body")])
        _ = try await http.response(for: request("https://api.example/items/1"), transport: origin.transport)
        #expect(try disk.usage().entries == 1)
        let report = try LMDBTier.inspect(directory: cacheDirectory)
        #expect(report.sealedRecordsByKey == ["2": 1])
    }
}
