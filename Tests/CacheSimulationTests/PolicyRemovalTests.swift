import Testing
import TierCacheEviction

/// Removing a slot a policy does not hold (one it never saw, or one already removed) changes
/// nothing: the protocol lets a driver remove any slot, and the queues' own removal ignores one
/// in no queue, but a policy that removes without that check (W-TinyLFU's, which checks its
/// storage once per change) must test residency itself.
@Suite struct PolicyRemovalTests {
    @Test(arguments: 0..<PolicyCopyTests.policies.count)
    func removingWhatIsNotHeldChangesNothing(policyIndex: Int) {
        check(PolicyCopyTests.policies[policyIndex])
    }

    private func check<Policy: EvictionPolicy>(_ type: Policy.Type) {
        let context = PolicyContext(capacity: 40, expectedSlots: 300)
        let prefix = PolicyCopyTests.requests(count: 3_000, seed: 1)
        let rest = PolicyCopyTests.requests(count: 2_000, seed: 2)
        let removed = prefix[prefix.count - 1]

        var policy = Policy(context: context)
        _ = PolicyCopyTests.replay(prefix, on: &policy)
        policy.remove(1_000)  // never requested, beyond the slots reserved
        policy.remove(removed)
        policy.remove(removed)  // no longer held
        let hits = PolicyCopyTests.replay(rest, on: &policy)

        var alone = Policy(context: context)
        _ = PolicyCopyTests.replay(prefix, on: &alone)
        alone.remove(removed)
        let expected = PolicyCopyTests.replay(rest, on: &alone)
        let differs = PolicyCopyTests.firstDifference(hits, expected)
        #expect(differs == nil, "\(Policy.name)")
        #expect(hits.contains(true) && hits.contains(false), "\(Policy.name) both hits and misses")
    }
}
