/// A binary max-heap: Belady's furthest next use, SHARDS' largest sampled hash.
struct MaxHeap<Element: Comparable & Sendable>: Sendable {
    private var items: [Element] = []

    var count: Int { items.count }
    var max: Element? { items.first }

    mutating func push(_ element: Element) {
        items.append(element)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[parent] < items[child] else { break }
            items.swapAt(parent, child)
            child = parent
        }
    }

    /// Removes the elements `shouldBeRemoved` names and restores the heap from what is left
    /// (Floyd's bottom-up construction: linear in the count).
    mutating func removeAll(where shouldBeRemoved: (Element) -> Bool) {
        items.removeAll(where: shouldBeRemoved)
        for parent in stride(from: items.count / 2 - 1, through: 0, by: -1) { siftDown(from: parent) }
    }

    mutating func popMax() -> Element? {
        guard let top = items.first else { return nil }
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            siftDown(from: 0)
        }
        return top
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < items.count else { break }
            var largest = left
            if left + 1 < items.count, items[left] < items[left + 1] { largest = left + 1 }
            guard items[parent] < items[largest] else { break }
            items.swapAt(parent, largest)
            parent = largest
        }
    }
}
