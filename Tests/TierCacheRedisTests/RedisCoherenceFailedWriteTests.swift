import Foundation
import Testing
import TierCache

@testable import TierCacheRedis

/// A write that does not reach Redis, or reaches it untracked, is not kept in the tiers above it
/// while coherence runs: the rest of the fleet reads what Redis holds, and no invalidation would
/// reach the value above it.
@Suite(
    .enabled(if: RedisProcess.cliPath != nil, "redis-server and redis-cli are not installed"), .timeLimit(.minutes(5)))
struct RedisCoherenceFailedWriteTests {
    /// A cache over a server whose user `app` has `permissions`, with coherence running in
    /// `mode`, and another process writing as the default user.
    private struct Fleet {
        let server: RedisProcess
        let memory: MemoryTier
        let cache: TieredCache
        let otherProcess: TieredCache
        let coherence: RedisCoherence
        let events = CoherenceEvents()

        init(permissions: [String], mode: RedisCoherence.Configuration.TrackingMode) async throws {
            server = try await RedisProcess(
                arguments: ["--user", "app", "on", ">apppass", "~*", "+@all"] + permissions)
            let prefix = "failed-write:"
            let app = try RedisEndpoint(url: "redis://app:apppass@127.0.0.1:\(server.port)")
            memory = try MemoryTier(capacity: 1 << 20)
            cache = TieredCache(
                tiers: [
                    memory,
                    try RedisTier(
                        configuration: .init(deployment: .standalone(app), keyPrefix: prefix, capacity: 1 << 20)),
                ])
            let other = RedisEndpoint(host: "127.0.0.1", port: server.port)
            otherProcess = TieredCache(
                tiers: [
                    try RedisTier(
                        configuration: .init(deployment: .standalone(other), keyPrefix: prefix, capacity: 1 << 20))
                ])
            coherence = try RedisCoherence(cache: cache, configuration: .init(tracking: mode, onEvent: events.record))
        }
    }

    /// Broadcast mode: the write fails (the user may not write, as when Redis is unreachable),
    /// and the removal after it fails too, so Redis keeps the value the fleet reads. The writer
    /// kept its own value above Redis and served it until the key expired.
    @Test("Broadcast mode: a write Redis did not take is removed from the upper tiers")
    func failedWriteIsNotKeptAbove() async throws {
        let fleet = try await Fleet(permissions: ["-@write"], mode: .broadcast)
        let tracking = Task { await fleet.coherence.run() }
        defer { tracking.cancel() }
        #expect(await fleet.events.next { if case .subscribed = $0 { true } else { false } } != nil)
        let key = try CacheKey("k")
        _ = await fleet.otherProcess.store(CacheEntry(value: [1], storedAt: Date()), forKey: key, policy: .allowed)
        #expect(await fleet.cache.lookup(key)?.entry.value == [1])

        let report = await fleet.cache.store(CacheEntry(value: [2], storedAt: Date()), forKey: key, policy: .allowed)
        guard case .stored = report.outcomes.first?.outcome, case .failed = report.outcomes.last?.outcome else {
            Issue.record("outcomes: \(report.outcomes)")
            return
        }
        #expect(fleet.memory.entry(forKey: key) == nil)
        #expect(await fleet.cache.lookup(key)?.entry.value == [1], "what the fleet reads")
    }

    /// Keys-read mode sends `EXISTS` before each write so that the server tracks the written key
    /// for this process; an ACL without `exists` refused it, the write went through, and its
    /// value stayed above Redis through every later write by others.
    @Test("Keys-read mode: a write whose EXISTS is refused fails, and is not kept above Redis")
    func refusedExistsFailsTheWrite() async throws {
        let fleet = try await Fleet(permissions: ["-exists"], mode: .keysRead)
        let tracking = Task { await fleet.coherence.run() }
        defer { tracking.cancel() }
        #expect(await fleet.events.next { if case .subscribed = $0 { true } else { false } } != nil)
        let key = try CacheKey("k")
        let report = await fleet.cache.store(CacheEntry(value: [1], storedAt: Date()), forKey: key, policy: .allowed)
        guard case .failed(let error) = report.outcomes.last?.outcome else {
            Issue.record("outcomes: \(report.outcomes)")
            return
        }
        #expect("\(error)".contains("EXISTS"), "\(error)")
        #expect(fleet.memory.entry(forKey: key) == nil)
        _ = await fleet.otherProcess.store(CacheEntry(value: [2], storedAt: Date()), forKey: key, policy: .allowed)
        #expect(await fleet.cache.lookup(key)?.entry.value == [2])
    }
}
