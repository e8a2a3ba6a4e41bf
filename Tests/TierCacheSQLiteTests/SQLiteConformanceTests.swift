import Testing
import TierCache
import TierCacheSQLite
import TierCacheTesting

@Suite("Conformance of SQLiteTier")
struct SQLiteConformanceTests {
    @Test(arguments: TierConformanceSuite.Check.allCases)
    func sqliteTier(_ check: TierConformanceSuite.Check) async throws {
        let suite = TierConformanceSuite(isPersistent: true) { directory, clock in
            try SQLiteTier(directory: directory, configuration: .init(capacity: 2 << 20, clock: clock))
        }
        try await suite.run(check)
    }
}
