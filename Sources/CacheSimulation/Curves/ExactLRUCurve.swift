/// The exact LRU hit-ratio curve of a trace in one pass (Mattson et al., 1970).
///
/// LRU is a stack algorithm: a request hits in every cache larger than its stack distance (the
/// number, or bytes, of distinct objects used since the object's previous request, itself included).
/// One pass with an order-statistics tree (`RecencyIndex`) gives every distance in O(log m), so
/// the curve for all capacities costs about as much as one replay at a single capacity.
///
/// In object mode the curve is exact at every capacity. In byte mode distances are grouped into
/// buckets of `footprint / 65,536` bytes, and the curve is exact at every bucket boundary for
/// capacities at least as large as the trace's largest object. Below that the curve counts an
/// object larger than the capacity as occupying it, where an LRU cache never admits it (and
/// evicts nothing for it): the curve's hit ratio there is a lower bound of LRU's. Replay
/// (`Simulator`) at such capacities for LRU's own figure.
public enum ExactLRUCurve {
    /// LRU's curve over `trace` in one pass; `progress` hears the completed share (0...1).
    public static func compute(
        _ trace: Trace, unit: CapacityUnit, progress: ((Double) -> Void)? = nil
    ) -> MissRatioCurve {
        let width: UInt64 = unit == .objects ? 1 : max(1, (trace.footprintBytes + 65_535) / 65_536)
        let footprint = unit == .objects ? UInt64(trace.objectCount) : trace.footprintBytes
        let histogram = DistanceHistogram(layout: .linear(width: width), expectedMaximum: footprint)
        if unit == .bytes && trace.hasSizes {
            return compute(
                trace, unit: unit, histogram: histogram, index: RecencyIndex<UInt64>(slots: trace.objectCount),
                progress: progress)
        }
        return compute(
            trace, unit: unit, histogram: histogram, index: RecencyIndex<UInt32>(slots: trace.objectCount),
            progress: progress)
    }

    private static func compute<Weight>(
        _ trace: Trace, unit: CapacityUnit, histogram: DistanceHistogram, index: RecencyIndex<Weight>,
        progress: ((Double) -> Void)?
    ) -> MissRatioCurve {
        var histogram = histogram
        var index = index
        let byteMode = unit == .bytes && trace.hasSizes
        let chunk = max(1, trace.requestCount / 100)
        trace.requests.withUnsafeBufferPointer { requests in
            trace.objectSizes.withUnsafeBufferPointer { sizes in
                var start = 0
                while start < requests.count {
                    let end = min(start + chunk, requests.count)
                    for position in start..<end {
                        let object = Int(requests[position])
                        let weight: Weight = byteMode ? Weight(sizes[object]) : 1
                        histogram.record(distance: index.access(object, weight: weight))
                    }
                    progress?(Double(end) / Double(requests.count))
                    start = end
                }
            }
        }
        return histogram.curve(unit: unit)
    }
}
