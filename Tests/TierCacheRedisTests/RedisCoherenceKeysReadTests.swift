import Foundation
import Testing
@_spi(TierCacheInternals) import TierCache

@testable import TierCacheRedis

/// Coherence in `keysRead` mode: the server tracks the keys each process read, and data
/// connections redirect their invalidations to the tracking connection.
@Suite(.enabled(if: RedisServers.available, RedisServers.missingMessage), .timeLimit(.minutes(5)))
struct RedisCoherenceKeysReadTests {
    /// `a`: memory over Redis, kept coherent in `keysRead` mode; `b`: Redis alone, another process.
    private struct Fleet {
        let memory: MemoryTier
        let redis: RedisTier
        /// `b`'s tier: its connections track nothing.
        let otherRedis: RedisTier
        let a: TieredCache
        let b: TieredCache
        let coherence: RedisCoherence
        let events = CoherenceEvents()

        init(cluster: Bool = false, redisCapacity: Int = 32 << 20) throws {
            let prefix = "coherence-read:\(UUID().uuidString):"
            memory = try MemoryTier(capacity: 1 << 20)
            redis = try RedisServers.tier(cluster: cluster, prefix: prefix, capacity: redisCapacity)
            a = TieredCache(tiers: [memory, redis])
            otherRedis = try RedisServers.tier(cluster: cluster, prefix: prefix)
            b = TieredCache(tiers: [otherRedis])
            coherence = try RedisCoherence(cache: a, configuration: .init(tracking: .keysRead, onEvent: events.record))
        }

        func started() async -> Bool {
            await events.next { if case .flushed(reason: "tracking began") = $0 { true } else { false } } != nil
        }
    }

