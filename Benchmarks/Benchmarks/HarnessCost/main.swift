import Foundation
import TierCache
import TierCacheBenchmarking

// What TierCacheBenchmarking's harness costs per request, so that its figures can be trusted:
// in interleaved rounds on the same requests (Zipf 0.99 over 10,000 prefilled keys, reads only),
//   - the harness driving a tier that does nothing (returns one shared entry) against a bare loop
//     calling that tier through the protocol, as the harness must: the harness's own nanoseconds
//     per request;
//   - the harness driving a MemoryTier against a bare loop over the same MemoryTier (what an
//     ordo-one benchmark closure does): the ratio says how far a harness figure is from the tier's.
// Usage: HarnessCost [rounds] [requests per round]
let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let rounds = arguments.first ?? 5
let length = arguments.dropFirst().first ?? 2_000_000

/// A tier that does nothing: every read hits one shared entry.
final class NoOpTier: LocalCacheTier {
    let name = "no-op"
    let medium = TierMedium.memory
    private let shared = CacheEntry(value: [1], storedAt: Date())
    func entry(forKey key: CacheKey) -> CacheEntry? { shared }
    func store(_ entry: CacheEntry, forKey key: CacheKey) -> StoreOutcome { .stored }
    func removeEntry(forKey key: CacheKey) {}
    func removeAll() {}
    func usage() -> TierUsage { TierUsage(bytes: 0, entries: 0, capacity: 1 << 30, maxEntryBytes: 1 << 25) }
    func statistics() -> TierStatistics { TierStatistics() }
}

let workload = Workload(
    .synthetic(keys: 10_000, distribution: .zipf(skew: 0.99), sizes: .fixed(1_024)),
    mix: OperationMix(reads: 1, readThrough: false))
var plan = BenchmarkPlan(workload: workload, length: .requests(length), baselines: false, rounds: 1)
plan.prefill = true
let runner = try BenchmarkRunner(plan: plan)
let requests = try workload.requests(length: length)
// The bare loops look keys up with strings of their own, as the harness and an application do:
// a lookup with the very string the tier stored would compare keys by pointer and skip the bytes.
let keys = try requests.keys()
let storedKeys = try requests.keys()
let noOp = NoOpTier()
let memory = try MemoryTier(capacity: 64 << 20)
for object in requests.sizes.indices {
    _ = memory.store(
        CacheEntry(value: requests.value(for: UInt32(object)), storedAt: Date()), forKey: storedKeys[object])
}

/// Requests per second of a plain loop reading every request's key with `read`: through the
/// protocol (`any LocalCacheTier`, as the harness and TieredCache call a tier), or on the concrete
/// type (as an ordo-one benchmark closure calls MemoryTier, which the optimizer can inline).
func bareLoop(_ read: (CacheKey) throws -> Bool) rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    var found = 0
    for object in requests.objects where try read(keys[Int(object)]) { found += 1 }
    guard found == requests.objects.count else { fatalError("a prefilled read missed") }
    let elapsed = clock.now - start
    return Double(length) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

let anyNoOp: any LocalCacheTier = noOp

func harness(_ subject: BenchmarkSubject) async -> Double {
    await runner.run([subject]).results.first?.throughput ?? 0
}

var figures: [String: [Double]] = [:]
for round in 1...rounds {
    figures["bare no-op", default: []].append(try bareLoop { try anyNoOp.entry(forKey: $0) != nil })
    figures["harness no-op", default: []].append(await harness(.localTier("no-op") { _ in noOp }))
    figures["bare memory", default: []].append(bareLoop { memory.entry(forKey: $0) != nil })
    figures["harness memory", default: []].append(await harness(.localTier("memory") { _ in memory }))
    print("round \(round)/\(rounds) done")
}
let medians = figures.mapValues { values in values.sorted()[values.count / 2] }
func median(_ name: String) -> Double { medians[name] ?? 0 }
for name in ["bare no-op", "harness no-op", "bare memory", "harness memory"] {
    print("\(name): \(Int(median(name))) requests/s (median of \(rounds))")
}
let harnessCost = 1e9 / median("harness no-op") - 1e9 / median("bare no-op")
print(String(format: "harness cost: %.1f ns per request", harnessCost))
print(
    String(
        format: "memory tier get hit, harness / bare loop: %.3f", median("harness memory") / median("bare memory")))
