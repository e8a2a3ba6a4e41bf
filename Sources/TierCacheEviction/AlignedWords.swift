/// 64-bit words in one allocation aligned to a cache line: W-TinyLFU's sketch (`TinyLFUSketch`),
/// whose blocks of eight words are then one line each, and its window's log (`WindowLog`), whose
/// masked positions need no index check. (An array's elements start 32 bytes into its
/// allocation, which put every sketch block across two lines: on a sketch larger than the core's
/// cache, two misses per count, and a prefetch of the block's first word loaded only half of
/// it; and an array's writes checked the index and the array's uniqueness on every log entry.)
/// Shared between copies of their owner until one of them writes: the owner copies before
/// writing to shared words.
final class AlignedWords {
    /// The number of words.
    let count: Int
    /// The first word, 64-byte aligned.
    let base: UnsafeMutablePointer<UInt64>

    /// Whether the words are read at random, and so kept in huge pages from 2 MiB (`HugePages`).
    let readAtRandom: Bool

    /// `count` zero words.
    ///
    /// Words `readAtRandom` (the sketch's) are put in huge pages: at 524,288 objects the sketch
    /// is 4 MiB, and the counters' prefetches waited on page walks (W-TinyLFU replayed P12 about
    /// a fifth faster with them). Words read in order (the log's) are not: a page walk is one per
    /// 512 of them, and on a virtual machine a huge page can cost far more than small ones when
    /// first written, if the host backs it only then (2 MiB in 10–12 ms on this project's
    /// machines, against about 1.5 ms in small pages). With the log in huge pages, W-TinyLFU's
    /// replay of P12 at 524,288 objects was about an eighth slower than with it in small pages
    /// (alternating runs).
    init(count: Int, readAtRandom: Bool) {
        self.count = count
        self.readAtRandom = readAtRandom
        base = Self.allocate(count, readAtRandom: readAtRandom)
        base.initialize(repeating: 0, count: count)
    }

    /// A copy of `other`'s words, in pages of the same kind.
    init(copying other: AlignedWords) {
        count = other.count
        readAtRandom = other.readAtRandom
        base = Self.allocate(count, readAtRandom: readAtRandom)
        base.initialize(from: other.base, count: count)
    }

    private static func allocate(_ count: Int, readAtRandom: Bool) -> UnsafeMutablePointer<UInt64> {
        let byteCount = count * 8
        let memory =
            readAtRandom
            ? HugePages.allocate(byteCount: byteCount, alignment: 64)
            : UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 64)
        return memory.bindMemory(to: UInt64.self, capacity: count)
    }

    deinit { base.deallocate() }
}
