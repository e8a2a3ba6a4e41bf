import Foundation
import NIOCore
import NIOPosix
import Testing
import TierCache

@testable import TierCacheRedis

/// `RedisTier.withEventLoopAffinity`: the caller runs on one of the tier's event loops and its
/// commands go through the connection that loop owns, so neither the command nor its reply crosses
/// a thread. What is checked is where things run and which connection is used, never a timing.
@Suite(.enabled(if: RedisServers.available, RedisServers.missingMessage), .timeLimit(.minutes(5)))
struct RedisEventLoopAffinityTests {
    private func options(size: Int) -> RedisConnectionPool.Options {
        .init(
            size: size, connectTimeout: .seconds(5), commandTimeout: .seconds(5),
            breaker: .init(failureThreshold: 5, openDuration: .seconds(2)), tls: nil)
    }

    private func onLoop<T: Sendable>(_ loop: any EventLoop, _ body: @Sendable () async throws -> T) async rethrows -> T
    {
        try await withTaskExecutorPreference(EventLoopTaskExecutor(loop)) { try await body() }
    }

    /// A pool of `size` connections over a group of two loops of its own, both closed afterwards.
    private func withPool(
        size: Int, _ body: (RedisConnectionPool, [any EventLoop]) async throws -> Void
    ) async throws {
        let endpoint = try #require(RedisServers.standalone)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        defer { group.shutdownGracefully { _ in } }
        let pool = RedisConnectionPool(endpoint: endpoint, group: group, options: options(size: size))
        defer { pool.close() }
        try await body(pool, Array(group.makeIterator()))
    }

