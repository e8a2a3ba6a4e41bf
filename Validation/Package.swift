// swift-tools-version: 6.1
import PackageDescription

// Tests that replay the public traces (millions of requests per table) against published results.
// They live in their own package so that `scripts/test` can build them optimised (`-c release`)
// without building the whole root package (AsyncHTTPClient and all) in release mode too.
let package = Package(
    name: "TierCacheValidation",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "TierCache", path: "..")
    ],
    targets: [
        .testTarget(
            name: "PublishedTableTests",
            dependencies: [.product(name: "CacheSimulation", package: "TierCache")]
        )
    ],
    swiftLanguageModes: [.v6]
)
