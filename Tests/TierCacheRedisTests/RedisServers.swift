import Foundation
import Testing
import TierCache

@testable import TierCacheRedis

/// The servers `scripts/test` starts (`scripts/redis-servers`), found through environment variables.
enum RedisServers {
    static let missingMessage: Comment =
        "TIERCACHE_REDIS_URL / TIERCACHE_REDIS_CLUSTER are not set: run the tests through scripts/test, which starts Redis on loopback"

    static var standalone: RedisEndpoint? {
        ProcessInfo.processInfo.environment["TIERCACHE_REDIS_URL"].flatMap { try? RedisEndpoint(url: $0) }
    }

    static var clusterSeeds: [RedisEndpoint]? {
        guard let list = ProcessInfo.processInfo.environment["TIERCACHE_REDIS_CLUSTER"] else { return nil }
        let seeds = list.split(separator: ",").compactMap { try? RedisEndpoint(url: "redis://\($0)") }
        return seeds.isEmpty ? nil : seeds
    }

    static var available: Bool { standalone != nil && clusterSeeds != nil }

    /// A tier on a key prefix of its own, so tests running at once never see each other's keys.
    static func tier(
        cluster: Bool, prefix: String = "test:\(UUID().uuidString):", capacity: Int = 32 << 20,
        configure: (inout RedisTier.Configuration) -> Void = { _ in }
    ) throws -> RedisTier {
        let deployment: RedisTier.Configuration.Deployment
        if cluster, let seeds = clusterSeeds {
            deployment = .cluster(seeds: seeds)
        } else if let standalone {
            deployment = .standalone(standalone)
        } else {
            throw RedisError.invalidConfiguration("no Redis for the tests")
        }
        var configuration = RedisTier.Configuration(deployment: deployment, keyPrefix: prefix, capacity: capacity)
        configure(&configuration)
        return try RedisTier(configuration: configuration)
    }
}
