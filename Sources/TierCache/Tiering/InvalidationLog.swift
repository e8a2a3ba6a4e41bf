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
/// A write, removal or invalidation through the cache changes its tiers one after another, and a
/// lower tier may take milliseconds (a disk commit) while a lookup that began after the change was
/// recorded reads the old value there and promotes it into a tier the change has already passed.
/// So such a change is bracketed: ``beginChange(_:)`` before the first tier, ``endChange(_:)`` after the
/// last, which records the key again. A promotion's check then also answers yes while a change of
/// its key is under way; once none is, the second record has been made, and a lookup that began
/// before it sees it.
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
        /// The changes under way, by key (`nil`: every key), and how many of each.
        var underWay: [CacheKey?: Int] = [:]
    }

    /// The sequence number of the last invalidation recorded (0: none yet). Read without the
    /// lock on every lookup.
    private let sequence = Atomic<UInt64>(0)
    /// How many changes are under way (``beginChange(_:)`` without its ``endChange(_:)``), read
    /// without the lock by a promotion's check.
    private let changesUnderWay = Atomic<Int>(0)
    private let state = Locked(State())
    let capacity: Int

    init(capacity: Int = 4_096) {
        self.capacity = max(1, capacity)
    }

    /// The point a lookup starts from.
    func mark() -> UInt64 { sequence.load(ordering: .acquiring) }

    /// A change of `key` (`nil`: every key) is about to reach the tiers: recorded, and under way
    /// until ``endChange(_:)``.
    func beginChange(_ key: CacheKey?) {
        state.withLock { state in
            begin(key, in: &state)
            changesUnderWay.add(1, ordering: .releasing)
        }
    }

    /// ``beginChange(_:)`` for each of `keys`, under one lock: an invalidation's batch.
    func beginChange(_ keys: [CacheKey]) {
        state.withLock { state in
            for key in keys { begin(key, in: &state) }
            changesUnderWay.add(keys.count, ordering: .releasing)
        }
    }

    /// The change ``beginChange(_:)`` began has reached every tier: recorded again, for lookups
    /// that began while it was under way, then no longer under way (in that order, so that a
    /// check that finds no change under way finds the record).
    func endChange(_ key: CacheKey?) {
        state.withLock { state in
            end(key, in: &state)
            changesUnderWay.subtract(1, ordering: .releasing)
        }
    }

    /// ``endChange(_:)`` for each of `keys`, under one lock.
    func endChange(_ keys: [CacheKey]) {
        state.withLock { state in
            for key in keys { end(key, in: &state) }
            changesUnderWay.subtract(keys.count, ordering: .releasing)
        }
    }

    /// One change of `key` more under way, recorded.
    private func begin(_ key: CacheKey?, in state: inout State) {
        state.underWay[key, default: 0] += 1
        append(key, to: &state)
    }

    /// Recorded again, then one change of `key` fewer under way.
    private func end(_ key: CacheKey?, in state: inout State) {
        append(key, to: &state)
        if let count = state.underWay[key], count > 1 {
            state.underWay[key] = count - 1
        } else {
            state.underWay[key] = nil
        }
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

    /// Whether `key` (or every key) was invalidated after `mark`, or a change of it is under way.
    func wasInvalidated(_ key: CacheKey, since mark: UInt64) -> Bool {
        // The count first: a change found ended has made its second record, which the sequence
        // then shows.
        guard changesUnderWay.load(ordering: .acquiring) != 0 || sequence.load(ordering: .acquiring) != mark
        else { return false }
        return state.withLock { state in
            if state.underWay[key] != nil || state.underWay[nil] != nil { return true }
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
