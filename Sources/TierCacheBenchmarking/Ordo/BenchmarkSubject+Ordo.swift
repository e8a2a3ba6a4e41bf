#if OrdoBenchmark
import Benchmark
import Foundation
import TierCache

extension BenchmarkSubject {
    /// Registers TierCache's standard tier benchmarks for this subject with ordo-one's
    /// package-benchmark, from your own `Benchmarks` target, so that its thresholds fail your
    /// CI when your tier regresses:
    ///
    /// ```swift
    /// import Benchmark
    /// import TierCacheBenchmarking
    ///
    /// let benchmarks: @Sendable () -> Void = {
    ///     BenchmarkSubject.localTier("file-store") { scratch in
    ///         try FileStoreTier(directory: scratch.directory, capacity: 64 << 20)
    ///     }.registerStandardBenchmarks()
    /// }
    /// ```
    ///
    /// One benchmark per ``StandardBenchmark`` case, named `"<subject>: <case>"`, each with a
    /// fresh subject opened in its setup (in a scratch directory deleted in its teardown). A
    /// tier that throws fails the benchmark. Present with the package's `OrdoBenchmark` trait.
    public func registerStandardBenchmarks(
        _ benchmarks: [StandardBenchmark] = StandardBenchmark.allCases, keys: Int = 10_000,
        valueSize: Int = 1_024, configuration: Benchmark.Configuration = Benchmark.defaultConfiguration
    ) {
        for standard in benchmarks {
            let state = StandardBenchmarkState()
            let subject = self
            Benchmark(
                "\(name): \(standard.rawValue)", configuration: configuration,
                closure: { (benchmark: Benchmark) async throws in
                    try await state.run(benchmark.scaledIterations.count, subject: subject.name)
                },
                setup: { try await state.open(subject, standard, keys: keys, valueSize: valueSize) },
                teardown: { await state.close() })
        }
    }
}

/// The benchmarks ``BenchmarkSubject/registerStandardBenchmarks(_:keys:valueSize:configuration:)``
/// registers.
public enum StandardBenchmark: String, CaseIterable, Sendable {
    /// Reads of keys all stored beforehand, Zipf 0.99: the hit path alone.
    case getHit = "get hit"
    /// Stores of Zipf 0.99 keys: replacing entries, no evictions.
    case set
    /// Reads through (a miss stores) of keys drawn uniformly from four times those the subject
    /// holds, the subject filled first: three requests in four miss, and each such store evicts.
    case getOrSetEvicting = "get-or-set with evictions"
    /// 90% reads through, 9% writes, 1% deletes.
    case mix = "mix 90:9:1"
}

/// One registered benchmark's subject, opened in setup and used by its iterations in turn
/// (the benchmark runner calls setup, the iterations and teardown one after another).
final class StandardBenchmarkState {
    private var loop: TaskLoop?
    private var stride = 0
    private var scratch: BenchmarkScratch?

    func open(_ subject: BenchmarkSubject, _ standard: StandardBenchmark, keys: Int, valueSize: Int) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tiercache-ordo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let scratch = BenchmarkScratch(directory: directory)
        self.scratch = scratch
        let driver = try await subject.open(scratch)
        var keyCount = keys
        if standard == .getOrSetEvicting {
            keyCount = try await driver.fillForEvicting(keys: keys, valueSize: valueSize)
        }
        let mix: OperationMix =
            switch standard {
            case .getHit: OperationMix(reads: 1, readThrough: false)
            case .set: OperationMix(reads: 0, writes: 1)
            case .getOrSetEvicting: .readThrough
            case .mix: OperationMix(reads: 0.9, writes: 0.09, deletes: 0.01)
            }
        // Zipf, the keys a cycle touches (236,000 of a million) fitted a tier holding 365,000
        // compressed entries, which stopped evicting after the first cycle.
        let distribution: KeyDistribution = standard == .getOrSetEvicting ? .uniform : .zipf(skew: 0.99)
        let workload = Workload(
            .synthetic(keys: keyCount, distribution: distribution, sizes: .fixed(valueSize)), mix: mix)
        let sequence = try workload.requests(length: 1 << 20)
        let keys = try sequence.keys()
        if standard == .getHit {
            try await driver.storeEveryKey(of: sequence, keys: keys)
            try await driver.requireEveryKey(keys, of: subject.name, valueSize: valueSize)
        }
        loop = TaskLoop(
            driver: driver, sequence: sequence, keys: KeyTable(keys), task: 0, tasks: 1, measured: false, sampling: 1,
            window: 1,
            stop: StopSignal())
        stride = 0
    }

    func run(_ iterations: Int, subject: String) async throws {
        guard let loop else { throw BenchmarkError.subjectUnavailable(subject: subject, reason: "setup failed") }
        let tally = await loop.run(firstStride: stride, limit: iterations, duration: nil)
        if let failure = tally.failure { throw BenchmarkError.subjectFailed(subject: subject, reason: failure) }
        stride = tally.nextStride
    }

    /// Releases the subject: its teardown actions (`BenchmarkScratch.onTeardown(_:)`), then its
    /// directory.
    func close() async {
        loop = nil
        if let scratch {
            await scratch.tearDown()
            try? FileManager.default.removeItem(at: scratch.directory)
        }
        scratch = nil
    }
}
#endif
