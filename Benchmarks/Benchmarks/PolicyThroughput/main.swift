import Foundation
import Synchronization
import TierCache
import Workloads

// MemoryTier's throughput under each eviction policy over LRU's, on the memory policy benchmarks'
// workloads (PolicyBenchmarks.swift), measured in interleaved rounds: every round times each
// policy (and the minimal unsynchronized LRU baseline) once, in an order that alternates, and the
// figure is the median over rounds of each policy's rate divided by the tier's LRU in the same
// round. The last lines of each workload are the tier's LRU over the minimal LRU, and over the
// minimal LRU behind a lock.
//
// Why beside the benchmarks: they time one policy after another, each for a few seconds, and on
// a shared virtual machine the speed of the whole machine drifts by more than the differences
// between policies (LRU's median get-hit rate moved from 4.7M/s to 3.7M/s between two runs of
// the same code). Rounds a fraction of a second long, compared within the round, cancel that.
//   PolicyThroughput [rounds] [operations per round] [get-hit|set|set-making-key|get-or-set] [policy...]
//   (defaults 15, 1,000,000, every workload and every policy; LRU always runs, as the baseline of
//   the ratios). `set making key` is `set` with the tier's `CacheKey` made from the string at each
//   request, as an app that builds its key per request does: a key hashes its text when it is
//   made, so this is the tier paying for that hash, where `set` reuses keys made once.

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let names = CommandLine.arguments.dropFirst().filter { Int($0) == nil }
let workloadNames = ["get-hit", "set", "set-making-key", "get-or-set"]
let onlyWorkloads = names.filter { workloadNames.contains($0) }
let workloads = ["get hit", "set", "set making key", "get or set"].filter { name in
    onlyWorkloads.isEmpty || onlyWorkloads.contains(name.replacingOccurrences(of: " ", with: "-"))
}
let rounds = arguments.first ?? 15
let operations = arguments.dropFirst().first ?? 1_000_000
let accesses = Workload.accesses
let strings = Workload.keyStrings
let keys = strings.compactMap { try? CacheKey($0) }
let entry = CacheEntry(value: Workload.policyValue, storedAt: Date())
let onlyPolicies = names.filter { !workloadNames.contains($0) }.map { $0.lowercased() }
let policies: [(name: String, policy: MemoryTier.EvictionPolicy)] = MemoryTier.EvictionPolicy.allCases.map {
    (String(describing: $0).dropFirst().description, $0)
}.filter { $0.policy == .lru || onlyPolicies.isEmpty || onlyPolicies.contains($0.name.lowercased()) }

/// The rate of one timed pass of `operations` requests, in requests per second. The loop is the
/// caller's own (one closure call per pass, not per request): a per-request call would add the
/// same cost to every policy and pull their ratios towards 1.
func timed(_ pass: () -> Int) -> Double {
    let start = ContinuousClock.now
    let done = pass()
    return Double(done) / ((ContinuousClock.now - start) / .seconds(1))
}

struct Contender {
    let name: String
    let run: () -> Double
}

func contenders(for workload: String) throws -> [Contender] {
    var contenders: [Contender] = []
    let count = accesses.count
    for (name, policy) in policies {
        let fitting = workload == "get or set"
        let tier = try MemoryTier(capacity: fitting ? Workload.fittingCapacity : 256 << 20, policy: policy)
        if !fitting { for key in keys { _ = tier.store(entry, forKey: key) } }
        let run: () -> Double
        switch workload {
        case "get hit":
            run = { [keys, accesses] in
                timed {
                    var hits = 0
                    for position in 0..<operations where tier.entry(forKey: keys[accesses[position % count]]) != nil {
                        hits += 1
                    }
                    return hits
                }
            }
        case "set":
            run = { [keys, accesses, entry] in
                timed {
                    var stored = 0
                    for position in 0..<operations
                    where tier.store(entry, forKey: keys[accesses[position % count]]).isStored { stored += 1 }
                    return stored
                }
            }
        case "set making key":
            run = { [strings, accesses, entry] in
                timed {
                    var stored = 0
                    for position in 0..<operations {
                        guard let key = try? CacheKey(strings[accesses[position % count]]) else { continue }
                        if tier.store(entry, forKey: key).isStored { stored += 1 }
                    }
                    return stored
                }
            }
        default:
            run = { [keys, accesses, entry] in
                timed {
                    for position in 0..<operations {
                        let key = keys[accesses[position % count]]
                        if tier.entry(forKey: key) == nil { _ = tier.store(entry, forKey: key) }
                    }
                    return operations
                }
            }
        }
        contenders.append(Contender(name: name, run: run))
    }
    // The minimal unsynchronized LRU (a dictionary and a linked list, no lock, no counters), on
    // the same requests: the baseline the memory tier's LRU is held to. Then the same behind a
    // `Mutex`, taken once a request as the tier takes its lock: the share of the gap that is
    // the lock's.
    contenders.append(baseline(named: "minimal LRU", for: workload, guardedBy: Unguarded()))
    contenders.append(baseline(named: "locked LRU", for: workload, guardedBy: Guarded()))
    return contenders
}

