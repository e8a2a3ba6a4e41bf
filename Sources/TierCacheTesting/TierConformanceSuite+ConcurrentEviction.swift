import Foundation
import TierCache

extension TierConformanceSuite.Context {
    /// Writers that overflow the tier several times over while readers and a remover work beside
    /// them: the evictions this forces race with stores, overwrites, reads and removals, where a
    /// tier that checks for room and makes it in separate steps, or subtracts an entry's bytes
    /// twice (evicted and removed at once), goes wrong. The check of the same name documents the
    /// rules.
    func concurrentEviction() async throws {
        let tier = try await makeTier(directory)
        let empty = try await tier.usage()
        try expectExercisable(empty.capacity, "capacity")
        let evictionsBefore = await tier.statistics().evictions
        // 4 writers write 3 times the capacity in values of 1/64 of it (48 stores each), or of
        // half the entry limit where that is smaller (more stores: counted by bytes, so that a
        // tier admitting 1% entries still overflows; a 64th is under half of the 5% default).
        let writers = 4
        let valueSize = max(1, min(empty.capacity / 64, empty.maxEntryBytes / 2))
        let storesPerWriter = (3 * empty.capacity + writers * valueSize - 1) / (writers * valueSize)
        try expect(
            storesPerWriter <= Self.mostEvictionStores,
            "the tier's entry limit, \(empty.maxEntryBytes) bytes, is so small beside its capacity, \(empty.capacity), that overflowing it takes \(writers * storesPerWriter) stores: make the tier with a smaller capacity or a larger entry limit"
        )
        let keyCount = writers * storesPerWriter
        try await withThrowingTaskGroup(of: String?.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var random = SplitMix64(seed: UInt64(100 + writer))
                    for index in 0..<storesPerWriter {
                        // Mostly new keys, some written again with the other version of the value.
                        var number = writer * storesPerWriter + index, version = 0
                        if index >= 4, random.next() % 4 == 0 {
                            number = writer * storesPerWriter + Int(random.next() % UInt64(index))
                            version = 1
                        }
                        let value = Self.evictionValue(number, version: version, size: valueSize)
                        let outcome = try await store(
                            CacheEntry(value: value, storedAt: storedAt), forKey: Self.evictionKey(number), in: tier)
                        switch outcome {
                        case .stored, .refused(.notAdmitted): break
                        default: return "storing \(value.count) bytes beside other writers gave \(outcome)"
                        }
                        let usage = try await tier.usage()
                        if usage.bytes > usage.capacity {
                            return "usage \(usage.bytes) exceeds capacity \(usage.capacity) while writers evict"
                        }
                    }
                    return nil
                }
            }
            for reader in 0..<2 {
                group.addTask {
                    var random = SplitMix64(seed: UInt64(200 + reader))
                    for _ in 0..<(2 * keyCount) {
                        let number = Int(random.next() % UInt64(keyCount))
                        guard let found = try await tier.entry(forKey: Self.evictionKey(number)) else { continue }
                        if let problem = Self.evictionProblem(found, number, size: valueSize, storedAt: storedAt) {
                            return problem
                        }
                    }
                    return nil
                }
            }
            group.addTask {
                var random = SplitMix64(seed: 300)
                for _ in 0..<(keyCount / 4) {
                    try await tier.removeEntry(forKey: Self.evictionKey(Int(random.next() % UInt64(keyCount))))
                }
                return nil
            }
            for try await problem in group {
                if let problem { throw TierConformanceSuite.Failure(check: check, message: problem) }
            }
        }
        let usage = try await tier.usage()
        try expect(usage.bytes <= usage.capacity, "usage after concurrent eviction: \(usage)")
        // What the tier still serves is whole, and fits in it (values of random bytes take at
        // least their own size).
        var servedBytes = 0
        for number in 0..<keyCount {
            guard let found = try await tier.entry(forKey: Self.evictionKey(number)) else { continue }
            if let problem = Self.evictionProblem(found, number, size: valueSize, storedAt: storedAt) {
                throw TierConformanceSuite.Failure(check: check, message: problem + " after the writers finished")
            }
            servedBytes += found.value.count
        }
        try expect(
            servedBytes <= empty.capacity,
            "after concurrent writers wrote 3x its capacity the tier still serves \(servedBytes) bytes of values, more than its capacity of \(empty.capacity)"
        )
        let evictions = await tier.statistics().evictions - evictionsBefore
        try expect(evictions > 0, "writers wrote 3x the capacity and the tier counted no eviction")
        for number in 0..<keyCount { try await tier.removeEntry(forKey: Self.evictionKey(number)) }
        let emptied = try await tier.usage()
        try expect(
            emptied.entries == 0 && emptied.bytes == empty.bytes,
            "usage after removing every key written while evicting: \(emptied), \(empty.bytes) bytes when made (accounting drifted)"
        )
    }

    /// The most stores a writer makes (a tier admitting entries of 1/2,048 of its capacity, or
    /// more); each is followed by a read of the usage, which a disk tier may sync.
    private static let mostEvictionStores = 4_096

    private static func evictionKey(_ number: Int) throws -> CacheKey { try CacheKey("evict-\(number)") }

    /// The value of version 0 or 1 under key `number`: a header naming both, then random bytes
    /// seeded by them (incompressible, so the capacity counts them all).
    private static func evictionValue(_ number: Int, version: Int, size: Int) -> [UInt8] {
        let header = Array("\(number):\(version)\u{1}".utf8)
        var random = SplitMix64(seed: UInt64(number * 2 + version))
        return header + random.bytes(max(0, size - header.count))
    }

    /// What is wrong with `found`, read under key `number`, or nil if it is one of the key's
    /// two values with the metadata stored.
    private static func evictionProblem(_ found: CacheEntry, _ number: Int, size: Int, storedAt: Date) -> String? {
        guard
            found.value == evictionValue(number, version: 0, size: size)
                || found.value == evictionValue(number, version: 1, size: size)
        else {
            return "key evict-\(number) returned a value no writer stored under it (\(found.value.count) bytes)"
        }
        guard found.metadata == CacheEntry.Metadata(storedAt: storedAt) else {
            return "key evict-\(number) returned another entry's metadata: \(found.metadata)"
        }
        return nil
    }
}
