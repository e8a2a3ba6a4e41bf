import Synchronization

/// How many tiers at the top of a ``TieredCache`` are suspended (``TieredCache/suspendTiers(above:)``),
/// and how many suspensions have begun: one atomic word, read without a lock by every lookup and
/// write.
///
/// A lookup or write reads it before it starts, skips the tiers suspended then, and reads it again
/// once it has stored: when a suspension began in between, what it stored in the tiers now
/// suspended is removed again. Whatever the interleaving, a value stored in a suspended tier after
/// its suspension began does not stay there: either the store came first and the suspender's
/// flush (``TieredCache/invalidateAll(above:)``) removes it, or the second read comes after the
/// suspension began and the store is undone.
final class TierSuspension: Sendable {
    /// From the low bits: the count of tiers suspended now (16 bits), the count the last
    /// suspension named (16 bits, kept after it ends), and the suspensions begun (the rest).
    private let word = Atomic<UInt64>(0)
    private static let countMask: UInt64 = 0xFFFF
    private static let lastCountShift: UInt64 = 16
    private static let epochShift: UInt64 = 32

    /// What a lookup or write reads before it starts.
    struct Snapshot {
        fileprivate let word: UInt64
        /// How many tiers at the top to skip.
        var suspendedTiers: Int { Int(word & TierSuspension.countMask) }
    }

    func snapshot() -> Snapshot { Snapshot(word: word.load(ordering: .sequentiallyConsistent)) }

    /// Suspends the first `count` tiers (at most 65,535) and counts a suspension begun.
    func suspend(_ count: Int) {
        let count = UInt64(min(max(0, count), Int(Self.countMask)))
        var current = word.load(ordering: .relaxed)
        while true {
            let epoch = (current >> Self.epochShift) &+ 1
            let next = epoch << Self.epochShift | count << Self.lastCountShift | count
            let (exchanged, original) = word.compareExchange(
                expected: current, desired: next, ordering: .sequentiallyConsistent)
            if exchanged { return }
            current = original
        }
    }

    /// No tier is suspended any more.
    func resume() {
        word.bitwiseAnd(~Self.countMask, ordering: .sequentiallyConsistent)
    }

    /// How many tiers at the top a suspension that began since `snapshot` named (0: none began),
    /// so that what a lookup or write stored there after it began is removed again.
    func tiersSuspended(since snapshot: Snapshot) -> Int {
        let now = word.load(ordering: .sequentiallyConsistent)
        guard now >> Self.epochShift != snapshot.word >> Self.epochShift else { return 0 }
        return Int((now >> Self.lastCountShift) & Self.countMask)
    }
}
