import CPrefetch

/// Maps a trace's 64-bit keys to dense ids (0, 1, 2, … in order of first appearance).
///
/// Loading a trace asks this once per request (13.2M times for P12), so it is an open-addressing
/// table with linear probing over two flat arrays rather than a `Dictionary`: one multiply to
/// hash, no per-entry allocation, and a probe usually stays in one cache line. It grows at half
/// full, so probe sequences stay short on any key distribution (the multiplicative hash spreads
/// the consecutive block numbers of disk traces, the common case, evenly).
struct DenseIDTable {
    private static let empty = UInt32.max
    /// How many requests ahead ``number(_:into:sizes:smallestSize:)`` prefetches a probe's slot: far enough to
    /// cover a memory access at the loop's pace, near enough that the lines are still cached.
    private static let prefetchDistance = 16
    private var keys: [UInt64]
    private var ids: [UInt32]
    private var mask: Int
    private var shift: UInt64
    private(set) var count = 0

    init(minimumCapacity: Int = 1024) {
        var slots = 16
        while slots < minimumCapacity * 2 { slots <<= 1 }
        keys = LargeArrays.make(repeating: 0, count: slots)
        ids = LargeArrays.make(repeating: Self.empty, count: slots)
        mask = slots - 1
        shift = UInt64(64 - slots.trailingZeroBitCount)
    }

    /// Keys that differ only in their low 4 bits (neighbouring blocks of a disk trace, which come
    /// in runs) share a hashed group of 16 neighbouring slots: a run of requests touches one or
    /// two cache lines instead of one line per request. The groups are spread by a multiplicative
    /// hash, and the place in the group is the low bits XOR middle bits of that hash, so keys that
    /// are all multiples of 16 (byte offsets, aligned block numbers) still use every slot.
    @inline(__always)
    private func slot(of key: UInt64) -> Int { Self.slot(of: key, shift: shift) }

    @inline(__always)
    private static func slot(of key: UInt64, shift: UInt64) -> Int {
        let hash = (key >> 4) &* 0x9E37_79B9_7F4A_7C15
        let group = hash >> (shift + 4)
        return Int(truncatingIfNeeded: group << 4 | ((key ^ (hash >> 32)) & 15))
    }

    /// The id of `key`, assigning the next one (`count`) when the key is new.
    /// - Returns: the id and whether it was just assigned.
    @inline(__always)
    mutating func id(for key: UInt64) -> (id: UInt32, isNew: Bool) {
        let mask = mask, shift = shift
        let (index, found) = keys.withUnsafeBufferPointer { keys in
            ids.withUnsafeBufferPointer { ids in Self.find(key, keys: keys, ids: ids, mask: mask, shift: shift) }
        }
        if let found { return (found, false) }
        let id = UInt32(count)
        keys[index] = key
        ids[index] = id
        count += 1
        if count * 2 > ids.count { grow() }
        return (id, true)
    }

    /// Numbers a chunk of requests: writes each request's id to `output` (as long as `chunk`),
    /// appends the size of each new key to `sizes` and raises a known key's size to the largest
    /// seen. The same ids as ``id(for:)`` request by request, with the table's arrays opened once
    /// per chunk instead of checked on every access (loading P12 numbers 13.2M requests).
    /// `smallestSize` is the smallest of `sizes` (UInt32.max while empty), kept up to date here.
    mutating func number(
        _ chunk: UnsafeBufferPointer<TraceRequest>, into output: UnsafeMutableBufferPointer<UInt32>,
        sizes: inout [UInt32],
        smallestSize: inout UInt32
    ) {
        // Room for every key of the chunk being new, so the table never grows mid-chunk.
        while (count + chunk.count) * 2 > ids.count { grow() }
        let firstNew = sizes.count
        LargeArrays.reserve(&sizes, minimumCapacity: firstNew + chunk.count)
        sizes.append(contentsOf: repeatElement(0, count: chunk.count))
        var count = self.count, smallest = smallestSize
        let mask = mask, shift = shift
        keys.withUnsafeMutableBufferPointer { keys in
            ids.withUnsafeMutableBufferPointer { ids in
                // The table always has slots (16 at least), so both bases exist.
                guard let idBase = ids.baseAddress, let keyBase = keys.baseAddress else { return }
                sizes.withUnsafeMutableBufferPointer { sizes in
                    for (position, request) in chunk.enumerated() {
                        // A probe waits on memory (the table of a large trace is far bigger than
                        // the caches), and the next probes do not depend on this one: ask for the
                        // slots a few requests ahead now, so that their loads overlap.
                        let ahead = position + Self.prefetchDistance
                        if ahead < chunk.count {
                            let slot = Self.slot(of: chunk[ahead].key, shift: shift)
                            tiercache_prefetch(idBase + slot)
                            tiercache_prefetch(keyBase + slot)
                        }
                        let (index, found) = Self.find(
                            request.key, keys: UnsafeBufferPointer(keys), ids: UnsafeBufferPointer(ids), mask: mask,
                            shift: shift)
                        if let found {
                            // Only a size above the smallest one stored can raise an object's size:
                            // for traces without sizes (all 1) this skips a load from an array as
                            // large as the footprint.
                            if request.size > smallest, request.size > sizes[Int(found)] {
                                sizes[Int(found)] = request.size
                            }
                            output[position] = found
                        } else {
                            keys[index] = request.key
                            ids[index] = UInt32(count)
                            sizes[count] = request.size
                            smallest = min(smallest, request.size)
                            output[position] = UInt32(count)
                            count += 1
                        }
                    }
                }
            }
        }
        sizes.removeLast(firstNew + chunk.count - count)
        self.count = count
        smallestSize = smallest
    }

    /// Where `key` is: its slot and id, or the empty slot it would take (linear probing from its
    /// group's slot).
    @inline(__always)
    private static func find(
        _ key: UInt64, keys: UnsafeBufferPointer<UInt64>, ids: UnsafeBufferPointer<UInt32>, mask: Int, shift: UInt64
    ) -> (index: Int, id: UInt32?) {
        var index = slot(of: key, shift: shift)
        while true {
            let id = ids[index]
            if id == empty { return (index, nil) }
            if keys[index] == key { return (index, id) }
            index = (index + 1) & mask
        }
    }

    private mutating func grow() {
        let oldKeys = keys
        let oldIDs = ids
        let slots = ids.count * 2
        keys = LargeArrays.make(repeating: 0, count: slots)
        ids = LargeArrays.make(repeating: Self.empty, count: slots)
        mask = slots - 1
        shift = UInt64(64 - slots.trailingZeroBitCount)
        for index in oldIDs.indices where oldIDs[index] != Self.empty {
            var target = slot(of: oldKeys[index])
            while ids[target] != Self.empty { target = (target + 1) & mask }
            keys[target] = oldKeys[index]
            ids[target] = oldIDs[index]
        }
    }
}
