import Synchronization

/// The invalidations a ``TieredCache`` has applied lately, so that a promotion racing one does
/// not put back what it removed.
///
/// A lookup takes a ``mark()`` before it reads any tier. An invalidation is recorded here before
/// its keys are removed from the tiers. A promotion stores the entry it read and *then* asks
/// ``wasInvalidated(_:since:)``; when yes, it removes what it stored. Whatever the interleaving,
/// either the invalidation's removal comes after the promotion's store (and removes it), or the
/// promotion's check comes after the record (and undoes it): a value read before an invalidation
/// never stays in an upper tier after it.
///
/// Only the last ``capacity`` invalidations are kept; a mark older than those is answered `true`
/// (the promotion is undone: a miss later, never a stale hit).
final class InvalidationLog: Sendable {
    private struct State {
        /// Keys invalidated, oldest first, and the sequence number of the first one kept.
        var recent: [CacheKey?] = []
        var firstSequence: UInt64 = 1
        /// Position in `recent` of the oldest entry once it is full (a ring).
        var oldest = 0
    }

    /// The sequence number of the last invalidation recorded (0: none yet). Read without the
    /// lock on every lookup.
    private let sequence = Atomic<UInt64>(0)
    private let state = Locked(State())
    let capacity: Int

    init(capacity: Int = 4_096) {
        self.capacity = max(1, capacity)
    }

    /// The point a lookup starts from.
    func mark() -> UInt64 { sequence.load(ordering: .acquiring) }

    /// Records `keys` as invalidated.
    func record(_ keys: [CacheKey]) {
        state.withLock { state in
            for key in keys { append(key, to: &state) }
        }
    }

    /// Records `key` as invalidated (`nil`: every key, as a flush does): a write's one key,
    /// without an array made for it.
    func record(_ key: CacheKey?) {
        state.withLock { append(key, to: &$0) }
    }

    private func append(_ key: CacheKey?, to state: inout State) {
        if state.recent.count < capacity {
            state.recent.append(key)
        } else {
            state.recent[state.oldest] = key
            state.oldest = (state.oldest + 1) % capacity
            state.firstSequence += 1
        }
        sequence.add(1, ordering: .releasing)
    }

    /// Whether `key` (or every key) was invalidated after `mark`.
    func wasInvalidated(_ key: CacheKey, since mark: UInt64) -> Bool {
        guard sequence.load(ordering: .acquiring) != mark else { return false }
        return state.withLock { state in
            let last = state.firstSequence + UInt64(state.recent.count) - 1
            // Older than what is kept: it may have been this key.
            guard mark + 1 >= state.firstSequence else { return true }
            guard mark < last else { return false }
            for sequence in (mark + 1)...last {
                let offset = Int(sequence - state.firstSequence)
                let recorded = state.recent[(state.oldest + offset) % state.recent.count]
                if recorded == nil || recorded == key { return true }
            }
            return false
        }
    }
}
