import CPrefetch

/// TinyLFU's popularity estimate, W-TinyLFU's (and its miniatures'): Caffeine's
/// `FrequencySketch`, rule for rule, over the key hash each request carries (the simulator's is
/// ``mix(_:_:)`` of the object id; the memory tier hashes keys once, when they are stored).
///
/// A count-min sketch of 4-bit counters, 16 to a 64-bit word. A key's four counters lie in one
/// 64-byte block of eight words (one cache line), so a count or an estimate touches one line.
/// After `10 × entries` additions every counter is halved, so the estimate follows a changing
/// workload. As Caffeine's, the sketch counts nothing until ``ensureCapacity(_:)`` first sizes it
/// (W-TinyLFU does when the cache is half full), and resizing forgets all counts.
struct TinyLFUSketch {
    private var table: [UInt64] = []
    private var blockMask: UInt32 = 0
    /// The additions between two agings.
    private(set) var sampleSize = 0
    private var size = 0

    init() {}

    /// Whether the sketch counts yet.
    var isInitialized: Bool { !table.isEmpty }

    /// The table size, in words, from which prefetching its blocks pays: 1 MiB, the L2 cache of
    /// many server cores. A smaller table stays in the core's cache between requests.
    static let prefetchThreshold = 1 << 17

    /// Whether the table is at least ``prefetchThreshold`` words.
    var outgrowsCoreCache: Bool { table.count >= Self.prefetchThreshold }

    /// Sizes the sketch for `entries` entries, as Caffeine's `ensureCapacity`: nothing changes
    /// while the table has at least `entries` words; otherwise it is replaced by an empty one of
    /// the next power of two (at least 8 words), aging every `10 × entries` additions.
    mutating func ensureCapacity(_ entries: Int) {
        let maximum = min(max(entries, 0), Int(Int32.max >> 1))
        if isInitialized, table.count >= maximum { return }
        sampleSize = entries == 0 ? 10 : 10 * maximum
        var length = 8
        while length < maximum { length <<= 1 }
        table = [UInt64](repeating: 0, count: length)
        blockMask = UInt32(length >> 3) - 1
        size = 0
    }

    /// SplitMix64's finalizer: how the simulator turns a 32-bit object id into a key hash.
    @inline(__always)
    static func mix(_ key: UInt32, _ seed: UInt64) -> UInt64 {
        var x = (UInt64(key) &+ seed) &* 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return x ^ (x >> 31)
    }

    /// Caffeine's supplemental hash of a 32-bit hash code.
    @inline(__always)
    private static func spread(_ value: UInt32) -> UInt32 {
        var x = value
        x ^= x >> 17
        x &*= 0xED5A_D4BB
        x ^= x >> 11
        x &*= 0xAC4C_1B51
        x ^= x >> 15
        return x
    }

    @inline(__always)
    private static func rehash(_ value: UInt32) -> UInt32 {
        var x = value &* 0x3184_8BAB
        x ^= x >> 14
        return x
    }

    /// The 32 bits of a key hash the sketch reads (Caffeine spreads a 32-bit `hashCode`). A
    /// policy may keep this instead of the whole hash: the folded forms below count the same.
    @inline(__always)
    static func fold(_ hash: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: hash ^ (hash >> 32)) }

    /// The block (first word) and the hash that picks the four counters in it.
    @inline(__always)
    private func locate(_ folded: UInt32) -> (block: Int, counterHash: UInt32) {
        let blockHash = Self.spread(folded)
        return (Int(blockHash & blockMask) << 3, Self.rehash(blockHash))
    }

    /// The estimated number of recent occurrences of the key hashed to `hash` (0...15).
    @inline(__always)
    func frequency(_ hash: UInt64) -> Int { frequency(folded: Self.fold(hash)) }

    /// ``frequency(_:)`` of a hash already folded by ``fold(_:)``.
    @inline(__always)
    func frequency(folded: UInt32) -> Int {
        guard isInitialized else { return 0 }
        let (block, counterHash) = locate(folded)
        var frequency = 15
        for row in 0..<4 {
            let h = counterHash >> UInt32(row << 3)
            let index = (h >> 1) & 15
            let slot = block + Int(h & 1) + (row << 1)
            frequency = min(frequency, Int((table[slot] >> UInt64(index << 2)) & 0xF))
        }
        return frequency
    }

    /// Starts loading the block that holds a folded hash's counters, so that the estimates and
    /// counts of one request (the new key, the window's oldest, probation's oldest) wait for
    /// their cache misses together rather than one after another.
    @inline(__always)
    func prefetch(folded: UInt32) {
        guard isInitialized else { return }
        let block = locate(folded).block
        table.withUnsafeBufferPointer { words in
            if let base = words.baseAddress { tiercache_prefetch(base + block) }
        }
    }

    /// Records one occurrence of the key hashed to `hash`.
    @inline(__always)
    mutating func increment(_ hash: UInt64) { increment(folded: Self.fold(hash)) }

    /// ``increment(_:)`` of a hash already folded by ``fold(_:)``.
    @inline(__always)
    mutating func increment(folded: UInt32) {
        guard isInitialized else { return }
        let (block, counterHash) = locate(folded)
        var added = false
        for row in 0..<4 {
            let h = counterHash >> UInt32(row << 3)
            let index = (h >> 1) & 15
            let slot = block + Int(h & 1) + (row << 1)
            let offset = UInt64(index << 2)
            let mask: UInt64 = 0xF << offset
            if table[slot] & mask != mask {
                table[slot] &+= 1 << offset
                added = true
            }
        }
        if added {
            size += 1
            if size == sampleSize { reset() }
        }
    }

    /// Halves every counter; `size` keeps the additions that survive (Caffeine's rounding).
    private mutating func reset() {
        var odd = 0
        for index in table.indices {
            odd += (table[index] & 0x1111_1111_1111_1111).nonzeroBitCount
            table[index] = (table[index] >> 1) & 0x7777_7777_7777_7777
        }
        size = (size - (odd >> 2)) >> 1
    }
}
