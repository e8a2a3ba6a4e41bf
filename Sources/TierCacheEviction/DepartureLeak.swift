/// How a driver tells a policy whose ``EvictionPolicy/departures`` never start afresh (it never
/// calls `SlotQueues.beginRequest()`) from one whose single request moved many slots: the list
/// passes four times the slots (a slot leaves a queue a few times in a request at most), and is
/// longer than the last call's, which was past that too. `MemoryTier` stops on it (each request
/// would walk the whole list under its lock, slower with every eviction); `PolicyConformanceSuite`
/// fails on it.
package enum DepartureLeak {
    /// Whether `listed` departures after a call, `lastListed` after the call before, among
    /// `slots` slots, are the leak.
    @inlinable
    package static func isLeaking(listed: Int, lastListed: Int, slots: Int) -> Bool {
        let bound = 4 * slots + 64
        return listed > bound && lastListed > bound && listed > lastListed
    }
}
