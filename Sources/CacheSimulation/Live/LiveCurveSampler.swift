import Synchronization
@_spi(TierCacheInternals) import TierCache

/// Keeps a running cache's own miss-ratio curve from its production traffic, in bounded memory.
///
/// Every lookup's key goes through fixed-size SHARDS (``SHARDS/Mode/fixedSize(maximumKeys:)``):
/// at most `maximumKeys` keys are tracked (about 100 bytes each, so the default 4,096 stays well
/// under 1 MiB), and the sampling rate drops by itself as the key space grows. Ask it what a
/// different capacity would have given:
///
/// ```swift
/// let sampler = LiveCurveSampler()
/// let memory = SampledTier(try MemoryTier(capacity: 64 << 20), sampler: sampler)
/// // … serve traffic through a TieredCache that has `memory` as a tier …
/// let now = sampler.estimatedHitRatio(forCapacityBytes: 64 << 20)
/// let doubled = sampler.estimatedHitRatio(forCapacityBytes: 128 << 20)
/// ```
///
/// The curve is LRU's, in objects; byte capacities are converted with the mean size of the entries
/// stored so far, which is accurate when sizes do not correlate with popularity.
public final class LiveCurveSampler: Sendable {
    private struct State {
        var shards: SHARDS
        var storedEntries = 0
        var storedBytes = 0
    }

    private let state: Locked<State>
    /// A copy of the sample's threshold (``SHARDS/samplingThreshold``), which only falls: a key
    /// hashing at or above it is not sampled, and is counted without the lock, so that lookups on
    /// many threads do not take turns at it for the few keys sampled.
    private let threshold: Atomic<UInt64>
    /// Lookups of keys not sampled, not yet added to the sample's count of requests.
    private let unsampledLookups = Atomic<UInt64>(0)
    /// The most keys the sample tracks at once.
    public let maximumKeys: Int

    /// - Parameter maximumKeys: the most keys tracked at once (at least 64).
    public init(maximumKeys: Int = 4_096) {
        self.maximumKeys = max(64, maximumKeys)
        let shards = SHARDS(mode: .fixedSize(maximumKeys: max(64, maximumKeys)), unit: .objects)
        threshold = Atomic(shards.samplingThreshold)
        state = Locked(State(shards: shards))
    }

    /// Notes one lookup of `key`.
    public func recordLookup(_ key: CacheKey) {
        let hash = Self.stableHash(key)
        guard SHARDS.hash(hash) < threshold.load(ordering: .relaxed) else {
            unsampledLookups.wrappingAdd(1, ordering: .relaxed)
            return
        }
        state.withLock {
            $0.shards.record(key: hash, size: 1)
            threshold.store($0.shards.samplingThreshold, ordering: .relaxed)
        }
    }

    /// Runs `body` on the state, with the lookups counted without the lock added first.
    private func withCountedState<T>(_ body: (inout State) -> T) -> T {
        state.withLock { state in
            state.shards.recordUnsampled(unsampledLookups.exchange(0, ordering: .relaxed))
            return body(&state)
        }
    }

    /// Notes one stored entry of `bytes` (for the bytes-per-object estimate).
    public func recordStore(bytes: Int) {
        state.withLock {
            $0.storedEntries += 1
            $0.storedBytes += bytes
        }
    }

    /// The LRU hit-ratio curve of the traffic so far, capacities in objects.
    public func curve() -> MissRatioCurve {
        withCountedState { $0.shards.curve() }
    }

    /// The hit ratio an LRU cache of `objects` entries would have had.
    public func estimatedHitRatio(forCapacityObjects objects: Int) -> Double {
        curve().hitRatio(at: UInt64(max(0, objects)))
    }

    /// The hit ratio an LRU cache of `bytes` would have had; nil before anything was stored.
    public func estimatedHitRatio(forCapacityBytes bytes: Int) -> Double? {
        guard let meanSize = meanEntrySize, meanSize > 0 else { return nil }
        // Saturating: with entries of a byte or less on average, `bytes` can be more objects than
        // an Int holds.
        let objects = Double(bytes) / meanSize
        return estimatedHitRatio(forCapacityObjects: objects < 0x1p63 ? Int(max(objects, 0)) : .max)
    }

    /// The mean size of stored entries, nil before the first store.
    public var meanEntrySize: Double? {
        state.withLock { $0.storedEntries > 0 ? Double($0.storedBytes) / Double($0.storedEntries) : nil }
    }

    /// Lookups seen, and the current sampling rate.
    public var sampling: (lookups: UInt64, rate: Double, trackedKeys: Int) {
        withCountedState { ($0.shards.requestsSeen, $0.shards.rate, $0.shards.trackedKeys) }
    }

    /// 64-bit FNV-1a of the key's UTF-8: the same key hashes the same in every process.
    static func stableHash(_ key: CacheKey) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.rawValue.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }
}
