/// The physical baseline for the memory tier: the least an LRU needs (a dictionary and an
/// index-linked list), with no lock, no statistics, no expiry and no byte accounting.
///
/// `@unchecked Sendable` only so a benchmark closure can hold it: the benchmark runs on one
/// thread, and this type is deliberately unsynchronized, which is what it measures.
public final class MinimalLRU: @unchecked Sendable {
    private struct Node {
        var key: String
        var value: [UInt8]
        var previous: Int
        var next: Int
    }
    private var nodes: [Node] = []
    private var index: [String: Int] = [:]
    private var head = -1, tail = -1
    public let capacity: Int

    public init(capacity: Int) { self.capacity = capacity }

    public func get(_ key: String) -> [UInt8]? {
        guard let position = index[key] else { return nil }
        moveToFront(position)
        return nodes[position].value
    }

    public func set(_ key: String, _ value: [UInt8]) {
        if let position = index[key] {
            nodes[position].value = value
            moveToFront(position)
            return
        }
        if nodes.count >= capacity, tail >= 0 {
            // Reuse the least recently used node for the new key.
            let victim = tail
            index[nodes[victim].key] = nil
            nodes[victim].key = key
            nodes[victim].value = value
            index[key] = victim
            moveToFront(victim)
            return
        }
        nodes.append(Node(key: key, value: value, previous: -1, next: head))
        let position = nodes.count - 1
        if head >= 0 { nodes[head].previous = position }
        head = position
        if tail < 0 { tail = position }
        index[key] = position
    }

    private func moveToFront(_ position: Int) {
        guard position != head else { return }
        let previous = nodes[position].previous, next = nodes[position].next
        if previous >= 0 { nodes[previous].next = next }
        if next >= 0 { nodes[next].previous = previous } else { tail = previous }
        nodes[position].previous = -1
        nodes[position].next = head
        nodes[head].previous = position
        head = position
    }
}
