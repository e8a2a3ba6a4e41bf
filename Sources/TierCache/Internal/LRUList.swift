/// An LRU-ordered map from keys to costed values: O(1) lookup, insert, remove and "touch".
///
/// Nodes live in one array linked by indices (no per-node allocation, no reference counting on
/// the hit path); freed slots are reused. Not thread-safe: the owner guards it.
struct LRUList<Key: Hashable, Value> {
    private struct Node {
        var key: Key?
        var value: Value?
        var cost: Int
        var previous: Int  // towards the most recently used end; -1 at the head
        var next: Int  // towards the least recently used end; -1 at the tail
    }

    private var nodes: [Node] = []
    private var indexByKey: [Key: Int] = [:]
    private var freeSlots: [Int] = []
    private var head = -1  // most recently used
    private var tail = -1  // least recently used

    /// Sum of the costs of all entries.
    private(set) var totalCost = 0

    var count: Int { indexByKey.count }

    /// The value for `key`, made most recently used.
    mutating func touch(_ key: Key) -> Value? {
        guard let index = indexByKey[key] else { return nil }
        moveToFront(index)
        return nodes[index].value
    }

    /// Inserts or replaces `key`'s value as most recently used.
    mutating func set(_ value: Value, cost: Int, for key: Key) {
        if let index = indexByKey[key] {
            totalCost += cost - nodes[index].cost
            nodes[index].value = value
            nodes[index].cost = cost
            moveToFront(index)
            return
        }
        let node = Node(key: key, value: value, cost: cost, previous: -1, next: head)
        let index: Int
        if let slot = freeSlots.popLast() {
            index = slot
            nodes[index] = node
        } else {
            index = nodes.count
            nodes.append(node)
        }
        if head >= 0 { nodes[head].previous = index }
        head = index
        if tail < 0 { tail = index }
        indexByKey[key] = index
        totalCost += cost
    }

    /// Removes `key`; returns whether it was present.
    @discardableResult
    mutating func remove(_ key: Key) -> Bool {
        guard let index = indexByKey.removeValue(forKey: key) else { return false }
        release(index)
        return true
    }

    /// Removes and returns the least recently used key, if any.
    mutating func removeLeastRecentlyUsed() -> Key? {
        guard tail >= 0, let key = nodes[tail].key else { return nil }
        indexByKey.removeValue(forKey: key)
        release(tail)
        return key
    }

    mutating func removeAll() {
        nodes.removeAll()
        indexByKey.removeAll()
        freeSlots.removeAll()
        head = -1
        tail = -1
        totalCost = 0
    }

    /// Keys from most to least recently used (for tests and inspection; O(n)).
    var keysByRecency: [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(count)
        var index = head
        while index >= 0 {
            if let key = nodes[index].key { keys.append(key) }
            index = nodes[index].next
        }
        return keys
    }

    private mutating func unlink(_ index: Int) {
        let previous = nodes[index].previous
        let next = nodes[index].next
        if previous >= 0 { nodes[previous].next = next } else { head = next }
        if next >= 0 { nodes[next].previous = previous } else { tail = previous }
    }

    private mutating func moveToFront(_ index: Int) {
        guard index != head else { return }
        unlink(index)
        nodes[index].previous = -1
        nodes[index].next = head
        if head >= 0 { nodes[head].previous = index }
        head = index
        if tail < 0 { tail = index }
    }

    private mutating func release(_ index: Int) {
        unlink(index)
        totalCost -= nodes[index].cost
        nodes[index] = Node(key: nil, value: nil, cost: 0, previous: -1, next: -1)
        freeSlots.append(index)
    }
}
