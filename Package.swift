// swift-tools-version: 6.1
import PackageDescription

// The library targets depend on nothing but the system's LMDB and zstd; only the `tiercache`
// command-line tool pulls in swift-argument-parser. Benchmarks live in their own package
// (Benchmarks/Package.swift) so that ordo-one/benchmark never enters a user's dependency graph.
let package = Package(
    name: "TierCache",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "TierCache", targets: ["TierCache"]),
        .library(name: "TierCacheLMDB", targets: ["TierCacheLMDB"]),
        .library(name: "TierCacheTesting", targets: ["TierCacheTesting"]),
        .library(name: "HTTPCaching", targets: ["HTTPCaching"]),
        .executable(name: "tiercache", targets: ["tiercache"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
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
        .target(name: "TierCache"),
        .target(name: "TierCacheCompression", dependencies: ["CZstd"]),
        .target(name: "TierCacheLMDB", dependencies: ["TierCache", "TierCacheCompression", "CLMDB"]),
        .target(name: "TierCacheTesting", dependencies: ["TierCache"]),
        .target(
            name: "HTTPCaching",
            dependencies: ["TierCache", .product(name: "HTTPTypes", package: "swift-http-types")]
        ),
        .executableTarget(
            name: "tiercache",
            dependencies: [
                "TierCache", "TierCacheLMDB",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "TierCacheTests",
            dependencies: ["TierCache", "TierCacheTesting"]
        ),
        .testTarget(
            name: "HTTPCachingTests",
            dependencies: [
                "HTTPCaching", "TierCache", "TierCacheLMDB", "TierCacheTesting",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .testTarget(
            name: "TierCacheLMDBTests",
            dependencies: ["TierCacheLMDB", "TierCacheCompression", "TierCacheTesting", "CLMDB", "tiercache"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
