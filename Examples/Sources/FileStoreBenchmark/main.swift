import FileStore
import TierCacheBenchmarking

// README:begin file-store-benchmark
let plan = BenchmarkPlan(
    workload: .zipf(keys: 20_000, sizes: .uniform(1_024...8_192)), length: .requests(40_000), tasks: [1, 2])
let results = await (try BenchmarkRunner(plan: plan)).run([
    .localTier("file-store") { scratch in try FileStoreTier(directory: scratch.directory, capacity: 64 << 20) },
    .memory(capacity: 64 << 20),
    .lmdb(capacity: 64 << 20),
])
let report = results.report(title: "A file-per-entry store beside MemoryTier and LMDBTier")
print(report.tables[0].text)
// README:end
