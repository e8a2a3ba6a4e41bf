import TierCacheEviction

/// Arrays for the trace loader's large, growing buffers (the id table, the request ids, the
/// object sizes), backed by transparent huge pages where Linux offers them on request.
///
/// Loading P12 writes about 300 MB of fresh memory (the buffers double as they fill); in 4 KiB
/// pages that is some 75,000 page faults, about a third of the numbering thread's time. Marked
/// for huge pages before the first write, the same memory takes a few hundred 2 MiB faults. The
/// advice is a hint: where the system ignores it (THP set to `never`, other systems) the arrays
/// are ordinary arrays, only slower to fill.
enum LargeArrays {
    /// `count` copies of `value`, in memory advised for huge pages when large.
    static func make<Element: BitwiseCopyable>(repeating value: Element, count: Int) -> [Element] {
        [Element](unsafeUninitializedCapacity: count) { buffer, initialized in
            HugePages.advise(UnsafeMutableRawBufferPointer(buffer))
            buffer.initialize(repeating: value)
            initialized = buffer.count
        }
    }

    /// Makes room for at least `minimumCapacity` elements in `array`, doubling its capacity (so
    /// that appending stays amortised O(1)), in memory advised for huge pages when large.
    static func reserve<Element: BitwiseCopyable>(_ array: inout [Element], minimumCapacity: Int) {
        guard array.capacity < minimumCapacity else { return }
        let capacity = max(minimumCapacity, 2 * array.capacity)
        let old = array
        array = [Element](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            HugePages.advise(UnsafeMutableRawBufferPointer(buffer))
            initialized = buffer.initialize(fromContentsOf: old)
        }
    }
}
