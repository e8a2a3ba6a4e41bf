/// The physical baseline for the memory tier: the least an LRU needs (a dictionary and an
/// index-linked list), with no lock, no statistics, no expiry and no byte accounting.
///
/// `@unchecked Sendable` only so a benchmark closure can hold it: the benchmark runs on one
/// thread, and this type is deliberately unsynchronized, which is what it measures.
///
/// Its properties are `@exclusivity(unchecked)`: a class's stored properties otherwise pay Swift's
/// dynamic exclusivity checks on every access (a `swift_beginAccess` and `swift_endAccess` per
/// property touched, about a third of this type's time on a set), which no LRU needs and which
/// the tier does not pay (its state is a value behind its lock). With them the baseline ran 1.35x
/// (get hit) to 1.5x (set) slower, and the tier's ratios to it were flattered by as much.
public final class MinimalLRU: @unchecked Sendable {
    private struct Node {
        var key: String
        var value: [UInt8]
        var previous: Int
        var next: Int
    }
    @exclusivity(unchecked) private var nodes: [Node] = []
    @exclusivity(unchecked) private var index: [String: Int] = [:]
    @exclusivity(unchecked) private var head = -1
    @exclusivity(unchecked) private var tail = -1
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
