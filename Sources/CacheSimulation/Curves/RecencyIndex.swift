/// The order-statistics structure behind stack distances: a Fenwick tree over access times in which
/// each resident slot has one mark, at the time of its latest access, weighted by its size.
///
/// The stack distance of a re-access is the weight of the marks after the slot's previous access,
/// plus its own size: one prefix sum, O(log m). Times are renumbered ("compacted") whenever they run
/// out, so the tree has 2m positions for m slots and every operation stays O(log m), amortised.
/// `Weight` is `UInt32` where counts fit (object mode: half the memory traffic of `UInt64`).
struct RecencyIndex<Weight: FixedWidthInteger & UnsignedInteger & Sendable>: Sendable {
    private var tree: [Weight]
    /// The time of each slot's latest access (1-based), 0 when the slot is not resident.
    private var lastAccess: [Int32]
    private var slotAtTime: [Int32]
    private var weightOfSlot: [Weight]
    private var now = 0
    private(set) var totalWeight: Weight = 0

    init(slots: Int) {
        let positions = max(2 * slots, 1024)
        tree = [Weight](repeating: 0, count: positions + 1)
        slotAtTime = [Int32](repeating: -1, count: positions + 1)
        lastAccess = [Int32](repeating: 0, count: slots)
        weightOfSlot = [Weight](repeating: 0, count: slots)
    }

    var slotCount: Int { lastAccess.count }

    /// Grows the slot table (SHARDS and the live sampler allocate slots as keys appear).
    mutating func ensureSlots(_ count: Int) {
        guard count > lastAccess.count else { return }
        let grown = max(count, lastAccess.count * 2)
        lastAccess += [Int32](repeating: 0, count: grown - lastAccess.count)
        weightOfSlot += [Weight](repeating: 0, count: grown - weightOfSlot.count)
        if 2 * grown > tree.count - 1 { rebuild(positions: 2 * grown) }
    }

    /// Records an access to `slot` with `weight` and returns its stack distance (in weight units,
    /// including its own weight), or nil when the slot was not resident (a cold miss).
    @inline(__always)
    mutating func access(_ slot: Int, weight: Weight) -> UInt64? {
        var distance: UInt64?
        let previous = Int(lastAccess[slot])
        if previous > 0 {
            distance = UInt64(totalWeight - prefixSum(previous) + weight)
            add(previous, 0 &- weightOfSlot[slot])
            slotAtTime[previous] = -1
            totalWeight -= weightOfSlot[slot]
        }
        if now + 1 >= tree.count { rebuild(positions: tree.count - 1) }
        now += 1
        lastAccess[slot] = Int32(now)
        slotAtTime[now] = Int32(slot)
        weightOfSlot[slot] = weight
        add(now, weight)
        totalWeight += weight
        return distance
    }

    /// Forgets a slot (SHARDS drops keys whose hash leaves the sample).
    mutating func remove(_ slot: Int) {
        let previous = Int(lastAccess[slot])
        guard previous > 0 else { return }
        add(previous, 0 &- weightOfSlot[slot])
        slotAtTime[previous] = -1
        totalWeight -= weightOfSlot[slot]
        lastAccess[slot] = 0
    }

    @inline(__always)
    private func prefixSum(_ position: Int) -> Weight {
        tree.withUnsafeBufferPointer { tree in
            var sum: Weight = 0
            var index = position
            while index > 0 {
                sum &+= tree[index]
                index &= index - 1
            }
            return sum
        }
    }

    @inline(__always)
    private mutating func add(_ position: Int, _ delta: Weight) {
        tree.withUnsafeMutableBufferPointer { tree in
            var index = position
            while index < tree.count {
                tree[index] &+= delta
                index += index & -index
            }
        }
    }

    /// Renumbers the resident slots' times 1, 2, … in their current order and rebuilds the tree.
    private mutating func rebuild(positions: Int) {
        var order: [Int32] = []
        order.reserveCapacity(lastAccess.count)
        for time in 1...max(1, now) where time < slotAtTime.count && slotAtTime[time] >= 0 {
            order.append(slotAtTime[time])
        }
        let size = max(positions, 2 * order.count + 2, 1024)
        tree = [Weight](repeating: 0, count: size + 1)
        slotAtTime = [Int32](repeating: -1, count: size + 1)
        now = 0
        for slot in order {
            now += 1
            lastAccess[Int(slot)] = Int32(now)
            slotAtTime[now] = slot
            tree[now] = weightOfSlot[Int(slot)]
        }
        // Linear-time Fenwick construction.
        for index in 1..<tree.count {
            let parent = index + (index & -index)
            if parent < tree.count { tree[parent] &+= tree[index] }
        }
    }
}