    /// With `readingUsage`, `usage()` (and the statistics built on it) reads every key's length
    /// first: on the tracked data connections that registered every key for this process, and the
    /// fleet's writes to all of them were sent here.
    @Test(
        "A key read is invalidated by another process's write; a key never read is not reported (nor once usage is read)",
        arguments: [false, true])
    func readKeysOnly(readingUsage: Bool) async throws {
        let fleet = try Fleet()
        let tracking = Task { await fleet.coherence.run() }
        defer { tracking.cancel() }
        #expect(await fleet.started())
        let read = try CacheKey("read"), unread = try CacheKey("unread")
        for key in [read, unread] {
            _ = await fleet.b.store(CacheEntry(value: [1], storedAt: Date()), forKey: key, policy: .allowed)
        }
        #expect(await fleet.a.lookup(read)?.tierIndex == 1)  // from Redis, promoted, now tracked
        #expect(fleet.memory.entry(forKey: read)?.value == [1])
        if readingUsage { #expect(try await fleet.redis.usage().entries == 2) }

        // The unread key's write goes first: had it been reported, it would come before the other.
        _ = await fleet.b.store(CacheEntry(value: [2], storedAt: Date()), forKey: unread, policy: .allowed)
        _ = await fleet.b.store(CacheEntry(value: [2], storedAt: Date()), forKey: read, policy: .allowed)
        let reportedUnread = Locked(false)
        let invalidated = await fleet.events.next { event in
            guard case .invalidated(let keys) = event else { return false }
            if keys.contains(unread) { reportedUnread.withLock { $0 = true } }
            return keys.contains(read)
        }
        #expect(invalidated != nil)
        #expect(!reportedUnread.withLock { $0 })
        #expect(fleet.memory.entry(forKey: read) == nil)
        #expect(await fleet.a.lookup(read)?.entry.value == [2])
        try await fleet.b.removeAll()
    }

    @Test("A value this process wrote and never read is not kept once another process overwrites it")
    func writtenKeysAreTracked() async throws {
        let fleet = try Fleet()
        let tracking = Task { await fleet.coherence.run() }
        defer { tracking.cancel() }
        #expect(await fleet.started())
        let key = try CacheKey("written")
        _ = await fleet.a.store(CacheEntry(value: [1], storedAt: Date()), forKey: key, policy: .allowed)
        // The write read its key first, so the server reports the write itself to this process.
        #expect(await fleet.events.invalidation(of: key))
        #expect(fleet.memory.entry(forKey: key) == nil)
        #expect(await fleet.a.lookup(key)?.entry.value == [1])  // read: tracked again
        _ = await fleet.b.store(CacheEntry(value: [2], storedAt: Date()), forKey: key, policy: .allowed)
        #expect(await fleet.events.invalidation(of: key))
        #expect(await fleet.a.lookup(key)?.entry.value == [2])
        try await fleet.b.removeAll()
    }

    /// A memory-only store removes the key from Redis; its removal reads the key first, so the
    /// value kept in memory is reported when another process writes the key.
    @Test("A value kept in memory only is invalidated by another process's write")
    func memoryOnlyValuesAreTracked() async throws {
        let fleet = try Fleet()
        let tracking = Task { await fleet.coherence.run() }
        defer { tracking.cancel() }
        #expect(await fleet.started())
        let key = try CacheKey("memory-only")
        _ = await fleet.a.store(CacheEntry(value: [1], storedAt: Date()), forKey: key, policy: .allowedInMemoryOnly)
        #expect(fleet.memory.entry(forKey: key)?.value == [1])
        _ = await fleet.b.store(CacheEntry(value: [2], storedAt: Date()), forKey: key, policy: .allowed)
        #expect(await fleet.events.invalidation(of: key))
        #expect(fleet.memory.entry(forKey: key) == nil)
        #expect(await fleet.a.lookup(key)?.entry.value == [2])
        try await fleet.b.removeAll()
    }

    @Test("A write Redis refuses is not kept in the upper tiers, where no invalidation would reach it")
    func refusedWritesAreNotKept() async throws {
        // Redis admits entries up to 5% of 256 KiB (13 KiB), memory up to 5% of 1 MiB.
        let fleet = try Fleet(redisCapacity: 256 << 10)
        let tracking = Task { await fleet.coherence.run() }
        defer { tracking.cancel() }
        #expect(await fleet.started())
        let key = try CacheKey("large")
        let report = await fleet.a.store(
            CacheEntry(value: (0..<(20 << 10)).map { _ in .random(in: 0...255) }, storedAt: Date()),  // incompressible
            forKey: key, policy: .allowed)
        let stored = report.outcomes.map { if case .stored = $0.outcome { true } else { false } }
        #expect(stored == [true, false])  // memory took it, Redis refused it
        #expect(fleet.memory.entry(forKey: key) == nil)
        #expect(await fleet.a.lookup(key) == nil)
    }

    /// The server tracks a key for the connection that read it and forgets it when that
    /// connection closes: a later write was reported to nobody, the tracking connection was
    /// healthy, and the value read stayed above Redis without bound.
    @Test("A data connection whose reads were tracked closes: the upper tiers let go of what they hold")
    func aClosedDataConnectionEmptiesTheUpperTiers() async throws {
        let fleet = try Fleet()
        let tracking = Task { await fleet.coherence.run() }
        defer { tracking.cancel() }
        #expect(await fleet.started())
        let key = try CacheKey("read-then-closed")
        _ = await fleet.b.store(CacheEntry(value: [1], storedAt: Date()), forKey: key, policy: .allowed)
        #expect(await fleet.a.lookup(key)?.tierIndex == 1)  // read on a redirected connection
        #expect(fleet.memory.entry(forKey: key)?.value == [1])

        // Close a's data connections (those redirected to a tracking connection), through b's.
        let trackingIDs = Set(fleet.coherence.trackingConnectionIDs.map(String.init))
        let list = try await fleet.otherRedis.client.send(["CLIENT", "LIST"].map { Array($0.utf8) }, key: nil)
        let redirected = (list.string ?? "").split(separator: "\n").compactMap { line -> String? in
            let fields = Dictionary(
                line.split(separator: " ").compactMap { field -> (String, String)? in
                    let parts = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
                }, uniquingKeysWith: { first, _ in first })
            guard let redirect = fields["redir"], trackingIDs.contains(redirect) else { return nil }
            return fields["id"]
        }
        try #require(!redirected.isEmpty, "a's read went through a redirected connection")
        for id in redirected {
            _ = try await fleet.otherRedis.client.send(["CLIENT", "KILL", "ID", id].map { Array($0.utf8) }, key: nil)
        }
        let flushed = await fleet.events.next {
            if case .flushed(let reason) = $0 { reason.contains("data connection") } else { false }
        }
        #expect(flushed != nil)
        #expect(fleet.memory.entry(forKey: key) == nil)
        _ = await fleet.b.store(CacheEntry(value: [2], storedAt: Date()), forKey: key, policy: .allowed)
        #expect(await fleet.a.lookup(key)?.entry.value == [2])
        try await fleet.b.removeAll()
    }

    @Test("Data connections follow the tracking connection: redirected while it runs, off after")
    func dataConnectionsFollow() async throws {
        let fleet = try Fleet()
        let tracking = Task { await fleet.coherence.run() }
        #expect(await fleet.started())
        let id = try #require(fleet.coherence.trackingConnectionIDs.first)
        #expect(try await trackingInfo(fleet.redis) == .init(flags: ["on"], redirect: id))

        // A new tracking connection: the pooled connections are redirected to it.
        _ = try await fleet.redis.client.send(["CLIENT", "KILL", "ID", String(id)].map { Array($0.utf8) }, key: nil)
        #expect(await fleet.started())
        let newID = try #require(fleet.coherence.trackingConnectionIDs.first)
        #expect(newID != id)
        #expect(try await trackingInfo(fleet.redis) == .init(flags: ["on"], redirect: newID))
        let key = try CacheKey("k")
        _ = await fleet.b.store(CacheEntry(value: [1], storedAt: Date()), forKey: key, policy: .allowed)
        #expect(await fleet.a.lookup(key)?.tierIndex == 1)
        _ = await fleet.b.store(CacheEntry(value: [2], storedAt: Date()), forKey: key, policy: .allowed)
        #expect(await fleet.events.invalidation(of: key))

        tracking.cancel()
        await tracking.value
        #expect(try await trackingInfo(fleet.redis) == .init(flags: ["off"], redirect: -1))
        #expect(!fleet.redis.tracking.tracksWrittenKeys)
        try await fleet.b.removeAll()
    }

    @Test("A redirect the server refuses fails the reads behind it, until the targets change")
    func refusedRedirectFailsReads() async throws {
        let redis = try RedisServers.tier(cluster: false) { $0.failureMode = .throwErrors }
        let endpoint = try #require(RedisServers.standalone)
        let key = try CacheKey("k")
        _ = try await redis.store(CacheEntry(value: [1], storedAt: Date()), forKey: key)
        redis.tracking.redirect(to: [endpoint: Int64.max])  // no such client
        await #expect(throws: TierCacheError.self) { try await redis.entry(forKey: key) }
        await #expect(throws: TierCacheError.self) { try await redis.entry(forKey: key) }
        redis.tracking.suspend()
        #expect(try await redis.entry(forKey: key)?.value == [1])
        try await redis.removeAll()
    }

    @Test("Every primary of a cluster: the keys read on each are reported")
    func clusterKeysRead() async throws {
        let fleet = try Fleet(cluster: true)
        let tracking = Task { await fleet.coherence.run() }
        defer { tracking.cancel() }
        #expect(await fleet.started())
        #expect(fleet.coherence.trackingConnectionIDs.count == 3)
        let keys = try (0..<30).map { try CacheKey("key-\($0)") }
        for key in keys {
            _ = await fleet.b.store(CacheEntry(value: [1], storedAt: Date()), forKey: key, policy: .allowed)
        }
        for key in keys { _ = await fleet.a.lookup(key) }
        #expect(keys.allSatisfy { fleet.memory.entry(forKey: $0) != nil })
        for key in keys {
            _ = await fleet.b.store(CacheEntry(value: [2], storedAt: Date()), forKey: key, policy: .allowed)
        }
        #expect(await fleet.events.invalidations(of: Set(keys)))
        #expect(keys.allSatisfy { fleet.memory.entry(forKey: $0) == nil })
        try await fleet.b.removeAll()
    }

    private struct TrackingInfo: Equatable {
        var flags: Set<String>
        var redirect: Int64
    }

    /// `CLIENT TRACKINGINFO` of one of the tier's pooled connections.
    private func trackingInfo(_ tier: RedisTier) async throws -> TrackingInfo {
        let reply = try await tier.client.send(["CLIENT", "TRACKINGINFO"].map { Array($0.utf8) }, key: nil)
        guard case .array(let fields) = reply, fields.count.isMultiple(of: 2) else {
            throw RedisError.protocolViolation("CLIENT TRACKINGINFO: \(reply)")
        }
        var info = TrackingInfo(flags: [], redirect: 0)
        for index in stride(from: 0, to: fields.count, by: 2) {
            switch (fields[index].string, fields[index + 1]) {
            case ("flags", .array(let flags)): info.flags = Set(flags.compactMap(\.string))
            case ("redirect", .integer(let id)): info.redirect = id
            default: break
            }
        }
        return info
    }
}
