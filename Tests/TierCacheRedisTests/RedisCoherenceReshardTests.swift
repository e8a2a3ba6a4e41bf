import Foundation
import Testing
import TierCache

@testable import TierCacheRedis

/// A primary that joins a cluster and takes slots is tracked, whether or not this process's own
/// commands ever meet a `MOVED` that would show it the new map.
@Suite(
    .enabled(if: RedisProcess.cliPath != nil, "redis-server and redis-cli are not installed"), .timeLimit(.minutes(5)))
struct RedisCoherenceReshardTests {
    @Test("A primary given slots while this process sends nothing is tracked once its health check reads the map")
    func newPrimaryIsTracked() async throws {
        let cluster = try await TestCluster(nodes: 3, replicas: 0, options: [])
        let joining = try await RedisProcess(arguments: ["--cluster-enabled", "yes"])
        let newcomer = RedisEndpoint(host: "127.0.0.1", port: joining.port)
        let cli = cluster.cli
        _ = try cli.run(cluster.endpoints[0], "CLUSTER", "MEET", newcomer.host, "\(newcomer.port)")
        try await cli.waitForState("ok", on: newcomer)

        // Timeouts for a loaded machine (the whole suite at once on two cores): at the default
        // 500 ms a slow `CLUSTER SLOTS` fails the check's read of the map.
        let tier = try RedisTier(
            configuration: .init(
                deployment: .cluster(seeds: cluster.endpoints), keyPrefix: "reshard:", capacity: 1 << 20,
                connectTimeout: .seconds(5), commandTimeout: .seconds(5)))
        let cache = TieredCache(tiers: [try MemoryTier(capacity: 1 << 20), tier])
        let events = CoherenceEvents()
        let coherence = try RedisCoherence(
            cache: cache, configuration: .init(healthCheckInterval: .milliseconds(100), onEvent: events.record))
        let tracking = Task { await coherence.run() }
        defer { tracking.cancel() }
        let first = await events.next { if case .subscribed = $0 { true } else { false } }
        #expect(Set(subscribedNodes(first)) == Set(cluster.endpoints))

        // An empty slot moves to the newcomer, told to every node (no key to migrate).
        let slot = 0
        let newcomerID = try cli.run(newcomer, "CLUSTER", "MYID")
        try await waitUntilEveryNode(of: cluster, knows: newcomerID)
        _ = try cli.run(newcomer, "CLUSTER", "SETSLOT", "\(slot)", "NODE", newcomerID)
        for node in cluster.endpoints { _ = try cli.run(node, "CLUSTER", "SETSLOT", "\(slot)", "NODE", newcomerID) }

        let lost = await events.next { if case .trackingLost = $0 { true } else { false } }
        #expect(lost == .trackingLost(reason: "the cluster's primaries changed"))
        let again = await events.next { if case .subscribed = $0 { true } else { false } }
        #expect(Set(subscribedNodes(again)) == Set(cluster.endpoints + [newcomer]))
    }

    /// A cluster-enabled node that has not joined (a replacement under the old name, its
    /// `nodes.conf` empty) answers `CLUSTER SLOTS` with no slots. Named first among the seeds,
    /// its empty map was installed: every command failed ("no known nodes"), and coherence
    /// subscribed to no primary at all and let the upper tiers store again.
    @Test(
        "A seed answering an empty slot map is passed over for one that covers the slots",
        .enabled(if: RedisServers.available, RedisServers.missingMessage))
    func emptySlotMapIsPassedOver() async throws {
        let seeds = try #require(RedisServers.clusterSeeds, RedisServers.missingMessage)
        let unjoined = try await RedisProcess(arguments: ["--cluster-enabled", "yes"])
        let first = RedisEndpoint(host: "127.0.0.1", port: unjoined.port)
        let tier = try RedisTier(
            configuration: .init(
                deployment: .cluster(seeds: [first] + seeds), keyPrefix: "empty-map:\(UUID().uuidString):",
                capacity: 1 << 20))
        let key = try CacheKey("key")
        #expect(try await tier.store(CacheEntry(value: [7], storedAt: Date()), forKey: key) == .stored)
        #expect(try await tier.entry(forKey: key)?.value == [7])

        let cache = TieredCache(tiers: [try MemoryTier(capacity: 1 << 20), tier])
        let events = CoherenceEvents()
        let coherence = try RedisCoherence(cache: cache, configuration: .init(onEvent: events.record))
        let tracking = Task { await coherence.run() }
        defer { tracking.cancel() }
        let subscribed = await events.next { if case .subscribed = $0 { true } else { false } }
        #expect(subscribedNodes(subscribed).count == 3, "\(String(describing: subscribed))")
        try await tier.removeEntry(forKey: key)
    }

    /// A primary cut off from the cluster bus but reachable from here answers its old map, in
    /// which it still owns slots the majority gave its replica. Stood for by a real node that
    /// owns every slot in a cluster of its own: named first among the seeds, its complete map
    /// was installed, and every key went to it.
    @Test(
        "A node answering a map of its own is outvoted by the nodes that agree on the cluster's",
        .enabled(if: RedisServers.available, RedisServers.missingMessage))
    func minorityMapIsOutvoted() async throws {
        let seeds = try #require(RedisServers.clusterSeeds, RedisServers.missingMessage)
        let loner = try await RedisProcess(arguments: ["--cluster-enabled", "yes"])
        let stale = RedisEndpoint(host: "127.0.0.1", port: loner.port)
        let cli = RedisCLI(seeds: [stale])
        _ = try cli.run(stale, "CLUSTER", "ADDSLOTSRANGE", "0", "\(HashSlot.count - 1)")
        try await cli.waitForState("ok", on: stale)

        let prefix = "outvoted:\(UUID().uuidString):"
        let agreed = try RedisTier(
            configuration: .init(deployment: .cluster(seeds: seeds), keyPrefix: prefix, capacity: 1 << 20))
        let tier = try RedisTier(
            configuration: .init(deployment: .cluster(seeds: [stale] + seeds), keyPrefix: prefix, capacity: 1 << 20))
        let primaries = try await tier.client.primaries()
        #expect(Set(primaries) == Set(try await agreed.client.primaries()) && !primaries.contains(stale))
        let key = try CacheKey("key")
        #expect(try await tier.store(CacheEntry(value: [7], storedAt: Date()), forKey: key) == .stored)
        #expect(try await agreed.entry(forKey: key)?.value == [7], "stored in the cluster the other nodes agree on")
        #expect(try cli.run(stale, "DBSIZE") == "0")
        try await tier.removeEntry(forKey: key)
    }

    /// Waits (at most a minute) until gossip has told every node of `cluster` of the node `id`.
    private func waitUntilEveryNode(of cluster: TestCluster, knows id: String) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            var known = true
            for node in cluster.endpoints
            where (try? await cluster.cli.polled(node, "CLUSTER", "NODES"))?.contains(id) != true {
                known = false
            }
            if known { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        Issue.record("gossip did not reach every node")
    }

    private func subscribedNodes(_ event: RedisCoherence.Event?) -> [RedisEndpoint] {
        if case .subscribed(let nodes)? = event { nodes } else { [] }
    }
}
