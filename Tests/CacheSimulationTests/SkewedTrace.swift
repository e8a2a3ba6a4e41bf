@testable import CacheSimulation

/// A deterministic trace with skewed popularity for curve tests: keys drawn as `uniform² × keys`
/// from a 64-bit LCG seeded with `seed`, sized `100 + key % 13 × 50` bytes when `sized`.
func skewedTrace(count: Int, keys: UInt64, sized: Bool, seed: UInt64) throws -> Trace {
    var state = seed
    let requests = (0..<count).map { _ -> TraceRequest in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let uniform = Double(state >> 11) / Double(1 << 53)
        let key = UInt64(uniform * uniform * Double(keys))
        return TraceRequest(key: key, size: sized ? UInt32(100 + key % 13 * 50) : 1)
    }
    return try Trace(name: "skewed", requests: requests, hasSizes: sized)
}
