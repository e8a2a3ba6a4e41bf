import Foundation
import Testing
import TierCache
import TierCacheTesting

@testable import TierCacheRedis

/// The tier contract, against a real standalone Redis and a real 3-primary cluster.
// Serialized: the capacity check fills the servers until Redis evicts, which would evict the keys
// of checks running beside it.
@Suite(.enabled(if: RedisServers.available, RedisServers.missingMessage), .serialized, .timeLimit(.minutes(5)))
struct RedisConformanceTests {
    @Test(arguments: TierConformanceSuite.Check.allCases)
    func standalone(_ check: TierConformanceSuite.Check) async throws {
        // Each check gets a fresh directory: its name is the key prefix, so a "reopened" tier
        // (the persistence check) finds its entries again.
        let suite = TierConformanceSuite(isPersistent: true) { directory in
            // The capacity is the test server's maxmemory (64 MiB): Redis enforces it.
            try RedisServers.tier(
                cluster: false, prefix: "conformance:\(directory.lastPathComponent):", capacity: 64 << 20)
        }
        try await suite.run(check)
    }

    @Test(arguments: TierConformanceSuite.Check.allCases)
    func cluster(_ check: TierConformanceSuite.Check) async throws {
        let suite = TierConformanceSuite(isPersistent: true) { directory in
            try RedisServers.tier(
                cluster: true, prefix: "conformance:\(directory.lastPathComponent):", capacity: 3 * 64 << 20)
        }
        try await suite.run(check)
    }
}
