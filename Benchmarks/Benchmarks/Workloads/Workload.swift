import Foundation
import TierCache

/// Inputs shared by the benchmarks (and PolicyInstructions), built once outside the timed regions.
public enum Workload {
    /// The value the memory policy workloads store: 100 bytes.
    public static let policyValue = [UInt8](repeating: 7, count: 100)
    /// How many entries the memory policy workloads' evicting tier holds: a tenth of the keys.
    public static let fittingEntries = 10_000
    /// A `MemoryTier` capacity for about ``fittingEntries`` entries of ``policyValue``: each costs
    /// its value, its key (about 54 bytes) and `MemoryTier.perEntryOverhead`.
    public static let fittingCapacity = fittingEntries * (policyValue.count + 54 + MemoryTier.perEntryOverhead)
    public static let keyCount = 100_000

    /// Zipf(0.99)-distributed key indices: a few keys hot, a long tail cold.
    public static let accesses: [Int] = {
        var cumulative = [Double]()
        cumulative.reserveCapacity(keyCount)
        var total = 0.0
        for rank in 1...keyCount {
            total += 1 / pow(Double(rank), 0.99)
            cumulative.append(total)
        }
        var state: UInt64 = 42
        return (0..<keyCount).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let target = Double(state >> 11) / Double(1 << 53) * total
            var low = 0, high = keyCount - 1
            while low < high {
                let mid = (low + high) / 2
                if cumulative[mid] < target { low = mid + 1 } else { high = mid }
            }
            return low
        }
    }()

    public static let keyStrings: [String] = (0..<keyCount).map {
        "GET https://api.example.com/v1/items/\($0)?fields=all"
    }

    /// A JSON document of about `size` bytes: varied words and numbers, compressing 3-5x like API responses.
    public static func json(size: Int, seed: Int) -> [UInt8] {
        let words = [
            "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima",
        ]
        var state = UInt64(truncatingIfNeeded: seed) &+ 0x9E37_79B9
        var text = "{\"id\":\(seed),\"items\":["
        while text.utf8.count < size - 40 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let word = words[Int(state >> 60) % words.count]
            text +=
                "{\"name\":\"\(word)-\(state % 100_000)\",\"price\":\(state % 9_973).\(state % 97),\"ok\":\(state & 1 == 0)},"
        }
        text += "{}]}"
        return Array(text.utf8.prefix(size))
    }
}
