import CLMDB
import DiskTestSupport
import Foundation
import Testing
import TierCache
import TierCacheTesting

@testable import TierCacheLMDB

/// LMDB must not open one store twice in a process: a second open took itself for the store's
/// first user (a process never conflicts with its own `fcntl` locks) and initialised the lock
/// file again under the open environment, emptying its reader table. Tiers and inspections on
/// one store in one process now share one environment (`SharedEnvironments`).
@Suite("LMDBTier: one LMDB environment per store per process")
struct LMDBSharedEnvironmentTests {
    /// The symptom: the second open emptied the reader table, so the first environment's open
    /// read no longer held its snapshot, and the second tier's writes reused its pages under it.
    @Test("A second tier and an inspection share the open environment; a read's snapshot survives their writes")
    func secondOpensShareTheEnvironment() throws {
        let directory = TemporaryDirectory()
        let first = try LMDBTier(directory: directory.url, capacity: 4 << 20)
        #expect(try first.store(entry(incompressible(3_000, seed: 0)), forKey: key("a")) == .stored)
        let storageKey = StorageKey(key("a")).bytes
        var second: LMDBTier?
        try first.environment.read { txn in
            func record() throws -> [UInt8]? {
                try storageKey.withUnsafeBytes { try txn.get(first.environment.entries, $0).map(Array.init) }
            }
            let snapshot = try record()
            second = try LMDBTier(directory: directory.url, capacity: 4 << 20)
            #expect(try LMDBTier.inspect(directory: directory.url).entries == 1)
            for round in 1...20 {
                #expect(
                    try second?.store(entry(incompressible(3_000, seed: UInt64(round))), forKey: key("a")) == .stored)
            }
            #expect(try record() == snapshot, "the read's snapshot was overwritten by the second tier's writes")
        }
        let other = try #require(second)
        #expect(other.environment === first.environment)
        #expect(try first.entry(forKey: key("a"))?.value == incompressible(3_000, seed: 20))
    }

    @Test("The environment closes with its last tier, and the store opens again with what it holds")
    func theLastTierClosesTheEnvironment() throws {
        let directory = TemporaryDirectory()
        do {
            let first = try LMDBTier(directory: directory.url, capacity: 4 << 20)
            let second = try LMDBTier(directory: directory.url, capacity: 4 << 20)
            #expect(try first.store(entry(compressible(1_000)), forKey: key("a")) == .stored)
            withExtendedLifetime(second) {}
        }
        let reopened = try LMDBTier(directory: directory.url, capacity: 4 << 20)
        #expect(try reopened.entry(forKey: key("a"))?.value == compressible(1_000))
    }

    @Test("The shared environment syncs as the most durable of its tiers asks")
    func theMostDurableTierDecides() throws {
        let directory = TemporaryDirectory()
        let fast = try LMDBTier(directory: directory.url, configuration: .init(capacity: 4 << 20, durability: .none))
        #expect(fast.environment.flags & UInt32(MDB_NOSYNC) != 0)
        let safe = try LMDBTier(
            directory: directory.url, configuration: .init(capacity: 4 << 20, durability: .full, maxReaders: 200))
        #expect(safe.environment.flags & UInt32(MDB_NOSYNC | MDB_NOMETASYNC) == 0)
        let middle = try LMDBTier(
            directory: directory.url, configuration: .init(capacity: 4 << 20, durability: .metadataAsync))
        #expect(middle.environment.flags & UInt32(MDB_NOSYNC | MDB_NOMETASYNC) == 0, "never weakened")
        withExtendedLifetime((fast, safe)) {}
    }

    @Test("A writer cannot take an inspection's read-only environment, and can once it is released")
    func aWriterWaitsForTheInspection() throws {
        let directory = TemporaryDirectory()
        _ = try LMDBTier(directory: directory.url, capacity: 4 << 20)
        do {
            let inspection = try SharedEnvironments.lease(
                directory: directory.url, mapSize: nil, durability: .metadataAsync, maxReaders: 126, readOnly: true)
            let error = #expect(throws: TierCacheError.self) {
                try LMDBTier(directory: directory.url, capacity: 4 << 20)
            }
            #expect(error?.message.contains("read-only") == true)
            withExtendedLifetime(inspection) {}
        }
        #expect(throws: Never.self) { try LMDBTier(directory: directory.url, capacity: 4 << 20) }
    }
}
