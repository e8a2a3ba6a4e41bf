import CPrefetch

/// TinyLFU's popularity estimate, W-TinyLFU's (and its miniatures'): Caffeine's
/// `FrequencySketch`, rule for rule, over the key hash each request carries (the simulator's is
/// ``mix(_:_:)`` of the object id; the memory tier hashes keys once, when they are stored).
///
/// A count-min sketch of 4-bit counters, 16 to a 64-bit word. A key's four counters lie in one
/// 64-byte block of eight words, and the table is aligned to 64 bytes (`AlignedWords`), so a
/// count or an estimate touches one cache line.
/// After `10 × entries` additions every counter is halved, so the estimate follows a changing
/// workload. As Caffeine's, the sketch counts nothing until ``ensureCapacity(_:)`` first sizes it
/// (W-TinyLFU does when the cache is half full), and resizing forgets all counts.
@usableFromInline
struct TinyLFUSketch {
    /// nil until ``ensureCapacity(_:)`` first sizes the sketch.
    private var table: AlignedWords?
    /// The table's first word and length, kept beside it: read on every count and estimate, they
    /// stay in the policy's registers rather than being loaded through the table each time.
    @usableFromInline private(set) var base: UnsafeMutablePointer<UInt64>?
    /// The table's length in words (0 before it is sized).
    private var length = 0
    @usableFromInline private(set) var blockMask: UInt32 = 0
    /// The additions between two agings.
    private(set) var sampleSize = 0
    private var size = 0
    /// Changes whenever every counter may have changed at once (a new table, an aging). Between
    /// two changes a count alters only the estimates of keys in its own block (``blockNumber(of:)``),
    /// which is what lets an estimate be remembered across counts.
    private(set) var generation = 0
    /// The estimate ``rememberedFrequency(folded:)`` last made, of `rememberedKey`, whose block
    /// starts at word `rememberedFirstWord` (-1 once a count or an aging may have changed it).
    private var rememberedKey: UInt32 = 0
    private var rememberedFirstWord = -1
    private var rememberedEstimate = 0

    init() {}

    /// Whether the sketch counts yet.
    var isInitialized: Bool { base != nil }

    /// Sizes the sketch for `entries` entries, as Caffeine's `ensureCapacity`: nothing changes
    /// while the table has at least `entries` words; otherwise it is replaced by an empty one of
    /// the next power of two (at least 8 words), aging every `10 × entries` additions.
    @inline(__always)
    mutating func ensureCapacity(_ entries: Int) {
        // W-TinyLFU asks on every miss once the cache is half full: the answer is nearly always
        // "large enough", decided here without a call.
        if length >= entries, isInitialized { return }
        resize(for: entries)
    }

