import BenchCZstd
import Benchmark
import Foundation
import TierCache
import TierCacheLMDB
import Workloads

// Durable stores from many threads at once. Each store of `LMDBTier` and each put of the baseline
// returns only once its transaction has committed with the tier's default sync setting
// (`MDB_NOMETASYNC`: data fsynced on every commit). The baseline is what one transaction per
// entry allows: raw LMDB puts (zstd level 1, as the tier), a transaction each, from the same
// number of threads. Today's tier without group commit ran at that rate, or below it; the ratio
// "LMDBTier / baseline" at 16 writers is the gain of group commit. At 1 writer it is the cost of
// the tier's own work on a lone store (its accounting, recency index and framing). The ceiling is
// LMDB itself committing 16 puts a transaction from one thread: what batching 16 stores can reach
// at best on this disk.

func groupCommitBenchmarks() {
    let valueSize = 1_024
    let values = (0..<64).map { Workload.json(size: valueSize, seed: $0) }
    let keyStrings = (0..<50_000).map { "group-commit-\($0)" }
    let keys = keyStrings.compactMap { try? CacheKey($0) }
    let capacity = 1 << 30
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tiercache-bench-group-commit")
    try? FileManager.default.removeItem(at: directory)
    guard let tier = try? LMDBTier(directory: directory, capacity: capacity) else { return }
    let raw = RawLMDB(capacity: capacity)

    for writers in [1, 16] {
        let configuration = Benchmark.Configuration(scalingFactor: .kilo, maxDuration: .seconds(4), maxIterations: 40)
        Benchmark("Disk durable set 1 KiB, \(writers) writers: LMDBTier", configuration: configuration) {
            [cursor = AccessCursor()] benchmark in
            let start = cursor.take(benchmark.scaledIterations.count)
            onThreads(writers, stores: benchmark.scaledIterations.count) { store in
                let index = (start &+ store) % keys.count
                blackHole(
                    try? tier.store(
                        CacheEntry(value: values[index % values.count], storedAt: Date()), forKey: keys[index]))
            }
        }
        Benchmark(
            "Disk durable set 1 KiB, \(writers) writers: baseline raw LMDB put + zstd, a transaction each",
            configuration: configuration
        ) { [cursor = AccessCursor()] benchmark in
            let start = cursor.take(benchmark.scaledIterations.count)
            onThreads(writers, stores: benchmark.scaledIterations.count, perThread: { ZSTDContext() }) {
                context, store in
                let index = (start &+ store) % keyStrings.count
                raw.put(keyStrings[index], values[index % values.count], compressingWith: context.pointer)
            }
        }
    }
    // The ceiling for 16 writers: LMDB committing 16 puts at a time, from one thread (no waiting,
    // no waking), the best any batching of 16 stores can do on this disk.
    Benchmark(
        "Disk durable set 1 KiB, 16 writers: ceiling raw LMDB put + zstd, 16 to a transaction, one thread",
        configuration: .init(scalingFactor: .kilo, maxDuration: .seconds(4), maxIterations: 40)
    ) { [cursor = AccessCursor()] benchmark in
        let start = cursor.take(benchmark.scaledIterations.count)
        for first in stride(from: 0, to: benchmark.scaledIterations.count, by: 16) {
            raw.putBatch(
                (first..<min(first + 16, benchmark.scaledIterations.count)).map { store in
                    let index = (start &+ store) % keyStrings.count
                    return (keyStrings[index], values[index % values.count])
                })
        }
    }
}

/// Runs `stores` calls of `body` spread over `threads` threads started together (real threads:
/// the concurrency pool has as many as there are cores, too few to keep 16 stores in flight).
private func onThreads(_ threads: Int, stores: Int, _ body: @escaping @Sendable (Int) -> Void) {
    onThreads(threads, stores: stores, perThread: { () }) { _, store in body(store) }
}

private func onThreads<State>(
    _ threads: Int, stores: Int, perThread makeState: @escaping @Sendable () -> State,
    _ body: @escaping @Sendable (State, Int) -> Void
) {
    let done = DispatchGroup()
    for thread in 0..<threads {
        done.enter()
        Thread {
            let state = makeState()
            for store in stride(from: thread, to: stores, by: threads) { body(state, store) }
            done.leave()
        }.start()
    }
    done.wait()
}

/// A zstd compression context owned by one thread, with the tier's level and checksum.
private final class ZSTDContext {
    let pointer = ZSTD_createCCtx()

    init() {
        ZSTD_CCtx_setParameter(pointer, ZSTD_c_compressionLevel, 1)
        ZSTD_CCtx_setParameter(pointer, ZSTD_c_checksumFlag, 1)
    }

    deinit { ZSTD_freeCCtx(pointer) }
}
