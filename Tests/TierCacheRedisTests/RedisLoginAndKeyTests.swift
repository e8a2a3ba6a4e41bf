import Foundation
import Testing
import TierCache

@testable import TierCacheRedis

/// AUTH, ACL users, SELECT, TTLs and key slots, checked against real servers.
@Suite(
    .enabled(if: RedisProcess.cliPath != nil, "redis-server and redis-cli are not installed"), .timeLimit(.minutes(5)))
struct RedisLoginAndKeyTests {
    private func tier(_ endpoint: RedisEndpoint, prefix: String = "login:", capacity: Int = 1 << 20) throws -> RedisTier
    {
        try RedisTier(
            configuration: .init(
                deployment: .standalone(endpoint), keyPrefix: prefix, capacity: capacity,
                commandTimeout: .seconds(5), failureMode: .throwErrors))
    }

    @Test func passwordsACLUsersAndDatabases() async throws {
        let server = try await RedisProcess(arguments: [
            "--requirepass", "s3cret", "--user", "app", "on", ">apppass", "~*", "+@all",
            "--user", "reader", "on", "nopass", "~*", "+@all",
        ])
        let key = try CacheKey("k")
        let entry = CacheEntry(value: [1], storedAt: Date())

        let withPassword = try tier(RedisEndpoint(url: "redis://:s3cret@127.0.0.1:\(server.port)/3"))
        #expect(try await withPassword.store(entry, forKey: key) == .stored)
        #expect(try await withPassword.entry(forKey: key)?.value == [1])
        // SELECT 3: database 0 does not see it.
        let cli = RedisCLI(seeds: [])
        #expect(
            try cli.runTool([
                "-p", "\(server.port)", "-a", "s3cret", "--no-auth-warning", "-n", "3", "EXISTS", "login:k",
            ]).contains("1"))
        #expect(
            try cli.runTool([
                "-p", "\(server.port)", "-a", "s3cret", "--no-auth-warning", "-n", "0", "EXISTS", "login:k",
            ]).contains("0"))

        let aclUser = try tier(RedisEndpoint(url: "redis://app:apppass@127.0.0.1:\(server.port)/3"))
        #expect(try await aclUser.entry(forKey: key)?.value == [1])
        // A user without a password logs in as that user (the default user needs one here)…
        let passwordless = try tier(RedisEndpoint(url: "redis://reader@127.0.0.1:\(server.port)/3"))
        #expect(try await passwordless.entry(forKey: key)?.value == [1])
        // …and is refused if the user has a password.
        let withoutItsPassword = try tier(RedisEndpoint(url: "redis://app@127.0.0.1:\(server.port)/3"))
        await #expect(throws: TierCacheError.self) { try await withoutItsPassword.entry(forKey: key) }

        let wrong = try tier(RedisEndpoint(url: "redis://:nope@127.0.0.1:\(server.port)"))
        await #expect(throws: TierCacheError.self) { try await wrong.entry(forKey: key) }
        let none = try tier(RedisEndpoint(host: "127.0.0.1", port: server.port))
        await #expect(throws: TierCacheError.self) { try await none.entry(forKey: key) }
    }

    @Test("A user refused INFO stores without asking for it on every store")
    func refusedINFOIsAskedOnce() async throws {
        let server = try await RedisProcess(arguments: ["--user", "app", "on", ">apppass", "~*", "+@all", "-info"])
        let limited = try tier(RedisEndpoint(url: "redis://app:apppass@127.0.0.1:\(server.port)"))
        for number in 0..<10 {
            let outcome = try await limited.store(
                CacheEntry(value: [1], storedAt: Date()), forKey: try CacheKey("k\(number)"))
            #expect(outcome == .stored)
        }
        // The default user (no password) reads the server's count of refused INFO calls.
        let stats = try RedisCLI(seeds: []).runTool(["-p", "\(server.port)", "INFO", "commandstats"])
        let line = try #require(stats.split(whereSeparator: \.isNewline).first { $0.hasPrefix("cmdstat_info:") })
        #expect(line.contains("rejected_calls=1,"), "\(line)")
    }

    @Test func expiryHintsBecomeTTLs() async throws {
        let server = try await RedisProcess()
        let tier = try tier(RedisEndpoint(host: "127.0.0.1", port: server.port), prefix: "ttl:")
        let now = Date()
        _ = try await tier.store(
            CacheEntry(value: [1], storedAt: now, expiresAt: now.addingTimeInterval(60)), forKey: CacheKey("short"))
        _ = try await tier.store(CacheEntry(value: [1], storedAt: now), forKey: CacheKey("forever"))
        let cli = RedisCLI(seeds: [])
        let ttl =
            Int(
                try cli.runTool(["-p", "\(server.port)", "PTTL", "ttl:short"]).trimmingCharacters(
                    in: .whitespacesAndNewlines)) ?? 0
        // At most 60 s, and no less than what is left of them since `now` (however slow the machine).
        let left = Int((60 - Date().timeIntervalSince(now)) * 1_000)
        #expect(ttl >= left - 10 && ttl <= 60_000, "PTTL \(ttl) ms, \(left) ms left")
        #expect(try cli.runTool(["-p", "\(server.port)", "PTTL", "ttl:forever"]).contains("-1"))
    }

    @Test("removeAll deletes every key under the prefix, page after page of SCAN, and no other")
    func removeAllDeletesEveryPage() async throws {
        let server = try await RedisProcess()
        let tier = try tier(RedisEndpoint(host: "127.0.0.1", port: server.port), prefix: "mine:")
        let cli = RedisCLI(seeds: [])
        _ = try cli.runTool(["-p", "\(server.port)", "SET", "theirs:k", "kept"])
        // More than two pages of SCAN's 1,000.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for number in 0..<2_500 {
                group.addTask {
                    _ = try await tier.store(
                        CacheEntry(value: [1], storedAt: Date()), forKey: try CacheKey("k\(number)"))
                }
            }
            try await group.waitForAll()
        }
        #expect(try cli.runTool(["-p", "\(server.port)", "DBSIZE"]).contains("2501"))
        try await tier.removeAll()
        #expect(
            try cli.runTool(["-p", "\(server.port)", "DBSIZE"]).trimmingCharacters(in: .whitespacesAndNewlines) == "1")
        #expect(try cli.runTool(["-p", "\(server.port)", "GET", "theirs:k"]).contains("kept"))
    }

    @Test("A value over what is decoded on the event loop reads back whole, alone and in a batch")
    func largeCompressibleValueIsDecodedByTheReader() async throws {
        let server = try await RedisProcess()
        let tier = try tier(RedisEndpoint(host: "127.0.0.1", port: server.port), prefix: "large:", capacity: 64 << 20)
        // 3 MiB that compress to a few kB: within the 5% rule by their stored size.
        let large = [UInt8](repeating: 7, count: 3 << 20)
        let small = [UInt8](repeating: 1, count: 100)
        #expect(try await tier.store(CacheEntry(value: large, storedAt: Date()), forKey: CacheKey("large")) == .stored)
        _ = try await tier.store(CacheEntry(value: small, storedAt: Date()), forKey: CacheKey("small"))
        #expect(large.count > RedisTier.largestValueDecodedInPlace)
        #expect(try await tier.entry(forKey: CacheKey("large"))?.value == large)
        let batch = try await tier.entries(forKeys: [CacheKey("small"), CacheKey("large"), CacheKey("absent")])
        #expect(batch.map { $0?.value } == [small, large, nil])
        // Values each under the limit, together past what one reply decodes on the loop: those
        // past it are decoded by the reader, and all read back whole.
        let keys = try (0..<8).map { try CacheKey("medium\($0)") }
        let medium = (0..<8).map { [UInt8](repeating: UInt8($0), count: 900 << 10) }
        for (key, value) in zip(keys, medium) {
            _ = try await tier.store(CacheEntry(value: value, storedAt: Date()), forKey: key)
        }
        #expect(try await tier.entries(forKeys: keys).map { $0?.value } == medium)
        let record = try await tier.client.send(
            [Array("GET".utf8), Array("large:medium0".utf8)], key: nil, readingKeyFirst: false)
        guard case .bulkString(let bytes) = record else {
            Issue.record("no record: \(record)")
            return
        }
        let within = bytes.withUnsafeBytes { tier.decodeRecord($0, inPlaceBudget: 1 << 20) }
        let past = bytes.withUnsafeBytes { tier.decodeRecord($0, inPlaceBudget: 100 << 10) }
        #expect(within.isEntry && past.isUndecoded)
    }

    @Test func aBurstOnAColdPoolOpensNoMoreConnectionsThanItsSize() async throws {
        let server = try await RedisProcess()
        let tier = try RedisTier(
            configuration: .init(
                deployment: .standalone(RedisEndpoint(host: "127.0.0.1", port: server.port)), capacity: 1 << 20,
                connectionsPerNode: 2, connectTimeout: .seconds(5), commandTimeout: .seconds(5)))
        let key = try CacheKey("absent")
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<64 { group.addTask { _ = try? await tier.entry(forKey: key) } }
        }
        #expect(tier.counterSnapshot.misses == 64 && tier.counterSnapshot.errors == 0)
        // CLIENT LIST shows the tier's connections and redis-cli's own.
        let clients = try RedisCLI(seeds: []).runTool(["-p", "\(server.port)", "CLIENT", "LIST"]).split(separator: "\n")
            .count
        #expect(clients <= 3, "\(clients - 1) connections for a pool of 2")
    }

    @Test func aDamagedRecordIsAMissDeletedAndCounted() async throws {
        let server = try await RedisProcess()
        let tier = try tier(RedisEndpoint(host: "127.0.0.1", port: server.port), prefix: "damaged:")
        let key = try CacheKey("k")
        _ = try await tier.store(CacheEntry(value: Array(repeating: 7, count: 500), storedAt: Date()), forKey: key)
        let cli = RedisCLI(seeds: [])
        // Another program (or a bug) overwrote the value: not a record of ours.
        _ = try cli.runTool(["-p", "\(server.port)", "SET", "damaged:k", "not a tiercache record"])
        #expect(try await tier.entry(forKey: key) == nil)
        #expect(tier.counterSnapshot.corruptionsRemoved == 1)
        #expect(try cli.runTool(["-p", "\(server.port)", "EXISTS", "damaged:k"]).contains("0"))
    }

    @Test(.enabled(if: RedisServers.available, RedisServers.missingMessage))
    func slotsAgreeWithTheServer() throws {
        let seeds = try #require(RedisServers.clusterSeeds)
        let cli = RedisCLI(seeds: seeds)
        for key in [
            "foo", "{user1000}.following", "{user1000}.followers", "a{}b", "tiercache:https://example.com/x?y=1",
            "ключ",
        ] {
            let server = Int(
                try cli.run(seeds[0], "CLUSTER", "KEYSLOT", key).trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(server == HashSlot.of(Array(key.utf8)), "\(key)")
        }
    }
}

extension DecodedRecord {
    var isEntry: Bool { if case .entry = self { true } else { false } }
    var isUndecoded: Bool { if case .undecoded = self { true } else { false } }
}