    private mutating func resize(for entries: Int) {
        let maximum = min(max(entries, 0), Int(Int32.max >> 1))
        if length >= maximum, isInitialized { return }
        sampleSize = entries == 0 ? 10 : 10 * maximum
        var words = 8
        while words < maximum { words <<= 1 }
        adopt(AlignedWords(count: words, readAtRandom: true))
        blockMask = UInt32(words >> 3) - 1
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
    @inlinable @inline(__always)
    static func spread(_ value: UInt32) -> UInt32 {
        var x = value
        x ^= x >> 17
        x &*= 0xED5A_D4BB
        x ^= x >> 11
        x &*= 0xAC4C_1B51
        x ^= x >> 15
        return x
    }

    @inlinable @inline(__always)
    static func rehash(_ value: UInt32) -> UInt32 {
        var x = value &* 0x3184_8BAB
        x ^= x >> 14
        return x
    }

    /// The 32 bits of a key hash the sketch reads, already spread as Caffeine spreads a 32-bit
    /// `hashCode`. A policy may keep this instead of the whole hash: the folded forms below count
    /// the same, and skip the spreading (W-TinyLFU locates about six keys per request, most of
    /// them from the folded hash in a node).
    @inlinable @inline(__always)
    static func fold(_ hash: UInt64) -> UInt32 { spread(UInt32(truncatingIfNeeded: hash ^ (hash >> 32))) }

    /// The number of the 64-byte block that holds a folded hash's four counters, below
    /// ``blockCount``: a count changes no estimate but those of keys in its block.
    @usableFromInline @inline(__always)
    func blockNumber(of folded: UInt32) -> Int { Int(folded & blockMask) }

    /// The number of blocks (1 before the sketch is sized).
    var blockCount: Int { Int(blockMask) + 1 }

    /// The first word of the block that holds a folded hash's counters, and the hash that picks
    /// the four counters in it.
    @inlinable @inline(__always)
    func locate(_ folded: UInt32) -> (firstWord: Int, counterHash: UInt32) {
        (blockNumber(of: folded) << 3, Self.rehash(folded))
    }

    /// The estimated number of recent occurrences of the key hashed to `hash` (0...15).
    @inline(__always)
    func frequency(_ hash: UInt64) -> Int { frequency(folded: Self.fold(hash)) }

    /// ``frequency(_:)`` of a hash already folded by ``fold(_:)``.
    @inline(__always)
    func frequency(folded: UInt32) -> Int {
        let (firstWord, counterHash) = locate(folded)
        // Unchecked reads: `firstWord` is a multiple of 8 below the table's length (the mask keeps
        // it there) and every counter lies in the block's eight words. A sketch not sized yet
        // counts nothing.
        guard let base else { return 0 }
        var frequency: UInt64 = 15
        for row in 0..<4 {
            let h = counterHash >> UInt32(row << 3)
            let index = (h >> 1) & 15
            let word = base[firstWord + Int(h & 1) + (row << 1)]
            frequency = min(frequency, (word >> UInt64(index << 2)) & 0xF)
        }
        return Int(frequency)
    }

    /// ``frequency(folded:)``, answered from the last estimate asked for this way while no count
    /// has touched its block since. W-TinyLFU asks this of its victims: probation's oldest meets
    /// candidate after candidate until one beats it, and of the counts in between only those of
    /// keys in its block (1 in ``blockCount``, 512 blocks at 4,096 entries) change its estimate.
    @inline(__always)
    mutating func rememberedFrequency(folded: UInt32) -> Int {
        if folded == rememberedKey, rememberedFirstWord >= 0 {
            assert(rememberedEstimate == frequency(folded: folded), "a remembered estimate went stale")
            return rememberedEstimate
        }
        rememberedKey = folded
        rememberedEstimate = frequency(folded: folded)
        rememberedFirstWord = base == nil ? -1 : locate(folded).firstWord
        return rememberedEstimate
    }

    /// Starts loading the block that holds a folded hash's counters, so that the estimates and
    /// counts of one request (the new key, the window's oldest, probation's oldest) wait for
    /// their cache misses together rather than one after another.
    @inlinable @inline(__always)
    func prefetch(folded: UInt32) {
        guard let base else { return }
        tiercache_prefetch(base + locate(folded).firstWord)
    }

    /// Records one occurrence of the key hashed to `hash`.
    @inline(__always)
    mutating func increment(_ hash: UInt64) { increment(folded: Self.fold(hash)) }

    /// ``increment(_:)`` of a hash already folded by ``fold(_:)``.
    @inline(__always)
    mutating func increment(folded: UInt32) {
        guard let base = uniqueBase() else { return }
        count(folded, in: base)
    }

    /// ``increment(folded:)`` for an owner that has made the sketch unique (``makeUnique()``)
    /// since it was last copied: W-TinyLFU checks the uniqueness of all its storage once per
    /// request, where each count checking its own was a call into the runtime.
    @inline(__always)
    mutating func incrementKnowingUnique(folded: UInt32) {
        assert(base == nil || isKnownUniquelyReferenced(&table), "sketch counted in a shared table")
        guard let base else { return }
        count(folded, in: base)
    }

    /// Copies the table first if another sketch shares it.
    mutating func makeUnique() { _ = uniqueBase() }

    /// Counts `folded` in `base`, the sketch's own table.
    @inline(__always)
    private mutating func count(_ folded: UInt32, in base: UnsafeMutablePointer<UInt64>) {
        let (firstWord, counterHash) = locate(folded)
        if firstWord == rememberedFirstWord { rememberedFirstWord = -1 }
        // Unchecked, as in ``frequency(folded:)``; each counter below 15 gains one, without a
        // branch (a loop with one per counter cost about 120 instructions per count).
        var added: UInt64 = 0
        for row in 0..<4 {
            let h = counterHash >> UInt32(row << 3)
            let offset = UInt64(((h >> 1) & 15) << 2)
            let slot = base + firstWord + Int(h & 1) + (row << 1)
            let word = slot.pointee
            // 1 when the counter is below 15, else 0.
            let increment = (((word >> offset) & 0xF) &+ 1) >> 4 ^ 1
            slot.pointee = word &+ (increment << offset)
            added |= increment
        }
        if added != 0 {
            size += 1
            if size == sampleSize { reset() }
        }
    }

    /// The table's words for writing, copied first if another sketch shares them (a copy of the
    /// sketch, as an array's elements are copied on write); nil before the sketch is sized.
    @inline(__always)
    private mutating func uniqueBase() -> UnsafeMutablePointer<UInt64>? {
        if !isKnownUniquelyReferenced(&table), let shared = table { adopt(AlignedWords(copying: shared)) }
        return base
    }

    private mutating func adopt(_ words: AlignedWords) {
        // A copy on write holds the same counts: counting it a change only forgets estimates.
        generation += 1
        rememberedFirstWord = -1
        table = words
        base = words.base
        length = words.count
    }

    /// Halves every counter; `size` keeps the additions that survive (Caffeine's rounding).
    private mutating func reset() {
        guard let base = uniqueBase() else { return }
        var odd = 0
        for index in 0..<length {
            odd += (base[index] & 0x1111_1111_1111_1111).nonzeroBitCount
            base[index] = (base[index] >> 1) & 0x7777_7777_7777_7777
        }
        size = (size - (odd >> 2)) >> 1
        generation += 1
        rememberedFirstWord = -1
    }
}
