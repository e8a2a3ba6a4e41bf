#if BenchmarkRedis
import Foundation
import TierCache
import TierCacheRedis

extension BenchmarkSubject {
    /// A Redis tier of `capacity` bytes at `url` (`redis://[user:password@]HOST[:PORT][/DB]`),
    /// named `redis`, under a key prefix of the run's own (`tiercache-bench:<UUID>:`), whose keys
    /// the run removes once it is measured. Compared with
    /// raw LMDB + zstd: the nearest shared store the run can measure without a network.
    ///
    /// Present when the package is built with the `Redis` trait (it brings SwiftNIO).
    public static func redis(url: String, capacity: Int, cluster: Bool = false) -> BenchmarkSubject {
        .tier("redis", baseline: .rawLMDBZstd) { scratch in
            let endpoint = try RedisEndpoint(url: url)
            // A prefix of the run's own: two runs against one server (parallel CI jobs) do not
            // empty each other's keys mid-measurement, and what a run stored goes with it.
            let tier = try RedisTier(
                configuration: RedisTier.Configuration(
                    deployment: cluster ? .cluster(seeds: [endpoint]) : .standalone(endpoint),
                    keyPrefix: "tiercache-bench:\(UUID().uuidString):", capacity: capacity, failureMode: .throwErrors))
            scratch.onTeardown { try await tier.removeAll() }
            return tier
        }
    }
}
#endif
