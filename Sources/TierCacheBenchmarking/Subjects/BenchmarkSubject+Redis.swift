#if BenchmarkRedis
import TierCache
import TierCacheRedis

extension BenchmarkSubject {
    /// A Redis tier of `capacity` bytes at `url` (`redis://[user:password@]HOST[:PORT][/DB]`),
    /// named `redis`, under a key prefix of its own that the run clears first. Compared with
    /// raw LMDB + zstd: the nearest shared store the run can measure without a network.
    ///
    /// Present when the package is built with the `Redis` trait (it brings SwiftNIO).
    public static func redis(url: String, capacity: Int, cluster: Bool = false) -> BenchmarkSubject {
        .tier("redis", baseline: .rawLMDBZstd) { _ in
            let endpoint = try RedisEndpoint(url: url)
            let tier = try RedisTier(
                configuration: RedisTier.Configuration(
                    deployment: cluster ? .cluster(seeds: [endpoint]) : .standalone(endpoint),
                    keyPrefix: "tiercache-bench:", capacity: capacity, failureMode: .throwErrors))
            try await tier.removeAll()
            return tier
        }
    }
}
#endif
