/// Counts of stack distances, from which a miss-ratio curve follows.
///
/// Two bucket layouts: `linear` (fixed width; width 1 is exact, and curves are exact at every bucket
/// boundary) for offline analysis where the footprint is known, and `logarithmic` (64 buckets per
/// power of two, about 1.1% relative resolution, at most 4,096 buckets) for the live sampler whose
/// footprint is not known in advance.
struct DistanceHistogram: Sendable {
    enum Layout: Sendable {
        case linear(width: UInt64)
        case logarithmic
    }

    private static let subBuckets = 64

    let layout: Layout
    private(set) var counts: [Double] = []
    /// References that were never seen before (infinite distance).
    private(set) var coldMisses: Double = 0
    private(set) var total: Double = 0

    /// - Parameter expectedMaximum: the largest distance expected, to size the buckets once.
    init(layout: Layout, expectedMaximum: UInt64? = nil) {
        self.layout = layout
        if let expectedMaximum, case .linear = layout {
            counts = [Double](repeating: 0, count: index(of: expectedMaximum) + 2)
        }
    }

    @inline(__always)
    mutating func record(distance: UInt64?, weight: Double = 1) {
        total += weight
        guard let distance else {
            coldMisses += weight
            return
        }
        let bucket = index(of: distance)
        if bucket >= counts.count { counts += [Double](repeating: 0, count: bucket + 1 - counts.count) }
        counts[bucket] += weight
    }

    /// Adds `weight` references at the smallest distance (SHARDS' sample-count adjustment), which
    /// may be negative: a sample that took more requests than its rate expects counts fewer hits
    /// at every capacity. The count it leaves may be below 0 (``curve(unit:scale:)`` clamps the
    /// ratios); clamping it instead, while the total fell, made every hit ratio too high, up to 1.
    mutating func adjustSmallest(by weight: Double) {
        if counts.isEmpty { counts = [0] }
        counts[0] += weight
        total = max(0, total + weight)
    }

    /// Multiplies every count by `factor` (fixed-size SHARDS after it lowers its sampling rate).
    mutating func scale(by factor: Double) {
        for index in counts.indices { counts[index] *= factor }
        coldMisses *= factor
        total *= factor
    }

    @inline(__always)
    func index(of distance: UInt64) -> Int {
        switch layout {
        case .linear(let width):
            return Int((distance + width - 1) / width)
        case .logarithmic:
            if distance < UInt64(Self.subBuckets) { return Int(distance) }
            let magnitude = 63 - distance.leadingZeroBitCount  // ≥ 6
            let shift = magnitude - 5
            let mantissa = Int(distance >> UInt64(shift))  // 32...63
            return (magnitude - 5) * 32 + mantissa
        }
    }

    /// The largest distance that falls into bucket `index`.
    func upperBound(ofBucket index: Int) -> UInt64 {
        switch layout {
        case .linear(let width):
            return UInt64(index) * width
        case .logarithmic:
            if index < Self.subBuckets { return UInt64(index) }
            let shift = index / 32 - 1
            let mantissa = UInt64(index % 32 + 32)
            return ((mantissa + 1) << UInt64(shift)) - 1
        }
    }

    /// The hit-ratio curve: for each non-empty bucket, the capacity at its upper bound and the
    /// fraction of references whose distance is within it (between 0 and 1: SHARDS' adjustment
    /// may leave the smallest bucket below 0, lowering every later point, and is no point itself).
    func curve(unit: CapacityUnit, scale: Double = 1) -> MissRatioCurve {
        var points: [MissRatioCurve.Point] = []
        var cumulative = 0.0
        for (index, count) in counts.enumerated() where count != 0 {
            cumulative += count
            let capacity = UInt64((Double(upperBound(ofBucket: index)) * scale).rounded())
            // No request has distance 0: what bucket 0 holds is SHARDS' adjustment, which counts
            // toward the first real capacity's point, not a point of its own (hits at capacity 0).
            guard count > 0, capacity > 0 else { continue }
            points.append(.init(capacity: capacity, hitRatio: total > 0 ? min(1, max(0, cumulative / total)) : 0))
        }
        return MissRatioCurve(unit: unit, points: points)
    }
}
