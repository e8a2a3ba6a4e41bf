import CacheSimulation
import Foundation
import TierCache

/// The requests `tiercache bench` sends: a synthetic Zipf workload or the requests of a trace.
struct BenchWorkload: Sendable {
    /// Object ids in request order, and each object's value size.
    let requests: [UInt32]
    let sizes: [UInt32]
    let description: String

    /// Zipf-distributed keys; value sizes drawn once per key, uniformly between the bounds.
    static func zipf(
        keys: Int, skew: Double, requests count: Int, sizes: ClosedRange<Int>, seed: UInt64
    ) -> BenchWorkload {
        var generator = ZipfGenerator(count: keys, skew: skew, seed: seed)
        var random = seed ^ 0x5DEE_CE66
        let sizes = (0..<keys).map { _ -> UInt32 in
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt32(sizes.lowerBound + Int((random >> 33) % UInt64(sizes.count)))
        }
        let requests = (0..<count).map { _ in UInt32(generator.next()) }
        let range =
            sizes.isEmpty
            ? ""
            : "\(ByteCount.format(Int(clamping: sizes.min() ?? 0)))–\(ByteCount.format(Int(clamping: sizes.max() ?? 0)))"
        return BenchWorkload(
            requests: requests, sizes: sizes, description: "Zipf \(skew) over \(keys) keys, values \(range)")
    }

    /// A trace's requests; traces without sizes get `defaultSize`-byte values.
    static func trace(_ trace: Trace, defaultSize: Int) -> BenchWorkload {
        let sizes =
            trace.hasSizes ? trace.objectSizes : [UInt32](repeating: UInt32(defaultSize), count: trace.objectCount)
        return BenchWorkload(
            requests: trace.requests, sizes: sizes, description: "trace \(trace.name) (\(trace.requestCount) requests)")
    }

    /// A compressible, JSON-like value of the object's size, cut from a shared pattern (cheap to make).
    static let pattern: [UInt8] = {
        var text = ""
        var index = 0
        while text.utf8.count < 1 << 20 {
            text +=
                "{\"id\":\(index),\"name\":\"item \(index)\",\"price\":\(index % 997).\(index % 100),\"tags\":[\"t\(index % 31)\",\"t\(index % 17)\"]},"
            index += 1
        }
        return Array(text.utf8)
    }()

    func value(for object: UInt32) -> [UInt8] {
        let size = min(Int(sizes[Int(object)]), Self.pattern.count)
        let offset = Int(object &* 2_654_435_761 % UInt32(Self.pattern.count - size + 1))
        return Array(Self.pattern[offset..<offset + size])
    }
}
