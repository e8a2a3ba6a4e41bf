import TierCacheEviction

extension MemoryTier {
    /// The built-in policies a ``MemoryTier`` can evict by: every online policy of
    /// `TierCacheEviction`, the same code the simulator replays (a policy type of your own goes
    /// to ``MemoryTier/init(capacity:maxEntryCount:policyType:)``).
    ///
    /// All bound the tier by bytes and do O(1) work per request, amortized for CLOCK, SIEVE,
    /// S3-FIFO and LIRS: a store that must evict may first walk many entries (CLOCK and SIEVE up
    /// to all of them, when every entry was hit since the hand last passed), under the tier's
    /// lock, so a lookup can wait behind it. They differ in what they keep and in what a hit costs.
    public enum EvictionPolicy: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Least recently used: evicts the entry unused for longest. Each hit relinks the entry at
        /// the front of a list. The default; best when recent use predicts the next use.
        case lru
        /// First in, first out: a hit changes nothing (the cheapest hit); the oldest entry goes.
        case fifo
        /// CLOCK (second chance): a hit sets a bit; eviction gives entries with the bit set one
        /// more round. LRU's hit ratio, nearly, at FIFO's hit cost.
        case clock
        /// SIEVE (Zhang et al., NSDI 2024): FIFO order and a visited bit; a hand spares visited
        /// entries in place, so new entries that are not reused leave first.
        case sieve
        /// S3-FIFO (Yang et al., SOSP 2023): a small FIFO (10% of the capacity) that new entries
        /// must be hit in twice to reach the main FIFO, plus a ghost of recently evicted keys.
        /// Scan- and one-hit-wonder-resistant; a hit only bumps a 2-bit counter. Costs: the ghost
        /// keeps keys (not values) of evicted entries outside the byte budget; entries of 10% of
        /// the capacity or more are refused (one would flush the small queue).
        case s3fifo
        /// ARC (Megiddo & Modha, FAST 2003): recency and frequency lists whose balance adapts to
        /// hits in the ghost lists of each. The ghosts keep keys of up to the capacity's worth of
        /// evicted entries outside the byte budget.
        case arc
        /// 2Q (Johnson & Shasha, VLDB 1994): a FIFO for first requests, a ghost of keys that left
        /// it, and an LRU list for entries requested again while remembered. Entries larger than
        /// the FIFO's share (25% of the capacity) are refused.
        case twoQ
        /// LIRS (Jiang & Zhang, SIGMETRICS 2002): keeps entries whose reuse distance is short;
        /// one scan only cycles through 1% of the capacity. Non-resident history (keys) of up to
        /// twice the capacity is kept outside the byte budget.
        case lirs
        /// W-TinyLFU (Einziger, Friedman & Manes, 2017; Caffeine's policy): a small LRU window
        /// admits new entries, which then enter the main segmented LRU only if a frequency sketch
        /// says they are more popular than the entry they would evict; the window is sized by
        /// miniature simulation, so recency-heavy workloads get LRU's hit ratio and
        /// frequency-skewed ones TinyLFU's. Costs: a count-min sketch (8 to 16 bytes per entry
        /// held) and the miniatures (under 1 MB up to 32,768 entries; beyond, they sample 1 key
        /// in 128, a few bytes per entry held and at most 25), outside the byte budget; each
        /// stored key is hashed once. The entry being stored is never the one its own store evicts.
        case wTinyLFU

        /// The policy as written in Swift (`.lru`, `.s3fifo`, `.wTinyLFU`, …).
        public var description: String { "." + rawValue }
    }
}
