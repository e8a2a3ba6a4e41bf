import DiskTestSupport
import Foundation
import Testing
import TierCache

@testable import TierCacheLMDB

/// What the structure check calls damage, which an open with `resetDamagedStore` answers by
/// deleting the store, and what it calls unreadable, which it answers with an error.
@Suite("LMDB store checker")
struct LMDBStoreCheckerTests {
    @Test("A data file that cannot be opened is unreadable, not damaged: the store is not reset for it")
    func unopenableFileIsUnreadable() {
        let missing = FileManager.default.temporaryDirectory
            .appendingPathComponent("no-such-store-\(UUID().uuidString)/data.mdb").path
        let report = LMDBStoreChecker(dataFile: missing).check(scope: .structure)
        #expect(report.damage == nil)
        #expect(report.unreadable?.contains("cannot open") == true, "\(String(describing: report.unreadable))")
    }

    @Test("A data file too short for LMDB's meta pages is damaged")
    func shortFileIsDamaged() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("short-\(UUID().uuidString).mdb")
        try Data(repeating: 0, count: 100).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let report = LMDBStoreChecker(dataFile: file.path).check(scope: .structure)
        #expect(report.unreadable == nil)
        #expect(report.damage?.contains("too short") == true, "\(String(describing: report.damage))")
    }

    @Test("A snapshot that two commits moved past is not damage: checking again is the answer")
    func rewrittenSnapshotIsNotDamage() throws {
        let directory = TemporaryDirectory()
        let tier = try LMDBTier(directory: directory.url, configuration: .init(capacity: 1 << 20, durability: .none))
        #expect(try tier.store(CacheEntry(value: [1], storedAt: Date()), forKey: try CacheKey("k")) == .stored)
        let dataFile = directory.url.appendingPathComponent("data.mdb").path
        let report = LMDBStoreChecker(dataFile: dataFile).check(scope: .structure, transactionID: 1 << 40)
        #expect(report.damage == nil && report.snapshotRewritten, "\(String(describing: report.damage))")
        #expect(try tier.verify().structuralDamage == nil)
    }
}
