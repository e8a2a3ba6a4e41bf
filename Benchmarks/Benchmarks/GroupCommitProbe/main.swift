import Foundation
import Synchronization
import TierCache
import TierCacheLMDB
import Workloads

// LMDBTier's durable stores from many threads, outside the benchmark harness (whose set-up of
// every other benchmark fills a profile of this one): for `perf record` and `strace` of the group
// commit alone. Fills the tier with the keys first (so that stores overwrite, as in the
// "Disk durable set" benchmarks), then stores for `--seconds` and prints the time and the
// process's CPU time per store.
//
//   GroupCommitProbe [--writers N] [--seconds S] [--keys K]

let arguments = CommandLine.arguments
func option(_ name: String, default value: Int) -> Int {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil }
        ?? value
}
let writers = option("--writers", default: 16)
let seconds = option("--seconds", default: 4)
let keyCount = option("--keys", default: 50_000)

let values = (0..<64).map { Workload.json(size: 1_024, seed: $0) }
let keys = (0..<keyCount).compactMap { try? CacheKey("group-commit-\($0)") }
let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
    "tiercache-group-commit-probe-\(getpid())")
defer { try? FileManager.default.removeItem(at: directory) }
let tier = try LMDBTier(directory: directory, capacity: 1 << 30)

/// Stores from `writers` threads until `deadline` (or until `limit` stores), returning the count.
func storeOnThreads(until deadline: ContinuousClock.Instant, limit: Int = .max) -> Int {
    let total = Mutex(0)
    let done = DispatchGroup()
    for thread in 0..<writers {
        done.enter()
        Thread {
            var count = 0
            var index = thread
            while index < limit, ContinuousClock.now < deadline {
                _ = try? tier.store(
                    CacheEntry(value: values[index % values.count], storedAt: Date()), forKey: keys[index % keys.count])
                index += writers
                count += 1
            }
            total.withLock { $0 += count }
            done.leave()
        }.start()
    }
    done.wait()
    return total.withLock { $0 }
}

_ = storeOnThreads(until: .now + .seconds(3600), limit: keys.count)
let cpuBefore = ProcessCPUTime.now
let started = ContinuousClock.now
let stores = storeOnThreads(until: started + .seconds(seconds))
let elapsed = ContinuousClock.now - started
let wall = Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
print(
    String(
        format: "%d writers: %d stores, %.1f µs a store, CPU %.1f µs a store", writers, stores, wall / Double(stores),
        (ProcessCPUTime.now.total - cpuBefore.total) / Double(stores)))