    @Test("The body runs on an event loop of the tier's group, and round trips inside it answer as outside")
    func bodyRunsOnTheTiersLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        defer { group.shutdownGracefully { _ in } }
        let loops = group.makeIterator().map { ObjectIdentifier($0) }
        let tier = try RedisServers.tier(cluster: false) { $0.failureMode = .throwErrors }
        let affine = try RedisTier(configuration: tier.configuration, eventLoopGroup: group)
        let key = try CacheKey("affinity")
        let value = Array("{\"id\":7}".utf8)
        let (loopOfBody, stored, read) = try await affine.withEventLoopAffinity {
            let loop = MultiThreadedEventLoopGroup.currentEventLoop.map { ObjectIdentifier($0) }
            let stored = try await affine.store(CacheEntry(value: value, storedAt: Date()), forKey: key)
            let read = try await affine.entry(forKey: key)
            return (loop, stored, read)
        }
        #expect(loopOfBody.map(loops.contains) == true, "the body did not run on one of the tier's loops")
        #expect(stored == .stored)
        #expect(read?.value == value)
        // Outside the scope, the same tier (and another on the shared default group) reads it too.
        #expect(try await affine.entry(forKey: key)?.value == value)
        #expect(try await tier.entry(forKey: key)?.value == value)
        try await affine.removeEntry(forKey: key)
        #expect(try await affine.withEventLoopAffinity { try await affine.entry(forKey: key) } == nil)
    }

    @Test("A caller on one of the group's loops gets a connection on that loop, opened there and then reused")
    func callersGetTheirLoopsConnection() async throws {
        try await withPool(size: 2) { pool, loops in
            // Last loop first: the group's own round robin (`next()`) would start with the first, so
            // a pool that ignored the caller's loop could not pass by chance.
            for loop in loops.reversed() {
                let first = try await onLoop(loop) { try await pool.connection() }
                let again = try await onLoop(loop) { try await pool.connection() }
                #expect(first.eventLoop === loop)
                #expect(again === first, "a second caller on the same loop should reuse its connection")
                #expect(try await onLoop(loop) { try await first.send([Array("PING".utf8)]) } == .simpleString("PONG"))
            }
        }
    }

    @Test("A burst of callers on one loop opens one connection there, leaving the pool's other slot to the other loop")
    func burstOnOneLoop() async throws {
        try await withPool(size: 2) { pool, loops in
            let burst = try await onLoop(loops[0]) {
                try await withThrowingTaskGroup(of: ObjectIdentifier.self) { tasks in
                    for _ in 0..<16 { tasks.addTask { ObjectIdentifier(try await pool.connection()) } }
                    return try await tasks.reduce(into: Set<ObjectIdentifier>()) { $0.insert($1) }
                }
            }
            #expect(burst.count == 1, "16 callers on one loop opened \(burst.count) connections")
            let other = try await onLoop(loops[1]) { try await pool.connection() }
            #expect(other.eventLoop === loops[1] && !burst.contains(ObjectIdentifier(other)))
        }
    }

    @Test("A full pool with no connection on the caller's loop still answers, through a connection on another loop")
    func fullPoolFallsBackToAnotherLoop() async throws {
        try await withPool(size: 1) { pool, loops in
            let onFirst = try await onLoop(loops[1]) { try await pool.connection() }
            let onSecond = try await onLoop(loops[0]) { try await pool.connection() }
            #expect(onFirst.eventLoop === loops[1])
            #expect(onSecond === onFirst, "a pool of one must not open a second connection")
            #expect(
                try await onLoop(loops[0]) { try await onSecond.send([Array("PING".utf8)]) } == .simpleString("PONG"))
        }
    }

    @Test("Sixteen tasks on one loop share its connection; every reply reaches its own caller")
    func concurrentTasksOnOneLoop() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let base = try RedisServers.tier(cluster: false) {
            $0.failureMode = .throwErrors
            $0.connectionsPerNode = 1
        }
        let tier = try RedisTier(configuration: base.configuration, eventLoopGroup: loop)
        let keys = try (0..<64).map { try CacheKey("lane-\($0)") }
        for (index, key) in keys.enumerated() {
            _ = try await tier.store(CacheEntry(value: Array("value \(index)".utf8), storedAt: Date()), forKey: key)
        }
        let mismatches = try await tier.withEventLoopAffinity {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for lane in 0..<16 {
                    group.addTask {
                        var wrong = 0
                        for round in 0..<50 {
                            let index = (lane + round * 16) % keys.count
                            if try await tier.entry(forKey: keys[index])?.value != Array("value \(index)".utf8) {
                                wrong += 1
                            }
                        }
                        return wrong
                    }
                }
                return try await group.reduce(0, +)
            }
        }
        #expect(mismatches == 0)
        #expect(tier.counterSnapshot.hits == 16 * 50)
    }

    @Test("The README's example: one lookup on the connection's loop, then several keys in one call")
    func readmeExample() async throws {
        let redis = try RedisServers.tier(cluster: false) { $0.failureMode = .throwErrors }
        let key = try CacheKey("readme-hit")
        let keys = try [CacheKey("readme-a"), CacheKey("readme-b"), key]
        _ = try await redis.store(CacheEntry(value: [1, 2, 3], storedAt: Date()), forKey: key)
        // README:begin redis affinity
        let hit = try await redis.withEventLoopAffinity {
            try await redis.entry(forKey: key)  // queued and answered on the loop that owns the connection
        }
        let fragments = try await redis.entries(forKeys: keys)  // one MGET; [CacheEntry?] in the keys' order
        // README:end
        #expect(hit?.value == [1, 2, 3])
        #expect(fragments.map { $0?.value } == [nil, nil, [1, 2, 3]])
    }

    @Test("A command sent from the loop on a connection that has closed fails at once, without hanging")
    func closedConnectionFromTheLoop() async throws {
        let endpoint = try #require(RedisServers.standalone)
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let connection = try await RedisConnection.connect(
            to: endpoint, on: loop, connectTimeout: .seconds(5), commandTimeout: .seconds(5))
        connection.close()
        let outcome = await onLoop(loop) { () async -> Result<RESPValue, RedisError> in
            do {
                return .success(try await connection.send([Array("PING".utf8)]))
            } catch let error as RedisError {
                return .failure(error)
            } catch {
                return .failure(.protocolViolation("not a RedisError: \(error)"))
            }
        }
        guard case .failure(.connectionFailed) = outcome else {
            Issue.record("expected connectionFailed, got \(outcome)")
            return
        }
    }
}
