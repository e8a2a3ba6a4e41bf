/// TinyLFU's popularity estimate, shared by the memory tier's W-TinyLFU and the simulator's
/// (`package` access), over a 64-bit key hash the caller supplies: the simulator hashes its
/// object ids with ``mix(_:_:)``; the tier hashes keys once, when they are stored.
///
/// A count-min sketch of 4-bit counters behind a "doorkeeper" Bloom filter: a key's first
/// occurrence only sets its doorkeeper bits, later ones increment the counters, so one-hit
/// wonders never occupy counters. After `sampleSize` increments every counter is halved and the
/// doorkeeper cleared, so the estimate follows a changing workload. Its size and sample follow
/// Caffeine's `FrequencySketch.ensureCapacity` (see there).
package struct TinyLFUSketch {
    package init() {}

    private var table: [UInt64] = []       // 16 four-bit counters per word
    private var tableMask = 0
    private var doorkeeper: [UInt64] = []  // a Bloom filter, 2 bits per key
    private var doorkeeperMask = 0
    /// The increments between two agings; the hill climber's sample size too.
    package private(set) var sampleSize = 0
    private var additions = 0
    /// The most entries the current table is sized for; 0 before the first `ensureCapacity`.
    private var tableCapacity = 0

    /// Whether the sketch counts yet: as Caffeine's, it starts when the cache is first half full.
    package var isInitialized: Bool { tableCapacity > 0 }

    /// Sizes the sketch for `entries` entries, as Caffeine's `ensureCapacity`: nothing changes
    /// while the table is large enough; otherwise it is replaced by an empty one of the next power
    /// of two (at least 16), aging every `10 × entries` increments.
    package mutating func ensureCapacity(_ entries: Int) {
        let entries = max(entries, 0)
        if isInitialized, tableCapacity >= entries { return }
        tableCapacity = Self.powerOfTwo(atLeast: max(entries, 16))
        table = [UInt64](repeating: 0, count: tableCapacity / 16 * 4)
        tableMask = table.count - 1
        sampleSize = entries == 0 ? 10 : 10 * entries
        let bits = Self.powerOfTwo(atLeast: max(sampleSize * 4, 64))
        doorkeeper = [UInt64](repeating: 0, count: bits / 64)
        doorkeeperMask = bits - 1
        additions = 0
    }

    private static func powerOfTwo(atLeast value: Int) -> Int {
        var result = 1
        while result < value { result <<= 1 }
        return result
    }

    /// The simulator's hash of a 32-bit id (SplitMix64's finalizer), also used for sketch rows.
    @inline(__always)
    package static func mix(_ key: UInt32, _ seed: UInt64) -> UInt64 {
        var x = (UInt64(key) &+ seed) &* 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return x ^ (x >> 31)
    }

    /// The estimated number of recent occurrences of the key hashed to `hash` (0...16).
    package func frequency(_ hash: UInt64) -> Int {
        guard isInitialized else { return 0 }
        var minimum = 15
        for row in 0..<4 {
            minimum = min(minimum, counter(hash, row))
        }
        return minimum + (doorkeeperContains(hash) ? 1 : 0)
    }

    /// Records one occurrence of the key hashed to `hash`.
    package mutating func increment(_ hash: UInt64) {
        guard isInitialized else { return }
        if !doorkeeperContains(hash) {
            setDoorkeeper(hash)
        } else {
            for row in 0..<4 {
                let (word, shift) = slot(hash, row)
                if (table[word] >> shift) & 0xF < 15 { table[word] += 1 << shift }
            }
        }
        additions += 1
        if additions >= sampleSize { age() }
    }

    private mutating func age() {
        for index in table.indices {
            table[index] = (table[index] >> 1) & 0x7777_7777_7777_7777
        }
        for index in doorkeeper.indices { doorkeeper[index] = 0 }
        additions /= 2
    }

    @inline(__always)
    private func slot(_ hash: UInt64, _ row: Int) -> (word: Int, shift: UInt64) {
        let rowHash = Self.mix(UInt32(truncatingIfNeeded: hash >> 32) ^ UInt32(row), UInt64(row) &+ hash)
        let word = Int(truncatingIfNeeded: rowHash) & tableMask
        let counterIndex = (rowHash >> 60) & 0xF
        return (word, counterIndex * 4)
    }

    @inline(__always)
    private func counter(_ hash: UInt64, _ row: Int) -> Int {
        let (word, shift) = slot(hash, row)
        return Int((table[word] >> shift) & 0xF)
    }

    @inline(__always)
    private func doorkeeperBits(_ hash: UInt64) -> (Int, Int) {
        (Int(truncatingIfNeeded: hash) & doorkeeperMask, Int(truncatingIfNeeded: hash >> 32) & doorkeeperMask)
    }

    private func doorkeeperContains(_ hash: UInt64) -> Bool {
        let (first, second) = doorkeeperBits(hash)
        return doorkeeper[first >> 6] & (1 << UInt64(first & 63)) != 0
            && doorkeeper[second >> 6] & (1 << UInt64(second & 63)) != 0
    }

    private mutating func setDoorkeeper(_ hash: UInt64) {
        let (first, second) = doorkeeperBits(hash)
        doorkeeper[first >> 6] |= 1 << UInt64(first & 63)
        doorkeeper[second >> 6] |= 1 << UInt64(second & 63)
    }
}
