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

    /// `count` zero words.
    init(count: Int) {
        self.count = count
        base = Self.allocate(count)
        base.initialize(repeating: 0, count: count)
    }

    /// A copy of `other`'s words.
    init(copying other: AlignedWords) {
        count = other.count
        base = Self.allocate(count)
        base.initialize(from: other.base, count: count)
    }

    /// In huge pages from 2 MiB (`HugePages`): at 524,288 objects the sketch is 4 MiB, read at
    /// random, and the counters' prefetches waited on page walks (W-TinyLFU replayed P12 about
    /// a fifth faster with them).
    private static func allocate(_ count: Int) -> UnsafeMutablePointer<UInt64> {
        HugePages.allocate(byteCount: count * 8, alignment: 64).bindMemory(to: UInt64.self, capacity: count)
    }

    deinit { base.deallocate() }
}
