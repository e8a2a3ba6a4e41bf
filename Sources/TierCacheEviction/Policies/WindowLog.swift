/// The order in which W-TinyLFU's window will hand out its next candidates, kept as a log of the
/// window's arrivals, so that the contests of the next misses can start loading without walking
/// the window's links.
///
/// The window is an LRU list: objects leave it in the order of their last arrival at its young
/// end. Every arrival is appended here (the object and its folded key hash), so the entries from
/// the window's oldest object's last arrival on are the coming candidates, in order, among stale
/// ones (an object that arrived again later, or left some other way), which cost a wasted hint
/// and nothing else. Walking the links instead reads one node per step, a miss to memory on a
/// large trace, and every miss needs a step: the walk fell behind, and the candidate's estimate
/// waited on its counters (22% of the policy's samples on P12 at 524,288 objects, 7% with the
/// log). Here the next candidates are read from consecutive entries.
///
/// The log is a hint: it never decides anything. It is kept only for a driver that prefetches
/// (the simulator) and a cache large enough to need it. An object heavier than the window enters
/// it at the old end, unlogged, and is not looked for; if the log ever loses track of the window
/// otherwise, it is rebuilt from the window's links.
///
/// Copies are independent, as an array's are, but the owner makes them so: they share the entries
/// until one of them calls ``makeUnique()``, which an owner does before appending to a log it may
/// have copied (W-TinyLFU does once per request, for all its storage).
struct WindowLog {
    /// The entries, shared between copies until one of them appends. Never nil (one entry while
    /// the log is off): the uniqueness check of an optional reference cost twice as much.
    private var storage: AlignedWords
    /// The storage's first entry, kept beside it.
    private var base: UnsafeMutablePointer<UInt64>
    /// The storage's length minus one (a power of two minus one): 0 while the log is off, at
    /// least 1,023 once it is on.
    private var mask = 0
    /// Where the next arrival goes (positions only grow; an entry is at `position & mask`).
    private var end = 0
    /// The position of the window's oldest object's arrival, as last found.
    private var cursor = 0

    /// A log that is off.
    init() {
        storage = AlignedWords(count: 1, readAtRandom: false)
        base = storage.base
    }

    /// Whether arrivals are being logged.
    var isActive: Bool { mask != 0 }

    /// Replaces the log with the window's current order, `window` listed oldest first, and turns
    /// it on.
    mutating func rebuild(oldestFirst window: [(object: UInt32, folded: UInt32)]) {
        var capacity = 1024
        while capacity < 2 * window.count { capacity <<= 1 }
        adopt(AlignedWords(count: capacity, readAtRandom: false))
        cursor = 0
        end = 0
        // The storage was just made: unique.
        for member in window { append(member.object, folded: member.folded) }
    }

    /// Logs an arrival at the window's young end, if the log is on. The entries must be this
    /// log's own (``makeUnique()`` since the log was last copied).
    @inline(__always)
    mutating func append(_ object: UInt32, folded: UInt32) {
        if isActive { record(object, folded: folded) }
    }

    /// Copies the entries first if another log shares them.
    mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { copy() }
    }

    /// An arrival in a log that is on and unique: a call of its own, so that the requests of a
    /// policy whose log is off carry only the test (inlined, the log's code slowed W-TinyLFU's
    /// replay of P12 at 32,768 objects, where the log is off, by about a tenth).
    @inline(never)
    private mutating func record(_ object: UInt32, folded: UInt32) {
        assert(isKnownUniquelyReferenced(&storage), "log appended to in shared entries")
        if end - cursor > mask { copy() }
        base[end & mask] = UInt64(object) << 32 | UInt64(folded)
        end += 1
    }

    /// Moves the cursor to the first arrival of `oldest`, the window's oldest object, from the
    /// cursor on; returns whether there is one. Every entry the cursor passes is one that can no
    /// longer be a candidate (it was stale, or its object left), so the seeks of a replay read
    /// each entry about once. Not finding the object means the log lost track of the window.
    @inline(__always)
    mutating func seek(_ oldest: UInt32) -> Bool {
        var position = cursor
        while position < end {
            if UInt32(truncatingIfNeeded: base[position & mask] >> 32) == oldest {
                cursor = position
                return true
            }
            position += 1
        }
        return false
    }

    /// The arrival `distance` entries after the cursor's, if logged.
    @inline(__always)
    func entry(after distance: Int) -> (object: UInt32, folded: UInt32)? {
        let position = cursor + distance
        guard position < end else { return nil }
        let entry = base[position & mask]
        return (UInt32(truncatingIfNeeded: entry >> 32), UInt32(truncatingIfNeeded: entry))
    }

    /// Copies the entries from the cursor on into storage of this log's own, twice as long if
    /// the current one is full.
    private mutating func copy() {
        let capacity = end - cursor > mask ? storage.count * 2 : storage.count
        let copied = AlignedWords(count: capacity, readAtRandom: false)
        for position in cursor..<end { copied.base[position & (capacity - 1)] = storage.base[position & mask] }
        adopt(copied)
    }

    private mutating func adopt(_ entries: AlignedWords) {
        storage = entries
        base = entries.base
        mask = entries.count - 1
    }
}
