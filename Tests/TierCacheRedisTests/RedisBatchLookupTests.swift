import Foundation
import NIOCore
import NIOPosix
import Testing
import TierCache

@testable import TierCacheRedis

/// `RedisTier.entries(forKeys:)`: the same answers, in the same order, as one `entry(forKey:)`
/// per key, and the same counting; on one server in one `MGET`.
@Suite(.enabled(if: RedisServers.available, RedisServers.missingMessage), .timeLimit(.minutes(5)))
struct RedisBatchLookupTests {
    private func value(_ index: Int) -> [UInt8] { Array("{\"item\":\(index),\"name\":\"n\(index)\"}".utf8) }

    @Test("Hits and misses come back in the keys' order, counted per key, past one batch", arguments: [false, true])
    func hitsAndMissesInOrder(cluster: Bool) async throws {
        let tier = try RedisServers.tier(cluster: cluster) { $0.failureMode = .throwErrors }
        // More than one batch (``RedisTier/mgetBatchSize``): standalone sends three MGETs, a
        // cluster keeps 128 GETs in flight, starting one as each ends.
        let keys = try (0..<300).map { try CacheKey("batch-\($0)") }
        for index in stride(from: 0, to: keys.count, by: 2) {
            _ = try await tier.store(CacheEntry(value: value(index), storedAt: Date()), forKey: keys[index])
        }
        let before = tier.counterSnapshot
        let found = try await tier.entries(forKeys: keys)
        #expect(found.map { $0?.value } == keys.indices.map { $0 % 2 == 0 ? value($0) : nil })
        #expect(tier.counterSnapshot.hits - before.hits == 150 && tier.counterSnapshot.misses - before.misses == 150)
        // The same key twice, an empty list, one key.
        #expect(try await tier.entries(forKeys: [keys[0], keys[0]]).map { $0?.value } == [value(0), value(0)])
        #expect(try await tier.entries(forKeys: []).isEmpty)
        #expect(try await tier.entries(forKeys: [keys[1]]).map { $0?.value } == [nil])
    }

    @Test("A damaged record among them is a miss, counted and deleted; the others are served")
    func damagedRecordAmongThem() async throws {
        let endpoint = try #require(RedisServers.standalone)
        let prefix = "batch-damaged-\(UUID().uuidString):"
        let tier = try RedisServers.tier(cluster: false, prefix: prefix)
        let keys = try (0..<3).map { try CacheKey("k\($0)") }
        for (index, key) in keys.enumerated() {
            _ = try await tier.store(CacheEntry(value: value(index), storedAt: Date()), forKey: key)
        }
        let connection = try await RedisConnection.connect(
            to: endpoint, on: MultiThreadedEventLoopGroup.singleton, connectTimeout: .seconds(5),
            commandTimeout: .seconds(5))
        defer { connection.close() }
        try await connection.sendChecked([
            Array("SET".utf8), Array("\(prefix)k1".utf8), Array("not a tiercache record".utf8),
        ])
        let found = try await tier.entries(forKeys: keys)
        #expect(found.map { $0?.value } == [value(0), nil, value(2)])
        #expect(tier.counterSnapshot.corruptionsRemoved == 1)
        #expect(try await connection.send([Array("EXISTS".utf8), Array("\(prefix)k1".utf8)]) == .integer(0))
    }

    @Test("One MGET per batch of keys, never a GET per key: 16 keys one command, 300 keys three")
    func commandsSent() async throws {
        // A server of the test's own, so that its command counts are this test's alone.
        let server = try await RedisProcess()
        let endpoint = RedisEndpoint(host: "127.0.0.1", port: server.port)
        let tier = try RedisTier(
            configuration: .init(deployment: .standalone(endpoint), capacity: 1 << 20, failureMode: .throwErrors))
        let keys = try (0..<300).map { try CacheKey("k\($0)") }
        for index in [0, 150, 299] {
            _ = try await tier.store(CacheEntry(value: value(index), storedAt: Date()), forKey: keys[index])
        }
        let connection = try await RedisConnection.connect(
            to: endpoint, on: MultiThreadedEventLoopGroup.singleton, connectTimeout: .seconds(5),
            commandTimeout: .seconds(5))
        defer { connection.close() }
        func calls(_ command: String) async throws -> Int {
            let stats = try await connection.sendChecked([Array("INFO".utf8), Array("commandstats".utf8)]).string ?? ""
            guard let line = stats.split(separator: "\r\n").first(where: { $0.hasPrefix("cmdstat_\(command):") }),
                let calls = line.split(separator: ",").first?.split(separator: "=").last
            else { return 0 }
            return Int(calls) ?? -1
        }
        let found = try await tier.entries(forKeys: Array(keys.prefix(16)))
        #expect(found.compactMap { $0 }.count == 1)
        #expect(try await calls("mget") == 1)
        #expect(try await calls("get") == 0)
        let all = try await tier.entries(forKeys: keys)
        #expect(all.enumerated().filter { $0.element != nil }.map(\.offset) == [0, 150, 299])
        #expect(try await calls("mget") == 1 + (300 + RedisTier.mgetBatchSize - 1) / RedisTier.mgetBatchSize)
        #expect(try await calls("get") == 0)
    }

    @Test("When Redis cannot be reached every key is a miss, or the call throws with throwErrors")
    func unreachable() async throws {
        let keys = try (0..<4).map { try CacheKey("k\($0)") }
        // A port nothing listens on (connections are refused at once).
        let closed = RedisEndpoint(host: "127.0.0.1", port: 1)
        let lenient = try RedisTier(
            configuration: .init(deployment: .standalone(closed), capacity: 1 << 20, connectTimeout: .seconds(2)))
        #expect(try await lenient.entries(forKeys: keys).allSatisfy { $0 == nil })
        #expect(lenient.counterSnapshot.misses == 4 && lenient.counterSnapshot.errors >= 1)
        let strict = try RedisTier(
            configuration: .init(
                deployment: .standalone(closed), capacity: 1 << 20, connectTimeout: .seconds(2),
                failureMode: .throwErrors))
        await #expect(throws: TierCacheError.self) { try await strict.entries(forKeys: keys) }
    }
}
