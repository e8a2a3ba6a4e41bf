/// The miniatures' index from a key hash to its record: open addressing with linear probing and
/// backward-shift deletion (no tombstones), at most half full. A `Dictionary` hashed every key
/// again with SipHash; on a small cache, where the miniatures sample 1 request in 3, its lookups,
/// insertions and removals were a quarter of the miniatures' instructions. The keys are hashes
/// already, but a slot is chosen by Fibonacci hashing (the top bits of the key times 2^64/φ), so
/// that keys alike in their low bits, such as the ones the sample selects, still spread.
struct RecordTable {
    private struct Entry {
        var key: UInt64
        /// -1 when the slot is empty.
        var record: Int32
    }

    private static let empty = Entry(key: 0, record: -1)
    private var entries = [Entry](repeating: empty, count: 16)
    /// 64 minus log2 of the slot count: a slot is the key's top bits after the multiplication.
    private var shift: UInt64 = 60
    private var mask = 15
    /// The number of keys held.
    private(set) var count = 0

    init() {}

    @inline(__always)
    private func home(_ key: UInt64) -> Int { Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift) }

    /// The record of `key`, if the table holds the key.
    @inline(__always)
    func record(for key: UInt64) -> Int32? {
        var slot = home(key)
        while true {
            let entry = entries[slot]
            if entry.record < 0 { return nil }
            if entry.key == key { return entry.record }
            slot = (slot + 1) & mask
        }
    }

    /// Adds `key`, which the table does not hold, with its record.
    mutating func insert(_ key: UInt64, record: Int32) {
        if (count + 1) * 2 > entries.count { grow() }
        place(Entry(key: key, record: record))
        count += 1
    }

    /// Removes `key`, if held: the entries after it in its run move back, so that every key stays
    /// reachable from its home slot without a tombstone.
    mutating func remove(_ key: UInt64) {
        var hole = home(key)
        while true {
            let entry = entries[hole]
            if entry.record < 0 { return }
            if entry.key == key { break }
            hole = (hole + 1) & mask
        }
        var next = hole
        while true {
            next = (next + 1) & mask
            let entry = entries[next]
            if entry.record < 0 { break }
            // The entry may fill the hole if its home is not in the cyclic range (hole, next]:
            // probing from its home reaches the hole before it reaches `next`.
            let distanceToEntry = (next - home(entry.key)) & mask
            let distanceToHole = (next - hole) & mask
            if distanceToEntry >= distanceToHole {
                entries[hole] = entry
                hole = next
            }
        }
        entries[hole] = Self.empty
        count -= 1
    }

    private mutating func place(_ entry: Entry) {
        var slot = home(entry.key)
        while entries[slot].record >= 0 { slot = (slot + 1) & mask }
        entries[slot] = entry
    }

    private mutating func grow() {
        let old = entries
        entries = [Entry](repeating: Self.empty, count: old.count * 2)
        mask = entries.count - 1
        shift -= 1
        for entry in old where entry.record >= 0 { place(entry) }
    }
}
