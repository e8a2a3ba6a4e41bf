/// Hit ratio as a function of cache size, as a step function through measured points.
///
/// The curve of an LRU cache comes from stack distances (``ExactLRUCurve``, ``SHARDS``); the curves of
/// other policies come from replays at a grid of capacities (``init(results:)``). Reading between
/// points gives the value of the nearest point at or below the capacity, never an interpolation.
public struct MissRatioCurve: Sendable, Codable, Hashable {
    /// One measured point of the curve.
    public struct Point: Sendable, Codable, Hashable {
        /// The capacity, in the curve's unit.
        public var capacity: UInt64
        /// The hit ratio at that capacity, 0...1.
        public var hitRatio: Double
        /// The miss ratio at that capacity, 0...1.
        public var missRatio: Double { 1 - hitRatio }

        /// A point of the curve.
        public init(capacity: UInt64, hitRatio: Double) {
            self.capacity = capacity
            self.hitRatio = hitRatio
        }
    }

    /// Whether capacities count objects or bytes.
    public var unit: CapacityUnit
    /// Points in increasing capacity (and non-decreasing hit ratio for stack algorithms): points
    /// set in any order are sorted, as the reading between them, the knee and the tuner's
    /// refinement assume (a decreasing pair trapped the knee's arithmetic).
    public var points: [Point] {
        didSet { points = Self.sorted(points) }
    }

    /// A curve through `points`, in any order (they are sorted by capacity).
    public init(unit: CapacityUnit, points: [Point]) {
        self.unit = unit
        self.points = Self.sorted(points)
    }

    private enum CodingKeys: String, CodingKey {
        case unit, points
    }

    /// Decodes a curve; its points are sorted by capacity, whatever order the document gives.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            unit: try container.decode(CapacityUnit.self, forKey: .unit),
            points: try container.decode([Point].self, forKey: .points))
    }

    private static func sorted(_ points: [Point]) -> [Point] {
        let isSorted = zip(points, points.dropFirst()).allSatisfy { $0.capacity <= $1.capacity }
        return isSorted ? points : points.sorted { $0.capacity < $1.capacity }
    }

    /// A curve through replay results of one policy.
    public init(results: [SimulationResult]) {
        self.init(
            unit: results.first?.unit ?? .objects,
            points: results.map { Point(capacity: $0.capacity, hitRatio: $0.hitRatio) })
    }

    /// The hit ratio of a cache of `capacity`: the value at the largest point not above it.
    public func hitRatio(at capacity: UInt64) -> Double {
        var low = 0
        var high = points.count
        while low < high {
            let middle = (low + high) / 2
            if points[middle].capacity <= capacity { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? 0 : points[low - 1].hitRatio
    }

    /// The smallest measured capacity whose hit ratio reaches `target` (0...1), if any does.
    public func smallestCapacity(reaching target: Double) -> UInt64? {
        points.first { $0.hitRatio >= target }?.capacity
    }

    /// The knee: the point furthest above the straight line from the first point to the last, with
    /// both axes normalised (the "Kneedle" criterion). Past it, more capacity buys little.
    public var knee: Point? {
        guard let first = points.first, let last = points.last, points.count >= 3,
            last.capacity > first.capacity, last.hitRatio > first.hitRatio
        else { return points.last }
        let width = Double(last.capacity - first.capacity)
        let height = last.hitRatio - first.hitRatio
        return points.max { lhs, rhs in
            let l = (lhs.hitRatio - first.hitRatio) / height - Double(lhs.capacity - first.capacity) / width
            let r = (rhs.hitRatio - first.hitRatio) / height - Double(rhs.capacity - first.capacity) / width
            return l < r
        }
    }

    /// The mean absolute difference in hit ratio from `reference`, evaluated at `reference`'s points
    /// (how SHARDS' error is reported).
    public func meanAbsoluteError(against reference: MissRatioCurve) -> Double {
        guard !reference.points.isEmpty else { return 0 }
        let total = reference.points.reduce(0.0) { $0 + abs(hitRatio(at: $1.capacity) - $1.hitRatio) }
        return total / Double(reference.points.count)
    }

    /// The curve evaluated at the given capacities (for reports and comparisons on a common grid).
    public func sampled(at capacities: [UInt64]) -> MissRatioCurve {
        MissRatioCurve(unit: unit, points: capacities.map { Point(capacity: $0, hitRatio: hitRatio(at: $0)) })
    }

    /// At most about `maximumPoints` points, log-spaced between the first and last capacity, plus the
    /// `kept` points (crossings, knees) exactly: a curve small enough for a report that still
    /// reads the same at every kept capacity. Curves already small enough are returned unchanged.
    public func thinned(maximumPoints: Int, keeping kept: [Point] = []) -> MissRatioCurve {
        guard points.count > maximumPoints, let first = points.first, let last = points.last, maximumPoints >= 2 else {
            return self
        }
        let grid = CapacityTuner.grid(footprint: last.capacity, points: maximumPoints).filter { $0 >= first.capacity }
        var byCapacity: [UInt64: Point] = [:]
        for point in sampled(at: grid).points + [first, last] + kept { byCapacity[point.capacity] = point }
        return MissRatioCurve(unit: unit, points: Array(byCapacity.values))
    }
}
