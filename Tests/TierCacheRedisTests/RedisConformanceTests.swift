import Foundation
import Testing
import TierCache
import TierCacheTesting

@testable import TierCacheRedis

/// The tier contract, against a real standalone Redis and a real 3-primary cluster.
///
/// The capacity checks (``TierConformanceSuite/Check/capacity``, and ``concurrentEviction``) write
/// several times the capacity until Redis evicts (allkeys-lru), which on the servers every Redis
/// suite shares would evict other suites' keys (a proxy's stored response, a
/// coherence test's tracked keys) while they run beside it. So it runs against servers of its own;
/// the other checks use the shared ones. Serialized, and with long timeouts: the checks count every
/// store, and a slow command on a loaded machine would be counted as a refusal.
@Suite(.enabled(if: RedisServers.available, RedisServers.missingMessage), .serialized, .timeLimit(.minutes(5)))
struct RedisConformanceTests {
    /// Each node's memory (the shared servers' too, in `scripts/redis-servers`): Redis enforces it.
    private static let maxMemory = 64 << 20
    private static let memoryOptions = ["--maxmemory", "\(maxMemory)", "--maxmemory-policy", "allkeys-lru"]

    @Test(arguments: TierConformanceSuite.Check.allCases)
    func standalone(_ check: TierConformanceSuite.Check) async throws {
        var endpoint = RedisServers.standalone
        var ownServer: RedisProcess?
        if Self.evicts(check) {
            let server = try await RedisProcess(arguments: Self.memoryOptions)
            endpoint = RedisEndpoint(host: "127.0.0.1", port: server.port)
            ownServer = server
        }
        let deployment = try #require(endpoint.map { RedisTier.Configuration.Deployment.standalone($0) })
        try await run(check, on: deployment, capacity: Self.maxMemory)
        withExtendedLifetime(ownServer) {}
    }

    @Test(arguments: TierConformanceSuite.Check.allCases)
    func cluster(_ check: TierConformanceSuite.Check) async throws {
        var seeds = RedisServers.clusterSeeds
        var ownCluster: TestCluster?
        if Self.evicts(check) {
            let cluster = try await TestCluster(nodes: 3, replicas: 0, options: Self.memoryOptions)
            seeds = cluster.endpoints
            ownCluster = cluster
        }
        let deployment = try #require(seeds.map { RedisTier.Configuration.Deployment.cluster(seeds: $0) })
        try await run(check, on: deployment, capacity: 3 * Self.maxMemory)
        withExtendedLifetime(ownCluster) {}
    }

    /// Whether the check writes past the capacity, so that Redis evicts.
    private static func evicts(_ check: TierConformanceSuite.Check) -> Bool {
        check == .capacity || check == .concurrentEviction
    }

    private func run(
        _ check: TierConformanceSuite.Check, on deployment: RedisTier.Configuration.Deployment, capacity: Int
    ) async throws {
        // Each check gets a fresh directory: its name is the key prefix, so a "reopened" tier
        // (the persistence check) finds its entries again.
        let suite = TierConformanceSuite(isPersistent: true) { directory in
            try RedisTier(
                configuration: .init(
                    deployment: deployment, keyPrefix: "conformance:\(directory.lastPathComponent):",
                    capacity: capacity, connectTimeout: .seconds(5), commandTimeout: .seconds(5)))
        }
        try await suite.run(check)
    }
}
