import Foundation
import Testing
import TierCache
import TierCacheTesting

@testable import FileStore

/// The example store keeps the contract every tier keeps: the conformance suite, all of it.
@Suite struct FileStoreConformanceTests {
    @Test(arguments: TierConformanceSuite.Check.allCases)
    func conformance(_ check: TierConformanceSuite.Check) async throws {
        let suite = TierConformanceSuite(isPersistent: true) { directory, clock in
            try FileStoreTier(directory: directory, capacity: 4 << 20, clock: clock)
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

    /// A write a crash cut short is removed on open; every entry counts its whole file.
    @Test func leftoversGoAndFilesCountWhole() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("file-store-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let store = try FileStoreTier(directory: directory, capacity: 1 << 20)
            _ = try store.store(CacheEntry(value: [1, 2, 3], storedAt: Date()), forKey: try CacheKey("kept"))
            // The 24-byte header and the key's 4 bytes count beside the value's 3.
            #expect(store.usage().bytes == 24 + 4 + 3)
        }
        let leftover = directory.appendingPathComponent("\(UUID()).partial")
        try Data(repeating: 7, count: 100).write(to: leftover)
        let reopened = try FileStoreTier(directory: directory, capacity: 1 << 20)
        #expect(!FileManager.default.fileExists(atPath: leftover.path))
        #expect(reopened.usage().bytes == 24 + 4 + 3)
    }

    /// A full disk, a used-up quota or the file size limit is a refusal; other write errors fail.
    @Test func outOfSpaceIsARefusal() {
        #expect(FileStoreTier.isOutOfSpace(CocoaError(.fileWriteOutOfSpace)))
        #expect(FileStoreTier.isOutOfSpace(POSIXError(.EDQUOT)))
        #expect(
            FileStoreTier.isOutOfSpace(
                NSError(
                    domain: NSCocoaErrorDomain, code: CocoaError.fileWriteUnknown.rawValue,
                    userInfo: [NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(EFBIG))])))
        #expect(!FileStoreTier.isOutOfSpace(CocoaError(.fileWriteNoPermission)))
        #expect(!FileStoreTier.isOutOfSpace(POSIXError(.EACCES)))
    }
}
