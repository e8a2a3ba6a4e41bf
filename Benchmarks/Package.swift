// swift-tools-version: 6.1
import PackageDescription

// The benchmark suite is its own package, depending on TierCache by path (as swift-nio does), so
// that ordo-one/benchmark never enters the dependency graph of TierCache's users.
// Run from this directory: `swift package benchmark`.
let package = Package(
    name: "TierCacheBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // With the trait that registers the standard tier benchmarks (registerStandardBenchmarks()).
        .package(name: "TierCache", path: "..", traits: ["OrdoBenchmark"]),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        // Already in TierCache's graph (TierCacheRedis); named for RedisRoundTrips' executor choice.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // The workloads the benchmarks share (keys, Zipf accesses, JSON bodies).
        .target(
            name: "Workloads",
            dependencies: [
                .product(name: "TierCache", package: "TierCache"),
                .product(name: "TierCacheTesting", package: "TierCache"),
            ],
            path: "Benchmarks/Workloads"
        ),
        // The baselines call LMDB and zstd directly, through modules of their own.
        .systemLibrary(name: "BenchCLMDB", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]),
        .systemLibrary(name: "BenchCZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]),
        .executableTarget(
            name: "TierBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "TierCache", package: "TierCache"),
                .product(name: "TierCacheLMDB", package: "TierCache"),
                .product(name: "TierCacheEncryption", package: "TierCache"),
                .product(name: "TierCacheBenchmarking", package: "TierCache"),
                "BenchCLMDB", "BenchCZstd", "Workloads",
            ],
            path: "Benchmarks/TierBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "HTTPBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "TierCache", package: "TierCache"),
                .product(name: "HTTPCaching", package: "TierCache"),
                .product(name: "TierCacheLMDB", package: "TierCache"),
                "Workloads",
            ],
            path: "Benchmarks/HTTPBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "RedisBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "TierCache", package: "TierCache"),
                .product(name: "TierCacheRedis", package: "TierCache"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/RedisBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // RedisTier's round trips with Swift's default executor or SwiftNIO's (redis-compare.sh).
        .executableTarget(
            name: "RedisRoundTrips",
            dependencies: [
                "Workloads",
                .product(name: "TierCache", package: "TierCache"),
                .product(name: "TierCacheRedis", package: "TierCache"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/RedisRoundTrips"
        ),
        // LMDBTier's group commit alone, for perf and strace (the harness sets up every benchmark).
        .executableTarget(
            name: "GroupCommitProbe",
            dependencies: ["Workloads", .product(name: "TierCacheLMDB", package: "TierCache")],
            path: "Benchmarks/GroupCommitProbe"
        ),
        // A plain loop over the memory policy benchmarks' workloads, for policy-instructions.sh.
        .executableTarget(
            name: "PolicyInstructions",
            dependencies: [.product(name: "TierCache", package: "TierCache"), "Workloads"],
            path: "Benchmarks/PolicyInstructions"
        ),
        // One simulator replay as a plain loop, for replay-instructions.sh.
        .executableTarget(
            name: "ReplayInstructions",
            dependencies: [.product(name: "CacheSimulation", package: "TierCache")],
            path: "Benchmarks/ReplayInstructions"
        ),
        // The purge benchmarks' tagged and untagged stores as a plain loop, for profiling and paired figures.
        .executableTarget(
            name: "TagStoreCost",
            dependencies: [
                .product(name: "HTTPCaching", package: "TierCache"),
                .product(name: "TierCache", package: "TierCache"),
                .product(name: "TierCacheLMDB", package: "TierCache"),
            ],
            path: "Benchmarks/TagStoreCost"
        ),
        // What lies on disk: compression ratios and get/set throughput of small JSON responses
        // with no dictionary, a trained dictionary, and encryption (in interleaved rounds).
        .executableTarget(
            name: "AtRestRatios",
            dependencies: [
                .product(name: "TierCache", package: "TierCache"),
                .product(name: "TierCacheLMDB", package: "TierCache"),
                .product(name: "TierCacheEncryption", package: "TierCache"),
                "Workloads",
            ],
            path: "Benchmarks/AtRestRatios"
        ),
        // MemoryTier's policies against LRU in interleaved rounds (robust to a drifting machine).
        .executableTarget(
            name: "PolicyThroughput",
            dependencies: [.product(name: "TierCache", package: "TierCache"), "Workloads"],
            path: "Benchmarks/PolicyThroughput"
        ),
        // TierCacheBenchmarking's own cost per request, and its MemoryTier figure against a bare loop.
        .executableTarget(
            name: "HarnessCost",
            dependencies: [
                .product(name: "TierCache", package: "TierCache"),
                .product(name: "TierCacheBenchmarking", package: "TierCache"),
            ],
            path: "Benchmarks/HarnessCost"
        ),
        .executableTarget(
            name: "SimulationBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "CacheSimulation", package: "TierCache"),
            ],
            path: "Benchmarks/SimulationBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
