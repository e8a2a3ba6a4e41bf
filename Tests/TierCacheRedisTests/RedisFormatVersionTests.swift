import Foundation
import NIOCore
import NIOPosix
import Testing
import TierCache

@testable import TierCacheRedis

/// A rolling deploy: servers on this version share Redis with servers on a newer one, whose
/// records are in a format version this one does not read. Those are misses here, counted, and
/// left in place, so that the older servers do not wipe what the newer ones write.
@Suite(.enabled(if: RedisServers.available, RedisServers.missingMessage), .timeLimit(.minutes(5)))
struct RedisFormatVersionTests {
    @Test("A record of an unknown format version is a counted miss left in Redis; a damaged one is deleted")
    func unknownVersionLeftInPlace() async throws {
        let endpoint = try #require(RedisServers.standalone)
        let prefix = "format-\(UUID().uuidString):"
        let tier = try RedisServers.tier(cluster: false, prefix: prefix)
        let newer = try CacheKey("written-by-a-newer-version")
        _ = try await tier.store(CacheEntry(value: Array("{\"v\":1}".utf8), storedAt: Date()), forKey: newer)
        let connection = try await RedisConnection.connect(
            to: endpoint, on: MultiThreadedEventLoopGroup.singleton, connectTimeout: .seconds(5),
            commandTimeout: .seconds(5))
        defer { connection.close() }
        let redisKey = Array("\(prefix)\(newer.rawValue)".utf8)
        guard case .bulkString(let stored) = try await connection.send([Array("GET".utf8), redisKey]) else {
            Issue.record("the stored record is not in Redis under \(prefix)")
            return
        }
        var future = Array(stored)
        future[0] = 4  // a version after this one's records (3) and sealed envelopes (2)
        try await connection.sendChecked([Array("SET".utf8), redisKey, future])

        #expect(try await tier.entry(forKey: newer) == nil)
        #expect(try await tier.entries(forKeys: [newer]).map { $0?.value } == [nil])
        let counts = tier.counterSnapshot
        #expect(counts.unknownFormatRecords == 2 && counts.corruptionsRemoved == 0 && counts.misses == 2)
        #expect(
            try await connection.send([Array("EXISTS".utf8), redisKey]) == .integer(1),
            "left for the servers that read it")
    }

    @Test("A damaged record is deleted only while it is still the one read: a good value stored since stays")
    func damagedRecordDeletedOnlyIfUnchanged() async throws {
        let endpoint = try #require(RedisServers.standalone)
        let prefix = "damaged-\(UUID().uuidString):"
        let tier = try RedisServers.tier(cluster: false, prefix: prefix)
        let key = try CacheKey("k")
        let redisKey = Array("\(prefix)\(key.rawValue)".utf8)
        let connection = try await RedisConnection.connect(
            to: endpoint, on: MultiThreadedEventLoopGroup.singleton, connectTimeout: .seconds(5),
            commandTimeout: .seconds(5))
        defer { connection.close() }
        let damaged = Array("not a record".utf8)
        try await connection.sendChecked([Array("SET".utf8), redisKey, damaged])
        // Another server stores a good value after this one read the damaged record.
        _ = try await tier.store(CacheEntry(value: [1, 2, 3], storedAt: Date()), forKey: key)
        await tier.removeIfUnchanged(redisKey, holding: damaged)
        #expect(try await tier.entry(forKey: key)?.value == [1, 2, 3])
        // Still the damaged record: deleted.
        try await connection.sendChecked([Array("SET".utf8), redisKey, damaged])
        #expect(try await tier.entry(forKey: key) == nil)
        #expect(try await connection.send([Array("EXISTS".utf8), redisKey]) == .integer(0))
        #expect(tier.counterSnapshot.corruptionsRemoved == 1 && tier.counterSnapshot.errors == 0)
    }

    @Test("A value larger than a reading tier's capacity is a miss there, left in Redis for a tier configured larger")
    func largerThanTheReadingTier() async throws {
        let prefix = "larger-\(UUID().uuidString):"
        let large = try RedisServers.tier(cluster: false, prefix: prefix, capacity: 64 << 20)
        let small = try RedisServers.tier(cluster: false, prefix: prefix, capacity: 1 << 20)
        let key = try CacheKey("compressible")
        // 2 MiB of zeros: a few hundred bytes stored, within the small tier's 5% as well.
        let zeros = [UInt8](repeating: 0, count: 2 << 20)
        #expect(try await large.store(CacheEntry(value: zeros, storedAt: Date()), forKey: key) == .stored)
        #expect(try await small.entry(forKey: key) == nil)
        #expect(small.counterSnapshot.corruptionsRemoved == 0)
        #expect(try await large.entry(forKey: key)?.value == zeros, "left for the tier that reads it")
        // The small tier refuses such a value itself.
        let outcome = try await small.store(CacheEntry(value: zeros, storedAt: Date()), forKey: try CacheKey("other"))
        #expect(outcome == .refused(.tooLarge(size: 2 << 20, limit: try await small.usage().maxEntryBytes)))
    }

    /// 5% of 16 GiB is 819 MiB: Redis closed the connection on such a `SET` (its default
    /// `proto-max-bulk-len`), with every command queued on it.
    @Test("The largest entry is 5% of the capacity, and never above a Redis string's 512 MiB")
    func largestEntryWithinABulkString() async throws {
        let prefix = "bulk-\(UUID().uuidString):"
        let huge = try RedisServers.tier(cluster: false, prefix: prefix, capacity: 16 << 30)
        #expect(try await huge.usage().maxEntryBytes == 512 << 20)
        let modest = try RedisServers.tier(cluster: false, prefix: prefix, capacity: 1 << 30)
        #expect(try await modest.usage().maxEntryBytes == (1 << 30) / 20)
    }
}
