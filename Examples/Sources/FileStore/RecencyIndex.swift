/// Which keys the store holds, their sizes, and their order of use (least recent first).
struct RecencyIndex: Sendable {
    private var sizes: [String: Int] = [:]
    private var lastUse: [String: UInt64] = [:]
    private var order: [UInt64: String] = [:]
    private var clock: UInt64 = 0
    private var oldest: UInt64 = 0
    private(set) var bytes = 0

    var count: Int { sizes.count }
    var keys: [String] { Array(sizes.keys) }

    /// Marks `key` used now; true when the store holds it.
    mutating func touch(_ key: String) -> Bool {
        guard let size = sizes[key] else { return false }
        touch(key, size: size)
        return true
    }

    /// Records `key` with `size` bytes, used now.
    mutating func touch(_ key: String, size: Int) {
        _ = remove(key)
        clock += 1
        sizes[key] = size
        lastUse[key] = clock
        order[clock] = key
        bytes += size
    }

    /// Forgets `key`; true when it was there.
    mutating func remove(_ key: String) -> Bool {
        guard let size = sizes.removeValue(forKey: key), let used = lastUse.removeValue(forKey: key) else {
            return false
        }
        order[used] = nil
        bytes -= size
        return true
    }

    /// Forgets least recently used keys (never `kept`) until the bytes fit; returns them.
    mutating func evict(toFit capacity: Int, keeping kept: String) -> [String] {
        var evicted: [String] = []
        while bytes > capacity, oldest <= clock {
            if let key = order[oldest], key != kept, remove(key) { evicted.append(key) }
            oldest += 1
        }
        return evicted
    }
}
