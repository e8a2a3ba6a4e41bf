import Testing
import TierCache
import TierCacheLMDB
import TierCacheTesting

@Suite("Conformance of LMDBTier")
struct LMDBConformanceTests {
    @Test(arguments: TierConformanceSuite.Check.allCases)
    func lmdbTier(_ check: TierConformanceSuite.Check) async throws {
        let suite = TierConformanceSuite(isPersistent: true) { directory, clock in
            try LMDBTier(directory: directory, configuration: .init(capacity: 2 << 20, durability: .none, clock: clock))
        }
        try await suite.run(check)
    }
}
