import Foundation
import TierCache
import Workloads

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

// The benchmarks' Zipf(0.99) accesses over 100,000 keys.
let keyCount = Workload.keyCount
let accesses = Workload.accesses
let keys = Workload.keyStrings.compactMap { try? CacheKey($0) }
let entry = CacheEntry(value: Workload.policyValue, storedAt: Date())

// get and set: every key fits and is stored first; get-or-set: about 10,000 of the keys fit.
let tier = try MemoryTier(capacity: arguments[1] == "get-or-set" ? Workload.fittingCapacity : 256 << 20, policy: policy)
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