/// How a baseline's caller runs each request: directly, or holding a lock.
protocol Guarding: Sendable {
    func run(_ request: () -> Bool) -> Bool
}

struct Unguarded: Guarding {
    @inline(__always) func run(_ request: () -> Bool) -> Bool { request() }
}

final class Guarded: Guarding {
    private let mutex = Mutex(())
    @inline(__always) func run(_ request: () -> Bool) -> Bool { mutex.withLock { _ in request() } }
}

/// The minimal LRU on `workload`'s requests, each run through `guarding` (generic, so that each
/// kind of guard is compiled into its own loop).
func baseline<Guard: Guarding>(named name: String, for workload: String, guardedBy guarding: Guard) -> Contender {
    let count = accesses.count
    let value = Workload.policyValue
    switch workload {
    case "get hit":
        let lru = MinimalLRU(capacity: strings.count)
        for key in strings { lru.set(key, value) }
        return Contender(name: name) { [strings, accesses] in
            timed {
                var hits = 0
                for position in 0..<operations
                where guarding.run({ lru.get(strings[accesses[position % count]]) != nil }) { hits += 1 }
                return hits
            }
        }
    case "set", "set making key":
        // Every key stored first, as in the tier: the same table size, the same overwrites.
        let lru = MinimalLRU(capacity: strings.count)
        for key in strings { lru.set(key, value) }
        return Contender(name: name) { [strings, accesses] in
            timed {
                for position in 0..<operations {
                    _ = guarding.run {
                        lru.set(strings[accesses[position % count]], value)
                        return true
                    }
                }
                return operations
            }
        }
    default:
        let lru = MinimalLRU(capacity: Workload.fittingEntries)
        return Contender(name: name) { [strings, accesses] in
            timed {
                for position in 0..<operations {
                    let key = strings[accesses[position % count]]
                    _ = guarding.run {
                        if lru.get(key) == nil { lru.set(key, value) }
                        return true
                    }
                }
                return operations
            }
        }
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

print("workload     policy        median rate   ratio to LRU (median of rounds, min-max)")
for workload in workloads {
    let contenders = try contenders(for: workload)
    var rates = [[Double]](repeating: [], count: contenders.count)
    for round in 0..<rounds {
        let order = round % 2 == 0 ? Array(contenders.indices) : contenders.indices.reversed()
        for index in order { rates[index].append(contenders[index].run()) }
    }
    for (index, contender) in contenders.enumerated() {
        let ratios = zip(rates[index], rates[0]).map { $0 / $1 }
        let figures = String(
            format: "%8.2fM/s   %5.2fx (%.2f-%.2f)", median(rates[index]) / 1e6, median(ratios), ratios.min() ?? 0,
            ratios.max() ?? 0)
        print(
            workload.padding(toLength: 13, withPad: " ", startingAt: 0)
                + contender.name.padding(toLength: 12, withPad: " ", startingAt: 0) + figures)
    }
    // The two baselines are the last two contenders.
    for (offset, baselineName) in ["minimal", "locked"].enumerated() {
        let ratios = zip(rates[0], rates[rates.count - 2 + offset]).map { $0 / $1 }
        print(
            workload.padding(toLength: 13, withPad: " ", startingAt: 0)
                + String(
                    format: "tier LRU ÷ \(baselineName) LRU: %.2fx (%.2f-%.2f)", median(ratios), ratios.min() ?? 0,
                    ratios.max() ?? 0))
    }
}
