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
    ///
    /// The simulator admits any object up to the capacity, but the tier refuses an entry over its
    /// `maxEntryFraction` (5% by default): when `largestEntry`, the largest entry the workload
    /// stores (its cost in the tier), is over that, the line sets the fraction that admits it, in
    /// thousandths, so that the tier makes the simulation's decisions:
    /// `MemoryTier(.init(capacity: 1 << 20, maxEntryFraction: 0.125, policy: .lru))`.
    public func memoryTierConfiguration(capacityBytes: UInt64, largestEntry: UInt64 = 0) -> String? {
        guard let policy = memoryTierPolicy, capacityBytes > 0, capacityBytes <= UInt64(Int.max) else { return nil }
        let capacity = Self.capacityText(capacityBytes)
        guard let fraction = Self.entryFraction(admitting: largestEntry, capacity: Int(capacityBytes)) else {
            return "MemoryTier(capacity: \(capacity), policy: \(policy))"
        }
        return "MemoryTier(.init(capacity: \(capacity), maxEntryFraction: \(fraction), policy: \(policy)))"
    }

    /// A capacity as Swift source: whole MiB or KiB as shifts.
    fileprivate static func capacityText(_ bytes: UInt64) -> String {
        if bytes % (1 << 20) == 0 { return "\(bytes >> 20) << 20" }
        if bytes % (1 << 10) == 0 { return "\(bytes >> 10) << 10" }
        return "\(bytes)"
    }

    /// The `maxEntryFraction`, written in thousandths, of the smallest limit that admits an entry
    /// of `largest` bytes in a tier of `capacity`; nil when the default one does. (An entry over
    /// the capacity is refused by the simulator too: then the fraction is 1.)
    fileprivate static func entryFraction(admitting largest: UInt64, capacity: Int) -> String? {
        let needed = Int(clamping: largest)
        let admits = { (fraction: Double) in
            (try? EntrySizeLimit(fraction: fraction, capacity: capacity))?.admits(needed) ?? false
        }
        guard !admits(EntrySizeLimit.urlCacheDefaultFraction) else { return nil }
        var thousandths = min(1000, Int((Double(needed) / Double(capacity) * 1000).rounded(.up)))
        while thousandths < 1000, !admits(Double(thousandths) / 1000) { thousandths += 1 }
        return DecimalText.thousandths(thousandths)
    }
}

extension SimulatedPolicy {
    /// The one line of Swift that configures a memory tier of `capacityBytes` with this policy,
    /// yours included: a built-in's is ``PolicyKind/memoryTierConfiguration(capacityBytes:largestEntry:)``,
    /// a type of your own runs by its type,
    /// `MemoryTier(.init(capacity: 256 << 20), policyType: MyPolicy.self)`, with the
    /// `maxEntryFraction` that admits `largestEntry` where the default does not. `nil` for a policy
    /// that reads the future, or a capacity that is not positive.
    public func memoryTierConfiguration(capacityBytes: UInt64, largestEntry: UInt64 = 0) -> String? {
        if let kind { return kind.memoryTierConfiguration(capacityBytes: capacityBytes, largestEntry: largestEntry) }
        guard !type.needsFuture, capacityBytes > 0, capacityBytes <= UInt64(Int.max) else { return nil }
        let capacity = PolicyKind.capacityText(capacityBytes)
        let fraction = PolicyKind.entryFraction(admitting: largestEntry, capacity: Int(capacityBytes))
        return "MemoryTier(.init(capacity: \(capacity)\(fraction.map { ", maxEntryFraction: \($0)" } ?? "")), "
            + "policyType: \(String(describing: type)).self)"
    }
}
