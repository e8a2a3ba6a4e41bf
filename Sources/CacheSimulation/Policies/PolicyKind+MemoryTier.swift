import TierCache

extension PolicyKind {
    /// The `TierCache.MemoryTier` policy that runs this policy (the same code), or `nil` for
    /// Belady's MIN, which reads the future and so runs only in the simulator.
    ///
    /// A test replays traces through both and checks they hit on the same requests, so a hit
    /// ratio the simulator reports in byte mode, with each object's size set to the tier's cost of
    /// its entry, is the one the tier reaches.
    public var memoryTierPolicy: MemoryTier.EvictionPolicy? {
        switch self {
        case .lru: .lru
        case .fifo: .fifo
        case .clock: .clock
        case .sieve: .sieve
        case .s3fifo: .s3fifo
        case .arc: .arc
        case .twoQ: .twoQ
        case .lirs: .lirs
        case .wtinylfu: .wTinyLFU
        case .belady: nil
        }
    }

    /// The one line of Swift that configures a memory tier of `capacityBytes` with this policy,
    /// e.g. `MemoryTier(capacity: 256 << 20, policy: .s3fifo)`, which `tiercache tune` prints
    /// after its recommendation; `nil` when the tier has no such policy or the capacity is not
    /// positive. Capacities that are whole MiB or KiB are written as shifts.
    public func memoryTierConfiguration(capacityBytes: UInt64) -> String? {
        guard let policy = memoryTierPolicy, capacityBytes > 0, capacityBytes <= UInt64(Int.max) else { return nil }
        let capacity: String
        if capacityBytes % (1 << 20) == 0 {
            capacity = "\(capacityBytes >> 20) << 20"
        } else if capacityBytes % (1 << 10) == 0 {
            capacity = "\(capacityBytes >> 10) << 10"
        } else {
            capacity = "\(capacityBytes)"
        }
        return "MemoryTier(capacity: \(capacity), policy: \(policy))"
    }
}
