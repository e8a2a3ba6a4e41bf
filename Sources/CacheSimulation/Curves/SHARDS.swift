/// Approximate LRU hit-ratio curves by spatially hashed sampling (Waldspurger et al., FAST 2015).
///
/// A key is sampled when `hash(key) mod P < T`, so the sample keeps every request of the keys it
/// keeps, at rate `R = T / P`. Stack distances inside the sample, divided by R, estimate the full
/// trace's distances. Two variants:
/// - ``Mode/fixedRate(_:)``: a constant R (0.01 tracks 1% of the keys). The count of sampled
///   references is corrected to its expectation (the paper's SHARDS-adj).
/// - ``Mode/fixedSize(maximumKeys:)``: R starts at 1 and drops whenever more than `maximumKeys`
///   keys are tracked, evicting the keys with the largest hashes: memory stays bounded on any
///   workload, which is what the live sampler needs.
public struct SHARDS: Sendable {
    /// How keys are sampled.
    public enum Mode: Sendable, Hashable, CustomStringConvertible {
        /// A fixed share of the keys, by hash (``SHARDS/smallestRate``...1; a rate outside that is
        /// clamped to it, and NaN counts as 1: every key).
        case fixedRate(Double)
        /// At most `maximumKeys` keys: the rate falls as more keys arrive (bounded memory), down
        /// to ``SHARDS/smallestRate``, where the keys that rate samples are all kept.
        case fixedSize(maximumKeys: Int)

        /// The mode in words, for reports.
        public var description: String {
            switch self {
            case .fixedRate(let rate): "fixed rate \(rate)"
            case .fixedSize(let keys): "fixed size \(keys) keys"
            }
        }
    }

    static let modulus: UInt64 = 1 << 24

    /// The smallest sampling rate: 1 key in 2^24 by hash (the sample is drawn from 24 bits of
    /// each key's hash); smaller rates sample at this one.
    public static let smallestRate = 1.0 / Double(modulus)

    /// How keys are sampled.
    public let mode: Mode
    /// Whether distances count objects or bytes.
    public let unit: CapacityUnit
    private var threshold: UInt64
    private var slots: [UInt64: Int32] = [:]
    private var freeSlots: [Int32] = []
    private var index = RecencyIndex<UInt64>(slots: 0)
    private var histogram: DistanceHistogram
    /// For fixed-size mode: the tracked keys by hash, largest first, to lower the threshold.
    private var byHash = MaxHeap<SampledKey>()
    private(set) var requestsSeen: UInt64 = 0
    private(set) var requestsSampled: UInt64 = 0

    /// A sampler that has seen nothing yet.
    /// - Parameters:
    ///   - mode: fixed-rate sampling, or fixed-size sampling that lowers its rate to keep a bounded
    ///     number of keys.
    ///   - unit: whether capacities and distances count objects or bytes.
    ///   - bucketWidth: a linear histogram of this width (offline use, where the footprint
    ///     is known); nil for logarithmic buckets (live use).
    public init(mode: Mode, unit: CapacityUnit, bucketWidth: UInt64? = nil) {
        self.mode = mode
        self.unit = unit
        switch mode {
        case .fixedRate(let rate):
            // NaN passes through min and max (and would trap in UInt64(_:)): it samples every key.
            let clamped = rate.isNaN ? 1 : min(max(rate, 1.0 / Double(Self.modulus)), 1)
            threshold = UInt64((clamped * Double(Self.modulus)).rounded())
        case .fixedSize:
            threshold = Self.modulus
        }
        histogram = DistanceHistogram(layout: bucketWidth.map { .linear(width: max(1, $0)) } ?? .logarithmic)
    }

    /// The current sampling rate.
    public var rate: Double { Double(threshold) / Double(Self.modulus) }

    /// The hash below which a key is sampled. It only ever falls, so a copy read earlier admits
    /// every key the current one does: ``LiveCurveSampler`` skips its lock for a key at or above
    /// a copy, and counts it with ``recordUnsampled(_:)``.
    var samplingThreshold: UInt64 { threshold }

    /// Counts `count` requests for keys at or above ``samplingThreshold`` without their keys:
    /// what ``record(key:size:)`` would have done with them.
    mutating func recordUnsampled(_ count: UInt64) {
        requestsSeen &+= count
    }

    /// How many keys the sample tracks now.
    public var trackedKeys: Int { slots.count }

    @inline(__always)
    static func hash(_ key: UInt64) -> UInt64 {
        var x = key &+ 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return (x ^ (x >> 31)) % modulus
    }

    /// Feeds one request.
    public mutating func record(key: UInt64, size: UInt64) {
        requestsSeen += 1
        let hash = Self.hash(key)
        guard hash < threshold else { return }
        requestsSampled += 1
        let slot: Int
        if let known = slots[key] {
            slot = Int(known)
        } else {
            slot = freeSlots.popLast().map(Int.init) ?? slots.count
            index.ensureSlots(slot + 1)
            slots[key] = Int32(slot)
            if case .fixedSize = mode { byHash.push(SampledKey(hash: hash, key: key)) }
        }
        let weight = unit == .bytes ? size : 1
        let distance = index.access(slot, weight: weight)
        histogram.record(distance: distance.map { UInt64((Double($0) / rate).rounded()) })
        if case .fixedSize(let maximum) = mode, slots.count > maximum { lowerThreshold() }
    }

    /// Drops the keys with the largest hashes until the sample is back within its size, or the
    /// rate at its smallest (``smallestRate``): keys hashing to 0 stay, past `maximumKeys` if they
    /// are more (a threshold of 0 sampled nothing ever after, and scaled every count to 0).
    private mutating func lowerThreshold() {
        guard case .fixedSize(let maximum) = mode else { return }
        let oldRate = rate
        while slots.count > maximum, let largest = byHash.max {
            guard largest.hash > 0 else {
                threshold = 1
                break
            }
            threshold = largest.hash
            while let top = byHash.max, top.hash >= threshold {
                _ = byHash.popMax()
                if let slot = slots.removeValue(forKey: top.key) {
                    index.remove(Int(slot))
                    freeSlots.append(slot)
                }
            }
        }
        // Earlier counts were sampled at a higher rate: weigh them as if sampled at the new one.
        histogram.scale(by: rate / oldRate)
    }

    /// The estimated hit-ratio curve so far.
    public func curve() -> MissRatioCurve {
        var adjusted = histogram
        if case .fixedRate = mode {
            let expected = Double(requestsSeen) * rate
            adjusted.adjustSmallest(by: expected - adjusted.total)
        }
        return adjusted.curve(unit: unit)
    }

    /// Runs SHARDS over a whole trace. Bucket widths follow ``ExactLRUCurve`` so the two compare point by point.
    public static func compute(_ trace: Trace, unit: CapacityUnit, mode: Mode) -> MissRatioCurve {
        let width: UInt64 = unit == .objects ? 1 : max(1, (trace.footprintBytes + 65_535) / 65_536)
        var sampler = SHARDS(mode: mode, unit: unit, bucketWidth: width)
        let byteMode = unit == .bytes && trace.hasSizes
        for object in trace.requests {
            sampler.record(key: UInt64(object), size: byteMode ? UInt64(trace.objectSizes[Int(object)]) : 1)
        }
        return sampler.curve()
    }
}

/// A tracked key, ordered by its sampling hash.
struct SampledKey: Comparable, Sendable {
    let hash: UInt64
    let key: UInt64

    static func < (lhs: SampledKey, rhs: SampledKey) -> Bool { lhs.hash < rhs.hash }
}
