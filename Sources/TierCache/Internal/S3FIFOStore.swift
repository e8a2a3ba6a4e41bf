/// S3-FIFO (Yang et al., SOSP 2023) over costed entries, following libCacheSim's `S3FIFO.c` rule
/// for rule, as the simulator's `S3FIFOPolicy` does (a test replays a trace through both and
/// compares hits).
///
/// A small FIFO (10% of the capacity) filters one-hit wonders; a main FIFO (the rest) reinserts
/// entries that were hit, with a 2-bit frequency; a ghost FIFO remembers the keys (not the values)
/// of entries evicted from the small queue, up to 90% of the capacity by their costs.
/// - A new entry enters the small queue, or the main queue when its key is in the ghost (or, before
///   the first eviction, when the small queue is already full).
/// - Evicting: from the main queue when it is over its share or the small queue is empty, else
///   from the small queue. The small queue's oldest entry moves to the main queue if it was hit
///   at least twice, else it leaves for the ghost; the main queue's oldest entry is reinserted with
///   its frequency lowered by one while that frequency is not zero, else it leaves.
/// - A hit only raises the entry's frequency (saturating at 3): no list is touched.
struct S3FIFOStore: EvictingStore {
    private static let small: UInt8 = 1
    private static let main: UInt8 = 2
    private static let ghost: UInt8 = 3
    private static let moveToMainThreshold: UInt8 = 2
    /// libCacheSim counts hits without bound but only ever reads `min(frequency, 3)` and
    /// `frequency >= 2`, so saturating at 3 takes the same decisions.
    private static let maximumFrequency: UInt8 = 3

    private var queues = KeyedQueues<CacheKey, CacheEntry>(queueCount: 3)
    private let capacity: Int
    private let maxEntryCount: Int
    private let smallCapacity: Int
    private let mainCapacity: Int
    private let ghostCapacity: Int
    private var hasEvicted = false

    init(capacity: Int, maxEntryCount: Int) {
        self.capacity = capacity
        self.maxEntryCount = maxEntryCount
        smallCapacity = Int(Double(capacity) * 0.10)
        mainCapacity = capacity - smallCapacity
        ghostCapacity = Int(Double(capacity) * 0.90)
    }

    var totalCost: Int { queues.weight(Self.small) + queues.weight(Self.main) }
    var count: Int { queues.count(Self.small) + queues.count(Self.main) }
    /// libCacheSim admits nothing as large as the small queue: it would flush the whole queue.
    var largestAdmissibleCost: Int { max(0, smallCapacity - 1) }

    @inline(__always)
    mutating func lookup(_ key: CacheKey) -> CacheEntry? {
        guard let slot = queues.slot(of: key) else { return nil }
        let queue = queues.queue(of: slot)
        guard queue == Self.small || queue == Self.main else { return nil }
        let frequency = queues.frequency(of: slot)
        if frequency < Self.maximumFrequency { queues.setFrequency(frequency + 1, of: slot) }
        return queues.value(of: slot)
    }

    mutating func store(_ entry: CacheEntry, cost: Int, for key: CacheKey) -> Int {
        var remembered = false
        if let slot = queues.slot(of: key) {
            let queue = queues.queue(of: slot)
            if queue == Self.ghost {
                queues.free(slot)
                remembered = true
            } else {
                return replace(slot, in: queue, with: entry, cost: cost)
            }
        }
        let evicted = makeRoom(for: cost)
        let slot = queues.allocate(key, value: entry, cost: cost)
        if remembered || (!hasEvicted && queues.weight(Self.small) >= smallCapacity) {
            queues.pushHead(slot, Self.main)
        } else {
            queues.pushHead(slot, Self.small)
        }
        return evicted
    }

    /// A new value for a resident key counts as a hit. When it fits, it takes the old one's place;
    /// otherwise the entry is requeued at the head of its queue with its new cost after room is
    /// made (so it is never its own victim).
    private mutating func replace(
        _ slot: KeyedQueues<CacheKey, CacheEntry>.Slot, in queue: UInt8, with entry: CacheEntry, cost: Int
    ) -> Int {
        let frequency = queues.frequency(of: slot)
        if frequency < Self.maximumFrequency { queues.setFrequency(frequency + 1, of: slot) }
        if totalCost - queues.cost(of: slot) + cost <= capacity {
            queues.replace(slot, value: entry, cost: cost)
            return 0
        }
        queues.remove(slot)
        let evicted = makeRoom(for: cost)
        queues.replace(slot, value: entry, cost: cost)
        queues.setFrequency(min(frequency + 1, Self.maximumFrequency), of: slot)
        queues.pushHead(slot, queue)
        return evicted
    }

    /// Evicts until an entry of `cost` fits in the capacity and the entry-count limit.
    private mutating func makeRoom(for cost: Int) -> Int {
        var evicted = 0
        while totalCost + cost > capacity || count + 1 > maxEntryCount, count > 0 {
            hasEvicted = true
            if queues.weight(Self.main) > mainCapacity || queues.weight(Self.small) == 0 {
                evictFromMain()
            } else {
                evictFromSmall()
            }
            evicted += 1
        }
        return evicted
    }

    /// Moves the small queue's oldest entries that were hit twice to the main queue, until one
    /// that was not leaves for the ghost.
    private mutating func evictFromSmall() {
        while let oldest = queues.popTail(Self.small) {
            if queues.frequency(of: oldest) >= Self.moveToMainThreshold {
                queues.setFrequency(0, of: oldest)
                queues.pushHead(oldest, Self.main)
            } else {
                remember(oldest)
                return
            }
        }
    }

    /// Reinserts the main queue's oldest entries that were hit, one frequency lower, until one
    /// that was not leaves.
    private mutating func evictFromMain() {
        while let oldest = queues.popTail(Self.main) {
            let frequency = queues.frequency(of: oldest)
            if frequency >= 1 {
                queues.setFrequency(min(frequency, Self.maximumFrequency) - 1, of: oldest)
                queues.pushHead(oldest, Self.main)
            } else {
                queues.free(oldest)
                return
            }
        }
    }

    /// Keeps the key of an entry leaving the small queue in the ghost, dropping its value; the
    /// ghost's oldest keys go first to make room, as a FIFO of `ghostCapacity` does.
    private mutating func remember(_ slot: KeyedQueues<CacheKey, CacheEntry>.Slot) {
        let cost = queues.cost(of: slot)
        guard cost <= ghostCapacity else {
            queues.free(slot)
            return
        }
        while queues.weight(Self.ghost) + cost > ghostCapacity, let oldest = queues.popTail(Self.ghost) {
            queues.free(oldest)
        }
        queues.replace(slot, value: nil, cost: cost)
        queues.setFrequency(0, of: slot)
        queues.pushHead(slot, Self.ghost)
    }

    mutating func remove(_ key: CacheKey) {
        if let slot = queues.slot(of: key) { queues.free(slot) }
    }

    mutating func removeAll() {
        queues.removeAll()
        hasEvicted = false
    }

    var keysByRetention: [CacheKey] { queues.keys(Self.main) + queues.keys(Self.small) }
}
