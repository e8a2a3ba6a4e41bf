import Foundation
import Synchronization
import TierCache

/// The memory tiers' baseline: the least an LRU of `capacity` bytes needs (a dictionary and an
/// index-linked list) behind one `Mutex`, so any number of tasks can share it. No statistics and
/// no expiry; but each entry is charged what `MemoryTier` charges it (value, key and
/// `MemoryTier.perEntryOverhead`) and one over the tier's per-entry limit (5% of the capacity by
/// default) is refused, as `MemoryTier` refuses it: at one capacity the two hold the same
/// entries, so the baseline does not win by keeping more (fewer misses, fewer stores) or lose by
/// storing what the tier refuses.
final class MinimalLRUTier: LocalCacheTier {
    private struct Node {
        var key: CacheKey
        var entry: CacheEntry
        var cost: Int
        var previous: Int
        var next: Int
    }

    private struct List {
        var nodes: [Node] = []
        var free: [Int] = []
        var index: [CacheKey: Int] = [:]
        var head = -1
        var tail = -1
        var bytes = 0

        mutating func unlink(_ position: Int) {
            let previous = nodes[position].previous
            let next = nodes[position].next
            if previous >= 0 { nodes[previous].next = next } else { head = next }
            if next >= 0 { nodes[next].previous = previous } else { tail = previous }
        }

        mutating func pushFront(_ position: Int) {
            nodes[position].previous = -1
            nodes[position].next = head
            if head >= 0 { nodes[head].previous = position }
            head = position
            if tail < 0 { tail = position }
        }

        mutating func remove(_ position: Int) {
            unlink(position)
            index[nodes[position].key] = nil
            bytes -= nodes[position].cost
            nodes[position].entry = CacheEntry.empty
            free.append(position)
        }
    }

    let name = "minimal LRU"
    let medium = TierMedium.memory
    private let capacity: Int
    /// The largest entry cost stored: the subject's own limit, else 5% of the capacity,
    /// `MemoryTier`'s default rule.
    private let maxEntryCost: Int
    private let list = Mutex(List())

    init(capacity: Int, maxEntryCost: Int? = nil) {
        let capacity = max(capacity, 0)
        self.capacity = capacity
        self.maxEntryCost = BaselineLimits.maxEntryBytes(maxEntryCost, capacity: capacity)
    }

    func entry(forKey key: CacheKey) -> CacheEntry? {
        list.withLock { list in
            guard let position = list.index[key] else { return nil }
            if position != list.head {
                list.unlink(position)
                list.pushFront(position)
            }
            return list.nodes[position].entry
        }
    }

    func store(_ entry: CacheEntry, forKey key: CacheKey) -> StoreOutcome {
        let cost = MemoryTier.cost(of: entry, forKey: key)
        return list.withLock { list in
            if let position = list.index[key] { list.remove(position) }
            // Refused after the older entry goes, as every tier refuses (nothing older stays).
            guard cost <= maxEntryCost else { return .refused(.tooLarge(size: cost, limit: maxEntryCost)) }
            while list.bytes + cost > capacity, list.tail >= 0 { list.remove(list.tail) }
            let node = Node(key: key, entry: entry, cost: cost, previous: -1, next: -1)
            let position: Int
            if let reused = list.free.popLast() {
                list.nodes[reused] = node
                position = reused
            } else {
                list.nodes.append(node)
                position = list.nodes.count - 1
            }
            list.index[key] = position
            list.bytes += cost
            list.pushFront(position)
            return .stored
        }
    }

    func removeEntry(forKey key: CacheKey) {
        list.withLock { list in
            if let position = list.index[key] { list.remove(position) }
        }
    }

    func removeAll() {
        list.withLock { $0 = List() }
    }

    func usage() -> TierUsage {
        list.withLock {
            TierUsage(bytes: $0.bytes, entries: $0.index.count, capacity: capacity, maxEntryBytes: maxEntryCost)
        }
    }

    func statistics() -> TierStatistics {
        var statistics = TierStatistics()
        statistics.usage = usage()
        return statistics
    }
}

extension CacheEntry {
    /// What a freed node holds, so it keeps no value alive.
    fileprivate static let empty = CacheEntry(value: [UInt8](), storedAt: .distantPast)
}
