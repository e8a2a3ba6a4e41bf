/// SIEVE (Zhang et al., NSDI 2024): FIFO order with a visited bit and a hand that moves from the tail
/// towards the head, clearing visited bits and evicting the first unvisited object in place. Unlike
/// CLOCK, survivors keep their position, so new objects are evicted quickly ("quick demotion").
public struct SIEVEPolicy: EvictionPolicy {
    /// The policy's name in reports.
    public static let name = "SIEVE"
    private static let cache: UInt8 = 1
    private var queues: ObjectQueues
    private var visited: [Bool]
    private var hand: UInt32?
    private let capacity: UInt64

    /// An empty cache of `context`'s capacity, with the default parameters.
    public init(context: PolicyContext) {
        queues = ObjectQueues(queueCount: 1, objectSizes: context.objectSizes)
        visited = [Bool](repeating: false, count: context.objectCount)
        capacity = context.capacity
    }

    /// Replays the request at `position` for `object`; returns whether it hit.
    public mutating func access(_ object: UInt32, position: Int) -> Bool {
        if queues.queue(of: object) == Self.cache {
            visited[Int(object)] = true
            return true
        }
        let size = queues.size(of: object)
        guard size <= capacity else { return false }
        while queues.weight(Self.cache) + size > capacity {
            evict()
        }
        queues.pushHead(object, Self.cache)
        return false
    }

    private mutating func evict() {
        guard var candidate = hand ?? queues.tail(Self.cache) else { return }
        while visited[Int(candidate)] {
            visited[Int(candidate)] = false
            guard let newer = queues.newer(than: candidate) ?? queues.tail(Self.cache) else { break }
            candidate = newer
        }
        hand = queues.newer(than: candidate)
        queues.remove(candidate)
    }
}
