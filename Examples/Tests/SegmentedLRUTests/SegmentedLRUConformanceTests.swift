import SegmentedLRU
import Testing
import TierCacheEviction
import TierCacheTesting

/// The example policy keeps the contract a `MemoryTier` relies on: the policy conformance suite,
/// all of it.
@Suite struct SegmentedLRUConformanceTests {
    @Test(arguments: PolicyConformanceSuite<SegmentedLRU>.Check.allCases)
    func conformance(_ check: PolicyConformanceSuite<SegmentedLRU>.Check) throws {
        try PolicyConformanceSuite(SegmentedLRU.self).run(check)
    }
}
