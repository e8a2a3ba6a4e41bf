import FileStore
import Foundation
import Testing
import TierCache
import TierCacheTesting

/// The example store keeps the contract every tier keeps: the conformance suite, all of it.
@Suite struct FileStoreConformanceTests {
    @Test(arguments: TierConformanceSuite.Check.allCases)
    func conformance(_ check: TierConformanceSuite.Check) async throws {
        let suite = TierConformanceSuite(isPersistent: true) { directory in
            try FileStoreTier(directory: directory, capacity: 4 << 20)
        }
        try await suite.run(check)
    }

    /// A file that is not a whole entry (damaged, or left by something else) is dropped on open.
    @Test func aDamagedFileIsDroppedWhenTheStoreOpens() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("file-store-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = try CacheKey("kept")
        do {
            let store = try FileStoreTier(directory: directory, capacity: 1 << 20)
            _ = try store.store(CacheEntry(value: [1, 2, 3], storedAt: Date()), forKey: key)
        }
        try Data([0x54, 0x43]).write(to: directory.appendingPathComponent("broken.entry"))
        let reopened = try FileStoreTier(directory: directory, capacity: 1 << 20)
        #expect(reopened.entry(forKey: key)?.value == [1, 2, 3])
        #expect(reopened.usage().entries == 1)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("broken.entry").path))
    }
}
