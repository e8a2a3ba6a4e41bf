// swift-tools-version: 6.2
import PackageDescription

// The core libraries depend on the system's LMDB and zstd and on the swift-log and swift-metrics
// API packages (small, no backends); only the `tiercache` command-line tool pulls in
// swift-argument-parser. Benchmarks live in their own package (Benchmarks/Package.swift); ordo-one's
// benchmark enters a user's graph only with the OrdoBenchmark trait.
let package = Package(
    name: "TierCache",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "TierCache", targets: ["TierCache"]),
        .library(name: "TierCacheEviction", targets: ["TierCacheEviction"]),
        .library(name: "TierCacheLMDB", targets: ["TierCacheLMDB"]),
        .library(name: "TierCacheSQLite", targets: ["TierCacheSQLite"]),
        .library(name: "TierCacheRedis", targets: ["TierCacheRedis"]),
        .library(name: "TierCacheEncryption", targets: ["TierCacheEncryption"]),
        .library(name: "TierCacheTesting", targets: ["TierCacheTesting"]),
        .library(name: "HTTPCaching", targets: ["HTTPCaching"]),
        .library(name: "CacheSimulation", targets: ["CacheSimulation"]),
        .library(name: "TierCacheBenchmarking", targets: ["TierCacheBenchmarking"]),
        .library(name: "HTTPCachingFoundation", targets: ["HTTPCachingFoundation"]),
        .library(name: "HTTPCachingAsyncHTTPClient", targets: ["HTTPCachingAsyncHTTPClient"]),
        .library(name: "HTTPCachingCombine", targets: ["HTTPCachingCombine"]),
        .library(name: "HTTPCachingHummingbird", targets: ["HTTPCachingHummingbird"]),
        .library(name: "TierCacheProxy", targets: ["TierCacheProxy"]),
        .executable(name: "tiercache", targets: ["tiercache"]),
        .executable(name: "tiercache-proxy", targets: ["tiercache-proxy"]),
        .plugin(name: "TuneCapacityPlugin", targets: ["TuneCapacityPlugin"]),
    ],
    traits: [
        .trait(
            name: "Redis",
            description:
                "The Redis subject of TierCacheBenchmarking and `tiercache bench` (brings SwiftNIO into their build)."
        ),
        .trait(
            name: "OrdoBenchmark",
            description:
                "BenchmarkSubject.registerStandardBenchmarks(): TierCache's tier benchmarks in your own ordo-one package-benchmark target."
        ),
        .trait(
            name: "Encryption",
            description: "The lmdb-encrypted subject of `tiercache bench` (brings swift-crypto into its build)."
        ),
        .trait(
            name: "TSanLocks",
            description:
                "Locks that ThreadSanitizer sees on Linux (pthread mutexes instead of futex-based Mutex); scripts/tsan turns it on."
        ),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-http-structured-headers", from: "1.7.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        // Only the proxy and the Hummingbird middleware use these; `tiercache` (the main job) does not
        // build them. swift-configuration support is left out (trait off).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        // TLS for the Redis tier (already in the graph through async-http-client).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // Encryption at rest (TierCacheEncryption only; already in the graph through
        // async-http-client, never in the `tiercache` tool's).
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // Only with the OrdoBenchmark trait (off by default): SwiftPM leaves a dependency that only
        // disabled traits use out of the graph.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        // `swift package generate-documentation` (scripts/docs); a command plugin, built only when run.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // In every Apple SDK; on Linux, Debian's libsqlite3-dev.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // A header-only module: the prefetch hint the trace loader's id table issues ahead of its probes.
        .systemLibrary(name: "CPrefetch"),
        .systemLibrary(
            name: "CLzma",
            pkgConfig: "liblzma",
            providers: [.apt(["liblzma-dev"]), .brew(["xz"])]
        ),
        // Each eviction policy written once, over slot ids: the simulator and MemoryTier run them.
        .target(name: "TierCacheEviction", dependencies: ["CPrefetch"]),
        .target(
            name: "TierCache",
            dependencies: [
                "TierCacheEviction",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            // scripts/tsan: locks ThreadSanitizer can see (see Sources/TierCache/Concurrency/Locked.swift).
            swiftSettings: [.define("TIERCACHE_TSAN_LOCKS", .when(traits: ["TSanLocks"]))]
        ),
        .target(
            name: "CacheSimulation",
            dependencies: ["TierCache", "TierCacheEviction", "CZstd", "CZlib", "CLzma", "CPrefetch"]),
        // The stored record format (header, checksum, payload) without any compressor: the SQLite tier
        // uses it with zlib, on platforms that have no zstd.
        .target(
            name: "TierCacheRecords",
            dependencies: ["TierCache", .product(name: "Logging", package: "swift-log")]
        ),
        .target(name: "TierCacheCompression", dependencies: ["TierCache", "TierCacheRecords", "CZstd"]),
        .target(
            name: "TierCacheLMDB",
            dependencies: [
                "TierCache", "TierCacheRecords", "TierCacheCompression", "CLMDB",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // The disk tier for Apple platforms: SQLite and zlib only, which every SDK has.
        .target(
            name: "TierCacheSQLite",
            dependencies: [
                "TierCache", "TierCacheRecords", "CSQLite", "CZlib",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "TierCacheRedis",
            dependencies: [
                "TierCache", "TierCacheRecords", "TierCacheCompression",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "TierCacheEncryption",
            dependencies: ["TierCache", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(name: "TierCacheTesting", dependencies: ["TierCache", "TierCacheEviction"]),
        // The benchmark suite as a library: any tier or policy, the CLI's `bench` and users' own.
        // Only what `tiercache` already builds, unless a trait asks for Redis.
        .target(
            name: "TierCacheBenchmarking",
            dependencies: [
                "TierCache", "TierCacheEviction", "TierCacheLMDB", "TierCacheSQLite", "CacheSimulation", "CLMDB",
                "CZstd",
                "CSQLite", "CZlib",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .target(name: "TierCacheRedis", condition: .when(traits: ["Redis"])),
                .product(name: "Benchmark", package: "benchmark", condition: .when(traits: ["OrdoBenchmark"])),
            ],
            swiftSettings: [
                .define("BenchmarkRedis", .when(traits: ["Redis"])),
                .define("OrdoBenchmark", .when(traits: ["OrdoBenchmark"])),
            ]
        ),
        .target(
            name: "HTTPCaching",
            dependencies: [
                "TierCache",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "RawStructuredFieldValues", package: "swift-http-structured-headers"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "HTTPCachingFoundation",
            dependencies: [
                "HTTPCaching",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HTTPTypesFoundation", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "HTTPCachingAsyncHTTPClient",
            dependencies: [
                "HTTPCaching",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .target(
            name: "HTTPCachingCombine",
            dependencies: [
                "HTTPCaching",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenCombineShim", package: "OpenCombine"),
            ]
        ),
        .target(
            name: "HTTPCachingHummingbird",
            dependencies: [
                "HTTPCaching",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .target(
            name: "TierCacheProxy",
            dependencies: [
                "HTTPCaching", "HTTPCachingAsyncHTTPClient", "TierCache",
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .executableTarget(
            name: "tiercache-proxy",
            dependencies: [
                "TierCacheProxy", "HTTPCaching", "HTTPCachingAsyncHTTPClient", "TierCache", "TierCacheLMDB",
                "TierCacheRedis",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "tiercache",
            dependencies: [
                "TierCache", "TierCacheLMDB", "TierCacheSQLite", "CacheSimulation", "TierCacheBenchmarking",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .target(name: "TierCacheRedis", condition: .when(traits: ["Redis"])),
                .target(name: "TierCacheEncryption", condition: .when(traits: ["Encryption"])),
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["Encryption"])),
            ],
            swiftSettings: [
                .define("BenchmarkRedis", .when(traits: ["Redis"])),
                .define("BenchmarkEncryption", .when(traits: ["Encryption"])),
            ]
        ),
        // The processes the reliability tests and scripts start (crash-writer, damage-reader, …);
        // not a product, so users never install it.
        .executableTarget(
            name: "tiercache-harness",
            dependencies: [
                "TierCache", "TierCacheLMDB", "TierCacheSQLite", "TierCacheRedis", "CLMDB",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .plugin(
            name: "TuneCapacityPlugin",
            capability: .command(
                intent: .custom(
                    verb: "tune-capacity",
                    description:
                        "Find the cache capacity that reaches a target hit ratio on a trace, and write a report."),
                permissions: [
                    .writeToPackageDirectory(
                        reason:
                            "The capacity report (CSV, JSON, SVG, HTML) is written to capacity-report/ in the package.")
                ]
            )
        ),
        .testTarget(
            name: "TierCacheRedisTests",
            dependencies: [
                "TierCacheRedis", "TierCache", "TierCacheTesting", "TierCacheLMDB", "HTTPCaching", "DiskTestSupport",
                "tiercache-harness",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "TierCacheBenchmarkingTests",
            // `tiercache` and DiskTestSupport: the bad-input tests run the command-line tool.
            dependencies: [
                "TierCacheBenchmarking", "TierCache", "TierCacheEviction", "TierCacheLMDB", "CacheSimulation",
                "DiskTestSupport", "tiercache",
            ]
        ),
        .testTarget(
            name: "CacheSimulationTests",
            dependencies: ["CacheSimulation", "TierCache", "TierCacheEviction"]
        ),
        .testTarget(
            name: "TierCacheTests",
            dependencies: [
                "TierCache", "TierCacheEviction", "TierCacheTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "HTTPCachingTests",
            dependencies: [
                "HTTPCaching", "TierCache", "TierCacheLMDB", "TierCacheTesting", "TierCacheEncryption",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "HTTPCachingAdapterTests",
            dependencies: [
                "HTTPCaching", "HTTPCachingFoundation", "HTTPCachingAsyncHTTPClient", "HTTPCachingCombine", "TierCache",
                "TierCacheLMDB",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "OpenCombineShim", package: "OpenCombine"),
            ]
        ),
        .testTarget(
            name: "TierCacheProxyTests",
            dependencies: [
                "TierCacheProxy", "HTTPCaching", "HTTPCachingHummingbird", "TierCache", "tiercache-proxy", "tiercache",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // What the LMDB and SQLite tiers' tests share (temporary stores and file systems, the harness).
        .target(name: "DiskTestSupport", dependencies: ["TierCache"], path: "Tests/DiskTestSupport"),
        .testTarget(
            name: "TierCacheSQLiteTests",
            dependencies: [
                "TierCacheSQLite", "TierCacheRecords", "TierCacheTesting", "DiskTestSupport", "CSQLite",
                "tiercache-harness",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "TierCacheLMDBTests",
            dependencies: [
                "TierCacheLMDB", "TierCacheRecords", "TierCacheCompression", "TierCacheTesting", "TierCacheEncryption",
                "CLMDB", "DiskTestSupport", "tiercache", "tiercache-harness",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
