import Foundation
import TierCache

// The memory policy benchmarks' workloads (PolicyBenchmarks.swift) as a plain loop, for counting
// instructions per operation under callgrind (`policy-instructions.sh`): a count that another
// process on the machine cannot disturb, unlike a throughput sample.
//   PolicyInstructions get|set|get-or-set lru|s3-fifo|w-tinylfu OPERATIONS

let arguments = CommandLine.arguments
guard arguments.count == 4, let operations = Int(arguments[3]), operations >= 0 else {
    print("usage: PolicyInstructions get|set|get-or-set lru|s3-fifo|w-tinylfu OPERATIONS")
    exit(2)
}
let policies: [String: MemoryTier.EvictionPolicy] = ["lru": .lru, "s3-fifo": .s3fifo, "w-tinylfu": .wTinyLFU]
guard let policy = policies[arguments[2]], ["get", "set", "get-or-set"].contains(arguments[1]) else {
    print("unknown workload \(arguments[1]) or policy \(arguments[2])")
    exit(2)
}

// Zipf(0.99) over 100,000 keys, the generator and seed of the benchmarks' `Workload`.
let keyCount = 100_000
let accesses: [Int] = {
    var cumulative = [Double]()
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
let keys = (0..<keyCount).compactMap { try? CacheKey("GET https://api.example.com/v1/items/\($0)?fields=all") }
let entry = CacheEntry(value: [UInt8](repeating: 7, count: 100), storedAt: Date())

// get and set: every key fits and is stored first; get-or-set: about 10,000 of the keys fit.
let fitting = 10_000 * (100 + 54 + MemoryTier.perEntryOverhead)
let tier = try MemoryTier(capacity: arguments[1] == "get-or-set" ? fitting : 256 << 20, policy: policy)
if arguments[1] != "get-or-set" {
    for key in keys { _ = tier.store(entry, forKey: key) }
}
var hits = 0
for position in 0..<operations {
    let key = keys[accesses[position % keyCount]]
    switch arguments[1] {
    case "get": if tier.entry(forKey: key) != nil { hits += 1 }
    case "set": _ = tier.store(entry, forKey: key)
    default: if tier.entry(forKey: key) == nil { _ = tier.store(entry, forKey: key) } else { hits += 1 }
    }
}
print("\(arguments[1]) \(arguments[2]): \(operations) operations, \(hits) hits")
