import Benchmark
import TierCacheBenchmarking

// The call a user's own Benchmarks target makes for their tier (registerStandardBenchmarks, the
// OrdoBenchmark trait), made here for the built-in tiers: "memory-lru: get hit", "lmdb: set", ….
// SQLite's baseline is registered beside its tier, for a same-run ratio from ratios.py.
// Memory tiers take a million requests a sample, so that the benchmark's own cost per sample stays
// out of a figure of a few hundred nanoseconds a request.
func standardBenchmarks() {
    var memory = Benchmark.defaultConfiguration
    memory.scalingFactor = .mega
    BenchmarkSubject.memory(capacity: 64 << 20).registerStandardBenchmarks(configuration: memory)
    BenchmarkSubject.memory(capacity: 64 << 20, policy: .s3fifo).registerStandardBenchmarks(configuration: memory)
    BenchmarkSubject.lmdb(capacity: 256 << 20).registerStandardBenchmarks()
    BenchmarkSubject.sqlite(capacity: 256 << 20).registerStandardBenchmarks()
    // The baseline evicts nothing: filled to four times its capacity, it fails, saying so.
    BenchmarkSubject.rawSQLiteZlib(capacity: 256 << 20).registerStandardBenchmarks([.getHit, .set, .mix])
}
