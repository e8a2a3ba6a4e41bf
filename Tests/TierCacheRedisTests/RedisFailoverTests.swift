import Foundation
import Testing
import TierCache

@testable import TierCacheRedis

/// A primary of a Redis Cluster with replicas killed under load (SIGKILL): its replica is promoted,
/// and the tier finds the new primary by itself.
@Suite("RedisTier through a cluster failover")
struct RedisFailoverTests {
    @Test(
        "A killed primary fails commands only inside the failover window; afterwards every key reads back its value",
        .enabled(if: RedisProcess.cliPath != nil, "redis-server and redis-cli are not installed"),
        .timeLimit(.minutes(5)))
    func killedPrimaryFailsOver() async throws {
        // 3 primaries and 3 replicas.
        let cluster = try await TestCluster(nodes: 6, replicas: 1, options: ["--cluster-node-timeout", "500"])
        let (nodes, endpoints, cli) = (cluster.nodes, cluster.endpoints, cluster.cli)
        try await cli.waitForReplicasInSync(endpoints)

        let keys = try (0..<90).map { try CacheKey("failover-\($0)") }
        let victim = try cli.owner(of: HashSlot.of(Array(("tiercache:" + keys[0].rawValue).utf8)))
        let survivors = endpoints.filter { $0 != victim }
        // Not a seed, so that nothing keeps its pool once the map no longer names it.
        let tier = try RedisTier(
            configuration: .init(
                deployment: .cluster(seeds: Array(survivors.prefix(3))), capacity: 1 << 20,
                commandTimeout: .seconds(2)))
        for key in keys {
            #expect(try await tier.store(CacheEntry(value: [1], storedAt: Date()), forKey: key) == .stored)
        }
        // Every write replicated before the kill: what an asynchronous replica has not received, a
        // failover loses, whatever the client does.
        try await cli.waitForReplicasInSync(endpoints)

        let onVictim = try keys.filter {
            try cli.owner(of: HashSlot.of(Array(("tiercache:" + $0.rawValue).utf8))) == victim
        }
        let victimIndex = try #require(endpoints.firstIndex(of: victim))
        let client = try #require(tier.client as? ClusterRedisClient)
        #expect(client.pooledEndpoints.contains(victim))
        let killedAt = ContinuousClock.now
        nodes[victimIndex].kill()

        // Read a key of the dead primary's slots until it answers again.
        var failures = 0
        var recoveredAt: ContinuousClock.Instant?
        var circuitOpened = false
        while recoveredAt == nil, ContinuousClock.now - killedAt < .seconds(60) {
            if let found = try? await tier.entry(forKey: onVictim[0]), found.value == [1] {
                recoveredAt = .now
            } else {
                failures += 1
                circuitOpened = circuitOpened || tier.isCircuitOpen
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        let recovered = try #require(recoveredAt, "the tier never reached the promoted replica")
        let window = recovered - killedAt
        print("Redis Cluster failover: commands failed for \(window) after the SIGKILL (\(failures) attempts)")
        // The survivors agree the cluster is whole again before every key is read (a node may still
        // answer CLUSTERDOWN for a moment after the promotion).
        for endpoint in survivors { try await cli.waitForState("ok", on: endpoint) }

        // After the window: every key reads back its value, none fails, and writes reach the new primary.
        for key in keys {
            let found = try await tier.entry(forKey: key)
            #expect(found?.value == [1], "\(key) after the failover")
        }
        for key in onVictim {
            #expect(try await tier.store(CacheEntry(value: [2], storedAt: Date()), forKey: key) == .stored)
            #expect(try await tier.entry(forKey: key)?.value == [2])
        }
        // The dead primary's breaker opened during the window; replaced, it is no longer reported.
        #expect(circuitOpened)
        #expect(!tier.isCircuitOpen)
        #expect(!client.pooledEndpoints.contains(victim))
        let survivorsView = RedisCLI(seeds: survivors)
        #expect(try survivorsView.owner(of: HashSlot.of(Array(("tiercache:" + keys[0].rawValue).utf8))) != victim)
    }

    @Test(
        "Coherent upper tiers through a failover: flushed when the killed primary's tracking is lost, tracked again on the promoted replica",
        .enabled(if: RedisProcess.cliPath != nil, "redis-server and redis-cli are not installed"),
        .timeLimit(.minutes(5)))
    func coherenceThroughAFailover() async throws {
        let cluster = try await TestCluster(nodes: 6, replicas: 1, options: ["--cluster-node-timeout", "500"])
        let (nodes, endpoints, cli) = (cluster.nodes, cluster.endpoints, cluster.cli)
        try await cli.waitForReplicasInSync(endpoints)
        // Timeouts long enough that a loaded machine's slow PING is not taken for a lost primary
        // (which flushes the near tier mid-test); the SIGKILL closes the connections at once.
        func tier() throws -> RedisTier {
            try RedisTier(
                configuration: .init(
                    deployment: .cluster(seeds: Array(endpoints.prefix(3))), capacity: 1 << 20,
                    commandTimeout: .seconds(2)))
        }
        let memory = try MemoryTier(capacity: 1 << 20)
        let near = TieredCache(tiers: [memory, try tier()])
        let other = TieredCache(tiers: [try tier()])
        let events = CoherenceEvents()
        let coherence = try RedisCoherence(
            cache: near, configuration: .init(healthCheckInterval: .seconds(1), onEvent: events.record))
        let tracking = Task { await coherence.run() }
        defer { tracking.cancel() }
        #expect(await events.next { if case .flushed(reason: "tracking began") = $0 { true } else { false } } != nil)

        let keys = try (0..<30).map { try CacheKey("coherent-\($0)") }
        for key in keys {
            _ = await other.store(CacheEntry(value: [1], storedAt: Date()), forKey: key, policy: .allowed)
        }
        #expect(await events.invalidations(of: Set(keys)))
        for key in keys { _ = await near.lookup(key) }
        #expect(keys.allSatisfy { memory.entry(forKey: $0)?.value == [1] })
        try await cli.waitForReplicasInSync(endpoints)

        let victim = try cli.owner(of: HashSlot.of(Array(("tiercache:" + keys[0].rawValue).utf8)))
        nodes[try #require(endpoints.firstIndex(of: victim))].kill()
        #expect(await events.next { if case .trackingLost = $0 { true } else { false } } != nil)
        #expect(await events.next { if case .flushed = $0 { true } else { false } } != nil)
        #expect(keys.allSatisfy { memory.entry(forKey: $0) == nil })  // what the moved slots held is gone
        // Tracked again once the replica is promoted: three primaries, the victim not among them.
        let resubscribed = await events.next { event in
            if case .subscribed(let primaries) = event {
                primaries.count == 3 && !primaries.contains(victim)
            } else {
                false
            }
        }
        #expect(resubscribed != nil)

        // A write to the victim's keys, now on the promoted replica, invalidates the near tier again.
        let moved = keys[0]
        _ = await near.lookup(moved)
        // The writer's own tier finds the new primary by failing first (its slot map is its own).
        let writtenBy = ContinuousClock.now + .seconds(60)
        while await !other.store(CacheEntry(value: [2], storedAt: Date()), forKey: moved, policy: .allowed)
            .isStoredAnywhere, ContinuousClock.now < writtenBy
        {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(await events.invalidation(of: moved))
        #expect(await near.lookup(moved)?.entry.value == [2])
    }
}

extension RedisCLI {
    /// Waits (at most a minute) until every replica among `nodes` has received all its primary has
    /// written (its `slave_repl_offset` equals the primary's `master_repl_offset`).
    func waitForReplicasInSync(_ nodes: [RedisEndpoint]) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            var inSync = true
            for node in nodes {
                let info = try await polled(node, "INFO", "replication")
                guard info.contains("role:slave") else { continue }
                func field(_ name: String) -> Int? {
                    info.split(whereSeparator: \.isNewline).first { $0.hasPrefix(name + ":") }
                        .flatMap { Int($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)) }
                }
                guard let port = field("master_port"), let replicated = field("slave_repl_offset"),
                    info.contains("master_link_status:up")
                else {
                    inSync = false
                    continue
                }
                let primaryInfo = try await polled(RedisEndpoint(host: node.host, port: port), "INFO", "replication")
                let written = primaryInfo.split(whereSeparator: \.isNewline)
                    .first { $0.hasPrefix("master_repl_offset:") }
                    .flatMap { Int($0.dropFirst("master_repl_offset:".count).trimmingCharacters(in: .whitespaces)) }
                if written != replicated { inSync = false }
            }
            if inSync { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw Failure(description: "the replicas did not catch up with their primaries")
    }
}
