import Foundation
import TierCache
import Workloads

// The memory policy benchmarks' workloads (PolicyBenchmarks.swift) as a plain loop, for counting
// instructions per operation under callgrind (`policy-instructions.sh`): a count that another
// process on the machine cannot disturb, unlike a throughput sample.
//   PolicyInstructions get|set|set-making-key|get-or-set POLICY OPERATIONS
// `set-making-key` makes the tier's `CacheKey` from the string at each request (the minimal LRU
// takes the same string, as in `set`).
// POLICY is a MemoryTier policy (lru, fifo, clock, sieve, s3fifo, arc, twoq, lirs, wtinylfu) or
// `minimal`, the minimal unsynchronized LRU the tier is measured against.

let arguments = CommandLine.arguments
let policyNames = MemoryTier.EvictionPolicy.allCases.map { $0.rawValue.lowercased() }
guard arguments.count == 4, let operations = Int(arguments[3]), operations >= 0,
    ["get", "set", "set-making-key", "get-or-set"].contains(arguments[1]),
    arguments[2] == "minimal" || policyNames.contains(arguments[2])
else {
    print(
        "usage: PolicyInstructions get|set|set-making-key|get-or-set \((policyNames + ["minimal"]).joined(separator: "|")) OPERATIONS"
    )
    exit(2)
}

// The benchmarks' Zipf(0.99) accesses over 100,000 keys.
let keyCount = Workload.keyCount
let accesses = Workload.accesses
let keys = Workload.keyStrings.compactMap { try? CacheKey($0) }
let entry = CacheEntry(value: Workload.policyValue, storedAt: Date())

// get and set: every key fits and is stored first; get-or-set: about 10,000 of the keys fit.
let fits = arguments[1] == "get-or-set"
var hits = 0
if arguments[2] == "minimal" {
    let lru = MinimalLRU(capacity: fits ? Workload.fittingEntries : keyCount)
    if !fits { for key in Workload.keyStrings { lru.set(key, Workload.policyValue) } }
    for position in 0..<operations {
        let key = Workload.keyStrings[accesses[position % keyCount]]
        switch arguments[1] {
        case "get": if lru.get(key) != nil { hits += 1 }
        case "set", "set-making-key": lru.set(key, Workload.policyValue)
        default: if lru.get(key) == nil { lru.set(key, Workload.policyValue) } else { hits += 1 }
        }
    }
} else {
    let policy = MemoryTier.EvictionPolicy.allCases[policyNames.firstIndex(of: arguments[2]) ?? 0]
    let tier = try MemoryTier(capacity: fits ? Workload.fittingCapacity : 256 << 20, policy: policy)
    if !fits { for key in keys { _ = tier.store(entry, forKey: key) } }
    for position in 0..<operations {
        let key = keys[accesses[position % keyCount]]
        switch arguments[1] {
        case "get": if tier.entry(forKey: key) != nil { hits += 1 }
        case "set": _ = tier.store(entry, forKey: key)
        case "set-making-key":
            if let made = try? CacheKey(Workload.keyStrings[accesses[position % keyCount]]) {
                _ = tier.store(entry, forKey: made)
            }
        default: if tier.entry(forKey: key) == nil { _ = tier.store(entry, forKey: key) } else { hits += 1 }
        }
    }
}
print("\(arguments[1]) \(arguments[2]): \(operations) operations, \(hits) hits")
