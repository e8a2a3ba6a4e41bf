import Benchmark
import Foundation
import TierCache
import TierCacheLMDB
import Workloads

// Each tier is measured beside its physical baseline in the same run; the ratio of their
// throughputs is the figure that matters (absolute numbers depend on the machine).
// Names pair up as "<subject>: <operation>" so a report lines them up.

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 1_000_000
    )
    memoryBenchmarks()
    memoryPolicyBenchmarks()
    standardBenchmarks()
    diskBenchmarks(valueSize: 1_024, entries: 20_000)
    diskBenchmarks(valueSize: 16 * 1_024, entries: 4_000)
    groupCommitBenchmarks()
    atRestBenchmarks()
}

// MARK: Memory

func memoryBenchmarks() {
    let accesses = Workload.accesses
    let strings = Workload.keyStrings
    let keys = strings.compactMap { try? CacheKey($0) }
    let value = [UInt8](repeating: 7, count: 100)
    let storedAt = Date()

    // MemoryTier, holding every key (no evictions: the hit path alone).
    guard let tier = try? MemoryTier(capacity: 256 << 20) else { return }
    for key in keys { _ = tier.store(CacheEntry(value: value, storedAt: storedAt), forKey: key) }
    Benchmark("Memory get hit (Zipf, 100k keys): MemoryTier") { [cursor = AccessCursor()] benchmark in
        var position = cursor.take(benchmark.scaledIterations.count)
        for _ in benchmark.scaledIterations {
            blackHole(tier.entry(forKey: keys[accesses[position % accesses.count]]))
            position &+= 1
        }
    }
    Benchmark("Memory set (Zipf, 100k keys): MemoryTier") { [cursor = AccessCursor()] benchmark in
        var position = cursor.take(benchmark.scaledIterations.count)
        let entry = CacheEntry(value: value, storedAt: storedAt)
        for _ in benchmark.scaledIterations {
            blackHole(tier.store(entry, forKey: keys[accesses[position % accesses.count]]))
            position &+= 1
        }
    }

    // The unsynchronized dictionary + linked-list LRU.
    let lru = MinimalLRU(capacity: Workload.keyCount)
    for key in strings { lru.set(key, value) }
    Benchmark("Memory get hit (Zipf, 100k keys): baseline minimal LRU") { [cursor = AccessCursor()] benchmark in
        var position = cursor.take(benchmark.scaledIterations.count)
        for _ in benchmark.scaledIterations {
            blackHole(lru.get(strings[accesses[position % accesses.count]]))
            position &+= 1
        }
    }
    Benchmark("Memory set (Zipf, 100k keys): baseline minimal LRU") { [cursor = AccessCursor()] benchmark in
        var position = cursor.take(benchmark.scaledIterations.count)
        for _ in benchmark.scaledIterations {
            lru.set(strings[accesses[position % accesses.count]], value)
            position &+= 1
        }
    }

    // Foundation's NSCache.
    let nsKeys = strings.map { NSString(string: $0) }
    let nsValue = NSData(bytes: value, length: value.count)
    let nsCache = NSCache<NSString, NSData>()
    nsCache.totalCostLimit = 256 << 20
    for key in nsKeys { nsCache.setObject(nsValue, forKey: key, cost: value.count) }
    Benchmark("Memory get hit (Zipf, 100k keys): baseline NSCache") { [cursor = AccessCursor()] benchmark in
        var position = cursor.take(benchmark.scaledIterations.count)
        for _ in benchmark.scaledIterations {
            blackHole(nsCache.object(forKey: nsKeys[accesses[position % accesses.count]]))
            position &+= 1
        }
    }
    Benchmark("Memory set (Zipf, 100k keys): baseline NSCache") { [cursor = AccessCursor()] benchmark in
        var position = cursor.take(benchmark.scaledIterations.count)
        for _ in benchmark.scaledIterations {
            nsCache.setObject(nsValue, forKey: nsKeys[accesses[position % accesses.count]], cost: value.count)
            position &+= 1
        }
    }
}

// MARK: Disk

func diskBenchmarks(valueSize: Int, entries: Int) {
    let label = valueSize >= 1_024 ? "\(valueSize / 1_024) KiB" : "\(valueSize) B"
    let strings = Array(Workload.keyStrings.prefix(entries))
    let keys = strings.compactMap { try? CacheKey($0) }
    let values = (0..<64).map { Workload.json(size: valueSize, seed: $0) }
    let capacity = 2 << 30
    // One directory per value size, emptied at the start of each run, so repeated runs do not
    // leave stores behind.
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tiercache-bench-\(valueSize)")
    try? FileManager.default.removeItem(at: directory)

    guard let tier = try? LMDBTier(directory: directory, capacity: capacity) else { return }
    let raw = RawLMDB(capacity: capacity)
    for (index, key) in keys.enumerated() {
        _ = try? tier.store(CacheEntry(value: values[index % values.count], storedAt: Date()), forKey: key)
        raw.put(strings[index], values[index % values.count])
    }

    Benchmark("Disk get hit \(label): LMDBTier") { [cursor = AccessCursor()] benchmark in
        var position = cursor.take(benchmark.scaledIterations.count)
        for _ in benchmark.scaledIterations {
            blackHole(try? tier.entry(forKey: keys[position % keys.count]))
            position &+= 7
        }
    }
    Benchmark("Disk get hit \(label): baseline raw LMDB get + zstd decompress") { [cursor = AccessCursor()] benchmark in
        var position = cursor.take(benchmark.scaledIterations.count)
        for _ in benchmark.scaledIterations {
            let index = position % strings.count
            blackHole(raw.get(strings[index], originalSize: values[index % values.count].count))
            position &+= 7
        }
    }
    Benchmark("Disk set \(label): LMDBTier", configuration: .init(scalingFactor: .one, maxDuration: .seconds(3))) {
        [cursor = AccessCursor()] benchmark in
        var position = cursor.take(benchmark.scaledIterations.count)
        for _ in benchmark.scaledIterations {
            let entry = CacheEntry(value: values[position % values.count], storedAt: Date())
            blackHole(try? tier.store(entry, forKey: keys[position % keys.count]))
            position &+= 1
        }
    }
    Benchmark(
        "Disk set \(label): baseline raw LMDB put + zstd compress",
        configuration: .init(scalingFactor: .one, maxDuration: .seconds(3))
    ) { [cursor = AccessCursor()] benchmark in
        var position = cursor.take(benchmark.scaledIterations.count)
        for _ in benchmark.scaledIterations {
            raw.put(strings[position % strings.count], values[position % values.count])
            position &+= 1
        }
    }
}
