// swift-tools-version: 6.2
import PackageDescription

// What a user's own package looks like: a store written outside TierCache that passes the
// conformance suite and benchmarks itself beside the built-in tiers, and an eviction policy of
// its own that passes the policy conformance suite, compared with the built-ins on a trace and
// run in a MemoryTier. scripts/examples builds, tests and runs it (CI).
let package = Package(
    name: "TierCacheExamples",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [.package(name: "TierCache", path: "..")],
    targets: [
        // A file-per-entry disk tier, the design Nuke's DataCache, PINCache and Kingfisher use.
        .target(name: "FileStore", dependencies: [.product(name: "TierCache", package: "TierCache")]),
        .executableTarget(
            name: "FileStoreBenchmark",
            dependencies: [
                "FileStore",
                .product(name: "TierCacheBenchmarking", package: "TierCache"),
            ]
        ),
        // Segmented LRU, a policy of the user's own on the public SlotQueues.
        .target(name: "SegmentedLRU", dependencies: [.product(name: "TierCacheEviction", package: "TierCache")]),
        .executableTarget(
            name: "PolicyComparison",
            dependencies: [
                "SegmentedLRU",
                .product(name: "CacheSimulation", package: "TierCache"),
                .product(name: "TierCacheBenchmarking", package: "TierCache"),
            ]
        ),
        .testTarget(
            name: "SegmentedLRUTests",
            dependencies: [
                "SegmentedLRU",
                .product(name: "TierCacheEviction", package: "TierCache"),
                .product(name: "TierCacheTesting", package: "TierCache"),
            ]
        ),
        .testTarget(
            name: "FileStoreTests",
            dependencies: [
                "FileStore",
                .product(name: "TierCache", package: "TierCache"),
                .product(name: "TierCacheTesting", package: "TierCache"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
